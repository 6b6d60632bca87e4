import { CodedError } from '@quire/common';
import type { StorageErrorCode } from '@quire/storage/proofs';

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
  /** A seed that is not 32 bytes / 32 characters / 64 hex digits (data: `length`, -1 when not bytes). */
  INVALID_SEED: 'INVALID_SEED',
  /** A request JSON that is not a request object (data: `reason`). */
  INVALID_REQUEST: 'INVALID_REQUEST',
  /** Signing with a key whose DID is not the request's author or a listed signer where one is required (data: `did`, `reason`). */
  SIGNER_MISMATCH: 'SIGNER_MISMATCH',

  // submission outcome
  /** f+1 nodes refused the request before ordering (data: `reason`, `code`, `nodes`). */
  REQUEST_NACKED: 'REQUEST_NACKED',
  /** f+1 nodes rejected the request while ordering (data: `reason`, `code`, `nodes`). */
  REQUEST_REJECTED: 'REQUEST_REJECTED',
  /**
   * No f+1 agreement before the deadline (data: `timeoutMs`, `replies`, `errors`: `{node, code, reason?}` per failed
   * node, `code` being a refusing node's own code such as TOO_MANY_PENDING, else the ClientErrorCode of the failure;
   * `answered`, `n`). As one node's failure in `errors`: its node gave no answer in time (data: `node`).
   */
  TIMEOUT: 'TIMEOUT',
  /**
   * Every node answered or failed and no f+1 agreement is possible any more (data: `replies`, `errors`, `answered`, `n`
   * as for TIMEOUT); of a read, the nodes agreeing on each answer without proof (data: `groups`, `errors`); no validator
   * has a client address (data: `reason`).
   */
  NO_CONSENSUS: 'NO_CONSENSUS',
  /** Every node was asked and none gave a reply that verifies (data: `errors`, `nacks`: `{reason, nodes}` per REQNACK reason). */
  NO_VERIFIED_REPLY: 'NO_VERIFIED_REPLY',
  /**
   * Every node was asked and the replies that verified all showed a state older than one this pool handle has
   * already seen acknowledged or read (data: `ledgerId`, `seen`: `{time, seqNo}`, `behind`: the first such reply's
   * `{node, ledgerId, timestamp, root, seenTime, key?, keySeqNo?, readSeqNo?}`, `errors`, `nacks`). Retry later: a node that is behind catches up.
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
  /**
   * Pool-ledger catch-up could not reach a trusted target (data: `reason`, with `notAhead`, `proofs`, `failed` when no
   * f+1 agree; `discarded` when no node served valid txns; `at`, `target` when timed out; `expected`, `actual` for a txn
   * out of sequence).
   */
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
  /** The multi-signature's timestamp is too old (data: `timestamp`, `now` or, for a read as of a time, `asOf`, `freshnessSeconds`). */
  MULTISIG_STALE: 'MULTISIG_STALE',
} as const;
export type ClientErrorCode = (typeof ClientErrorCode)[keyof typeof ClientErrorCode];

/** One node's failure in the `errors` of a pool error (see NodeFailure: `code` a node's refusal code or a ClientErrorCode). */
export type NodeFailureData = {
  node: string;
  code: string;
  reason?: string;
};

/** The answers of a write, grouped (REPLYs by result, REQNACKs / REJECTs by reason), in the data of TIMEOUT and NO_CONSENSUS. */
export type WriteSummaryData = {
  replies: { kind: 'reply' | 'nack' | 'reject'; nodes: string[]; reason?: string }[];
  errors: NodeFailureData[];
  /** The nodes that answered. */
  answered: string[];
  n: number;
};

