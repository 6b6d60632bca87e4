/** Request shapes (formats.md 3.1, 3.5). Integers that may exceed 2^53 are `bigint` (see parseJson). */

/** Transaction author agreement acceptance (formats.md 3.5). */
export interface TaaAcceptance {
  mechanism: string;
  /** Lowercase hex SHA-256 of `version` immediately followed by `text`. */
  taaDigest: string;
  /** Acceptance time in seconds, rounded down to a UTC midnight. */
  time: number | bigint;
}

/** An operation: `type` (a TxnType code) plus type-specific fields. */
export type Operation = Record<string, unknown>;

/** A client request as kept by a node (unknown top-level fields are dropped on receipt). */
export interface Request {
  /** Author DID; required unless `signatures` is present. */
  identifier?: string;
  /** Client-chosen id, at most 2^64-1 (nanosecond time is usual: a bigint). */
  reqId: number | bigint;
  operation: Operation;
  /** MUST be 2. */
  protocolVersion?: number;
  /** base58 Ed25519 signature by `identifier`. Never together with `signatures`. */
  signature?: string;
  /** DID -> base58 signature; every entry must verify. */
  signatures?: Record<string, string>;
  endorser?: string;
  taaAcceptance?: TaaAcceptance;
}

/** The top-level request fields a node keeps; every other field is dropped on receipt (formats.md 3.1). */
export const REQUEST_FIELDS = ['identifier', 'reqId', 'operation', 'protocolVersion', 'signature', 'signatures', 'endorser', 'taaAcceptance'] as const;
