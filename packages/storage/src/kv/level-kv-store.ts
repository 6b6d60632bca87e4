import { ClassicLevel } from 'classic-level';
import { MemoryLevel } from 'memory-level';
import { StorageError, StorageErrorCode, reasonOf } from '../errors.js';
import { bucketPrefix, type BatchWriteListener, type KvRange, type KvStore, type WriteBatch } from './kv-store.js';

/** Options of {@link openLevelKvStore}; every field is optional. */
export interface LevelKvStoreOptions {
  /** Create the database when the directory holds none (default true). */
  createIfMissing?: boolean;
  /** Fail when a database already exists (default false). */
  errorIfExists?: boolean;
  /** LevelDB block cache in bytes (default 8 MiB, LevelDB's default). */
  cacheSize?: number;
  /** LevelDB write buffer (memtable) in bytes (default 64 MiB; see {@link defaultLevelKvStoreOptions}). */
  writeBufferSize?: number;
  /**
   * Spread of the write buffer, a fraction in [0, 1] (default 0.75): each open draws the memtable size uniformly from
   * `writeBufferSize × [1, 1 + j]` (see {@link writeBufferBytes}).
   */
  writeBufferJitter?: number;
  /** Snappy compression of blocks (default true). */
  compression?: boolean;
  /** Target size of one table file in bytes (default 32 MiB; LevelDB's own default is 2 MiB). */
  maxFileSize?: number;
}

/**
 * Defaults. The write buffer and the table files are larger than LevelDB's (4 MiB and 2 MiB): the
 * state tries write their nodes under SHA3 keys spread uniformly over the key space, so every
 * small level-0 file overlaps the whole of level 1 and each flush makes compaction rewrite all of
 * it. With a 64 MiB memtable and 32 MiB tables, compaction rewrites about a third as many bytes
 * for the same trie writes (measured on 200,000 NYM puts: 0.7 GB instead of 1.95 GB). The cost is
 * memory (up to two memtables, written while the next one fills) and a longer log replay on open
 * after a crash. Ledger and index keys are sequential and are not affected either way.
 *
 * The memtable size varies from one open to the next (`writeBufferJitter`): the validators of a pool write the same
 * bytes at the same rate, so with equal memtables every node of a pool sharing one machine flushes (about 1 s of CPU
 * for a 50 MB level-0 table) and compacts at the same moment, and the whole pool stalls for seconds together. Spread
 * apart, each flush costs the pool a fraction of its rate for a moment instead. The spread only adds to the
 * configured size: a smaller memtable flushes more often, and each flush compacts with the whole of level 1.
 */
export const defaultLevelKvStoreOptions: Required<LevelKvStoreOptions> = {
  createIfMissing: true,
  errorIfExists: false,
  cacheSize: 8 * 1024 * 1024,
  writeBufferSize: 64 * 1024 * 1024,
  writeBufferJitter: 0.75,
  compression: true,
  maxFileSize: 32 * 1024 * 1024,
};

type Bytes = Uint8Array;
/** abstract-level's chained batch: operations go to the engine as they are added. */
interface LevelChainedBatch {
  put(key: Bytes, value: Bytes): unknown;
  del(key: Bytes): unknown;
  write(opts: { sync?: boolean }): Promise<void>;
  close(): Promise<void>;
}
interface LevelIterator {
  nextv(size: number): Promise<[Bytes, Bytes | undefined][]>;
  close(): Promise<void>;
}

/** The part of abstract-level that both backends share and this store uses. */
interface LevelDb {
  open(): Promise<void>;
  close(): Promise<void>;
  get(key: Bytes): Promise<Bytes | undefined>;
  getSync(key: Bytes): Bytes | undefined;
  getMany(keys: Bytes[]): Promise<(Bytes | undefined)[]>;
  batch(): LevelChainedBatch;
  iterator(opts: Record<string, unknown>): LevelIterator;
  /** classic-level only; memory-level has none */
  getProperty?(name: string): string;
}

const EMPTY = new Uint8Array(0);
const ITERATOR_CHUNK = 256;

/**
 * The memtable size of one open: `size × (1 + jitter × random)`, rounded. StorageError INVALID_OPTION for a size that
 * is not a positive integer or a jitter outside [0, 1].
 */
export function writeBufferBytes(size: number, jitter: number, random: () => number = Math.random): number {
  if (!Number.isSafeInteger(size) || size <= 0) throw new StorageError(StorageErrorCode.INVALID_OPTION, { option: 'writeBufferSize', value: size });
  if (!(jitter >= 0 && jitter <= 1)) throw new StorageError(StorageErrorCode.INVALID_OPTION, { option: 'writeBufferJitter', value: jitter });
  return Math.round(size * (1 + jitter * random()));
}

