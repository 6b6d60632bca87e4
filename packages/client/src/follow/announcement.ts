/**
 * Checks of one ordered-batch announcement (OBSERVED_DATA{BATCH}, consensus.md 9.2), all pure: its shape, its
 * sender's ed25519 signature, the binding of its txns to the announced txn root (the Merkle frontier before the
 * batch plus the txns' leaf hashes must give txnRootHash), and the batch's own multi-signature.
 */
import {
  type BatchCommitted,
  CodedError,
  type MultiSignature,
  type ObservedBatch,
  b58decodeOrUndefined,
  decodeMsgpack,
  encodeMsgpack,
  isPlainObject,
  observedBatchDigest,
  observedBatchSigningInputOfDigest,
} from '@quire/common';
import { ed25519Verify } from '@quire/crypto';
import { ProofError, merkleLeafHash, merkleRootAfterAppend } from '@quire/storage/proofs';

/** Why an announcement was dropped. */
export type AnnouncementProblem =
  /** not msgpack, or not the shape of OBSERVED_DATA{BATCH} */
  | 'malformed'
  /** the sender is not a validator of the pool */
  | 'unknown-sender'
  /** the sender's signature does not verify */
  | 'bad-signature'
  /** the txns are not seqNoStart..seqNoEnd, or do not lead to txnRootHash */
  | 'txns-mismatch';

/** A dropped announcement: `code` (also `problem`) is one of AnnouncementProblem, `data.detail` says what was wrong. */
export class AnnouncementError extends CodedError<AnnouncementProblem> {
  constructor(problem: AnnouncementProblem, detail: string) {
    super(problem, { detail });
  }

  get problem(): AnnouncementProblem {
    return this.code;
  }
}

const isInt = (v: unknown, min = 0): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
const isStr = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const isStrList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

function fail(detail: string): never {
  throw new AnnouncementError('malformed', detail);
}

/** Decodes an announcement and checks its shape. Throws AnnouncementError 'malformed'. */
export function decodeAnnouncement(data: Uint8Array): ObservedBatch {
  let v: unknown;
  try {
    v = decodeMsgpack(data);
  } catch {
    fail('not msgpack');
  }
  if (!isPlainObject(v)) fail('not a map');
  if (v.op !== 'OBSERVED_DATA' || v.msg_type !== 'BATCH') fail('not OBSERVED_DATA{BATCH}');
  if (!isStr(v.sender) || !isStr(v.signature)) fail('sender or signature missing');
  const m = v.msg;
  if (!isPlainObject(m)) fail('msg is not a map');
  for (const f of ['ledgerId', 'instId', 'viewNo', 'originalViewNo', 'ppSeqNo', 'ppTime', 'seqNoEnd'] as const) if (!isInt(m[f])) fail(`msg.${f}`);
  if (!isInt(m.seqNoStart, 1) || (m.seqNoStart as number) > (m.seqNoEnd as number) + 1) fail('msg.seqNoStart');
  for (const f of ['stateRootHash', 'txnRootHash', 'auditTxnRootHash', 'digest'] as const) if (!isStr(m[f])) fail(`msg.${f}`);
  if (!isStrList(m.primaries) || !isStrList(m.nodeReg)) fail('msg.primaries / msg.nodeReg');
  if (!Array.isArray(m.blsMultiSigs)) fail('msg.blsMultiSigs');
  if (m.txns !== undefined && (!Array.isArray(m.txns) || !m.txns.every(isPlainObject))) fail('msg.txns');
  if (m.txnFrontier !== undefined && !isStrList(m.txnFrontier)) fail('msg.txnFrontier');
  if (m.txnsOmitted !== undefined && typeof m.txnsOmitted !== 'boolean') fail('msg.txnsOmitted');
  if ((m.txns === undefined) !== (m.txnFrontier === undefined)) fail('msg.txns without msg.txnFrontier');
  return v as unknown as ObservedBatch;
}

/** SHA-256 of MP(msg). */
export function announcementDigest(msg: BatchCommitted): Uint8Array {
  return observedBatchDigest(msg);
}

/**
 * What validators must agree on for the f+1 rule: the msg without its multi-signatures (each validator aggregates
 * the COMMITs it collected, so their participant sets may differ).
 */
export function agreementKey(msg: BatchCommitted): string {
  return Buffer.from(observedBatchDigest({ ...msg, blsMultiSigs: [] })).toString('hex');
}

