/**
 * The Merkle hash store of one ledger (formats 6.5): leaf hashes by leaf index, full-subtree hashes
 * by (height, index), and the committed size, persisted in the batch that commits them.
 *
 * Layout: hashes are grouped in tiles, so that the commit of a batch of txns writes a handful of
 * records instead of two per txn. Tile (level L, index N) covers the full subtrees of heights 4L to
 * 4L+3 below the 16 subtrees of height 4L with indexes 16N .. 16N+15. When k of those 16 are
 * complete, the tile holds, row after row, the k hashes of height 4L, then the floor(k/2) of height
 * 4L+1, floor(k/4) of height 4L+2 and floor(k/8) of height 4L+3 (k is given by the record's length);
 * a tile that is not full is rewritten as more of its subtrees complete. Level 0 rows start with the
 * leaf hashes. Any (height, index) is one record read, with no hashing.
 *
 * Hashes of the tail that is not yet durable (uncommitted leaves, and committed leaves whose batch
 * has not been written yet) live in an in-memory overlay addressed by (height, index), so that roots
 * and proofs of any size up to the uncommitted size are computed the same way.
 */
import { BoundedFifo } from '@quire/common';
import type { KvStore, WriteBatch } from '../kv/kv-store.js';
import { seqNoKey, decodeSeqNoKey } from '../kv/kv-store.js';
import { StorageError, StorageErrorCode } from '../errors.js';
import { HASH_LENGTH, merkleNodeHash, rootFromFrontier } from './merkle.js';
import { decompose, type NodeReader } from './tree-proofs.js';

/** Bucket names of one ledger's records (formats 12.1 guidance, with the hash store in tiles). */
export interface LedgerBuckets {
  /** seqNo (8-byte BE) -> MP(txn). */
  txn: string;
  /** (level byte, tile index 8-byte BE) -> up to 16 concatenated 32-byte hashes. */
  tile: string;
  /** "size" -> committed size (8-byte BE). */
  meta: string;
}

export function ledgerBuckets(ledgerId: number): LedgerBuckets {
  return { txn: `txn/${ledgerId}`, tile: `merkle-tile/${ledgerId}`, meta: `merkle-meta/${ledgerId}` };
}

/** Heights covered by one tile level. */
export const TILE_HEIGHT = 4;
/** Subtrees of the lowest height of a tile. */
export const TILE_WIDTH = 2 ** TILE_HEIGHT;

/** Key of the committed size in the meta bucket. */
export const SIZE_KEY = new TextEncoder().encode('size');

export function tileKey(level: number, index: number): Uint8Array {
  const key = new Uint8Array(9);
  key[0] = level;
  key.set(seqNoKey(index), 1);
  return key;
}

export function decodeTileKey(key: Uint8Array): [number, number] | undefined {
  if (key.length !== 9) return undefined;
  return [key[0], decodeSeqNoKey(key.subarray(1))];
}

/** 2^h for the heights of a tree of up to 2^53 leaves (a table: `2 ** h` with a variable h is a Math.pow call). */
const POW2: readonly number[] = Array.from({ length: 64 }, (_, h) => 2 ** h);
const pow2 = (h: number): number => POW2[h];

/** Hashes in row j of a tile with k complete subtrees of its lowest height. */
const rowLength = (k: number, j: number): number => Math.floor(k / pow2(j));

/** Hashes held by a tile with k complete subtrees of its lowest height. */
function tileHashes(k: number): number {
  let n = 0;
  for (let j = 0; j < TILE_HEIGHT; j++) n += rowLength(k, j);
  return n;
}

/** Byte length of a tile record -> k; a length no k gives is absent. */
const kOfLength = new Map<number, number>(Array.from({ length: TILE_WIDTH }, (_, i) => [tileHashes(i + 1) * HASH_LENGTH, i + 1]));

/** Number of complete subtrees of a tile's lowest height that a record holds, or undefined when malformed. */
export function tileEntries(value: Uint8Array): number | undefined {
  return kOfLength.get(value.length);
}

/** Position (in hashes) of the hash at row j, offset `off`, of a tile with k entries. */
function tilePosition(k: number, j: number, off: number): number {
  let p = off;
  for (let r = 0; r < j; r++) p += rowLength(k, r);
  return p;
}

