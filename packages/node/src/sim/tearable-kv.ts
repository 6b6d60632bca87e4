// A key-value store whose writes can be cut at a chosen point (issue #15): after `armTear(k)`, the
// next k batch writes land and every later one is lost (it resolves as if written: the process
// that issued it is about to die), and `torn` turns true; the simulator then crashes the node
// before it answers anyone. With `afterLast`, the crash comes right after the k-th write lands
// (between a commit and its reply).
// Each WriteBatch stays atomic, as LevelDB's are; what tears is a sequence of batches — the writes
// of one commit, the phases of a catch-up, the write before a reply.
// With `armCrashAtFlush()`, writes finish a macrotask after they start (as a disk's do), and the
// first flush of the node that follows a batch write is the crash point: every write still in
// flight when that flush resolves is lost (`cut()`), after the node has sent its replies. A node
// that answers only once its writes are on disk loses nothing it answered for; one whose flush
// resolves early (replies before persistence) does.
import type { BatchWriteListener, KvRange, KvStore, WriteBatch } from '@quire/storage';

export class TearableKvStore implements KvStore {
  /** batch writes still allowed before the tear; undefined: not armed */
  private remaining: number | undefined;
  private afterLast = false;
  /** the tear point was reached: later writes are lost */
  torn = false;
  /** batch writes lost to tears (diagnostics) */
  lostWrites = 0;
  /** writes finish a macrotask after they start (crash at flush armed) */
  private slow = false;
  /** batches created since the crash at flush was armed */
  private createdSinceArm = 0;
  /** incremented by `cut()`: a write started under an older generation never lands */
  generation = 0;
  /** the last tear came at a flush: the node sent the replies of that flush before it crashed */
  tornAtFlush = false;

  constructor(private readonly inner: KvStore) {}

  /** Arms a tear after `writes` more batch writes; undefined disarms and heals (a restarted process). */
  armTear(writes: number | undefined, afterLast = false): void {
    this.remaining = writes;
    this.afterLast = afterLast && writes !== undefined && writes > 0;
    if (writes === undefined) {
      this.torn = false;
      this.slow = false;
      this.tornAtFlush = false;
    }
  }

  /** Arms a crash at the first flush that follows a batch write: writes finish a macrotask late from now on. */
  armCrashAtFlush(): void {
    this.slow = true;
    this.createdSinceArm = 0;
  }

  /** Writes finish a macrotask after they start (the crash at flush is armed). */
  get slowWrites(): boolean {
    return this.slow;
  }

  /**
   * Called when a flush of the node resolves: with the crash at flush armed and a batch written
   * since, the node crashes here — every write still in flight is lost, and so is every later one.
   */
  flushed(): void {
    if (!this.slow || this.torn || this.createdSinceArm === 0) return;
    this.cut();
    this.tornAtFlush = true;
  }

  /** The process dies now: writes in flight never land, later ones neither. */
  cut(): void {
    this.generation++;
    this.torn = true;
  }

  /** counts a batch created while the crash at flush is armed */
  noteBatch(): void {
    if (this.slow) this.createdSinceArm++;
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
    this.noteBatch();
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
    const generation = this.store.generation;
    let lands = this.store.admit();
    if (lands && this.store.slowWrites) {
      // the write is in flight until the next macrotask; a crash before then loses it
      await new Promise<void>((r) => setImmediate(r));
      if (this.store.generation !== generation) {
        this.store.lostWrites++;
        lands = false;
      }
    }
    if (!lands) {
      for (const l of this.listeners) l(undefined);
      return;
    }
    for (const l of this.listeners) this.inner.afterWrite(l);
    await this.inner.write(opts);
  }
}
