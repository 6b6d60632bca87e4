/**
 * A ledger (formats 6): the txn log keyed by seqNo, its RFC 6962 Merkle tree with a persisted hash
 * store, and an uncommitted tail for the batches consensus has in flight.
 *
 * Appended txns form the uncommitted tail: their root is known at once, and consensus later commits
 * the first k of them (oldest batch first) or discards the last k (the newest batch reverted).
 * commit() adds the txns, their hashes and the new committed size to a WriteBatch, so that a batch's
 * ledger, state and index changes land in one atomic write. Until that batch is written, committed
 * txns and hashes are served from memory. Batches must be written in the order of their commits
 * (the store applies writes in the order write() is called, so several may be in flight); a ledger
 * that sees its batches land out of order refuses further changes with LEDGER_WRITE_ORDER.
 * A store holds one Ledger object per ledger id at a time: it owns that ledger's buckets.
 */
import type { Txn } from '@quire/common';
import type { KvStore, WriteBatch } from '../kv/kv-store.js';
import { decodeSeqNoKey, seqNoKey } from '../kv/kv-store.js';
import { StorageError, StorageErrorCode, reasonOf } from '../errors.js';
import { appendToFrontier, merkleLeafHash, rootFromFrontier } from './merkle.js';
import { HashStore, ledgerBuckets, type LedgerBuckets } from './hash-store.js';
import { recoverLedger, type LedgerRecovery } from './recovery.js';
import { consistencyProof, inclusionPath, treeRoot } from './tree-proofs.js';
import { decodeTxn, encodeTxn } from './txn-codec.js';

/** Options of {@link Ledger.open}. */
export interface LedgerOptions {
  /**
   * Recompute every hash of the hash store from the txn log at open and rewrite any that is
   * missing or different (O(n); for tools and after suspected damage). Default false: the store is
   * checked in O(log n) and rebuilt from the log only where it is short or torn.
   */
  verify?: boolean;
  /** Durable tree hashes kept in memory for roots and proofs of earlier sizes. Default 8192. */
  hashCacheEntries?: number;
  /**
   * MP(txn) of the txns made durable last kept in memory, so that reading a txn just written (a write's REPLY is
   * built from the ledger once its batch is on disk, several batches may land meanwhile) does not go to the store.
   * Default 4096 (8 batches of 500); 0 keeps none.
   */
  recentTxnEntries?: number;
  /**
   * The bytes of those txns kept in memory at most, together (a txn may be up to about 128 KiB: 4,096 of them would
   * be 512 MiB): the window keeps the last txns that fit within both bounds. Default 8 MiB; 0 keeps none.
   */
  recentTxnBytes?: number;
}

export const defaultLedgerOptions: Required<LedgerOptions> = {
  verify: false,
  hashCacheEntries: 8192,
  recentTxnEntries: 4096,
  recentTxnBytes: 8 * 1024 * 1024,
};

/** What `Ledger.open` is told: which ledger of the store, and its options. */
export interface LedgerOpenOptions extends LedgerOptions {
  ledgerId: number;
}

/** What a ledger runs over: the key-value store that holds it. */
export interface LedgerModules {
  kv: KvStore;
}

/** Result of {@link Ledger.append}: the seqNos given to the txns and the uncommitted root after them. */
export interface AppendResult {
  first: number;
  last: number;
  root: Uint8Array;
}

const MAX_LEDGER_ID = 0x7fff_ffff;

interface PendingCommit {
  end: number;
  written: boolean;
}

export class Ledger {
  readonly ledgerId: number;
  /** What opening found and repaired. */
  readonly recovery: LedgerRecovery;
  readonly #kv: KvStore;
  readonly #buckets: LedgerBuckets;
  readonly #tree: HashStore;
  /** MP(txn) of seqNos durable+1 .. uncommittedSize. */
  #tail: Uint8Array[] = [];
  /**
   * MP(txn) of seqNos durable-#recent.length+1 .. durable: the last ones made durable, at most #recentMax of them and
   * #recentMaxBytes together (#recentBytes), each in a buffer of its own (never a view pinning a larger buffer)
   */
  #recent: Uint8Array[] = [];
  #recentBytes = 0;
  readonly #recentMax: number;
  readonly #recentMaxBytes: number;
  #committed: number;
  #committedRoot: Uint8Array;
  #uncommittedRoot: Uint8Array;
  readonly #pending: PendingCommit[] = [];
  #failure: Error | undefined;

