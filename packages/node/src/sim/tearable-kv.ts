// A key-value store whose writes can be cut at a chosen point (issue #15): after `armTear(k)`, the
// next k batch writes land and every later one is lost (it resolves as if written: the process
// that issued it is about to die), and `torn` turns true; the simulator then crashes the node
// before it answers anyone. With `afterLast`, the crash comes right after the k-th write lands
// (between a commit and its reply).
// Each WriteBatch stays atomic, as LevelDB's are; what tears is a sequence of batches — the writes
// of one commit, the phases of a catch-up, the write before a reply.
import type { BatchWriteListener, KvRange, KvStore, WriteBatch } from '@quire/storage';

export class TearableKvStore implements KvStore {
  /** batch writes still allowed before the tear; undefined: not armed */
  private remaining: number | undefined;
  private afterLast = false;
  /** the tear point was reached: later writes are lost */
  torn = false;
  /** batch writes lost to tears (diagnostics) */
  lostWrites = 0;

  constructor(private readonly inner: KvStore) {}

  /** Arms a tear after `writes` more batch writes; undefined disarms and heals (a restarted process). */
  armTear(writes: number | undefined, afterLast = false): void {
    this.remaining = writes;
    this.afterLast = afterLast && writes !== undefined && writes > 0;
    if (writes === undefined) this.torn = false;
  }

  get(bucket: string, key: Uint8Array): Promise<Uint8Array | undefined> {
    return this.inner.get(bucket, key);
  }

  getSync(bucket: string, key: Uint8Array): Uint8Array | undefined {
    return this.inner.getSync(bucket, key);
  }

  getMany(bucket: string, keys: Uint8Array[]): Promise<(Uint8Array | undefined)[]> {
    return this.inner.getMany(bucket, keys);
  }

  iterate(bucket: string, range?: KvRange): AsyncIterableIterator<[Uint8Array, Uint8Array]> {
    return this.inner.iterate(bucket, range);
  }

  batch(): WriteBatch {
    return new TearableBatch(this.inner.batch(), this);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  get closed(): boolean {
    return this.inner.closed;
  }

  engineProperty(name: string): string | undefined {
    return this.inner.engineProperty(name);
  }

  /** Whether the next batch write lands (and counts it against an armed tear). */
  admit(): boolean {
    if (this.torn) {
      this.lostWrites++;
      return false;
    }
    if (this.remaining !== undefined) {
      if (this.remaining <= 0) {
        this.torn = true;
        this.lostWrites++;
        return false;
      }
      this.remaining--;
      if (this.remaining === 0 && this.afterLast) {
        this.torn = true;
        this.remaining = undefined;
      }
    }
    return true;
  }
}

class TearableBatch implements WriteBatch {
  private readonly listeners: BatchWriteListener[] = [];

  constructor(
    private readonly inner: WriteBatch,
    private readonly store: TearableKvStore,
  ) {}

  put(bucket: string, key: Uint8Array, value: Uint8Array): this {
    this.inner.put(bucket, key, value);
    return this;
  }

  del(bucket: string, key: Uint8Array): this {
    this.inner.del(bucket, key);
    return this;
  }

  get length(): number {
    return this.inner.length;
  }

  afterWrite(listener: BatchWriteListener): this {
    this.listeners.push(listener);
    return this;
  }

  async write(opts?: { sync?: boolean }): Promise<void> {
    if (!this.store.admit()) {
      for (const l of this.listeners) l(undefined);
      return;
    }
    for (const l of this.listeners) this.inner.afterWrite(l);
    await this.inner.write(opts);
  }
}
