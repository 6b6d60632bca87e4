/**
 * In-memory indexes the executor keeps so that dynamic validation does bounded, synchronous work
 * per request instead of scanning a ledger:
 *
 * - `StatePoolNodeIndex`: the node records of the uncommitted pool state by alias, node address,
 *   client address and steward, and the validators. Built from the pool trie (which holds exactly
 *   the node records, formats.md 8.1) on first use, kept current by every write to the pool trie,
 *   and rebuilt after the head moves (revert). Its answers are those of a scan of the head.
 * - `LedgerUpgradeIndex`: the last committed POOL_UPGRADE action per (name, version), folded in
 *   from the committed config ledger as it grows (committed txns never change).
 *
 * Both are derived data: they never feed a hash, and lookups return sorted lists, so replicas agree.
 */
import { codePointCompare } from '@quire/common';
import type { NodeIndexField, PoolNodeIndex, StateKey, Txn, UpgradeIndex } from '../handler.js';
import { decodeJsonObject } from '../state-keys.js';
import { isValidatorRecord, nodeIndexKeys } from '../types/node.js';
import { upgradeEntryOf } from '../types/pool-upgrade.js';

/** What the pool node index reads of the pool trie. */
export interface PoolTrieReader {
  /** Value at the uncommitted head. */
  get(key: StateKey): Uint8Array | undefined;
  /** Every (key, value) at the uncommitted head. */
  forEach(fn: (key: Uint8Array, value: Uint8Array) => void): void;
}

interface NodeEntry {
  keys: [NodeIndexField, string][];
  validator: boolean;
}

const utf8 = new TextDecoder();

function keyText(key: StateKey): string {
  return typeof key === 'string' ? key : utf8.decode(key);
}

function slot(field: NodeIndexField, value: string): string {
  return `${field}\u0000${value}`;
}

export class StatePoolNodeIndex implements PoolNodeIndex {
  /** dest -> what it is indexed under; null until built (and after `clear`). */
  #entries: Map<string, NodeEntry> | null = null;
  readonly #by = new Map<string, Set<string>>();
  readonly #validators = new Set<string>();
  #sortedValidators: string[] | null = null;

  constructor(private readonly trie: PoolTrieReader) {}

  find(field: NodeIndexField, value: string): readonly string[] {
    this.#ensure();
    const dests = this.#by.get(slot(field, value));
    return dests === undefined ? [] : [...dests].sort(codePointCompare);
  }

  validators(): readonly string[] {
    this.#ensure();
    this.#sortedValidators ??= [...this.#validators].sort(codePointCompare);
    return this.#sortedValidators;
  }

  /** A key of the pool trie was written (or restored) on the head: re-index its record. */
  invalidateKey(key: StateKey): void {
    const entries = this.#entries;
    if (entries === null) return;
    const dest = keyText(key);
    this.#remove(entries, dest);
    const bytes = this.trie.get(key);
    if (bytes === undefined) return;
    try {
      this.#add(entries, dest, bytes);
    } catch {
      // a malformed record: rebuilt (and reported) at the next lookup
      this.clear();
    }
  }

  /** The head moved (revert, reset): rebuild from the trie at the next lookup. */
  clear(): void {
    this.#entries = null;
    this.#by.clear();
    this.#validators.clear();
    this.#sortedValidators = null;
  }

  #ensure(): void {
    if (this.#entries !== null) return;
    const entries = new Map<string, NodeEntry>();
    this.#entries = entries;
    try {
      this.trie.forEach((key, value) => this.#add(entries, keyText(key), value));
    } catch (e) {
      this.clear();
      throw e;
    }
  }

  #add(entries: Map<string, NodeEntry>, dest: string, bytes: Uint8Array): void {
    const rec = decodeJsonObject(bytes, dest);
    const entry: NodeEntry = { keys: nodeIndexKeys(rec), validator: isValidatorRecord(rec) };
    entries.set(dest, entry);
    for (const [field, value] of entry.keys) {
      const k = slot(field, value);
      let set = this.#by.get(k);
      if (set === undefined) this.#by.set(k, (set = new Set()));
      set.add(dest);
    }
    if (entry.validator) {
      this.#validators.add(dest);
      this.#sortedValidators = null;
    }
  }

  #remove(entries: Map<string, NodeEntry>, dest: string): void {
    const entry = entries.get(dest);
    if (entry === undefined) return;
    entries.delete(dest);
    for (const [field, value] of entry.keys) {
      const k = slot(field, value);
      const set = this.#by.get(k);
      set?.delete(dest);
      if (set?.size === 0) this.#by.delete(k);
    }
    if (entry.validator) {
      this.#validators.delete(dest);
      this.#sortedValidators = null;
    }
  }
}

/** What the upgrade index reads of the config ledger. */
export interface CommittedLedgerSource {
  /** Committed size. */
  readonly size: number;
  /** A committed txn, synchronously. */
  getSync(seqNo: number): Txn | undefined;
}

export class LedgerUpgradeIndex implements UpgradeIndex {
  readonly #last = new Map<string, string>();
  #covered = 0;

  constructor(private readonly ledger: CommittedLedgerSource) {}

  lastAction(name: string, version: string): string | undefined {
    this.#catchUp();
    return this.#last.get(`${name}\u0000${version}`);
  }

  /** Folds in the config txns committed since the last lookup. */
  #catchUp(): void {
    const size = this.ledger.size;
    if (size < this.#covered) {
      // a committed ledger never shrinks; a smaller one is another ledger: start over
      this.#last.clear();
      this.#covered = 0;
    }
    for (let seqNo = this.#covered + 1; seqNo <= size; seqNo++) {
      const entry = upgradeEntryOf(this.ledger.getSync(seqNo));
      if (entry !== undefined) this.#last.set(`${entry[0]}\u0000${entry[1]}`, entry[2]);
      this.#covered = seqNo;
    }
  }
}
