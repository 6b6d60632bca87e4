/**
 * Startup repair of a ledger's hash store against its txn log.
 *
 * What is authoritative: the txn log. A commit writes its txns, their tiles of hashes and the
 * committed size in one atomic batch, so on an intact database they agree and opening costs a few
 * reads: the committed size record, the last key of the log, the last leaf tile and the O(log n)
 * subtrees of the committed tree's compact form. When they disagree (a hash store lost, truncated
 * or torn by a tool, a copy, batches written out of commit order), the committed size becomes the
 * length of the log, which must run 1, 2, 3, ... without a gap (a gap is reported as LOG_GAP, never
 * skipped); hash records beyond it are removed, and missing ones are recomputed from the log. Every
 * txn hashed during a rebuild is decoded first, so a corrupt log stops the open with CORRUPT_TXN
 * instead of producing a wrong root. `verify` recomputes everything from the log, which also finds
 * a gap in the middle of the log and any hash record that differs from what the log gives.
 */
import type { KvStore, WriteBatch } from '../kv/kv-store.js';
import { decodeSeqNoKey, seqNoKey } from '../kv/kv-store.js';
import { StorageError, StorageErrorCode } from '../errors.js';
import { equalBytes, merkleLeafHash } from './merkle.js';
import { HashStore, SIZE_KEY, cutTile, TILE_HEIGHT, TILE_WIDTH, decodeSize, decodeTileKey, ledgerBuckets, tileEntries, tileKey } from './hash-store.js';
import { decodeTxn } from './txn-codec.js';

/** What opening a ledger found and did. */
export interface LedgerRecovery {
  /** Committed size recorded in the hash store, or undefined when the record was absent or torn. */
  storedSize: number | undefined;
  /** Committed size after recovery: the length of the txn log. */
  size: number;
  /** First leaf index whose hashes were recomputed from the log, or undefined when none were. */
  rebuiltFrom: number | undefined;
  /** Number of leaves recomputed from the log. */
  rebuiltLeaves: number;
  /** Hash records beyond the log that were removed or cut back. */
  removedRecords: number;
  /** Records that a full verification found missing or different and rewrote. */
  repairedRecords: number;
}

const REBUILD_FLUSH_LEAVES = 4096;

async function lastKey(kv: KvStore, bucket: string, range: { gte?: Uint8Array; lt?: Uint8Array } = {}): Promise<Uint8Array | undefined> {
  for await (const [k] of kv.iterate(bucket, { ...range, reverse: true, limit: 1, values: false })) return k;
  return undefined;
}

/** Length of the gap-free log from seqNo 1; LOG_GAP when a later seqNo exists past a hole. */
async function contiguousLogLength(kv: KvStore, ledgerId: number, bucket: string, last: number): Promise<number> {
  let expected = 1;
  for await (const [k] of kv.iterate(bucket, { values: false })) {
    if (decodeSeqNoKey(k) !== expected) break;
    expected++;
  }
  const length = expected - 1;
  if (last > length) throw new StorageError(StorageErrorCode.LOG_GAP, { ledgerId, seqNo: length + 1 });
  return length;
}

/**
 * Number of leaf hashes the level-0 tiles hold (as if they were contiguous), from the last tile key
 * of level 0; a key of another length in that range is passed over, as every reader of tiles does.
 */
async function storedLeaves(kv: KvStore, bucket: string): Promise<number> {
  for await (const [k] of kv.iterate(bucket, { gte: tileKey(0, 0), lt: tileKey(1, 0), reverse: true, values: false })) {
    const key = decodeTileKey(k);
    if (key === undefined) continue;
    const v = kv.getSync(bucket, k);
    const n = v === undefined ? undefined : tileEntries(v);
    return n === undefined ? 0 : key[1] * TILE_WIDTH + n;
  }
  return 0;
}

/** Removes or cuts back the tiles that hold hashes of leaves >= size. */
async function removeBeyond(kv: KvStore, bucket: string, size: number): Promise<number> {
  const batch = kv.batch();
  for await (const [k, v] of kv.iterate(bucket)) {
    const key = decodeTileKey(k);
    const n = tileEntries(v);
    if (key === undefined || n === undefined) {
      batch.del(bucket, k);
      continue;
    }
    const [level, index] = key;
    const complete = Math.floor(size / 2 ** (level * TILE_HEIGHT)); // base hashes valid at this level
    const valid = Math.max(0, Math.min(n, complete - index * TILE_WIDTH));
    if (valid === 0) batch.del(bucket, k);
    else if (valid < n) batch.put(bucket, k, cutTile(v, n, valid));
  }
  const n = batch.length;
  await batch.write();
  return n;
}

/**
 * The batch of one flush of a rebuild: forwards only the puts that change something. A tile whose
 * stored record already holds the same hashes and more (a fuller tile the rebuild has not reached
 * yet) is left alone, and the committed size is written only by the final flush, so that a rebuild
 * never moves the store backwards, even for a moment.
 */