/** The data of each {@link ClientErrorCode}, checked wherever a ClientError (or VerificationError) is made. */
export type ClientErrorData = {
  INVALID_GENESIS: { file: string; reason: string };
  INVALID_ARGUMENT: { field: string; reason: string };
  /** `length` -1: not bytes at all. */
  INVALID_SEED: { length: number };
  INVALID_REQUEST: { reason: string };
  SIGNER_MISMATCH: { did: string; reason: string };
  REQUEST_NACKED: { reason: string; code: number | null; nodes: string[] };
  REQUEST_REJECTED: { reason: string; code: number | null; nodes: string[] };
  /** A write's deadline (with what was heard); one node's (`node`); an exchange ended because others settled the request (`reason`). */
  TIMEOUT: ({ timeoutMs: number } & WriteSummaryData) | { node: string } | { reason: string };
  /** A write (what was heard); a read (the groups of nodes agreeing on an unproven answer); no node to ask (`reason`). */
  NO_CONSENSUS: WriteSummaryData | { groups: string[][]; errors: NodeFailureData[] } | { reason: string };
  NO_VERIFIED_REPLY: { errors: NodeFailureData[]; nacks: { reason: string; nodes: string[] }[] };
  READ_BEHIND: {
    ledgerId: number;
    seen: { time: number; seqNo: number } | undefined;
    behind: { node: string; ledgerId: number; timestamp: number; root: string; seenTime: number; key?: string; keySeqNo?: number; readSeqNo?: number | null };
    errors: NodeFailureData[];
    nacks: { reason: string; nodes: string[] }[];
  };
  REPLY_BEHIND: Record<string, never>;
  NODE_UNREACHABLE: { node: string; reason: string };
  REQUEST_TIMEOUT: { id: number; timeoutMs: number };
  STREAM_CLOSED: { id: number; reason: string };
  NODE_REFUSED: { node: string; refusal: string; reason: string };
  MALFORMED_REPLY: { node: string; reason: string };
  CLOSED: { reason?: 'client closed' | 'close timed out' | 'close failed' | 'liveness ping answered' };
  ABORTED: { reason: string };
  CATCHUP_FAILED:
    | { reason: 'no f+1 agreement on the pool ledger'; notAhead: number; proofs: number; failed: string[] }
    | { reason: 'no node served valid txns'; discarded: { node: string; reason: string }[] }
    | { reason: 'timed out'; at: number; target: number }
    | { reason: 'root differs from the target after catch-up' }
    | { reason: 'txn out of sequence'; expected: number; actual: string };
  REPLY_MALFORMED: { field: string; reason: string };
  /** `requested` and `answered` as canonical JSON. */
  REPLY_NOT_FOR_REQUEST: { field: string; requested: string; answered: string };
  NO_PROOF: { type: string };
  PROOF_INVALID: { proofCode: StorageErrorCode; key: string };
  PROOF_VALUE_MISMATCH: { key: string; expected: string | null; proven: string | null };
  AUDIT_PATH_INVALID: { proofCode: StorageErrorCode; seqNo: number; ledgerSize: number };
  MULTISIG_ROOT_MISMATCH: { field: 'state_root_hash' | 'txn_root_hash' | 'ledger_id'; expected: unknown; signed: unknown };
  MULTISIG_TOO_FEW_PARTICIPANTS: { participants: number; required: number };
  MULTISIG_UNKNOWN_PARTICIPANT: { participant: string };
  MULTISIG_DUPLICATE_PARTICIPANT: { participant: string };
  MULTISIG_INVALID: { participants: number };
  /** `now` for a read of the current state, `asOf` for a read as of a time. */
  MULTISIG_STALE: { timestamp: number; freshnessSeconds: number } & ({ now: number } | { asOf: number });
};

/** Any failure of @quire/client. */
export class ClientError extends CodedError<ClientErrorCode, ClientErrorData> {}

/** A ClientError of code `K`, its data typed as that code's. */
export type ClientErrorOf<K extends ClientErrorCode> = Omit<ClientError, 'code' | 'data'> & { readonly code: K; readonly data: ClientErrorData[K] };

/** Whether `e` is a ClientError of `code` (its data then typed as that code's, as checked when it was made). */
export function isClientError<K extends ClientErrorCode>(e: unknown, code: K): e is ClientErrorOf<K> {
  return e instanceof ClientError && e.code === code;
}

/** A reply that does not pass light-client verification: it must not be trusted. */
export class VerificationError extends ClientError {}

/**
 * A refusal sent by a node's client listener in an ERROR envelope, raised by `NodeConnection.request`: `code` is the
 * node's ClientRefusalCode (RATE_LIMITED, MESSAGE_TOO_LARGE, TOO_MANY_PENDING, ...), `data.reason` its text, `data.id`
 * the request id. The pool reports the same refusal as ClientError NODE_REFUSED. The code is the text the node sent,
 * relayed as is (a ClientRefusalCode from a node of this version; any text from another), so it is typed string, every
 * code with the same data.
 */
export class ClientRequestError extends CodedError<string, Record<string, { reason: string; id: number }>> {}

/** The error of an operation the caller's `signal` ended (ABORTED, with the signal's reason as text). */
export function abortedBy(signal: AbortSignal): ClientError {
  const r: unknown = signal.reason;
  return new ClientError(ClientErrorCode.ABORTED, { reason: r instanceof Error ? r.message : String(r) });
}