/** The record of a tile with k entries cut back to its first `keep` (1 <= keep <= k). */
export function cutTile(value: Uint8Array, k: number, keep: number): Uint8Array {
  const out = new Uint8Array(tileHashes(keep) * HASH_LENGTH);
  let at = 0;
  for (let j = 0; j < TILE_HEIGHT; j++) {
    const from = tilePosition(k, j, 0) * HASH_LENGTH;
    const len = rowLength(keep, j) * HASH_LENGTH;
    out.set(value.subarray(from, from + len), at);
    at += len;
  }
  return out;
}

/** Decodes a stored committed size; undefined when the record is absent or torn. */
export function decodeSize(value: Uint8Array | undefined): number | undefined {
  if (value === undefined || value.length !== 8) return undefined;
  try {
    return decodeSeqNoKey(value);
  } catch {
    return undefined;
  }
}

interface Level {
  start: number;
  hashes: Uint8Array[];
}

/** Default number of durable subtree hashes and full tiles kept in memory. */
const DEFAULT_CACHE_ENTRIES = 8192;

export class HashStore {
  readonly #kv: KvStore;
  readonly #ledgerId: number;
  readonly #buckets: LedgerBuckets;
  /**
   * overlay[h] holds hashes of full subtrees of height h, consecutive from `start`: the ones not yet
   * durable, and the durable ones of the last tile of their level that is not full yet, which the
   * next commits rewrite (so that a commit builds its tiles from memory, without store reads).
   */
  readonly #overlay: Level[] = [];
  /** Durable subtree hashes and full tiles (both immutable once durable). */
  readonly #cache: BoundedFifo<string, Uint8Array>;
  #frontier: Uint8Array[] = [];
  #size = 0;
  #durable = 0;
  readonly read: NodeReader = (h, i) => this.node(h, i);

  constructor(kv: KvStore, ledgerId: number, committedSize: number, cacheEntries = DEFAULT_CACHE_ENTRIES) {
    this.#kv = kv;
    this.#ledgerId = ledgerId;
    this.#buckets = ledgerBuckets(ledgerId);
    if (!Number.isSafeInteger(cacheEntries)) throw new StorageError(StorageErrorCode.INVALID_OPTION, { option: 'hashCacheEntries', value: cacheEntries });
    this.#cache = new BoundedFifo(Math.max(16, cacheEntries));
    this.#size = committedSize;
    this.#durable = committedSize;
    this.#frontier = this.frontierOf(committedSize);
    this.#loadPartialTiles(committedSize);
  }

