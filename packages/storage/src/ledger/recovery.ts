/**
 * Startup repair of a ledger's hash store against its txn log.
 *
 * What is authoritative: the txn log. A commit writes its txns, their hashes and the committed
 * size in one atomic batch, so on an intact database the three agree and opening costs a few reads.
 * When they disagree (a hash store lost, truncated or torn by a tool, a copy or an older layout),
 * the committed size becomes the length of the log, which must run 1, 2, 3, ... without a gap
 * (a gap is reported as LOG_GAP, never skipped); hash-store records beyond it are removed, and
 * missing ones are recomputed from the log. Every txn that is hashed during a rebuild is decoded
 * first, so a corrupt log stops the open with CORRUPT_TXN instead of producing a wrong root.
 */
import type { KvStore, WriteBatch } from '../kv/kv-store.js';
import { decodeSeqNoKey, seqNoKey } from '../kv/kv-store.js';
import { StorageError, StorageErrorCode } from '../errors.js';
import { equalBytes, merkleLeafHash, merkleNodeHash } from './merkle.js';
import { SIZE_KEY, decodeNodeKey, decodeSize, ledgerBuckets, leafKey, nodeKey } from './hash-store.js';
import { decompose } from './tree-proofs.js';
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
  /** Hash-store records beyond the log that were removed. */
  removedRecords: number;
  /** Records found missing or different by a full verification and rewritten. */
  repairedRecords: number;
}

const REBUILD_BATCH_LEAVES = 4096;

async function lastKey(kv: KvStore, bucket: string): Promise<Uint8Array | undefined> {
  for await (const [k] of kv.iterate(bucket, { reverse: true, limit: 1, values: false })) return k;
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

/** Removes leaf and node records of leaves >= size. */
async function removeBeyond(kv: KvStore, ledgerId: number, size: number): Promise<number> {
  const b = ledgerBuckets(ledgerId);
  const batch = kv.batch();
  for await (const [k] of kv.iterate(b.leaf, { gte: leafKey(size), values: false })) batch.del(b.leaf, k);
  for await (const [k] of kv.iterate(b.node, { values: false })) {
    const [h, i] = k.length === 9 ? decodeNodeKey(k) : [0, 0];
    if (k.length !== 9 || h === 0 || (i + 1) * 2 ** h > size) batch.del(b.node, k);
  }
  const n = batch.length;
  await batch.write();
  return n;
}

/**
 * Streams the log from leaf index `from` to `size`, recomputing leaf hashes and the full subtrees
 * they complete, starting from the stored frontier of `from`. With `compare`, records are read
 * first and written only when missing or different; returns the number written.
 */
async function rebuild(kv: KvStore, ledgerId: number, from: number, size: number, compare: boolean): Promise<number> {
  const b = ledgerBuckets(ledgerId);
  const frontier: Uint8Array[] = decompose(0, from).map(([h, i]) => {
    const v = h === 0 ? kv.getSync(b.leaf, leafKey(i)) : kv.getSync(b.node, nodeKey(h, i));
    if (v === undefined || v.length !== 32) throw new StorageError(StorageErrorCode.HASH_STORE_MISSING, { ledgerId, height: h, index: i });
    return v;
  });
  let written = 0;
  let batch: WriteBatch = kv.batch();
  const put = (bucket: string, key: Uint8Array, value: Uint8Array): void => {
    if (compare) {
      const old = kv.getSync(bucket, key);
      if (old !== undefined && equalBytes(old, value)) return;
    }
    batch.put(bucket, key, value);
    written++;
  };
  let s = from;
  if (from < size) {
    for await (const [k, v] of kv.iterate(b.txn, { gte: seqNoKey(from + 1), lte: seqNoKey(size) })) {
      const seqNo = decodeSeqNoKey(k);
      if (seqNo !== s + 1) throw new StorageError(StorageErrorCode.LOG_GAP, { ledgerId, seqNo: s + 1 });
      decodeTxn(ledgerId, seqNo, v);
      let x = merkleLeafHash(v);
      put(b.leaf, leafKey(s), x);
      let c = s;
      let h = 0;
      while (c % 2 === 1) {
        x = merkleNodeHash(frontier.pop()!, x);
        c = (c - 1) / 2;
        h++;
        put(b.node, nodeKey(h, c), x);
      }
      frontier.push(x);
      s++;
      if ((s - from) % REBUILD_BATCH_LEAVES === 0) {
        await batch.write();
        batch = kv.batch();
      }
    }
    if (s !== size) throw new StorageError(StorageErrorCode.LOG_GAP, { ledgerId, seqNo: s + 1 });
  }
  const sizeRecord = seqNoKey(size);
  const stored = kv.getSync(b.meta, SIZE_KEY);
  if (stored === undefined || !equalBytes(stored, sizeRecord)) {
    batch.put(b.meta, SIZE_KEY, sizeRecord);
    written++;
  }
  await batch.write();
  return written;
}

/** Checks (and when needed repairs) the hash store of `ledgerId`; see the module comment. */
export async function recoverLedger(kv: KvStore, ledgerId: number, verify: boolean): Promise<LedgerRecovery> {
  const b = ledgerBuckets(ledgerId);
  const storedSize = decodeSize(kv.getSync(b.meta, SIZE_KEY));
  const lastTxn = await lastKey(kv, b.txn);
  const last = lastTxn === undefined ? 0 : decodeSeqNoKey(lastTxn);
  const size = storedSize === last && !verify ? last : await contiguousLogLength(kv, ledgerId, b.txn, last);
  const result: LedgerRecovery = { storedSize, size, rebuiltFrom: undefined, rebuiltLeaves: 0, removedRecords: 0, repairedRecords: 0 };

  const lastLeafKey = await lastKey(kv, b.leaf);
  const leaves = lastLeafKey === undefined ? 0 : decodeSeqNoKey(lastLeafKey) + 1;
  if (leaves > size || (storedSize !== undefined && storedSize > size)) result.removedRecords = await removeBeyond(kv, ledgerId, size);

  if (verify) {
    result.repairedRecords = await rebuild(kv, ledgerId, 0, size, true);
    if (result.repairedRecords > 0) {
      result.rebuiltFrom = 0;
      result.rebuiltLeaves = size;
    }
    return result;
  }

  let from = Math.min(leaves, size);
  const frontierPresent = decompose(0, from).every(([h, i]) => {
    const v = h === 0 ? kv.getSync(b.leaf, leafKey(i)) : kv.getSync(b.node, nodeKey(h, i));
    return v !== undefined && v.length === 32;
  });
  if (!frontierPresent) from = 0;
  if (from < size || storedSize !== size) {
    await rebuild(kv, ledgerId, from, size, false);
    if (from < size) {
      result.rebuiltFrom = from;
      result.rebuiltLeaves = size - from;
    }
  }
  return result;
}