class RebuildBatch implements WriteBatch {
  constructor(
    private readonly kv: KvStore,
    private readonly inner: WriteBatch,
    private readonly buckets: { tile: string; meta: string },
    private readonly final: boolean,
  ) {}
  get length(): number {
    return this.inner.length;
  }
  put(bucket: string, key: Uint8Array, value: Uint8Array): this {
    if (bucket === this.buckets.meta && !this.final) return this;
    const old = this.kv.getSync(bucket, key);
    if (old !== undefined) {
      if (equalBytes(old, value)) return this;
      if (bucket === this.buckets.tile) {
        const kOld = tileEntries(old);
        const kNew = tileEntries(value);
        if (kOld !== undefined && kNew !== undefined && kOld > kNew && equalBytes(cutTile(old, kOld, kNew), value)) return this;
      }
    }
    this.inner.put(bucket, key, value);
    return this;
  }
  del(bucket: string, key: Uint8Array): this {
    this.inner.del(bucket, key);
    return this;
  }
  afterWrite(): this {
    return this;
  }
  write(opts?: { sync?: boolean }): Promise<void> {
    return this.inner.write(opts);
  }
}

/**
 * Streams the log from leaf index `from` to `size`, recomputing the hashes from the stored compact
 * form of `from` on, and writes the tiles that are missing or differ, then the committed size.
 * Returns the number of records written.
 */
async function rebuild(kv: KvStore, ledgerId: number, from: number, size: number): Promise<number> {
  const b = ledgerBuckets(ledgerId);
  const tree = new HashStore(kv, ledgerId, from);
  let flushed = from;
  let written = 0;
  const flush = async (final: boolean): Promise<void> => {
    const inner = kv.batch();
    const batch = new RebuildBatch(kv, inner, b, final);
    if (tree.size > flushed) tree.addCommitOps(batch, flushed, tree.size);
    else batch.put(b.meta, SIZE_KEY, seqNoKey(size));
    written += inner.length;
    await inner.write();
    tree.setDurable(tree.size);
    flushed = tree.size;
  };
  if (from < size) {
    let next = from + 1;
    for await (const [k, v] of kv.iterate(b.txn, { gte: seqNoKey(from + 1), lte: seqNoKey(size) })) {
      if (decodeSeqNoKey(k) !== next) break;
      decodeTxn(ledgerId, next, v);
      tree.append(merkleLeafHash(v));
      next++;
      if (tree.size - flushed >= REBUILD_FLUSH_LEAVES) await flush(false);
    }
    if (next !== size + 1) throw new StorageError(StorageErrorCode.LOG_GAP, { ledgerId, seqNo: next });
  }
  await flush(true);
  return written;
}

/** True when every subtree of the compact form of a tree of n leaves can be read. */
function frontierReadable(kv: KvStore, ledgerId: number, n: number): boolean {
  try {
    new HashStore(kv, ledgerId, n, 64);
    return true;
  } catch (e) {
    if (e instanceof StorageError && (e.code === StorageErrorCode.HASH_STORE_MISSING || e.code === StorageErrorCode.CORRUPT_HASH_STORE)) return false;
    throw e;
  }
}

/** Checks (and when needed repairs) the hash store of `ledgerId`; see the module comment. */
export async function recoverLedger(kv: KvStore, ledgerId: number, verify: boolean): Promise<LedgerRecovery> {
  const b = ledgerBuckets(ledgerId);
  const storedSize = decodeSize(kv.getSync(b.meta, SIZE_KEY));
  const lastTxn = await lastKey(kv, b.txn);
  const last = lastTxn === undefined ? 0 : decodeSeqNoKey(lastTxn);
  const size = storedSize === last && !verify ? last : await contiguousLogLength(kv, ledgerId, b.txn, last);
  const result: LedgerRecovery = { storedSize, size, rebuiltFrom: undefined, rebuiltLeaves: 0, removedRecords: 0, repairedRecords: 0 };

  const leaves = await storedLeaves(kv, b.tile);
  if (leaves > size || (storedSize !== undefined && storedSize > size)) result.removedRecords = await removeBeyond(kv, b.tile, size);

  if (verify) {
    result.repairedRecords = await rebuild(kv, ledgerId, 0, size);
    if (result.repairedRecords > 0) {
      result.rebuiltFrom = 0;
      result.rebuiltLeaves = size;
    }
    return result;
  }

  let from = Math.min(leaves, size);
  if (!frontierReadable(kv, ledgerId, from)) from = 0;
  if (from < size || storedSize !== size) {
    await rebuild(kv, ledgerId, from, size);
    if (from < size) {
      result.rebuiltFrom = from;
      result.rebuiltLeaves = size - from;
    }
  }
  return result;
}