  /** First index of height h that the overlay keeps once leaves below d are durable: the start of the partial tile. */
  static #keepFrom(h: number, d: number): number {
    const level = Math.floor(h / TILE_HEIGHT);
    const base = Math.floor(d / pow2(level * TILE_HEIGHT)); // complete subtrees of the tile level's lowest height
    return (Math.floor(base / TILE_WIDTH) * TILE_WIDTH) / pow2(h - level * TILE_HEIGHT);
  }

  /**
   * Puts the durable hashes of every partial tile (the last tile of a level, not full yet) into the
   * overlay, as {@link setDurable} keeps them. A tile that is absent or shorter than the size says is
   * left alone: reads then go to the store and report what they find, as before.
   */
  #loadPartialTiles(size: number): void {
    for (let level = 0; pow2(level * TILE_HEIGHT) <= size; level++) {
      const h0 = level * TILE_HEIGHT;
      const base = Math.floor(size / pow2(h0));
      const k = base % TILE_WIDTH;
      if (k === 0) continue;
      const t = (base - k) / TILE_WIDTH;
      const tile = this.#kv.getSync(this.#buckets.tile, tileKey(level, t));
      if (tile === undefined || tileEntries(tile) !== k) continue;
      for (let j = 0; j < TILE_HEIGHT; j++) {
        const first = (t * TILE_WIDTH) / pow2(j);
        for (let off = 0; off < rowLength(k, j); off++) {
          const at = tilePosition(k, j, off) * HASH_LENGTH;
          this.#put(h0 + j, first + off, tile.subarray(at, at + HASH_LENGTH));
        }
      }
    }
  }

  /** Number of leaves, uncommitted ones included. */
  get size(): number {
    return this.#size;
  }

  /** Number of leaves whose hashes are durable. */
  get durable(): number {
    return this.#durable;
  }

  /** Root of the whole tree (uncommitted leaves included). */
  get root(): Uint8Array {
    return rootFromFrontier(this.#frontier);
  }

  #remember(key: string, value: Uint8Array): void {
    this.#cache.set(key, value);
  }

  #missing(h: number, i: number): StorageError {
    return new StorageError(StorageErrorCode.HASH_STORE_MISSING, { ledgerId: this.#ledgerId, height: h, index: i });
  }

  /** Hash of the full subtree (height, index). */
  node(h: number, i: number): Uint8Array {
    const level = this.#overlay[h];
    if (level !== undefined && i >= level.start && i < level.start + level.hashes.length) return level.hashes[i - level.start];
    const ck = `${h}:${i}`;
    const cached = this.#cache.get(ck);
    if (cached !== undefined) return cached;
    const tileLevel = Math.floor(h / TILE_HEIGHT);
    const j = h - tileLevel * TILE_HEIGHT;
    const tileIndex = Math.floor((i * pow2(j)) / TILE_WIDTH);
    const off = i - tileIndex * rowLength(TILE_WIDTH, j);
    const tile = this.#tile(tileLevel, tileIndex);
    if (tile === undefined) throw this.#missing(h, i);
    const k = tileEntries(tile);
    if (k === undefined) {
      throw new StorageError(StorageErrorCode.CORRUPT_HASH_STORE, { ledgerId: this.#ledgerId, what: `tile ${tileLevel}/${tileIndex}`, length: tile.length });
    }
    if (off >= rowLength(k, j)) throw this.#missing(h, i);
    const at = tilePosition(k, j, off) * HASH_LENGTH;
    const v = tile.subarray(at, at + HASH_LENGTH);
    this.#remember(ck, v);
    return v;
  }

  #tile(level: number, index: number): Uint8Array | undefined {
    const ck = `t${level}:${index}`;
    const cached = this.#cache.get(ck);
    if (cached !== undefined) return cached;
    const v = this.#kv.getSync(this.#buckets.tile, tileKey(level, index));
    if (v === undefined) return undefined;
    // full tiles only: partial tiles grow (a malformed record is reported by the caller, never cached)
    if (tileEntries(v) === TILE_WIDTH) this.#remember(ck, v);
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
      const left = this.#frontier.pop();
      // the frontier holds one subtree per 1 bit of the size (frontierOf, then every append)
      if (left === undefined) {
        throw new StorageError(StorageErrorCode.INTERNAL_INVARIANT, { ledgerId: this.#ledgerId, what: 'frontier shorter than its size', size: s });
      }
      x = merkleNodeHash(left, x);
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
      const level = this.#overlay[h];
      if (level === undefined) continue; // heights below a preloaded partial tile may have none yet
      const keep = Math.max(0, Math.floor(n / pow2(h)) - level.start);
      if (level.hashes.length > keep) level.hashes.length = keep;
    }
    this.#size = n;
    this.#frontier = this.frontierOf(n);
  }

  /** Forgets the overlay entries that the store now holds durably (leaves below d), but those of partial tiles. */
  setDurable(d: number): void {
    for (let h = 0; h < this.#overlay.length; h++) {
      const level = this.#overlay[h];
      if (level === undefined) continue; // heights below a preloaded partial tile may have none yet
      const drop = Math.min(level.hashes.length, HashStore.#keepFrom(h, d) - level.start);
      if (drop > 0) {
        level.hashes.splice(0, drop);
        level.start += drop;
      }
    }
    this.#durable = d;
  }

  /**
   * Adds to `batch` the records that committing leaves [from, to) makes durable: every tile that
   * gains hashes (rewritten whole), and the new committed size.
   */
  addCommitOps(batch: WriteBatch, from: number, to: number): void {
    for (let level = 0; pow2(level * TILE_HEIGHT) <= to; level++) {
      const h = level * TILE_HEIGHT;
      const before = Math.floor(from / pow2(h)); // complete base hashes before the commit
      const after = Math.floor(to / pow2(h));
      if (after === before) continue;
      const firstTile = Math.floor(before / TILE_WIDTH);
      const lastTile = Math.floor((after - 1) / TILE_WIDTH);
      for (let t = firstTile; t <= lastTile; t++) {
        const start = t * TILE_WIDTH;
        const k = Math.min(start + TILE_WIDTH, after) - start;
        const value = new Uint8Array(tileHashes(k) * HASH_LENGTH);
        let at = 0;
        for (let j = 0; j < TILE_HEIGHT; j++) {
          const first = start / pow2(j);
          for (let off = 0; off < rowLength(k, j); off++) {
            value.set(this.node(h + j, first + off), at);
            at += HASH_LENGTH;
          }
        }
        batch.put(this.#buckets.tile, tileKey(level, t), value);
      }
    }
    batch.put(this.#buckets.meta, SIZE_KEY, seqNoKey(to));
  }
}
