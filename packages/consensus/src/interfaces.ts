// The live dependencies the consensus core is given (consensus.md §12.1): executor, crypto,
// request analysis and clock. The core performs no I/O of its own; everything it needs from the
// outside world arrives through these interfaces or as events.
import type { BatchId, ClientRequestBody, MultiSignatureValue, MultiSignature, NodeMessage, PrePrepare } from './messages.js';

/** What consensus needs to know about one client request. */
export interface RequestInfo {
  /** full request digest (lowercase hex SHA-256, formats.md §3.3) */
  digest: string;
  /** signature-independent payload digest (dedup key) */
  payloadDigest: string;
  /** ledger the request is ordered on: 0 pool, 1 domain, 2 config */
  ledgerId: number;
  /** client identifier and reqId, echoed in REQACK/REQNACK */
  identifier: string | null;
  reqId: number | bigint;
}

export type RequestCheck = { ok: true; info: RequestInfo } | { ok: false; code: string; reason: string };

/** Static validation + signature verification of a client request, cached by full digest. */
export interface RequestAnalyzer {
  analyze(request: ClientRequestBody): RequestCheck;
}

/** One ledger's roots after a batch, as carried in the audit txn and signed by BLS shares. */
export interface SignedLedgerRoots {
  ledgerId: number;
  stateRoot: string;
  txnRoot: string;
}

export interface ApplyBatchInput {
  ledgerId: number;
  requests: ClientRequestBody[];
  /** digests of `requests`, same order (convenience for the executor's indexes) */
  digests: string[];
  ppTime: number;
  ppSeqNo: number;
  /** view in which the batch was first proposed (the audit txn's viewNo) */
  originalViewNo: number;
  primaries: string[];
  /** batch digest (consensus.md §3.4) */
  digest: string;
}

export interface AppliedBatch {
  /** ascending indices into `requests` that failed dynamic validation */
  discarded: number[];
  /** reason per discarded index (REJECT text) */
  rejectReasons: string[];
  /** uncommitted state root of the batch's ledger after the batch (base58) */
  stateRoot: string;
  /** uncommitted Merkle root of the batch's ledger after the batch (base58) */
  txnRoot: string;
  /** uncommitted audit ledger root after this batch's audit txn (base58) */
  auditRoot: string;
  /** one entry per ledger id present in the audit txn's stateRoot map */
  signedLedgers: SignedLedgerRoots[];
  /** validator registry after this batch (R_uncommitted), for NODE txns */
  nodeReg: string[];
}

export interface CommittedTxn {
  digest: string;
  seqNo: number;
}

export interface CommittedBatch {
  ledgerId: number;
  ppSeqNo: number;
  txns: CommittedTxn[];
  /** validator registry after the batch (R_committed) */
  nodeReg: string[];
  /**
   * Optional: aliases of nodes already in the pool whose NODE data (addresses or keys) this batch
   * changed. A change of the current primary's makes the pool vote 27 (consensus.md §6.1, §8).
   */
  changedNodes?: string[];
}

/** What the last committed audit txn says (restoration, consensus.md §7.5). */
export interface AuditSummary {
  viewNo: number;
  ppSeqNo: number;
  ppTime: number;
  /** audit ledger root at size ppSeqNo (base58) */
  auditRoot: string;
  nodeReg: string[];
  /** ppTime of the last batch of each ledger with state (freshness) */
  lastUpdate: Record<number, number>;
}

/**
 * Applies batches of finalised requests to uncommitted state, commits the oldest applied batch
 * and reverts the newest ones. Batches are strictly sequential: apply appends, commit takes from
 * the front, revert takes from the back.
 */