/** Opens (creating when missing) a LevelDB database at `path` through classic-level. */
export async function openLevelKvStore(path: string, opts: LevelKvStoreOptions = {}): Promise<KvStore> {
  const o = { ...defaultLevelKvStoreOptions, ...opts };
  const db = new ClassicLevel<Bytes, Bytes>(path, {
    keyEncoding: 'buffer',
    valueEncoding: 'buffer',
    createIfMissing: o.createIfMissing,
    errorIfExists: o.errorIfExists,
    cacheSize: o.cacheSize,
    writeBufferSize: writeBufferBytes(o.writeBufferSize, o.writeBufferJitter),
    compression: o.compression,
    maxFileSize: o.maxFileSize,
  });
  try {
    await db.open();
  } catch (e) {
    throw new StorageError(StorageErrorCode.KV_OPEN_FAILED, { path, reason: reasonOf((e as { cause?: unknown }).cause ?? e) }, undefined, { cause: e });
  }
  return new LevelKvStore(db as unknown as LevelDb);
}

/** An in-memory store with the same behaviour as {@link openLevelKvStore} (memory-level), for tests and tools. */
export async function openMemoryKvStore(): Promise<KvStore> {
  const db = new MemoryLevel<Bytes, Bytes>({ keyEncoding: 'buffer', valueEncoding: 'buffer', storeEncoding: 'buffer' });
  await db.open();
  return new LevelKvStore(db as unknown as LevelDb);
}

function concat(prefix: Bytes, key: Bytes): Bytes {
  const out = Buffer.allocUnsafe(prefix.length + key.length);
  out.set(prefix, 0);
  out.set(key, prefix.length);
  return out;
}

function checkBytes(v: unknown, what: string): asserts v is Bytes {
  if (!(v instanceof Uint8Array)) throw new StorageError(StorageErrorCode.INVALID_KEY, { what });
}

class LevelKvStore implements KvStore {
  readonly #db: LevelDb;
  readonly #prefixes = new Map<string, Bytes>();
  readonly #inflight = new Set<Promise<unknown>>();
  #writeQueue: Promise<void> = Promise.resolve();
  #closing: Promise<void> | undefined;

  constructor(db: LevelDb) {
    this.#db = db;
  }

  get closed(): boolean {
    return this.#closing !== undefined;
  }

  engineProperty(name: string): string | undefined {
    this.#checkOpen();
    if (this.#db.getProperty === undefined) return undefined;
    try {
      return this.#db.getProperty(name);
    } catch (e) {
      throw this.#wrap('property', e);
    }
  }

  prefix(bucket: string): Bytes {
    let p = this.#prefixes.get(bucket);
    if (p === undefined) {
      p = bucketPrefix(bucket);
      this.#prefixes.set(bucket, p);
    }
    return p;
  }

  fullKey(bucket: string, key: Bytes): Bytes {
    checkBytes(key, 'key');
    return concat(this.prefix(bucket), key);
  }

  #checkOpen(): void {
    if (this.#closing !== undefined) throw new StorageError(StorageErrorCode.KV_CLOSED);
  }

  #wrap(op: string, e: unknown): StorageError {
    if (e instanceof StorageError) return e;
    if (this.#closing !== undefined) return new StorageError(StorageErrorCode.KV_CLOSED, { op }, undefined, { cause: e });
    return new StorageError(StorageErrorCode.KV_IO_FAILED, { op, reason: reasonOf(e) }, undefined, { cause: e });
  }

  #track<T>(p: Promise<T>): Promise<T> {
    this.#inflight.add(p);
    const done = (): void => {
      this.#inflight.delete(p);
    };
    p.then(done, done);
    return p;
  }

  async get(bucket: string, key: Bytes): Promise<Bytes | undefined> {
    const k = this.fullKey(bucket, key);
    this.#checkOpen();
    try {
      return await this.#track(this.#db.get(k));
    } catch (e) {
      throw this.#wrap('get', e);
    }
  }

  getSync(bucket: string, key: Bytes): Bytes | undefined {
    const k = this.fullKey(bucket, key);
    this.#checkOpen();
    try {
      return this.#db.getSync(k);
    } catch (e) {
      throw this.#wrap('getSync', e);
    }
  }

  async getMany(bucket: string, keys: Bytes[]): Promise<(Bytes | undefined)[]> {
    if (!Array.isArray(keys)) throw new StorageError(StorageErrorCode.INVALID_KEY, { what: 'keys' });
    const ks = keys.map((k) => this.fullKey(bucket, k));
    this.#checkOpen();
    if (ks.length === 0) return [];
    try {
      return await this.#track(this.#db.getMany(ks));
    } catch (e) {
      throw this.#wrap('getMany', e);
    }
  }

  iterate(bucket: string, range: KvRange = {}): AsyncIterableIterator<[Bytes, Bytes]> {
    const prefix = this.prefix(bucket);
    const opts: Record<string, unknown> = { reverse: range.reverse === true, values: range.values !== false };
    if (range.gt !== undefined) opts.gt = this.fullKey(bucket, range.gt);
    else if (range.gte !== undefined) opts.gte = this.fullKey(bucket, range.gte);
    else opts.gte = prefix;
    if (range.lt !== undefined) opts.lt = this.fullKey(bucket, range.lt);
    else if (range.lte !== undefined) opts.lte = this.fullKey(bucket, range.lte);
    else {
      const end = Uint8Array.from(prefix);
      end[end.length - 1] = 1;
      opts.lt = end;
    }
    if (range.limit !== undefined) {
      if (!Number.isSafeInteger(range.limit) || range.limit < 0) {
        throw new StorageError(StorageErrorCode.INVALID_KEY, { what: 'limit' });
      }
      opts.limit = range.limit;
    }
    this.#checkOpen();
    return this.#entries(prefix.length, opts);
  }