  private constructor(kv: KvStore, ledgerId: number, recovery: LedgerRecovery, opts: Required<LedgerOptions>) {
    this.#kv = kv;
    this.ledgerId = ledgerId;
    this.recovery = recovery;
    this.#buckets = ledgerBuckets(ledgerId);
    this.#tree = new HashStore(kv, ledgerId, recovery.size, opts.hashCacheEntries);
    this.#recentMax = opts.recentTxnEntries;
    this.#recentMaxBytes = opts.recentTxnBytes;
    this.#committed = recovery.size;
    this.#committedRoot = this.#tree.root;
    this.#uncommittedRoot = this.#committedRoot;
  }

  /** Opens ledger `ledgerId` of `kv`, reloading its hash store or rebuilding it from the txn log. */
  static async open(options: LedgerOpenOptions, modules: LedgerModules): Promise<Ledger> {
    const { ledgerId, ...opts } = options;
    const { kv } = modules;
    if (!Number.isSafeInteger(ledgerId) || ledgerId < 0 || ledgerId > MAX_LEDGER_ID) {
      throw new StorageError(StorageErrorCode.INVALID_LEDGER_ID, { ledgerId: String(ledgerId) });
    }
    const o = { ...defaultLedgerOptions, ...opts };
    for (const option of ['recentTxnEntries', 'recentTxnBytes'] as const) {
      const value = o[option];
      if (!Number.isSafeInteger(value) || value < 0) throw new StorageError(StorageErrorCode.INVALID_OPTION, { option, value });
    }
    const recovery = await recoverLedger(kv, ledgerId, o.verify);
    return new Ledger(kv, ledgerId, recovery, o);
  }

  /** Number of committed txns (the seqNo of the last one). */
  get size(): number {
    return this.#committed;
  }

  /** Number of txns, uncommitted ones included. */
  get uncommittedSize(): number {
    return this.#tree.size;
  }