export interface BatchExecutor {
  /** uncommitted pool state root now (before the next batch), base58 */
  uncommittedPoolStateRoot(): string;
  /** true when a request with this payload digest is committed */
  isPayloadCommitted(payloadDigest: string): boolean;
  /** dynamic-validate and apply one batch to uncommitted state, append its audit txn */
  applyBatch(input: ApplyBatchInput): AppliedBatch;
  /** drop the newest applied-uncommitted batch (its txns, state changes and audit txn) */
  revertLastBatch(): void;
  /**
   * Commit the oldest applied batch: ledger, state, audit txn, seqNo and timestamp indexes and the
   * batch's multi-signatures (stored by state root), as one atomic write.
   */
  commitBatch(multiSigs: MultiSignature[]): CommittedBatch;
  /** the last committed audit txn, undefined on an empty audit ledger */
  lastAudit(): AuditSummary | undefined;
  /** audit ledger root at a committed size (checkpoint digests) */
  auditRootAt(size: number): string;
  /**
   * The batch committed at `ppSeqNo` as its audit txn records it: the view
   * it was first proposed in and its batch digest; undefined when not committed. Lets a node that
   * restarted or caught up show the committed batches above its stable checkpoint in its
   * VIEW_CHANGE, as a node that ordered them through 3PC does.
   */
  committedBatch(ppSeqNo: number): { viewNo: number; digest: string } | undefined;

  // ---- catch-up (consensus.md §7) ----
  /** committed size and root (base58) of a ledger */
  ledgerStatus(ledgerId: number): { size: number; root: string };
  /** committed root of a ledger at a size */
  rootAt(ledgerId: number, size: number): string;
  /** consistency proof between two committed sizes (base58 hashes) */
  consistencyProof(ledgerId: number, oldSize: number, newSize: number): string[];
  /** verifies a consistency proof (pure; the ledger's Merkle scheme) */
  verifyConsistency(oldSize: number, oldRoot: string, newSize: number, newRoot: string, proof: readonly string[]): boolean;
  /** committed txns seqNo from..to inclusive, in wire form */
  txnRange(ledgerId: number, from: number, to: number): unknown[];
  /**
   * Verifies caught-up txns (the next ones after the committed size) against the target with the
   * proof from their last seqNo to the target, then applies and commits them (ledger, state,
   * indexes) atomically. False (and nothing written) when they do not verify or do not apply.
   * **Additive, optional** `multiSigs`: multi-signatures the core has checked (catch-up transfer,
   * formats.md §12.1), stored by state root in the same write as the txns, and only when they are.
   */
  appendCaughtUp(
    ledgerId: number,
    txns: readonly unknown[],
    consProof: readonly string[],
    targetSize: number,
    targetRoot: string,
    multiSigs?: readonly MultiSignature[],
  ): boolean;
  /** sizes and roots of ledgers 0-2 named by the last committed audit txn (deltas resolved) */
  ledgerTargets(): Map<number, { size: number; root: string }>;

  /**
   * R_begin of the last `count` views that ordered a batch (consensus.md §1.3), read from the
   * committed audit ledger: for view v, the `nodeReg` of the audit txn preceding the first audit
   * txn with viewNo v (the genesis registry when that is the first audit txn). A view missing from
   * the map (none ordered a batch) takes the last audit txn's `nodeReg` as its R_begin.
   */
  viewStartRegistries(count: number): Map<number, string[]>;

  /**
   * The validator registry in force at a pool state root (historic roots stay resolvable,
   * consensus.md §8), undefined for an unknown root. PRE-PREPARE check 12 needs n−f of the registry
   * at a multi-signature's pool state root, also for a batch ordered just before a membership
   * change that this node caught up past.
   */
  registryAt(poolStateRoot: string): string[] | undefined;

  /**
   * False when this node's pool state does not hold `poolStateRoot` (a root older than the
   * pool genesis it started from: an operator gives a new node the current pool ledger as its
   * genesis), so that no BLS key can be looked up at it. A multi-signature made at such a root
   * cannot be checked here: PRE-PREPARE check 12 leaves it to the nodes that can (n−f of them
   * ordered the batch it signs) instead of refusing every PRE-PREPARE that carries it, and catch-up
   * treats it as an unknown root, not as a bad signature.
   */
  hasPoolStateRoot(poolStateRoot: string): boolean;

