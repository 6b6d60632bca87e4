/**
 * The Merkle hash store of one ledger (formats 6.5): leaf hashes by leaf index and full-subtree
 * hashes by (height, index), persisted in the batch that completes them, plus the committed size.
 * Hashes of the tail that is not yet durable (uncommitted leaves, and committed leaves whose batch
 * has not been written yet) live in an in-memory overlay with the same addressing, so that roots
 * and proofs of any size up to the uncommitted size are computed the same way.
 */
import type { KvStore, WriteBatch } from '../kv/kv-store.js';
import { seqNoKey, decodeSeqNoKey } from '../kv/kv-store.js';
import { StorageError, StorageErrorCode } from '../errors.js';
import { HASH_LENGTH, merkleNodeHash, rootFromFrontier } from './merkle.js';
import { decompose, type NodeReader } from './tree-proofs.js';

/** Bucket names of one ledger's records (formats 12.1). */
export interface LedgerBuckets {
  txn: string;
  leaf: string;
  node: string;
  meta: string;
}

export function ledgerBuckets(ledgerId: number): LedgerBuckets {
  return { txn: `txn/${ledgerId}`, leaf: `merkle-leaf/${ledgerId}`, node: `merkle-node/${ledgerId}`, meta: `merkle-meta/${ledgerId}` };
}

/** Key of the committed size in the meta bucket. */
export const SIZE_KEY = new TextEncoder().encode('size');

/** Key of the full subtree (height >= 1, index): one height byte, then the index as 8 bytes big-endian. */
export function nodeKey(height: number, index: number): Uint8Array {
  const key = new Uint8Array(9);
  key[0] = height;
  key.set(seqNoKey(index), 1);
  return key;
}

export function decodeNodeKey(key: Uint8Array): [number, number] {
  return [key[0]!, decodeSeqNoKey(key.subarray(1))];
}

export const leafKey = seqNoKey;

/** Decodes a stored committed size; undefined when the record is absent or torn. */
export function decodeSize(value: Uint8Array | undefined): number | undefined {
  if (value === undefined || value.length !== 8) return undefined;
  try {
    return decodeSeqNoKey(value);
  } catch {
    return undefined;
  }
}

const pow2 = (h: number): number => 2 ** h;

interface Level {
  start: number;
  hashes: Uint8Array[];
}

/** Largest number of durable hashes kept in the read cache. */
const DEFAULT_CACHE_ENTRIES = 8192;

export class HashStore {
  readonly #kv: KvStore;
  readonly #ledgerId: number;
  readonly #buckets: LedgerBuckets;
  /** overlay[h] holds the non-durable full subtrees of height h, consecutive from `start`. */
  readonly #overlay: Level[] = [];
  readonly #cache = new Map<string, Uint8Array>();
  readonly #cacheEntries: number;
  #frontier: Uint8Array[] = [];
  #size = 0;
  #durable = 0;
  readonly read: NodeReader = (h, i) => this.node(h, i);

  constructor(kv: KvStore, ledgerId: number, committedSize: number, cacheEntries = DEFAULT_CACHE_ENTRIES) {
    this.#kv = kv;
    this.#ledgerId = ledgerId;
    this.#buckets = ledgerBuckets(ledgerId);
    this.#cacheEntries = cacheEntries;
    this.#size = committedSize;
    this.#durable = committedSize;
    this.#frontier = this.frontierOf(committedSize);
  }

  /** Number of leaves, uncommitted ones included. */
  get size(): number {
    return this.#size;
  }

  /** Root of the whole tree (uncommitted leaves included). */
  get root(): Uint8Array {
    return rootFromFrontier(this.#frontier);
  }

  /** Hash of the full subtree (height, index). */
  node(h: number, i: number): Uint8Array {
    const level = this.#overlay[h];
    if (level !== undefined && i >= level.start && i < level.start + level.hashes.length) return level.hashes[i - level.start]!;
    const ck = `${h}:${i}`;
    const cached = this.#cache.get(ck);
    if (cached !== undefined) return cached;
    const v = h === 0 ? this.#kv.getSync(this.#buckets.leaf, leafKey(i)) : this.#kv.getSync(this.#buckets.node, nodeKey(h, i));
    if (v === undefined || v.length !== HASH_LENGTH) {
      throw new StorageError(StorageErrorCode.HASH_STORE_MISSING, { ledgerId: this.#ledgerId, height: h, index: i });
    }
    if (this.#cache.size >= this.#cacheEntries) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(ck, v);
    return v;
  }

  /** Hashes of the full subtrees of the tree of n leaves, largest first (the compact form of formats 6.2). */
  frontierOf(n: number): Uint8Array[] {
    return decompose(0, n).map(([h, i]) => this.node(h, i));
  }

  #put(h: number, i: number, hash: Uint8Array): void {
    let level = this.#overlay[h];
    if (level === undefined) {
      level = { start: i, hashes: [] };
      this.#overlay[h] = level;
    }
    if (level.hashes.length === 0) level.start = i;
    level.hashes.push(hash);
  }

  /** Appends one leaf hash to the tail (formats 6.2 append, recording every subtree it completes). */
  append(leafHash: Uint8Array): void {
    const s = this.#size;
    this.#put(0, s, leafHash);
    let x = leafHash;
    let c = s;
    let h = 0;
    while (c % 2 === 1) {
      x = merkleNodeHash(this.#frontier.pop()!, x);
      c = (c - 1) / 2;
      h++;
      this.#put(h, c, x);
    }
    this.#frontier.push(x);
    this.#size = s + 1;
  }

  /** Drops the leaves from index n on (n is at least the durable size). */
  truncate(n: number): void {
    for (let h = 0; h < this.#overlay.length; h++) {
      const level = this.#overlay[h]!;
      const keep = Math.max(0, Math.floor(n / pow2(h)) - level.start);
      if (level.hashes.length > keep) level.hashes.length = keep;
    }
    this.#size = n;
    this.#frontier = this.frontierOf(n);
  }

  /** Forgets the overlay entries that the store now holds durably (leaves below d). */
  setDurable(d: number): void {
    for (let h = 0; h < this.#overlay.length; h++) {
      const level = this.#overlay[h]!;
      const drop = Math.min(level.hashes.length, Math.floor(d / pow2(h)) - level.start);
      if (drop > 0) {
        level.hashes.splice(0, drop);
        level.start += drop;
      }
    }
    this.#durable = d;
  }

  get durable(): number {
    return this.#durable;
  }

  /**
   * Adds to `batch` the records that committing leaves [from, to) makes durable: their leaf hashes,
   * every full subtree whose last leaf is among them, and the new committed size.
   */
  addCommitOps(batch: WriteBatch, from: number, to: number): void {
    for (let i = from; i < to; i++) batch.put(this.#buckets.leaf, leafKey(i), this.node(0, i));
    for (let h = 1; pow2(h) <= to; h++) {
      const p = pow2(h);
      // subtrees i with last leaf (i+1)*p - 1 in [from, to)
      const first = Math.ceil((from + 1) / p) - 1;
      const last = Math.floor(to / p) - 1;
      for (let i = first; i <= last; i++) batch.put(this.#buckets.node, nodeKey(h, i), this.node(h, i));
    }
    batch.put(this.#buckets.meta, SIZE_KEY, seqNoKey(to));
  }
}
