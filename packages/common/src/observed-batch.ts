// OBSERVED_DATA{msg_type: "BATCH"} (consensus.md §9.2): what each validator publishes on the
// ordered-batch topic after a batch is ordered and durable, for observers that follow the pool
// without taking part in it. The shape and the bytes a sender signs are defined here, once, for
// the node that builds the announcement and the SDK follower that checks it.
import { encodeMsgpack } from './msgpack-encode.js';
import { sha256 } from './hash.js';

/** The gossip topic of ordered-batch announcements of a pool (poolId = base58 root of the pool genesis ledger). */
export function orderedBatchTopic(poolId: string): string {
  return `/quire/${poolId}/ordered/1`;
}

/**
 * A BLS multi-signature of the batch as a tuple, as catch-up carries it:
 * `[signature, participants, [ledger_id, state_root_hash, pool_state_root_hash, txn_root_hash, timestamp]]`.
 */
export type MultiSigTuple = [string, string[], [number, string, string, string, number]];

/** BATCH_COMMITTED (consensus.md §9.2): one ordered batch of one ledger, with the roots it committed. */
export interface BatchCommitted {
  ledgerId: number;
  instId: number;
  /** view in which the batch was ordered */
  viewNo: number;
  /** view in which the batch was first pre-prepared (the audit txn's viewNo) */
  originalViewNo: number;
  ppSeqNo: number;
  ppTime: number;
  /** base58 roots of the batch's ledger (txn tree, state) and of the audit ledger after this batch */
  stateRootHash: string;
  txnRootHash: string;
  auditTxnRootHash: string;
  /** first and last seqNo of the batch's txns on its ledger; an empty batch has seqNoStart = seqNoEnd + 1 */
  seqNoStart: number;
  seqNoEnd: number;
  /** primaries and validator registry of the batch (from its audit txn) */
  primaries: string[];
  nodeReg: string[];
  digest: string;
  /** the batch's BLS multi-signatures (normally one, for ledgerId) */
  blsMultiSigs: MultiSigTuple[];
  /**
   * The committed txns seqNoStart..seqNoEnd in order, each as stored (with `txnMetadata.seqNo`). Stands for the
   * `requests` of §9.2: the txn carries each request's payload, signatures and its place in the ledger.
   * Absent when the announcement would exceed the message size limit (then `txnsOmitted` is true).
   */
  txns?: Record<string, unknown>[];
  /** true when the txns were left out for size: fetch seqNoStart..seqNoEnd another way (catch-up, GET_TXN) */
  txnsOmitted?: boolean;
  /**
   * With `txns`: base58 hashes of the full subtrees of the ledger's Merkle tree of its first seqNoStart - 1 txns,
   * largest first (formats.md 6.2). Appending the txns' leaf hashes to it must give txnRootHash, which binds the
   * txns to the multi-signed root.
   */
  txnFrontier?: string[];
}

/** The message on the ordered-batch topic. `signature` is the sender's ed25519 node key over {@link observedBatchSigningInput}. */
export interface ObservedBatch {
  op: 'OBSERVED_DATA';
  msg_type: 'BATCH';
  msg: BatchCommitted;
  /** alias of the validator that sent it */
  sender: string;
  /** base58 ed25519 signature by the sender's node key (`NODE.dest`) */
  signature: string;
}

const PREFIX = new TextEncoder().encode('quire/observed-batch/1\0');

/**
 * The bytes a sender signs: a domain prefix, the pool id and SHA-256 of MP(msg). Announcements of several
 * validators about one batch differ only in sender and signature, so their `msg` digests are equal.
 */
export function observedBatchSigningInput(poolId: string, msg: BatchCommitted): Uint8Array {
  return observedBatchSigningInputOfDigest(poolId, observedBatchDigest(msg));
}

/** SHA-256 of MP(msg): identifies the content of an announcement. */
export function observedBatchDigest(msg: BatchCommitted): Uint8Array {
  return sha256(encodeMsgpack(msg));
}

export function observedBatchSigningInputOfDigest(poolId: string, digest: Uint8Array): Uint8Array {
  const pool = new TextEncoder().encode(`${poolId}\0`);
  const out = new Uint8Array(PREFIX.length + pool.length + digest.length);
  out.set(PREFIX, 0);
  out.set(pool, PREFIX.length);
  out.set(digest, PREFIX.length + pool.length);
  return out;
}
