// One entry of the 3PC log: everything this node holds about one ppSeqNo of the current view.
import type { AppliedBatch } from './interfaces.js';
import type { Commit, MultiSignature, Prepare, PrePrepare } from './messages.js';

export interface BatchRecord {
  ppSeqNo: number;
  /** the accepted (applied) PRE-PREPARE */
  pp?: PrePrepare;
  /** executor result of applying pp here; kept after ordering for checkpoints and answers */
  applied?: AppliedBatch;
  prepares: Map<string, Prepare>;
  commits: Map<string, Commit>;
  /** committers whose shares verified for every ledger of the batch (alone or in a verified aggregate) */
  verifiedCommitters: Set<string>;
  /** committers whose shares verified on their own (own share included) */
  shareChecked: Set<string>;
  prepared: boolean;
  ownPrepare?: Prepare;
  ownCommit?: Commit;
  ordered: boolean;
  /** wrong-time suspicion already raised for this key */
  timeSuspected: boolean;
  multiSigs?: MultiSignature[];
}

export function newRecord(ppSeqNo: number): BatchRecord {
  return {
    ppSeqNo,
    prepares: new Map(),
    commits: new Map(),
    verifiedCommitters: new Set(),
    shareChecked: new Set(),
    prepared: false,
    ordered: false,
    timeSuspected: false,
  };
}

/** This node's PREPARE of a PRE-PREPARE: its view, seqNo, time, digest and roots. */
export function prepareOf(pp: PrePrepare): Prepare {
  return {
    op: 'PREPARE',
    instId: 0,
    viewNo: pp.viewNo,
    ppSeqNo: pp.ppSeqNo,
    ppTime: pp.ppTime,
    digest: pp.digest,
    stateRootHash: pp.stateRootHash,
    txnRootHash: pp.txnRootHash,
    auditTxnRootHash: pp.auditTxnRootHash,
  };
}

export function prepareMatches(p: Prepare, pp: PrePrepare): boolean {
  return (
    p.digest === pp.digest &&
    p.stateRootHash === pp.stateRootHash &&
    p.txnRootHash === pp.txnRootHash &&
    p.auditTxnRootHash === pp.auditTxnRootHash &&
    p.ppTime === pp.ppTime
  );
}

/** Field-by-field equality of two PRE-PREPAREs (equivocation check). */
export function samePrePrepare(a: PrePrepare, b: PrePrepare): boolean {
  return (
    a.viewNo === b.viewNo &&
    a.ppSeqNo === b.ppSeqNo &&
    a.digest === b.digest &&
    a.ppTime === b.ppTime &&
    a.ledgerId === b.ledgerId &&
    a.discarded === b.discarded &&
    a.stateRootHash === b.stateRootHash &&
    a.txnRootHash === b.txnRootHash &&
    a.poolStateRootHash === b.poolStateRootHash &&
    a.auditTxnRootHash === b.auditTxnRootHash &&
    (a.originalViewNo ?? a.viewNo) === (b.originalViewNo ?? b.viewNo) &&
    JSON.stringify(a.blsMultiSigs ?? []) === JSON.stringify(b.blsMultiSigs ?? [])
  );
}
