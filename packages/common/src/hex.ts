/** Hexadecimal rendering of bytes (digests are lowercase hex on the wire). */
import { EncodingError, EncodingErrorCode } from './errors.js';

const HEX_RE = /^(?:[0-9a-fA-F]{2})*$/;

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** Decodes an even-length hex string (either case); EncodingError INVALID_HEX otherwise. */
export function fromHex(s: string): Uint8Array {
  if (typeof s !== 'string' || !HEX_RE.test(s)) throw new EncodingError(EncodingErrorCode.INVALID_HEX, {}, 'not an even-length hex string');
  const buf = Buffer.from(s, 'hex');
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** True for exactly 64 hex digits (a SHA-256 digest in hex). */
export function isSha256Hex(s: unknown): boolean {
  return typeof s === 'string' && s.length === 64 && HEX_RE.test(s);
}
