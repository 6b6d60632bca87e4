// @quire/client: the Quire SDK (pool handle, request builders, signing, submission with reply agreement, reads
// verified by state proof), the light-client verifiers, and the `quire` command-line tool (bin).
export { ClientError, ClientErrorCode, ClientRequestError, VerificationError, type ClientErrorData, type ClientErrorOf, isClientError } from './errors.js';
export { ProofError } from '@quire/storage/proofs';

// light-client verifiers (pure)
export { verifyTrieProof, verifyAuditPath, ledgerTxnOfReply } from './verify/proofs.js';
export type { TrieProofInput, AuditPathInput } from './verify/proofs.js';
export {
  verifyMultiSignature,
  parseMultiSignature,
  MultiSignatureCache,
  DEFAULT_FRESHNESS_SECONDS,
  faultsTolerated,
  requiredParticipants,
} from './verify/multi-signature.js';
export type { PoolBlsKeys, Freshness, VerifyMultiSignatureInput } from './verify/multi-signature.js';
export { verifyReadReply } from './verify/read-reply.js';
export type { VerifyReadReplyInput, VerifiedRead } from './verify/read-reply.js';
export { readTargets } from './verify/read-targets.js';
export type { ProofTarget, ReadTargets, FreshnessRule } from './verify/read-targets.js';

// keys, requests, signing, TAA
export { DidKey, parseSeed } from './requests/did.js';
export * from './requests/builders.js';
export { signRequest, multiSignRequest, prepareForEndorser, endorseRequest } from './requests/sign.js';
export { buildTaaAcceptance, appendTaaAcceptance, fetchTaa } from './requests/taa.js';
export type { TaaInfo, AmlInfo, TaaAcceptanceInput } from './requests/taa.js';

// pool and transport
export { Pool, defaultPoolOptions } from './pool/pool.js';
export type { PoolOptions, PoolStatus, ReadOutcome, WriteOutcome } from './pool/pool.js';
export { PoolLedger } from './pool/pool-ledger.js';
export type { PoolNode } from './pool/pool-ledger.js';
export { CATCHUP_BATCH } from './pool/catchup.js';
export type { CatchupResult } from './pool/catchup.js';
export type { NodeAnswer, NodeFailure } from './pool/exchange.js';
export { peerIdOfDest, clientMultiaddr } from './transport/connection.js';
export type { NodeAddress } from './transport/connection.js';
// the one dialer of the client protocol and the client's libp2p stack (the tools, the devnet and the tests use them too)
export { NodeConnection, defaultNodeConnectionOptions } from './transport/node-connection.js';
export type {
  ConnectOptions,
  ConnectionMessage,
  ConnectionMessageListener,
  NodeConnectionEvents,
  NodeConnectionModules,
  NodeConnectionOptions,
} from './transport/node-connection.js';
export { CLIENT_PING_TIMEOUT_MS, createClientLibp2p } from './transport/libp2p.js';
export type { ClientLibp2pInit, ClientLibp2pOptions, ClientServices } from './transport/libp2p.js';

// following the ordered-batch topic as an observer
export { BatchFollower, defaultBatchFollowerOptions } from './follow/batch-follower.js';
export type { BatchFollowerEvents, BatchFollowerOptions, BatchFollowerStats, FollowedBatch, FollowGap } from './follow/batch-follower.js';
export { AnnouncementError, agreementKey, decodeAnnouncement, ownMultiSignature, verifySender, verifyTxnsAgainstRoot } from './follow/announcement.js';
export type { AnnouncementProblem } from './follow/announcement.js';
export type { ClientLogger } from './logger.js';
