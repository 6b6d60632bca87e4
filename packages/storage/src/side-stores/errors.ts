import { CodedError } from '@quire/common';

/** Stable codes of {@link SideStoreError}; each documents the `data` it carries. */
export const SideStoreErrorCode = {
  /** A value given to a store does not have the required shape (data: `store`, `field`, `reason`). */
  INVALID_VALUE: 'SIDE_STORE_INVALID_VALUE',
  /** A stored record does not decode as what the store writes (data: `store`, `key`, `reason`). */
  CORRUPT_RECORD: 'SIDE_STORE_CORRUPT_RECORD',
} as const;
export type SideStoreErrorCode = (typeof SideStoreErrorCode)[keyof typeof SideStoreErrorCode];

/** The data of each {@link SideStoreErrorCode}, checked wherever a SideStoreError is made. */
export type SideStoreErrorData = {
  SIDE_STORE_INVALID_VALUE: { store: string; field: string; reason: string };
  SIDE_STORE_CORRUPT_RECORD: { store: string; key: string; reason: string };
};

/** A bad argument to, or a corrupt record of, one of the side stores (BLS, seqNo index, timestamps, attributes). */
export class SideStoreError extends CodedError<SideStoreErrorCode, SideStoreErrorData> {}

export function invalid(store: string, field: string, reason: string): SideStoreError {
  return new SideStoreError(SideStoreErrorCode.INVALID_VALUE, { store, field, reason }, `${store}: invalid ${field}: ${reason}`);
}

export function corrupt(store: string, key: string, reason: string): SideStoreError {
  return new SideStoreError(SideStoreErrorCode.CORRUPT_RECORD, { store, key, reason }, `${store}: corrupt record ${key}: ${reason}`);
}

const HEX64 = /^[0-9a-f]{64}$/;

/** True for a lowercase hex SHA-256 digest (formats.md 3.3). */
export function isHexDigest(s: unknown): s is string {
  return typeof s === 'string' && HEX64.test(s);
}

export const utf8Encoder = new TextEncoder();

/**
 * The bytes of a text known to be ASCII (a checked hex digest, a location "<ledgerId>~<seqNo>"): its UTF-8 bytes, from
 * Node's shared buffer pool (TextEncoder allocates a buffer of its own per call, several times the cost for keys this
 * short). Only for ASCII: latin1 and UTF-8 differ above U+007F.
 */
export function asciiBytes(ascii: string): Uint8Array {
  return Buffer.from(ascii, 'latin1');
}
export const utf8Decoder = new TextDecoder('utf-8', { fatal: true });
