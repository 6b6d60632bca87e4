/**
 * What the executor needs of @quire/storage, as structural interfaces (the storage classes
 * `Ledger`, `StateTrie`, `AttributeStore`, `TimestampStore`, `SeqNoIndex` satisfy them), plus the
 * state and ledger views handed to handlers.
 */
import type { KvStore, WriteBatch } from '@quire/storage';
import type { LedgerIdValue, LedgerReader, StateAccess, StateKey, Txn } from '../handler.js';

export interface ExecutorLedger {
  readonly size: number;
  readonly uncommittedSize: number;
  readonly root: Uint8Array;
  readonly uncommittedRoot: Uint8Array;
  append(txns: Txn[]): unknown;
  commit(count?: number, batch?: WriteBatch): void | Promise<void>;
  discard(count?: number): void;
  get(seqNo: number): Promise<Txn | undefined>;
  /** The same as `get`, synchronously (dynamic validation, the upgrade index). */
  getSync(seqNo: number): Txn | undefined;
  /** The stored bytes MP(txn) of `seqNo`, undefined when the ledger has none (a catch-up seeder sends them as they are). */
  getEncodedSync(seqNo: number): Uint8Array | undefined;
  range(from: number, to: number): AsyncIterable<[number, Txn]>;
  inclusionProof(seqNo: number, size?: number): Promise<Uint8Array[]>;
}

export interface ExecutorStateTrie {
  get(key: StateKey, opts?: { committed?: boolean }): Uint8Array | undefined;
  getAt(root: Uint8Array, key: StateKey): Uint8Array | undefined;
  set(key: StateKey, value: Uint8Array): void;
  remove(key: StateKey): void;
  readonly headRoot: Uint8Array;
  readonly committedRoot: Uint8Array;
  commit(root?: Uint8Array, batch?: WriteBatch): void | Promise<void>;
  revertToCommitted(): void;
  setHead(root: Uint8Array): void;
  generateProof(key: StateKey, root?: Uint8Array): Uint8Array;
  /** Every (key, value) at the head (the pool node index is built from the pool trie). */
  forEach(fn: (key: Uint8Array, value: Uint8Array) => void): void;
}

export interface ExecutorAttributeStore {
  get(hash: string): Promise<string | undefined>;
  getSync(hash: string): string | undefined;
  put(stored: string, batch: WriteBatch): string;
}

export interface ExecutorTimestampStore {
  set(ledgerId: number, ppTime: number, root: Uint8Array, batch: WriteBatch): void;
  getEqualOrPrevious(ledgerId: number, time: number): Promise<Uint8Array | undefined>;
}

export interface ExecutorSeqNoIndex {
  /** `digest` (the full request digest) is absent from txns caught up from ledgers that lack it. */
  add(entry: { payloadDigest: string; digest?: string; ledgerId: number; seqNo: number }, batch: WriteBatch): void;
  getByPayloadDigestSync(payloadDigest: string): { ledgerId: number; seqNo: number } | undefined;
}

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

/**
 * The stores of one node: the state ledgers (pool 0, domain 1, config 2 and each plugin ledger, the
 * same ids in `ledgers` and `states`), their tries, and the side stores.
 */
export interface ExecutorStores {
  kv: KvStore;
  ledgers: Readonly<Record<number, ExecutorLedger>>;
  /** The audit ledger (id 3), read by GET_TXN as indy-plenum serves it; without it GET_TXN on ledger 3 is refused. */
  audit?: Pick<ExecutorLedger, 'size' | 'root' | 'get' | 'inclusionProof'>;
  states: Readonly<Record<number, ExecutorStateTrie>>;
  attributes: ExecutorAttributeStore;
  timestamps?: ExecutorTimestampStore;
  seqNoIndex?: ExecutorSeqNoIndex;
}

/**
 * A handler's view of one trie; every write is reported to `onWrite` (idr cache invalidation) and,
 * while an undo log is open, recorded with the previous value so that a failing request can be
 * undone without hashing the trie after every request (the trie root depends only on its content).
 */
export class TrieView implements StateAccess {
  private undo: [StateKey, Uint8Array | undefined][] | null = null;
  /**
   * While an undo log is open: the key last read (the same object) and its value, so that a handler's write of a key it
   * has just read records the previous value without looking the key up again. Any write forgets it.
   */
  private lastRead: { key: StateKey; value: Uint8Array | undefined } | null = null;