  /** Root of the committed tree. */
  get root(): Uint8Array {
    return Uint8Array.from(this.#committedRoot);
  }

  /** Root of the tree with the uncommitted tail. */
  get uncommittedRoot(): Uint8Array {
    return Uint8Array.from(this.#uncommittedRoot);
  }

  #checkUsable(): void {
    if (this.#failure instanceof StorageError && this.#failure.code === StorageErrorCode.LEDGER_WRITE_ORDER) throw this.#failure;
    if (this.#failure !== undefined) {
      throw new StorageError(StorageErrorCode.LEDGER_WRITE_FAILED, { ledgerId: this.ledgerId, reason: reasonOf(this.#failure) }, undefined, {
        cause: this.#failure,
      });
    }
  }

  #outOfRange(what: string, value: unknown, min: number, max: number): StorageError {
    return new StorageError(StorageErrorCode.OUT_OF_RANGE, {
      ledgerId: this.ledgerId,
      what,
      value: typeof value === 'number' ? value : String(value),
      min,
      max,
    });
  }

  #checkInt(what: string, value: unknown, min: number, max: number): asserts value is number {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) throw this.#outOfRange(what, value, min, max);
  }

  /**
   * Appends txns to the uncommitted tail. Each txn's `txnMetadata.seqNo` must be the next seqNo;
   * it is set on the given object when absent. All or nothing: on an error nothing is appended.
   */
  append(txns: readonly Txn[]): AppendResult {
    this.#checkUsable();
    if (!Array.isArray(txns)) throw new StorageError(StorageErrorCode.INVALID_TXN, { ledgerId: this.ledgerId, index: -1, reason: 'not a list' });
    const base = this.#tree.size;
    const undo: (() => void)[] = [];
    let encoded: Uint8Array[];
    try {
      encoded = txns.map((t, i) => encodeTxn(this.ledgerId, t, base + i + 1, i, undo));
    } catch (e) {
      for (const u of undo) u();
      throw e;
    }
    for (const bytes of encoded) {
      this.#tree.append(merkleLeafHash(bytes));
      this.#tail.push(bytes);
    }
    if (encoded.length > 0) this.#uncommittedRoot = this.#tree.root;
    return { first: base + 1, last: base + encoded.length, root: Uint8Array.from(this.#uncommittedRoot) };
  }

  /**
   * Commits the first `count` uncommitted txns (default: all). With `batch`, their records are added
   * to it and the caller writes it; without, the ledger writes its own batch and the promise settles
   * when it is written. The committed size and root change at once either way.
   */
  commit(count?: number): Promise<void>;
  commit(count: number | undefined, batch: WriteBatch): void;
  commit(count?: number, batch?: WriteBatch): void | Promise<void> {
    if (batch === undefined) {
      try {
        const own = this.#kv.batch();
        this.#commitInto(count, own);
        return own.write();
      } catch (e) {
        return Promise.reject(e);
      }
    }
    this.#commitInto(count, batch);
  }

  #commitInto(count: number | undefined, batch: WriteBatch): void {
    this.#checkUsable();
    const available = this.#tree.size - this.#committed;
    const n = count ?? available;
    this.#checkInt('count', n, 0, available);
    if (n === 0) return;
    const from = this.#committed;
    const to = from + n;
    const durable = this.#tree.durable;
    for (let seqNo = from + 1; seqNo <= to; seqNo++) batch.put(this.#buckets.txn, seqNoKey(seqNo), this.#tail[seqNo - durable - 1]);
    this.#tree.addCommitOps(batch, from, to);
    const entry: PendingCommit = { end: to, written: false };
    batch.afterWrite((error) => this.#onWritten(entry, error));
    this.#pending.push(entry);
    this.#committed = to;
    this.#committedRoot = to === this.#tree.size ? this.#uncommittedRoot : treeRoot(this.#tree.read, to);
  }

  #onWritten(entry: PendingCommit, error: Error | undefined): void {
    if (error !== undefined) {
      this.#failure ??= error;
      return;
    }
    entry.written = true;
    if (this.#pending[0] !== entry && this.#failure === undefined) {
      this.#failure = new StorageError(StorageErrorCode.LEDGER_WRITE_ORDER, { ledgerId: this.ledgerId, written: entry.end, pending: this.#pending[0].end });
    }
    let durable = this.#tree.durable;
    while (this.#pending.length > 0 && this.#pending[0].written) {
      durable = this.#pending[0].end;
      this.#pending.shift();
    }
    const drop = durable - this.#tree.durable;
    if (drop > 0) {
      const landed = this.#tail.splice(0, drop);
      this.#keepRecent(landed);
      this.#tree.setDurable(durable);
    }
  }

  /**
   * Keeps the MP(txn) of the txns just made durable (in seqNo order, following #recent) within #recentMax and
   * #recentMaxBytes. A txn's bytes that are a view into a larger buffer (a caught-up txn's, within the CATCHUP_REP it
   * came in) are copied, so that the window never holds more memory than its bytes.
   */
  #keepRecent(landed: Uint8Array[]): void {
    if (this.#recentMax === 0) return;
    // the last txns landed that fit the window on their own (a batch larger than it keeps its last ones only)
    let from = landed.length;
    let bytes = 0;
    while (from > 0 && landed.length - from < this.#recentMax) {
      const n = landed[from - 1].byteLength;
      if (bytes + n > this.#recentMaxBytes) break;
      bytes += n;
      from--;
    }
    // the window is the txns durable last, without a gap: when some landed txn does not fit, none before it stays
    if (from > 0) {
      this.#recent = [];
      this.#recentBytes = 0;
    }
    for (let i = from; i < landed.length; i++) {
      const b = landed[i];
      this.#recent.push(b.byteLength < b.buffer.byteLength ? new Uint8Array(b) : b);
    }
    this.#recentBytes += bytes;
    let drop = 0;
    while (this.#recent.length - drop > this.#recentMax || this.#recentBytes > this.#recentMaxBytes) {
      this.#recentBytes -= this.#recent[drop].byteLength;
      drop++;
    }
    if (drop > 0) this.#recent.splice(0, drop);
  }

  /**
   * The memory the window of txns made durable last holds, in bytes: the whole buffers its entries are in (at most
   * `recentTxnBytes`).
   */
  get recentTxnMemory(): number {
    let n = 0;
    for (const b of this.#recent) n += b.buffer.byteLength;
    return n;
  }

  /** Drops the last `count` uncommitted txns (default: all of them). */
  discard(count?: number): void {
    this.#checkUsable();
    const available = this.#tree.size - this.#committed;
    const n = count ?? available;
    this.#checkInt('count', n, 0, available);
    if (n === 0) return;
    const size = this.#tree.size - n;
    this.#tree.truncate(size);
    this.#tail.length = size - this.#tree.durable;
    this.#uncommittedRoot = size === this.#committed ? this.#committedRoot : this.#tree.root;
  }

  /** MP(txn) of `seqNo`, committed or uncommitted; undefined beyond the uncommitted size. */
  #encodedAt(seqNo: number): Uint8Array | undefined {
    if (typeof seqNo !== 'number' || !Number.isSafeInteger(seqNo)) {
      throw new StorageError(StorageErrorCode.INVALID_SEQ_NO, { value: typeof seqNo === 'number' ? seqNo : String(seqNo) });
    }
    if (seqNo < 1 || seqNo > this.#tree.size) return undefined;
    const durable = this.#tree.durable;
    if (seqNo > durable) return this.#tail[seqNo - durable - 1];
    const recentFrom = durable - this.#recent.length;
    if (seqNo > recentFrom) return this.#recent[seqNo - recentFrom - 1];
    const v = this.#kv.getSync(this.#buckets.txn, seqNoKey(seqNo));
    if (v === undefined) throw new StorageError(StorageErrorCode.LOG_GAP, { ledgerId: this.ledgerId, seqNo });
    return v;
  }

  /** The txn of `seqNo` (committed or uncommitted), or undefined when the ledger has none. */
  async get(seqNo: number): Promise<Txn | undefined> {
    const v = this.#encodedAt(seqNo);
    return v === undefined ? undefined : decodeTxn(this.ledgerId, seqNo, v);
  }

  /** The stored bytes MP(txn) of `seqNo` (the Merkle leaf data), or undefined. */
  async getEncoded(seqNo: number): Promise<Uint8Array | undefined> {
    const v = this.#encodedAt(seqNo);
    return v === undefined ? undefined : Uint8Array.from(v);
  }

  /**
   * {@link get} without a promise, for synchronous executors: the txn of `seqNo`, committed
   * (durable ones from the store's synchronous read, the others from memory) or uncommitted.
   */
  getSync(seqNo: number): Txn | undefined {
    const v = this.#encodedAt(seqNo);
    return v === undefined ? undefined : decodeTxn(this.ledgerId, seqNo, v);
  }

  /** {@link getEncoded} without a promise: MP(txn) of `seqNo`, or undefined. */
  getEncodedSync(seqNo: number): Uint8Array | undefined {
    const v = this.#encodedAt(seqNo);
    return v === undefined ? undefined : Uint8Array.from(v);
  }

  /** The txns from seqNo `from` to `to` inclusive, uncommitted ones included; stops at the uncommitted size. */
  async *range(from: number, to: number): AsyncIterable<[number, Txn]> {
    this.#checkInt('from', from, 1, Number.MAX_SAFE_INTEGER);
    this.#checkInt('to', to, 0, Number.MAX_SAFE_INTEGER);
    let next = from;
    const diskEnd = Math.min(to, this.#tree.durable);
    if (next <= diskEnd) {
      for await (const [k, v] of this.#kv.iterate(this.#buckets.txn, { gte: seqNoKey(next), lte: seqNoKey(diskEnd) })) {
        if (decodeSeqNoKey(k) !== next) break;
        yield [next, decodeTxn(this.ledgerId, next, v)];
        next++;
      }
      if (next <= diskEnd) throw new StorageError(StorageErrorCode.LOG_GAP, { ledgerId: this.ledgerId, seqNo: next });
    }
    // the rest from memory, up to the uncommitted size (#encodedAt: undefined beyond it)
    while (next <= to) {
      const v = this.#encodedAt(next);
      if (v === undefined) break;
      yield [next, decodeTxn(this.ledgerId, next, v)];
      next++;
    }
  }

  /** Root of the tree of the first `size` txns, for any size up to the uncommitted size. */
  async rootAt(size: number): Promise<Uint8Array> {
    return this.rootAtSync(size);
  }

  /**
   * {@link rootAt} without a promise: O(log n) hash-store reads (the in-memory tail and partial
   * tiles, cached full tiles, else one synchronous store read per subtree) and as many hashes.
   */
  rootAtSync(size: number): Uint8Array {
    this.#checkInt('size', size, 0, this.#tree.size);
    if (size === this.#committed) return Uint8Array.from(this.#committedRoot);
    if (size === this.#tree.size) return Uint8Array.from(this.#uncommittedRoot);
    return Uint8Array.from(treeRoot(this.#tree.read, size));
  }

  /**
   * Hashes of the full subtrees of the tree of the first `size` txns, largest first (the compact form of
   * formats 6.2): appending the following leaf hashes to it gives the roots of the larger trees.
   */
  frontierAt(size: number): Uint8Array[] {
    this.#checkInt('size', size, 0, this.#tree.size);
    return this.#tree.frontierOf(size).map((h) => Uint8Array.from(h));
  }

  /**
   * Audit path of txn `seqNo` in the tree of `size` txns (default: the committed size), from the
   * leaf level upward (formats 6.3); verify with verifyInclusion(leaf, seqNo - 1, size, path, root).
   */
  async inclusionProof(seqNo: number, size: number = this.#committed): Promise<Uint8Array[]> {
    return this.inclusionProofSync(seqNo, size);
  }

  /** {@link inclusionProof} without a promise (O(log n) hash-store reads, see {@link rootAtSync}). */
  inclusionProofSync(seqNo: number, size: number = this.#committed): Uint8Array[] {
    this.#checkInt('size', size, 1, this.#tree.size);
    this.#checkInt('seqNo', seqNo, 1, size);
    return inclusionPath(this.#tree.read, seqNo - 1, size).map((h) => Uint8Array.from(h));
  }

  /** Consistency proof from the tree of `oldSize` txns to the tree of `newSize` (formats 6.4). */
  async consistencyProof(oldSize: number, newSize: number): Promise<Uint8Array[]> {
    return this.consistencyProofSync(oldSize, newSize);
  }

  /** {@link consistencyProof} without a promise (O(log n) hash-store reads, see {@link rootAtSync}). */
  consistencyProofSync(oldSize: number, newSize: number): Uint8Array[] {
    this.#checkInt('newSize', newSize, 0, this.#tree.size);
    this.#checkInt('oldSize', oldSize, 0, newSize);
    return consistencyProof(this.#tree.read, oldSize, newSize).map((h) => Uint8Array.from(h));
  }

  /**
   * For each txn `from`..`to`: the root of the tree of its own size and its audit path there (what
   * a write's REPLY carries, formats.md 5.2), the same as `rootAtSync(s)` and
   * `inclusionProofSync(s, s)`. The audit path of the last leaf of a tree is its predecessor's
   * frontier, smallest subtree first, so one walk from the frontier at `from - 1` gives them all in
   * O(log n) hashes per txn without reading the hash store. Hashes are shared between the entries
   * (the same Uint8Array where two paths hold the same hash); callers must not modify them.
   */
  writeProofs(from: number, to: number): { root: Uint8Array; auditPath: Uint8Array[] }[] {
    this.#checkInt('to', to, 1, this.#tree.size);
    this.#checkInt('from', from, 1, to);
    const stack: Uint8Array[] = this.#tree.frontierOf(from - 1).map((h) => Uint8Array.from(h));
    const out: { root: Uint8Array; auditPath: Uint8Array[] }[] = [];
    for (let s = from - 1; s < to; s++) {
      const auditPath = stack.slice().reverse();
      appendToFrontier(stack, s, Uint8Array.from(this.#tree.node(0, s)));
      out.push({ root: rootFromFrontier(stack), auditPath });
    }
    return out;
  }

  /** Leaf hash of txn `seqNo` (committed or uncommitted). */
  leafHash(seqNo: number): Uint8Array {
    this.#checkInt('seqNo', seqNo, 1, this.#tree.size);
    return Uint8Array.from(this.#tree.node(0, seqNo - 1));
  }
}