  // ---- multi-signatures in catch-up (formats.md §12.1) ----
  /**
   * The state roots one audit txn names (in the wire form of `txnRange` and
   * `appendCaughtUp`), with their ledger ids; [] for a txn that names none or cannot be read. Pure.
   * A seeder sends the multi-signatures of those roots (`multiSignatureFor`) with its audit-ledger
   * CATCHUP_REPs; a leecher accepts only multi-signatures of the roots named by the audit txns of
   * the reply that carried them.
   */
  auditStateRoots(auditTxn: unknown): { ledgerId: number; stateRoot: string }[];
  /** The committed multi-signature stored for a state root (base58), undefined when none. */
  multiSignatureFor(stateRoot: string): MultiSignature | undefined;
  /**
   * Stores checked multi-signatures of catch-up in a write of their own, at the end of catch-up
   * (those that became checkable, or whose ledger was complete, only after the write of the txns
   * that completed their ledger).
   */
  storeMultiSignatures(multiSigs: readonly MultiSignature[]): void;
}

/**
 * Optional durable store of INSTANCE_CHANGE votes (consensus.md §6.2: a restart must not reset
 * them). `save` is called with every vote still alive whenever the set changes; times are UTC
 * seconds so that they survive a restart of the monotonic clock.
 */
export interface InstanceChangeVoteStore {
  load(): StoredInstanceChangeVote[];
  save(votes: StoredInstanceChangeVote[]): void;
}

/**
 * Durable journal of this node's PRE-PREPARE / PREPARE / COMMIT votes above its stable checkpoint
 * (#15 F8): the BatchIDs it pre-prepared (a PREPARE sent) and prepared (a COMMIT sent), each with
 * the view it voted in. `save` is called synchronously at the end of every event that changed them,
 * before the effects carrying the votes are handed to the shell, so it must be durable against a
 * process crash when it returns. A restarted node then never votes for another digest at a
 * (view, ppSeqNo) it voted for, and its VIEW_CHANGE still lists what it prepared.
 */
export interface ThreePcVoteStore {
  load(): ThreePcVoteJournal | undefined;
  save(journal: ThreePcVoteJournal): void;
}

export interface ThreePcVoteJournal {
  preprepared: BatchId[];
  prepared: BatchId[];
  /**
   * The PRE-PREPAREs of `preprepared` above the last ordered batch, each with its requests. Were
   * every validator to crash at once with a batch prepared and ordered by none, the votes alone
   * would make the next NEW_VIEW re-propose a batch that no node could apply any more. Read back
   * as untrusted input (the core parses them as it parses peer messages); absent in journals of
   * votes only.
   */
  batches?: JournaledBatch[];
}

export interface JournaledBatch {
  pp: PrePrepare;
  requests: ClientRequestBody[];
}

export interface StoredInstanceChangeVote {
  /** proposed view */
  viewNo: number;
  voter: string;
  /** UTC seconds at which the vote was received or cast */
  utc: number;
}

/** BLS operations over multi-signature values; keys are looked up at value.pool_state_root_hash. */
export interface ConsensusCrypto {
  /** this node's share over MP(value), base58 */
  blsSign(value: MultiSignatureValue): string;
  blsVerifyShare(alias: string, value: MultiSignatureValue, share: string): boolean;
  /** aggregate of shares over one value, undefined when a share does not decode */
  blsAggregate(shares: string[]): string | undefined;
  /** FastAggregateVerify of `signature` by `participants` over MP(value) */
  blsVerifyMulti(participants: string[], value: MultiSignatureValue, signature: string): boolean;
  /**
   * Several multi-signatures verified at once (optional): true when every one verifies as blsVerifyMulti would
   * say (except with negligible probability); false when one does not or cannot be checked, and the caller then
   * verifies them one by one with blsVerifyMulti. Catch-up checks the multi-signatures of its audit txns so.
   */
  blsVerifyMultiBatch?(items: readonly { participants: string[]; value: MultiSignatureValue; signature: string }[]): boolean;
}

export interface Clock {
  /** monotonic milliseconds */
  now(): number;
  /** wall clock, integer UTC seconds */
  utcSeconds(): number;
}

