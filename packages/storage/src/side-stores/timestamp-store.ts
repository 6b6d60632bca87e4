// Historic state roots (formats.md 7.6): per ledger, batch ppTime -> the ledger's committed state
// root after that batch. "As of T" reads use the root stored under the greatest time <= T.
import type { KvStore, WriteBatch } from '../kv/kv-store.js';
import { corrupt, invalid } from './errors.js';
import { withBatch } from './write.js';

const STORE = 'TimestampStore';
/** The bucket of a ledger's timestamps: `ts-root/<ledgerId>` (named by id, like the ledger's own buckets). */
export function timestampBucket(ledgerId: number): string {
  if (!Number.isSafeInteger(ledgerId) || ledgerId < 0 || ledgerId > 0x7fffffff) throw invalid(STORE, 'ledgerId', 'not an integer in [0, 2^31-1]');
  return `ts-root/${ledgerId}`;
}

/** ppTime as 8 bytes big-endian, so that key order is time order. */
export function timestampKey(time: number): Uint8Array {
  if (!Number.isSafeInteger(time) || time < 0) throw invalid(STORE, 'time', 'not a non-negative integer of seconds');
  const key = new Uint8Array(8);
  const view = new DataView(key.buffer);
  const hi = Math.floor(time / 0x1_0000_0000);
  view.setUint32(0, hi);
  view.setUint32(4, time - hi * 0x1_0000_0000);
  return key;
}

function decodeTime(bucket: string, key: Uint8Array): number {
  if (key.length !== 8) throw corrupt(STORE, bucket, `key of ${key.length} bytes`);
  const view = new DataView(key.buffer, key.byteOffset, 8);
  return view.getUint32(0) * 0x1_0000_0000 + view.getUint32(4);
}

function checkRoot(bucket: string, key: string, root: Uint8Array): Uint8Array {
  if (root.length !== 32) throw corrupt(STORE, `${bucket}@${key}`, `root of ${root.length} bytes`);
  return root;
}

/** A root with the time it was stored under. */
export interface TimestampedRoot {
  time: number;
  root: Uint8Array;
}

export class TimestampStore {
  readonly #kv: KvStore;

  constructor(kv: KvStore) {
    this.#kv = kv;
  }

  /** Records the committed state root of `ledgerId` after the batch of time `ppTime`. */
  set(ledgerId: number, ppTime: number, root: Uint8Array, batch: WriteBatch): void;
  set(ledgerId: number, ppTime: number, root: Uint8Array): Promise<void>;
  set(ledgerId: number, ppTime: number, root: Uint8Array, batch?: WriteBatch): Promise<void> | void {
    const bucket = timestampBucket(ledgerId);
    const key = timestampKey(ppTime);
    if (!(root instanceof Uint8Array) || root.length !== 32) throw invalid(STORE, 'root', 'not 32 bytes');
    const value = Uint8Array.from(root);
    return withBatch(this.#kv, batch, (b) => b.put(bucket, key, value));
  }

  /** The root stored under exactly `time`. */
  async get(ledgerId: number, time: number): Promise<Uint8Array | undefined> {
    const bucket = timestampBucket(ledgerId);
    const v = await this.#kv.get(bucket, timestampKey(time));
    return v === undefined ? undefined : checkRoot(bucket, String(time), v);
  }

  /** The root stored under the greatest time <= `time`, or undefined when every stored time is later. */
  async getEqualOrPrevious(ledgerId: number, time: number): Promise<Uint8Array | undefined> {
    return (await this.getEqualOrPreviousEntry(ledgerId, time))?.root;
  }

  /** Like {@link getEqualOrPrevious}, with the time the root was stored under. */
  async getEqualOrPreviousEntry(ledgerId: number, time: number): Promise<TimestampedRoot | undefined> {
    const bucket = timestampBucket(ledgerId);
    for await (const [k, v] of this.#kv.iterate(bucket, { lte: timestampKey(time), reverse: true, limit: 1 })) {
      const t = decodeTime(bucket, k);
      return { time: t, root: checkRoot(bucket, String(t), v) };
    }
    return undefined;
  }

  /** The most recent entry of a ledger. */
  async getLatest(ledgerId: number): Promise<TimestampedRoot | undefined> {
    const bucket = timestampBucket(ledgerId);
    for await (const [k, v] of this.#kv.iterate(bucket, { reverse: true, limit: 1 })) {
      const t = decodeTime(bucket, k);
      return { time: t, root: checkRoot(bucket, String(t), v) };
    }
    return undefined;
  }

  remove(ledgerId: number, ppTime: number, batch: WriteBatch): void;
  remove(ledgerId: number, ppTime: number): Promise<void>;
  remove(ledgerId: number, ppTime: number, batch?: WriteBatch): Promise<void> | void {
    const bucket = timestampBucket(ledgerId);
    const key = timestampKey(ppTime);
    return withBatch(this.#kv, batch, (b) => b.del(bucket, key));
  }
}
