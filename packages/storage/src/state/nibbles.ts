/**
 * Nibble paths and the hex-prefix encoding of trie node paths (formats.md 7.2). A nibble path is a
 * Uint8Array holding one nibble (0-15) per element, high nibble of each key byte first.
 */
import { StorageError, StorageErrorCode } from '../errors.js';

/** Key bytes to nibbles, high nibble first. */
export function bytesToNibbles(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length * 2);
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    out[2 * i] = b >> 4;
    out[2 * i + 1] = b & 0x0f;
  }
  return out;
}

/** Nibbles back to bytes; the path must have an even length. */
export function nibblesToBytes(nibbles: Uint8Array): Uint8Array {
  if (nibbles.length % 2 !== 0) {
    throw new StorageError(StorageErrorCode.STATE_NODE_MALFORMED, { reason: 'odd nibble path where a key ends' });
  }
  const out = new Uint8Array(nibbles.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = (nibbles[2 * i] << 4) | nibbles[2 * i + 1];
  return out;
}

/** Hex-prefix encoding of a nibble path with the leaf flag. */
export function hpEncode(nibbles: Uint8Array, isLeaf: boolean): Uint8Array {
  const odd = nibbles.length & 1;
  const flag = (isLeaf ? 2 : 0) + odd;
  const out = new Uint8Array((nibbles.length >> 1) + 1);
  let i: number;
  if (odd) {
    out[0] = (flag << 4) | nibbles[0];
    i = 1;
  } else {
    out[0] = flag << 4;
    i = 0;
  }
  for (let o = 1; o < out.length; o++, i += 2) out[o] = (nibbles[i] << 4) | nibbles[i + 1];
  return out;
}

/** A decoded hex-prefix path. */
export interface HpPath {
  nibbles: Uint8Array;
  isLeaf: boolean;
}

/**
 * Inverse of {@link hpEncode}. Rejects an empty input, a flag above 3 and a non-zero padding nibble
 * of an even path (STATE_NODE_MALFORMED), none of which an encoder produces.
 */
export function hpDecode(bytes: Uint8Array): HpPath {
  if (bytes.length === 0) throw new StorageError(StorageErrorCode.STATE_NODE_MALFORMED, { reason: 'empty hex-prefix path' });
  const flag = bytes[0] >> 4;
  if (flag > 3) throw new StorageError(StorageErrorCode.STATE_NODE_MALFORMED, { reason: 'hex-prefix flag above 3' });
  const odd = flag & 1;
  const isLeaf = (flag & 2) !== 0;
  if (!odd && (bytes[0] & 0x0f) !== 0) {
    throw new StorageError(StorageErrorCode.STATE_NODE_MALFORMED, { reason: 'non-zero padding nibble in hex-prefix path' });
  }
  const len = (bytes.length - 1) * 2 + odd;
  const out = new Uint8Array(len);
  let o = 0;
  if (odd) out[o++] = bytes[0] & 0x0f;
  for (let i = 1; i < bytes.length; i++) {
    out[o++] = bytes[i] >> 4;
    out[o++] = bytes[i] & 0x0f;
  }
  return { nibbles: out, isLeaf };
}

/** Length of the common prefix of `a` (from 0) and `b` from `bStart`. */
export function commonPrefixLength(a: Uint8Array, b: Uint8Array, bStart: number): number {
  const max = Math.min(a.length, b.length - bStart);
  let i = 0;
  while (i < max && a[i] === b[bStart + i]) i++;
  return i;
}

/** True when `b` from `bStart` begins with all of `a`. */
export function startsWithAt(b: Uint8Array, bStart: number, a: Uint8Array): boolean {
  if (b.length - bStart < a.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[bStart + i]) return false;
  return true;
}

/** True when `a` equals `b` from `bStart` to its end. */
export function equalsRest(a: Uint8Array, b: Uint8Array, bStart: number): boolean {
  return b.length - bStart === a.length && startsWithAt(b, bStart, a);
}

/** Concatenation of two nibble paths. */
export function concatNibbles(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
