// Node-to-node consensus messages (consensus.md §3.10, §4, §6.10, §7.7) as plain data. The wire
// encoding (msgpack) belongs to the transport (`encodedSize` only measures it); the core receives
// decoded values and checks their shape with `parseNodeMessage` before anything else looks at them.
import { encodeMsgpack, type MultiSigTuple, type MultiSignature, type MultiSignatureValue } from '@quire/common';

export const ConsensusOp = {
  PROPAGATE: 'PROPAGATE',
  PREPREPARE: 'PREPREPARE',
  PREPARE: 'PREPARE',
  COMMIT: 'COMMIT',
  CHECKPOINT: 'CHECKPOINT',
  INSTANCE_CHANGE: 'INSTANCE_CHANGE',
  VIEW_CHANGE: 'VIEW_CHANGE',
  VIEW_CHANGE_ACK: 'VIEW_CHANGE_ACK',
  NEW_VIEW: 'NEW_VIEW',
  OLD_VIEW_PREPREPARE_REQ: 'OLD_VIEW_PREPREPARE_REQ',
  OLD_VIEW_PREPREPARE_REP: 'OLD_VIEW_PREPREPARE_REP',
  LEDGER_STATUS: 'LEDGER_STATUS',
  CONSISTENCY_PROOF: 'CONSISTENCY_PROOF',
  CATCHUP_REQ: 'CATCHUP_REQ',
  CATCHUP_REP: 'CATCHUP_REP',
  MESSAGE_REQUEST: 'MESSAGE_REQUEST',
  MESSAGE_RESPONSE: 'MESSAGE_RESPONSE',
} as const;
export type ConsensusOp = (typeof ConsensusOp)[keyof typeof ConsensusOp];

/** A client request as received (client field names); its meaning is the request layer's business. */
export type ClientRequestBody = Record<string, unknown>;

export interface Propagate {
  op: 'PROPAGATE';
  request: ClientRequestBody;
  senderClient: string | null;
}

/** `[signature, participants, [ledger_id, state_root_hash, pool_state_root_hash, txn_root_hash, timestamp]]` (common's type) */
export type { MultiSigTuple };

export interface PrePrepare {
  op: 'PREPREPARE';
  instId: number;
  viewNo: number;
  ppSeqNo: number;
  ppTime: number;
  reqIdr: string[];
  discarded: string;
  digest: string;
  ledgerId: number;
  stateRootHash: string;
  txnRootHash: string;
  sub_seq_no: number;
  final: boolean;
  poolStateRootHash: string;
  auditTxnRootHash: string;
  blsMultiSigs?: MultiSigTuple[];
  originalViewNo?: number;
}

export interface Prepare {
  op: 'PREPARE';
  instId: number;
  viewNo: number;
  ppSeqNo: number;
  ppTime: number;
  digest: string;
  stateRootHash: string;
  txnRootHash: string;
  auditTxnRootHash: string;
}

export interface Commit {
  op: 'COMMIT';
  instId: number;
  viewNo: number;
  ppSeqNo: number;
  /** str(ledgerId) -> base58 BLS share */
  blsSigs: Record<string, string>;
}

export interface Checkpoint {
  op: 'CHECKPOINT';
  instId: number;
  viewNo: number;
  seqNoStart: number;
  seqNoEnd: number;
  digest: string | null;
}

export interface InstanceChange {
  op: 'INSTANCE_CHANGE';
  viewNo: number;
  reason: number;
}

/** `{view_no, pp_view_no, pp_seq_no, pp_digest}` (consensus.md §6.3) */
export interface BatchId {
  view_no: number;
  pp_view_no: number;
  pp_seq_no: number;
  pp_digest: string;
}

export interface ViewChange {
  op: 'VIEW_CHANGE';
  viewNo: number;
  stableCheckpoint: number;
  prepared: BatchId[];
  preprepared: BatchId[];
  checkpoints: Checkpoint[];
}

export interface ViewChangeAck {
  op: 'VIEW_CHANGE_ACK';
  viewNo: number;
  /** author of the acknowledged VIEW_CHANGE */
  name: string;
  digest: string;
}

