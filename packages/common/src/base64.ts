/** Base64, RFC 4648 standard alphabet with padding (formats.md 1.2). */
import { EncodingError, EncodingErrorCode } from './errors.js';

const B64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function b64encode(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** Strict decoding: only the standard alphabet, correct `=` padding, no whitespace, and zero unused
 * trailing bits (so every byte string has exactly one accepted encoding). EncodingError INVALID_BASE64. */
export function b64decode(s: string): Uint8Array {
  if (typeof s !== 'string' || !B64_RE.test(s)) throw new EncodingError(EncodingErrorCode.INVALID_BASE64, {}, 'not padded standard base64');
  const buf = Buffer.from(s, 'base64');
  if (s.length > 0 && s.charCodeAt(s.length - 1) === 61 /* = */ && buf.toString('base64') !== s) {
    throw new EncodingError(EncodingErrorCode.INVALID_BASE64, {}, 'base64 has non-zero unused bits');
  }
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}
