/**
 * The DID index (formats.md 12.1 `idr-cache`): DID -> (role, verkey, creator, seqNo, txnTime),
 * read from the NYM records of the domain state. Uncommitted lookups are cached; the executor's
 * domain state view calls `invalidateKey` on every write and `clear` on every revert, so a NYM
 * written earlier in a batch is visible to later requests at once.
 */
import { toHex } from '@quire/common';
import type { IdrCache, NymInfo, StateAccess } from '../handler.js';
import { decodeNymRecord, nymKey } from '../state-keys.js';

const ABSENT = null;

export class StateIdrCache implements IdrCache {
  readonly #domain: StateAccess;
  /** did -> info (null = not on the ledger) at the uncommitted head. */
  readonly #head = new Map<string, NymInfo | null>();
  /** hex(NYM key) -> did, to invalidate on writes. */
  readonly #didOfKey = new Map<string, string>();
  readonly #maxEntries: number;

  constructor(domain: StateAccess, opts: { maxEntries?: number } = {}) {
    this.#domain = domain;
    this.#maxEntries = opts.maxEntries ?? 100_000;
  }

  getNym(did: string, opts: { committed?: boolean } = {}): NymInfo | undefined {
    if (opts.committed) return this.#read(did, true) ?? undefined;
    const cached = this.#head.get(did);
    if (cached !== undefined) return cached ?? undefined;
    const info = this.#read(did, false);
    if (this.#head.size >= this.#maxEntries) this.clear();
    this.#head.set(did, info ?? ABSENT);
    return info ?? undefined;
  }

  roleOf(did: string): string | null | undefined {
    const n = this.getNym(did);
    return n === undefined ? undefined : n.role;
  }

  ownerOf(did: string): string | null | undefined {
    const n = this.getNym(did);
    if (n === undefined) return undefined;
    return n.verkey !== null && n.verkey !== undefined ? did : n.creator;
  }

  /** Called for every state write of the domain trie (key as written). */
  invalidateKey(key: string | Uint8Array): void {
    if (typeof key === 'string' || key.length !== 32 || this.#didOfKey.size === 0) return;
    const hex = toHex(key);
    const did = this.#didOfKey.get(hex);
    if (did !== undefined) this.#head.delete(did);
  }

  /** Forget every cached entry (revert, commit of another head, rebuild). */
  clear(): void {
    this.#head.clear();
    this.#didOfKey.clear();
  }

  #read(did: string, committed: boolean): NymInfo | null {
    const key = nymKey(did);
    if (!committed) this.#didOfKey.set(toHex(key), did);
    const bytes = committed ? this.#domain.getCommitted(key) : this.#domain.get(key);
    if (bytes === undefined) return null;
    const rec = decodeNymRecord(bytes, did);
    return { creator: rec.identifier, role: rec.role, verkey: rec.verkey, seqNo: rec.seqNo, txnTime: rec.txnTime };
  }
}