/**
 * Until when (UTC seconds) this node may remember refusals of client writes (intake.ts): saved synchronously before
 * the refusal is answered, read back at a restart. One number: the refusals themselves are kept in memory.
 */
export interface RefusalMarkStore {
  /** the saved time, undefined when none was saved (or it cannot be read) */
  load(): number | undefined;
  save(untilUtcSeconds: number): void;
}

export interface ConsensusModules {
  executor: BatchExecutor;
  crypto: ConsensusCrypto;
  requests: RequestAnalyzer;
  clock: Clock;
  /** optional durable INSTANCE_CHANGE votes; without it votes live in memory only */
  voteStore?: InstanceChangeVoteStore;
  /** optional durable journal of this node's 3PC votes (#15 F8); without it they live in memory only */
  threePcStore?: ThreePcVoteStore;
  /**
   * optional durable mark of this node's refusals of client writes (admission control, intake.ts): without it a node
   * restarted while it remembered refusals may take in, from PROPAGATEs, a write it told a client it refused
   */
  refusalMark?: RefusalMarkStore;
  /** optional structured logger (pino-compatible subset) */
  logger?: { debug(obj: object, msg?: string): void; warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

// ---- events in, effects out -------------------------------------------------------------------

export type ConsensusEvent =
  | { kind: 'nodeMessage'; from: string; msg: unknown }
  | { kind: 'clientRequest'; connId: string; request: ClientRequestBody }
  | { kind: 'timer'; id: string }
  | { kind: 'peerConnected'; alias: string }
  | { kind: 'peerDisconnected'; alias: string };

export interface ClientOutcome {
  digest: string;
  connIds: string[];
}

/**
 * Where the requests of an ordered batch spent their time at this node (the core's clock, ms): a
 * diagnostic of the write path (receipt, finalisation by n-f PROPAGATEs, batch cut, PREPARE and
 * COMMIT quorums), never part of a replicated decision.
 */
export interface BatchStages {
  /** per request this node held: when it was first seen here and when it was finalised (0: not finalised here) */
  requests: { receivedAt: number; finalisedAt: number }[];
  /** the PRE-PREPARE applied here (sent, at the primary) */
  appliedAt?: number;
  /** PREPARE quorum reached here */
  preparedAt?: number;
  /** COMMIT quorum reached and the batch ordered here */
  orderedAt: number;
}

export type ConsensusEffect =
  | { kind: 'broadcast'; msg: NodeMessage }
  | { kind: 'send'; to: string; msg: NodeMessage }
  | { kind: 'setTimer'; id: string; delayMs: number }
  | { kind: 'cancelTimer'; id: string }
  /** REQACK / REQNACK to a client connection */
  | { kind: 'clientAck'; connId: string; identifier: string | null; reqId: number | bigint }
  | { kind: 'clientNack'; connId: string; identifier: string | null; reqId: number | bigint; code: string; reason: string }
  /**
   * the request's payload is ordered (this request, or a copy of the payload under other signatures or envelope, taken in
   * and dropped as a duplicate): answer from the ledger once the committed txns are durable
   */
  | { kind: 'replyFromLedger'; connId: string; payloadDigest: string; digest: string }
  /** a batch was ordered and committed: REPLY for `replies`, REJECT for `rejects` */
  | {
      kind: 'ordered';
      viewNo: number;
      ppSeqNo: number;
      ledgerId: number;
      ppTime: number;
      digest: string;
      replies: (ClientOutcome & { seqNo: number })[];
      rejects: (ClientOutcome & { reason: string })[];
      multiSigs: MultiSignature[];
      /** when this node's copy of the batch went through the write path (the core's clock, ms); for latency metrics only */
      stages?: BatchStages;
    }
  /** a peer sent something invalid or suspicious (consensus.md §6.1 codes; vote = counts toward view change) */
  | { kind: 'suspicion'; peer: string; code: number; vote: boolean }
  /** an invariant the node cannot repair broke; a human is needed */
  | { kind: 'alarm'; reason: string; data: Record<string, unknown> };
