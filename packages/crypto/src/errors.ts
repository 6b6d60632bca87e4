import { CodedError, type CodedErrorArgs } from '@quire/common';

/** Stable codes of {@link CryptoError}. Tests and callers match on these, never on message text. */
export const CryptoErrorCode = {
  /** An Ed25519 seed is not exactly 32 bytes (data: `length`, -1 for a value that is not bytes). */
  ED25519_SEED_LENGTH: 'ED25519_SEED_LENGTH',
  /** An Ed25519 public key is not exactly 32 bytes (data: `length`, -1 for a value that is not bytes). */
  ED25519_PUBLIC_KEY_LENGTH: 'ED25519_PUBLIC_KEY_LENGTH',
  /** A BLS seed (IKM) is shorter than 32 bytes (data: `length`, -1 for a value that is not bytes). */
  BLS_SEED_LENGTH: 'BLS_SEED_LENGTH',
  /** A BLS secret key is not 32 bytes or is not a valid non-zero scalar (data: `reason`). */
  BLS_SECRET_KEY_INVALID: 'BLS_SECRET_KEY_INVALID',
  /** A BLS public key is not 48 bytes (compressed G1) (data: `length`, -1 for a value that is not bytes). */
  BLS_PUBLIC_KEY_LENGTH: 'BLS_PUBLIC_KEY_LENGTH',
  /** A BLS public key does not decode to a valid, non-identity, prime-order-subgroup G1 point (data: `reason`). */
  BLS_PUBLIC_KEY_INVALID: 'BLS_PUBLIC_KEY_INVALID',
  /**
   * A BLS signature is not 96 bytes (compressed G2) (data: `length`, -1 for a value that is not bytes; `index` of the
   * signature when aggregating).
   */
  BLS_SIGNATURE_LENGTH: 'BLS_SIGNATURE_LENGTH',
  /** A BLS signature does not decode to a valid G2 point in the prime-order subgroup (data: `reason`; `index` when aggregating). */
  BLS_SIGNATURE_INVALID: 'BLS_SIGNATURE_INVALID',
  /** An aggregation was asked for over an empty list (data: none). */
  BLS_AGGREGATE_EMPTY: 'BLS_AGGREGATE_EMPTY',
  /** A base58 key or signature text could not be decoded (data: `what`, the kind of text). */
  BASE58_INVALID: 'BASE58_INVALID',
} as const;
export type CryptoErrorCode = (typeof CryptoErrorCode)[keyof typeof CryptoErrorCode];

/** The data of each {@link CryptoErrorCode}, checked wherever a CryptoError is made. */
export type CryptoErrorData = {
  ED25519_SEED_LENGTH: { length: number };
  ED25519_PUBLIC_KEY_LENGTH: { length: number };
  BLS_SEED_LENGTH: { length: number };
  BLS_SECRET_KEY_INVALID: { reason: string };
  BLS_PUBLIC_KEY_LENGTH: { length: number };
  BLS_PUBLIC_KEY_INVALID: { reason: string };
  BLS_SIGNATURE_LENGTH: { length: number; index?: number };
  BLS_SIGNATURE_INVALID: { reason: string; index?: number };
  BLS_AGGREGATE_EMPTY: Record<string, never>;
  BASE58_INVALID: { what: 'BLS public key' | 'BLS signature' };
};

/** The byte length of a value given as bytes, -1 for any other value (the `length` of the *_LENGTH codes). */
export function byteLengthOf(value: unknown): number {
  return value instanceof Uint8Array ? value.length : -1;
}

function lengthText(length: unknown): string {
  return length === -1 ? 'a value that is not bytes' : String(length);
}

const messages: Record<CryptoErrorCode, (d: Record<string, unknown>) => string> = {
  ED25519_SEED_LENGTH: (d) => `Ed25519 seed must be 32 bytes, got ${lengthText(d.length)}`,
  ED25519_PUBLIC_KEY_LENGTH: (d) => `Ed25519 public key must be 32 bytes, got ${lengthText(d.length)}`,
  BLS_SEED_LENGTH: (d) => `BLS seed must be at least 32 bytes, got ${lengthText(d.length)}`,
  BLS_SECRET_KEY_INVALID: (d) => `BLS secret key is invalid (${String(d.reason ?? 'not a non-zero 32-byte scalar below the group order')})`,
  BLS_PUBLIC_KEY_LENGTH: (d) => `BLS public key must be 48 bytes (compressed G1), got ${lengthText(d.length)}`,
  BLS_PUBLIC_KEY_INVALID: (d) => `BLS public key is not a valid G1 point (${String(d.reason ?? 'invalid')})`,
  BLS_SIGNATURE_LENGTH: (d) => `BLS signature must be 96 bytes (compressed G2), got ${lengthText(d.length)}`,
  BLS_SIGNATURE_INVALID: (d) => `BLS signature is not a valid G2 point (${String(d.reason ?? 'invalid')})`,
  BLS_AGGREGATE_EMPTY: () => 'Cannot aggregate an empty list of BLS signatures',
  BASE58_INVALID: (d) => `Invalid base58 ${String(d.what ?? 'value')}`,
};

/** The error of every failure in @quire/crypto, with a stable {@link CryptoErrorCode}. */
export class CryptoError extends CodedError<CryptoErrorCode, CryptoErrorData> {
  /** `(code, data)` with the data of the code; the message is built from them unless one is given. */
  constructor(...args: CodedErrorArgs<CryptoErrorCode, CryptoErrorData>) {
    super(...args);
    if (args[2] === undefined) this.message = messages[this.code](this.data);
  }
}
