import { StorageError, StorageErrorCode } from '../errors.js';

/** Key bounds of {@link KvStore.iterate}; keys are compared bytewise inside one bucket. */
export interface KvRange {
  gt?: Uint8Array;
  gte?: Uint8Array;
  lt?: Uint8Array;
  lte?: Uint8Array;
  reverse?: boolean;
  /** Largest number of entries to yield (default: no limit). */
  limit?: number;
  /** When false the iterator yields empty values (cheaper scans of keys only). Default true. */
  values?: boolean;
}

/**
 * One key-value database holding many buckets. A bucket is a namespace of keys; buckets never see
 * each other's keys, and a {@link WriteBatch} may span any number of them and is written atomically.
 */
export interface KvStore {
  get(bucket: string, key: Uint8Array): Promise<Uint8Array | undefined>;
  /** Synchronous read for hot paths (no thread-pool round trip). */
  getSync(bucket: string, key: Uint8Array): Uint8Array | undefined;
  getMany(bucket: string, keys: Uint8Array[]): Promise<(Uint8Array | undefined)[]>;
  /** Entries of one bucket in key order (bytewise), over a snapshot taken when the iterator starts. */
  iterate(bucket: string, range?: KvRange): AsyncIterableIterator<[Uint8Array, Uint8Array]>;
  batch(): WriteBatch;
  /** Idempotent; pending batches written before close completes are kept. */
  close(): Promise<void>;
  /** True once close() has been called. */
  readonly closed: boolean;
  /**
   * A property of the storage engine for diagnostics (LevelDB: `leveldb.stats`,
   * `leveldb.num-files-at-level<N>`, ...); undefined for an engine without one. Throws KV_CLOSED
   * after close().
   */
  engineProperty(name: string): string | undefined;
}

/** Listener told once when a batch has been written (error undefined) or has failed. */
export type BatchWriteListener = (error: Error | undefined) => void;

/** Puts and deletes over any buckets of one store, applied all-or-nothing by {@link write}. */
export interface WriteBatch {
  put(bucket: string, key: Uint8Array, value: Uint8Array): this;
  del(bucket: string, key: Uint8Array): this;
  /** Number of operations queued. */
  readonly length: number;
  /** Writes every queued operation atomically. A batch can be written once. */
  write(opts?: { sync?: boolean }): Promise<void>;
  /**
   * Registers a listener run once after write() settles, before the promise of write() resolves or
   * rejects: components that add operations to a batch they do not write use it to learn that
   * their data is durable.
   */
  afterWrite(listener: BatchWriteListener): this;
}

/** Largest byte length of a bucket name. */
export const MAX_BUCKET_NAME_BYTES = 255;

const utf8 = new TextEncoder();

/**
 * Encodes a bucket name as its key prefix: the UTF-8 name followed by one 0x00 byte. Names hold no
 * NUL, so the first 0x00 of any stored key ends its bucket name: no two buckets share a prefix
 * (neither "a" and "ab" nor "a" and "a/b"), and the keys of bucket B are exactly the keys in
 * [name 0x00, name 0x01), which is the range iteration is confined to.
 */
export function bucketPrefix(bucket: string): Uint8Array {
  if (typeof bucket !== 'string' || bucket.length === 0) {
    throw new StorageError(StorageErrorCode.INVALID_BUCKET, { bucket: String(bucket) });
  }
  const name = utf8.encode(bucket);
  if (name.length > MAX_BUCKET_NAME_BYTES || name.includes(0)) {
    throw new StorageError(StorageErrorCode.INVALID_BUCKET, { bucket });
  }
  const prefix = new Uint8Array(name.length + 1);
  prefix.set(name, 0);
  return prefix;
}

const MAX_SEQ_NO = Number.MAX_SAFE_INTEGER;

/** The 8-byte big-endian key of a sequence number (formats 12.1): byte order is numeric order. */
export function seqNoKey(n: number): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 0 || n > MAX_SEQ_NO) {
    throw new StorageError(StorageErrorCode.INVALID_SEQ_NO, { value: typeof n === 'number' ? n : String(n) });
  }
  const key = new Uint8Array(8);
  // two 32-bit halves: bit operators would truncate above 2^32
  const hi = Math.floor(n / 0x1_0000_0000);
  const lo = n - hi * 0x1_0000_0000;
  key[1] = hi >>> 16;
  key[2] = hi >>> 8;
  key[3] = hi;
  key[4] = lo >>> 24;
  key[5] = lo >>> 16;
  key[6] = lo >>> 8;
  key[7] = lo;
  return key;
}

/** Inverse of {@link seqNoKey}. */
export function decodeSeqNoKey(key: Uint8Array): number {
  if (!(key instanceof Uint8Array) || key.length !== 8) {
    throw new StorageError(StorageErrorCode.INVALID_SEQ_NO, { value: key instanceof Uint8Array ? `<${key.length} bytes>` : String(key) });
  }
  const view = new DataView(key.buffer, key.byteOffset, 8);
  const n = view.getUint32(0) * 0x1_0000_0000 + view.getUint32(4);
  if (n > MAX_SEQ_NO) throw new StorageError(StorageErrorCode.INVALID_SEQ_NO, { value: n });
  return n;
}