  async *#entries(prefixLength: number, opts: Record<string, unknown>): AsyncIterableIterator<[Bytes, Bytes]> {
    if (opts.limit === 0) return;
    this.#checkOpen();
    let it: LevelIterator;
    try {
      it = this.#db.iterator(opts);
    } catch (e) {
      throw this.#wrap('iterate', e);
    }
    try {
      while (true) {
        let chunk: [Bytes, Bytes | undefined][];
        try {
          chunk = await this.#track(it.nextv(ITERATOR_CHUNK));
        } catch (e) {
          throw this.#wrap('iterate', e);
        }
        if (chunk.length === 0) return;
        for (const [k, v] of chunk) yield [k.subarray(prefixLength), v ?? EMPTY];
      }
    } finally {
      await it.close().catch(() => undefined); // closing an iterator of a closed db is a no-op
    }
  }

  batch(): WriteBatch {
    return new LevelWriteBatch(this);
  }

  /** A chained batch of the engine (called by LevelWriteBatch on its first operation). */
  engineBatch(): LevelChainedBatch {
    this.#checkOpen();
    try {
      return this.#db.batch();
    } catch (e) {
      throw this.#wrap('batch', e);
    }
  }

  /**
   * Writes an engine batch (called by LevelWriteBatch). Writes are applied one after another in the
   * order write() was called, even when several are in flight: a batch that rewrites a record
   * never lands before an earlier batch that wrote an older version of it.
   */
  writeEngineBatch(batch: LevelChainedBatch | undefined, sync: boolean): Promise<void> {
    this.#checkOpen();
    const run = async (): Promise<void> => {
      if (batch === undefined) return;
      try {
        await batch.write({ sync });
      } catch (e) {
        throw this.#wrap('batch', e);
      }
    };
    const p = this.#writeQueue.then(run, run);
    this.#writeQueue = p.catch(() => undefined);
    return this.#track(p);
  }

  close(): Promise<void> {
    if (this.#closing === undefined) {
      this.#closing = (async () => {
        await Promise.allSettled([...this.#inflight]);
        try {
          await this.#db.close();
        } catch (e) {
          throw new StorageError(StorageErrorCode.KV_IO_FAILED, { op: 'close', reason: reasonOf(e) }, undefined, { cause: e });
        }
      })();
    }
    return this.#closing;
  }
}

/**
 * Operations are handed to the engine as they are added (abstract-level's chained batch, which
 * costs about half the CPU of an array batch); the engine applies them all at once on write().
 * A batch that is never written holds its operations until the store is closed.
 */
class LevelWriteBatch implements WriteBatch {
  readonly #store: LevelKvStore;
  #engine: LevelChainedBatch | undefined;
  #length = 0;
  readonly #listeners: BatchWriteListener[] = [];
  #written = false;

  constructor(store: LevelKvStore) {
    this.#store = store;
  }

  get length(): number {
    return this.#length;
  }

  #checkMutable(): void {
    if (this.#written) throw new StorageError(StorageErrorCode.BATCH_ALREADY_WRITTEN);
  }

  put(bucket: string, key: Bytes, value: Bytes): this {
    this.#checkMutable();
    checkBytes(value, 'value');
    const k = this.#store.fullKey(bucket, key);
    this.#engine ??= this.#store.engineBatch();
    this.#engine.put(k, value);
    this.#length++;
    return this;
  }

  del(bucket: string, key: Bytes): this {
    this.#checkMutable();
    const k = this.#store.fullKey(bucket, key);
    this.#engine ??= this.#store.engineBatch();
    this.#engine.del(k);
    this.#length++;
    return this;
  }

  afterWrite(listener: BatchWriteListener): this {
    this.#checkMutable();
    if (typeof listener !== 'function') throw new StorageError(StorageErrorCode.INVALID_KEY, { what: 'listener' });
    this.#listeners.push(listener);
    return this;
  }

  async write(opts: { sync?: boolean } = {}): Promise<void> {
    this.#checkMutable();
    this.#written = true;
    let error: Error | undefined;
    try {
      await this.#store.writeEngineBatch(this.#engine, opts.sync === true);
    } catch (e) {
      error = e instanceof Error ? e : new StorageError(StorageErrorCode.KV_IO_FAILED, { op: 'batch', reason: reasonOf(e) });
      await this.#engine?.close().catch(() => undefined);
    }
    let listenerError: unknown;
    for (const l of this.#listeners) {
      try {
        l(error);
      } catch (e) {
        listenerError ??= e;
      }
    }
    if (error !== undefined) throw error;
    if (listenerError !== undefined) throw listenerError;
  }
}
