import { CodedError } from '@quire/common';

/** Stable codes of {@link NetworkError}. Callers and tests match on these, never on message text. */
export const NetworkErrorCode = {
  /** A verkey (`NODE.dest`) that is not base58 of exactly 32 bytes (data: `dest`, `length`). */
  INVALID_VERKEY: 'INVALID_VERKEY',
  /** A node seed that is not exactly 32 bytes (data: `length`). */
  INVALID_SEED: 'INVALID_SEED',
  /** A validator or observer entry with a missing or malformed field (data: `name`, `field`). */
  INVALID_PEER_INFO: 'INVALID_PEER_INFO',
  /** Two entries of one set share a name or a key (data: `name`). */
  DUPLICATE_PEER: 'DUPLICATE_PEER',
  /** A message longer than the frame limit was given to send/publish (data: `length`, `limit`). */
  MESSAGE_TOO_LARGE: 'MESSAGE_TOO_LARGE',
  /** A gossip topic outside the topics this host was configured with (data: `topic`). */
  TOPIC_NOT_ALLOWED: 'TOPIC_NOT_ALLOWED',
  /**
   * The host was closed (data: none); also the reason a stream is aborted with (data: `reason`: the end's reason,
   * 'close timed out' or 'close failed').
   */
  CLOSED: 'CLOSED',
  /** The caller's AbortSignal ended the operation; whatever it had opened is closed (data: `reason`, the signal's reason as text). */
  ABORTED: 'ABORTED',
} as const;
export type NetworkErrorCode = (typeof NetworkErrorCode)[keyof typeof NetworkErrorCode];

/** The data of each {@link NetworkErrorCode}, checked wherever a NetworkError is made. */
export type NetworkErrorData = {
  INVALID_VERKEY: { dest: string; length: number };
  INVALID_SEED: { length: number };
  INVALID_PEER_INFO: { name?: unknown; field: string };
  DUPLICATE_PEER: { name: string };
  MESSAGE_TOO_LARGE: { length: number; limit: number };
  TOPIC_NOT_ALLOWED: { topic: string };
  CLOSED: { reason?: string };
  ABORTED: { reason: string };
};

/** Errors raised by @quire/network to its local callers (never sent to remote peers). */
export class NetworkError extends CodedError<NetworkErrorCode, NetworkErrorData> {}
