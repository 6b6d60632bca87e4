// @quire/consensus: three-phase BFT ordering with BLS multi-signatures over state roots, as a pure
// event-driven state machine, plus the deterministic simulator it is tested with.
export { ConsensusCore, TICK_TIMER } from './core.js';
export type { ConsensusStatus } from './core.js';
export { ConsensusError, ConsensusErrorCode, type ConsensusErrorData } from './errors.js';
export { Suspicion } from './context.js';
export type { ThreePcKey } from './context.js';
export { batchDigest, multiSigValue, encodeDiscarded, decodeDiscarded } from './digest.js';
export { parseNodeMessage } from './parse.js';
export { catchupEntrySize, catchupRepSize, cutPieces } from './catchup.js';
export { MultiSigVerdict, checkMultiSignature, registryAtPoolRoot } from './multisig-check.js';
export { defaultConsensusOptions, resolveOptions, quorumsFor, primaryOf } from './options.js';
export type { ConsensusOptions, Quorums } from './options.js';
export { ConsensusOp, multiSigToTuple, multiSigFromTuple } from './messages.js';
export type {
  Checkpoint,
  ClientRequestBody,
  Commit,
  InstanceChange,
  MessageRequest,
  MessageResponse,
  MultiSigTuple,
  MultiSignatureValue,
  MultiSignature,
  NodeMessage,
  Prepare,
  PrePrepare,
  Propagate,
} from './messages.js';
export type {
  AppliedBatch,
  ApplyBatchInput,
  AuditSummary,
  BatchExecutor,
  BatchStages,
  ClientOutcome,
  Clock,
  CommittedBatch,
  CommittedTxn,
  ConsensusCrypto,
  ConsensusEffect,
  ConsensusEvent,
  ConsensusModules,
  InstanceChangeVoteStore,
  ThreePcVoteJournal,
  JournaledBatch,
  ThreePcVoteStore,
  RefusalMarkStore,
  StoredInstanceChangeVote,
  RequestAnalyzer,
  RequestCheck,
  RequestInfo,
  SignedLedgerRoots,
} from './interfaces.js';
export { NACK_OVERLOADED, droppedRequestMemoryMs, requestIdentity } from './intake.js';
// bounds on what one Byzantine validator can make a node hold (#15)
export { INSTANCE_CHANGE_VIEW_WINDOW } from './instance-change.js';
export { MessageStash, STASH_SENDER_SHARE, defaultStashSenderLimit } from './stash.js';
export type { Stashed } from './stash.js';
export { viewChangeDigest } from './new-view-calc.js';
export { createBlsConsensusCrypto, defaultBlsConsensusCryptoOptions } from './bls-crypto.js';
export type { BlsConsensusCryptoModules, BlsConsensusCryptoOptions } from './bls-crypto.js';
// the deterministic simulator (consensus.md §12.2) is the subpath `@quire/consensus/sim`
