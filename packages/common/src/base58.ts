/**
 * Base58, Bitcoin alphabet, no checksum (formats.md 1.1). Length checks belong to callers and are
 * made on the decoded bytes.
 */
import bs58 from 'bs58';
import { EncodingError, EncodingErrorCode } from './errors.js';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

export function b58encode(bytes: Uint8Array): string {
  return bs58.encode(bytes);
}

/** Decodes base58; EncodingError INVALID_BASE58 on any character outside the alphabet (or a non-string). */
export function b58decode(s: string): Uint8Array {
  if (typeof s !== 'string') throw new EncodingError(EncodingErrorCode.INVALID_BASE58, { type: typeof s }, 'base58 input is not a string');
  const out = bs58.decodeUnsafe(s);
  if (out === undefined) {
    let position = 0;
    while (position < s.length && ALPHABET.includes(s[position]!)) position++;
    throw new EncodingError(EncodingErrorCode.INVALID_BASE58, { position }, `invalid base58 character at position ${position}`);
  }
  return out;
}

/** Decodes base58 and returns the bytes only when they have one of `lengths`; `undefined` otherwise
 * (bad characters included). For validators that turn the failure into their own reason text. */
export function b58decodeOrUndefined(s: unknown): Uint8Array | undefined {
  if (typeof s !== 'string') return undefined;
  return bs58.decodeUnsafe(s);
}

/** True when every character of `s` is in the base58 alphabet. */
export function isBase58(s: string): boolean {
  return typeof s === 'string' && bs58.decodeUnsafe(s) !== undefined;
}