  constructor(
    private readonly trie: ExecutorStateTrie,
    private readonly onWrite?: (key: StateKey) => void,
  ) {}

  /** Starts recording writes (one request). */
  beginUndo(): void {
    this.undo = [];
    this.lastRead = null;
  }

  /** Stops recording; with `rollback`, restores every written key to its previous value. */
  endUndo(rollback: boolean): void {
    const log = this.undo;
    this.undo = null;
    this.lastRead = null;
    if (!rollback || log === null) return;
    for (let i = log.length - 1; i >= 0; i--) {
      const [key, prev] = log[i];
      if (prev === undefined) this.trie.remove(key);
      else this.trie.set(key, prev);
      this.onWrite?.(key);
    }
  }
  get(key: StateKey): Uint8Array | undefined {
    const value = this.trie.get(key);
    if (this.undo !== null) this.lastRead = { key, value: value?.slice() };
    return value;
  }
  getCommitted(key: StateKey): Uint8Array | undefined {
    return this.trie.get(key, { committed: true });
  }
  set(key: StateKey, value: Uint8Array): void {
    if (this.undo !== null) this.undo.push([key, this.previous(key)]);
    this.trie.set(key, value);
    this.onWrite?.(key);
  }
  remove(key: StateKey): void {
    if (this.undo !== null) this.undo.push([key, this.previous(key)]);
    this.trie.remove(key);
    this.onWrite?.(key);
  }
  /** The value of `key` before a write: the value just read when it is the key just read, else a lookup. */
  private previous(key: StateKey): Uint8Array | undefined {
    const last = this.lastRead;
    this.lastRead = null;
    return last !== null && last.key === key ? last.value : this.trie.get(key);
  }
  keysWithPrefix(prefix: string): string[] {
    const want = utf8.encode(prefix);
    const out: string[] = [];
    this.trie.forEach((key) => {
      if (key.length < want.length) return;
      for (let i = 0; i < want.length; i++) if (key[i] !== want[i]) return;
      out.push(utf8Decoder.decode(key));
    });
    return out;
  }
  get headRoot(): Uint8Array {
    return this.trie.headRoot;
  }
  get committedRoot(): Uint8Array {
    return this.trie.committedRoot;
  }
}

/**
 * A handler's view of one ledger: its committed and uncommitted txns plus the txns of the batch
 * being applied, which the executor appends to the ledger in one call when the batch ends (one
 * Merkle root per batch instead of one per request).
 */
export class LedgerView implements LedgerReader {
  /** Txns of the batch being applied, not yet appended to the ledger (seqNos follow its tail). */
  #pending: Txn[] = [];

  constructor(
    readonly ledgerId: LedgerIdValue,
    private readonly ledger: ExecutorLedger,
  ) {}
  get size(): number {
    return this.ledger.size;
  }
  get uncommittedSize(): number {
    return this.ledger.uncommittedSize + this.#pending.length;
  }
  getTxn(seqNo: number): Txn | undefined {
    if (!Number.isSafeInteger(seqNo) || seqNo < 1 || seqNo > this.uncommittedSize) return undefined;
    const tail = this.ledger.uncommittedSize;
    if (seqNo > tail) return this.#pending[seqNo - tail - 1];
    return this.ledger.getSync(seqNo);
  }
  /** Adds a txn of the batch being applied (its seqNo is `uncommittedSize` after the call). */
  addPending(txn: Txn): void {
    this.#pending.push(txn);
  }
  /** Takes the batch's txns out of the view (to append them to the ledger, or to drop them). */
  takePending(): Txn[] {
    const txns = this.#pending;
    this.#pending = [];
    return txns;
  }
}

/** The ids of the state ledgers of `stores` (those with a ledger and a state), ascending: 0, 1, 2 and the plugin ledgers. */
export function stateLedgerIds(stores: Pick<ExecutorStores, 'ledgers' | 'states'>): number[] {
  return Object.keys(stores.states)
    .map(Number)
    .filter((id) => Number.isSafeInteger(id) && id !== 3 && stores.ledgers[id] !== undefined)
    .sort((a, b) => a - b);
}