/** Verifies the sender's signature over the announcement; `dest` is the sender's NODE.dest. Throws AnnouncementError. */
export function verifySender(poolId: string, a: ObservedBatch, dest: string): void {
  const key = b58decodeOrUndefined(dest);
  const sig = b58decodeOrUndefined(a.signature);
  if (key === undefined || key.length !== 32) throw new AnnouncementError('unknown-sender', `no ed25519 key for ${a.sender}`);
  if (sig === undefined || sig.length !== 64) throw new AnnouncementError('bad-signature', 'not a 64-byte base58 signature');
  let ok: boolean;
  try {
    ok = ed25519Verify(key, observedBatchSigningInputOfDigest(poolId, announcementDigest(a.msg)), sig);
  } catch {
    ok = false;
  }
  if (!ok) throw new AnnouncementError('bad-signature', `signature of ${a.sender} does not verify`);
}

/**
 * Checks that the announced txns are seqNoStart..seqNoEnd in order and lead, from the announced frontier, to
 * txnRootHash: with txnRootHash proven by a multi-signature (or by f+1 validators), so are the txns. Throws
 * AnnouncementError 'txns-mismatch'. A msg without txns passes.
 */
export function verifyTxnsAgainstRoot(msg: BatchCommitted): void {
  if (msg.txns === undefined) return;
  const count = msg.seqNoEnd - msg.seqNoStart + 1;
  if (msg.txns.length !== count) throw new AnnouncementError('txns-mismatch', `${msg.txns.length} txns for the range ${msg.seqNoStart}..${msg.seqNoEnd}`);
  const leaves = msg.txns.map((t, i) => {
    const meta = t.txnMetadata;
    const seqNo = isPlainObject(meta) ? meta.seqNo : undefined;
    if (seqNo !== msg.seqNoStart + i && !(typeof seqNo === 'bigint' && seqNo === BigInt(msg.seqNoStart + i))) {
      throw new AnnouncementError('txns-mismatch', `txn ${i} is not seqNo ${msg.seqNoStart + i}`);
    }
    try {
      return merkleLeafHash(encodeMsgpack(t));
    } catch {
      throw new AnnouncementError('txns-mismatch', `txn ${i} cannot be encoded`);
    }
  });
  const frontier = (msg.txnFrontier ?? []).map((h) => {
    const b = b58decodeOrUndefined(h);
    if (b?.length !== 32) throw new AnnouncementError('txns-mismatch', 'frontier hash is not 32 bytes');
    return b;
  });
  let after: Uint8Array;
  try {
    after = merkleRootAfterAppend(frontier, msg.seqNoStart - 1, leaves);
  } catch (e) {
    if (!(e instanceof ProofError)) throw e;
    throw new AnnouncementError('txns-mismatch', `a tree of ${msg.seqNoStart - 1} txns does not have ${frontier.length} full subtrees`);
  }
  const root = b58decodeOrUndefined(msg.txnRootHash);
  if (root === undefined || !Buffer.from(after).equals(root)) {
    throw new AnnouncementError('txns-mismatch', 'the txns do not lead to txnRootHash');
  }
}

/**
 * The multi-signature of the batch's own ledger whose value names the announced roots and ppTime, as the object
 * form verifyMultiSignature takes; undefined when there is none.
 */
export function ownMultiSignature(msg: BatchCommitted): MultiSignature | undefined {
  for (const t of msg.blsMultiSigs as unknown[]) {
    if (!Array.isArray(t) || t.length !== 3) continue;
    const [signature, participants, value] = t as [unknown, unknown, unknown];
    if (typeof signature !== 'string' || !isStrList(participants) || !Array.isArray(value) || value.length !== 5) continue;
    const [ledgerId, stateRoot, poolStateRoot, txnRoot, timestamp] = value as unknown[];
    if (ledgerId !== msg.ledgerId || stateRoot !== msg.stateRootHash || txnRoot !== msg.txnRootHash || timestamp !== msg.ppTime) continue;
    if (typeof poolStateRoot !== 'string') continue;
    return {
      signature,
      participants,
      value: { ledger_id: ledgerId, pool_state_root_hash: poolStateRoot, state_root_hash: stateRoot, timestamp: timestamp as number, txn_root_hash: txnRoot },
    } as MultiSignature;
  }
  return undefined;
}
