import { CodedError, QuireError } from '@quire/common';

/**
 * Stable codes of {@link ClientError} and {@link VerificationError}. Programs and tests branch on these, never on
 * message text. Each entry documents the `data` it carries.
 */
export const ClientErrorCode = {
  // input and configuration
  /** A genesis file that cannot be read or holds no usable validator (data: `file`, `reason`). */
  INVALID_GENESIS: 'INVALID_GENESIS',
  /** A builder or command argument that is missing or malformed (data: `field`, `reason`). */
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  /** A seed that is not 32 bytes / 32 characters / 64 hex digits (data: `length`). */
  INVALID_SEED: 'INVALID_SEED',
  /** A request JSON that is not a request object (data: `reason`). */
  INVALID_REQUEST: 'INVALID_REQUEST',
  /** Signing with a key whose DID is not the request's author or a listed signer where one is required (data: `did`). */
  SIGNER_MISMATCH: 'SIGNER_MISMATCH',

  // submission outcome
  /** f+1 nodes refused the request before ordering (data: `reason`, `code`, `nodes`). */
  REQUEST_NACKED: 'REQUEST_NACKED',
  /** f+1 nodes rejected the request while ordering (data: `reason`, `code`, `nodes`). */
  REQUEST_REJECTED: 'REQUEST_REJECTED',
  /**
   * No f+1 agreement before the deadline (data: `timeoutMs`, `replies`, `errors`: `{node, code, reason?}` per failed
   * node, `code` being a refusing node's own code such as TOO_MANY_PENDING, else the ClientErrorCode of the failure).
   */
  TIMEOUT: 'TIMEOUT',
  /** Every node answered or failed and no f+1 agreement is possible any more (data: `replies`, `errors` as for TIMEOUT). */
  NO_CONSENSUS: 'NO_CONSENSUS',
  /** Every node was asked and none gave a reply that verifies (data: `errors`). */
  NO_VERIFIED_REPLY: 'NO_VERIFIED_REPLY',
  /**
   * Every node was asked and the replies that verified all showed a state older than one this pool handle has
   * already seen acknowledged or read (data: `ledgerId`, `seen`: `{time, seqNo}`, `behind`: the first such reply's
   * `{node, timestamp, root, key?, keySeqNo?, readSeqNo?}`, `errors`). Retry later: a node that is behind catches up.
   */
  READ_BEHIND: 'READ_BEHIND',
  /**
   * One node's reply verified but showed a state older than one this pool handle has already seen (its
   * multi-signature older than the newest seen txnTime / timestamp of the ledger, or the value of a key older than
   * the handle wrote or read): the next node is asked. Appears in `ReadOutcome.rejected` and in `errors`.
   */
  REPLY_BEHIND: 'REPLY_BEHIND',
  /** A transport failure towards one node: dial, Noise handshake or protocol negotiation failed (data: `node`, `reason`). */
  NODE_UNREACHABLE: 'NODE_UNREACHABLE',
  /** A request of a NodeConnection got no answer in time (data: `id`, `timeoutMs`). */
  REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  /** A NodeConnection's session stream ended before the answer of a request arrived (data: `id`, `reason`). */
  STREAM_CLOSED: 'STREAM_CLOSED',
  /**
   * A node's client listener refused the request before processing it (data: `node`, `refusal`: the node's code,
   * e.g. TOO_MANY_PENDING or RATE_LIMITED, `reason`: the node's text).
   */
  NODE_REFUSED: 'NODE_REFUSED',
  /** A node's answer that is not a well-formed reply (data: `node`, `reason`). */
  MALFORMED_REPLY: 'MALFORMED_REPLY',
  /**
   * The pool or a connection was closed; also the reason a session stream is aborted with (data: `reason` then:
   * 'client closed', 'close timed out', 'close failed', 'liveness ping answered').
   */
  CLOSED: 'CLOSED',
  /**
   * The caller's AbortSignal ended the operation (data: `reason`, the signal's reason as text). A write ended this way
   * may still be ordered by the pool: the nodes it reached decide it whatever the client does.
   */
  ABORTED: 'ABORTED',
  /** Pool-ledger catch-up could not reach a trusted target (data: `reason`). */
  CATCHUP_FAILED: 'CATCHUP_FAILED',

  // light-client verification (VerificationError)
  /** A reply lacks a field the verifier needs, or has the wrong type (data: `field`, `reason`). */
  REPLY_MALFORMED: 'REPLY_MALFORMED',
  /** The reply answers another query than the request asked (data: `field`, `requested`, `answered`). */
  REPLY_NOT_FOR_REQUEST: 'REPLY_NOT_FOR_REQUEST',
  /** The reply carries no state proof (or no multi-signature) to verify (data: `type`). */
  NO_PROOF: 'NO_PROOF',
  /** The trie proof is malformed or does not lead to root_hash (data: `proofCode`, `key`). */
  PROOF_INVALID: 'PROOF_INVALID',
  /** The proof is valid but proves another value than the reply claims (data: `key`, `expected`, `proven`). */
  PROOF_VALUE_MISMATCH: 'PROOF_VALUE_MISMATCH',
  /** The audit path does not lead from the txn to rootHash (data: `proofCode`, `seqNo`, `ledgerSize`). */
  AUDIT_PATH_INVALID: 'AUDIT_PATH_INVALID',
  /** The multi-signature signs another root (or ledger) than the one proved (data: `expected`, `signed`, `field`). */
  MULTISIG_ROOT_MISMATCH: 'MULTISIG_ROOT_MISMATCH',
  /** Fewer participants than the pool requires (data: `participants`, `required`). */
  MULTISIG_TOO_FEW_PARTICIPANTS: 'MULTISIG_TOO_FEW_PARTICIPANTS',
  /** A participant that is not a validator with a usable BLS key (data: `participant`). */
  MULTISIG_UNKNOWN_PARTICIPANT: 'MULTISIG_UNKNOWN_PARTICIPANT',
  /** A participant named twice (data: `participant`). */
  MULTISIG_DUPLICATE_PARTICIPANT: 'MULTISIG_DUPLICATE_PARTICIPANT',
  /** The aggregate BLS signature does not verify (data: `participants`). */
  MULTISIG_INVALID: 'MULTISIG_INVALID',
  /** The multi-signature's timestamp is too old (data: `timestamp`, `now`, `freshnessSeconds`). */
  MULTISIG_STALE: 'MULTISIG_STALE',
} as const;
export type ClientErrorCode = (typeof ClientErrorCode)[keyof typeof ClientErrorCode];

/** Any failure of @quire/client. */
export class ClientError extends CodedError<ClientErrorCode> {}

/** A reply that does not pass light-client verification: it must not be trusted. */
export class VerificationError extends ClientError {}

/**
 * A refusal sent by a node's client listener in an ERROR envelope, raised by `NodeConnection.request`: `code` is the
 * node's ClientRefusalCode (RATE_LIMITED, MESSAGE_TOO_LARGE, TOO_MANY_PENDING, ...), `data.reason` its text, `data.id`
 * the request id. The pool reports the same refusal as ClientError NODE_REFUSED.
 */
export class ClientRequestError extends QuireError {}

/** The error of an operation the caller's `signal` ended (ABORTED, with the signal's reason as text). */
export function abortedBy(signal: AbortSignal): ClientError {
  const r: unknown = signal.reason;
  return new ClientError(ClientErrorCode.ABORTED, { reason: r instanceof Error ? r.message : String(r) });
}