export interface NewView {
  op: 'NEW_VIEW';
  viewNo: number;
  /** [alias, vcDigest] sorted by alias */
  viewChanges: [string, string][];
  checkpoint: Checkpoint;
  batches: BatchId[];
  /** only in MESSAGE_RESPONSE */
  primary?: string;
}

export interface OldViewPrePrepareReq {
  op: 'OLD_VIEW_PREPREPARE_REQ';
  instId: number;
  batch_ids: BatchId[];
}

export interface OldViewPrePrepareRep {
  op: 'OLD_VIEW_PREPREPARE_REP';
  instId: number;
  preprepares: PrePrepare[];
}

export interface LedgerStatus {
  op: 'LEDGER_STATUS';
  ledgerId: number;
  txnSeqNo: number;
  viewNo: number | null;
  ppSeqNo: number | null;
  merkleRoot: string;
  protocolVersion: number;
}

export interface ConsistencyProof {
  op: 'CONSISTENCY_PROOF';
  ledgerId: number;
  seqNoStart: number;
  seqNoEnd: number;
  viewNo: number;
  ppSeqNo: number;
  oldMerkleRoot: string;
  newMerkleRoot: string;
  hashes: string[];
}

export interface CatchupReq {
  op: 'CATCHUP_REQ';
  ledgerId: number;
  seqNoStart: number;
  seqNoEnd: number;
  catchupTill: number;
}

export interface CatchupRep {
  op: 'CATCHUP_REP';
  ledgerId: number;
  /** str(seqNo) -> txn, ascending */
  txns: Record<string, unknown>;
  consProof: string[];
  /**
   * Quire extension (formats.md §12.1), audit ledger only: the seeder's multi-signatures of the state
   * roots named by the reply's audit txns, one per root, as `MultiSigTuple`s (the PRE-PREPARE
   * `blsMultiSigs` form). Absent when there are none. Received entries are unchecked (`unknown`):
   * the leecher checks each one before storing it (catchup-multisigs.ts).
   */
  multiSigs?: unknown[];
}

export type MessageRequestType = 'PROPAGATE' | 'PREPREPARE' | 'PREPARE' | 'COMMIT' | 'VIEW_CHANGE' | 'NEW_VIEW' | 'CONSISTENCY_PROOF';

export interface MessageRequest {
  op: 'MESSAGE_REQUEST';
  msg_type: MessageRequestType;
  params: Record<string, unknown>;
}

export interface MessageResponse {
  op: 'MESSAGE_RESPONSE';
  msg_type: MessageRequestType;
  params: Record<string, unknown>;
  msg: Propagate | PrePrepare | Prepare | Commit | ViewChange | NewView | ConsistencyProof | null;
}

export type NodeMessage =
  | Propagate
  | PrePrepare
  | Prepare
  | Commit
  | Checkpoint
  | InstanceChange
  | ViewChange
  | ViewChangeAck
  | NewView
  | OldViewPrePrepareReq
  | OldViewPrePrepareRep
  | LedgerStatus
  | ConsistencyProof
  | CatchupReq
  | CatchupRep
  | MessageRequest
  | MessageResponse;

/**
 * The 5-entry value signed by BLS shares and multi-signatures (formats.md §9.2) and the multi-signature over it:
 * common's types, the ones the light client verifies (consensus builds its multi-signatures with the participants
 * sorted ascending).
 */
export type { MultiSignature, MultiSignatureValue };

export function multiSigToTuple(ms: MultiSignature): MultiSigTuple {
  const v = ms.value;
  return [ms.signature, [...ms.participants], [v.ledger_id, v.state_root_hash, v.pool_state_root_hash, v.txn_root_hash, v.timestamp]];
}

export function multiSigFromTuple(t: MultiSigTuple): MultiSignature {
  const [signature, participants, [ledgerId, stateRoot, poolRoot, txnRoot, timestamp]] = t;
  return {
    signature,
    participants: [...participants],
    value: { ledger_id: ledgerId, pool_state_root_hash: poolRoot, state_root_hash: stateRoot, timestamp, txn_root_hash: txnRoot },
  };
}

/** Bytes of `msg` on the wire (0 when it cannot be encoded: the transport reports that). */
export function encodedSize(msg: NodeMessage): number {
  try {
    return encodeMsgpack(msg).length;
  } catch {
    return 0;
  }
}
