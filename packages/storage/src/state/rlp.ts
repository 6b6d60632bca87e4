/**
 * Recursive Length Prefix encoding (formats.md 7.1), the serialization of trie nodes and proofs.
 *
 * The decoder is strict: it accepts exactly one canonical encoding per value and rejects long forms
 * for short lengths, leading zero length bytes, a single byte below 0x80 wrapped in a prefix, and
 * trailing bytes. Decoded byte strings are views into the input (no copies): callers that keep them
 * while changing the input must copy them first.
 */
import { StorageError, StorageErrorCode } from '../errors.js';

/** An RLP value: a byte string or a list of values. */
export type RlpItem = Uint8Array | RlpItem[];

/** Default nesting limit of {@link rlpDecode}; trie nodes and proofs nest a handful of levels. */
export const RLP_MAX_DEPTH = 64;

/** Position of one item inside an encoding, as found by {@link rlpReadHeader}. */
export interface RlpHeader {
  isList: boolean;
  /** First byte of the payload (the single byte itself for a byte below 0x80). */
  payloadStart: number;
  /** One past the last byte of the payload, which is also one past the end of the item. */
  end: number;
}

function nonCanonical(offset: number, reason: string): StorageError {
  return new StorageError(StorageErrorCode.RLP_NON_CANONICAL, { offset, reason });
}

function truncated(offset: number): StorageError {
  return new StorageError(StorageErrorCode.RLP_TRUNCATED, { offset });
}

/** Reads a big-endian length of `n` bytes at `pos`, checking it against what remains before `limit`. */
function readLength(bytes: Uint8Array, pos: number, n: number, limit: number): number {
  if (pos + n > limit) throw truncated(pos);
  if (bytes[pos] === 0) throw nonCanonical(pos, 'length with a leading zero byte');
  let len = 0;
  for (let i = 0; i < n; i++) {
    len = len * 256 + bytes[pos + i];
    // no item can be longer than the input: stop before the number loses precision
    if (len > limit) throw truncated(pos);
  }
  if (len < 56) throw nonCanonical(pos, 'long form for a length below 56');
  return len;
}

/**
 * Reads the header of the item starting at `pos` and checks that the item ends at or before `limit`.
 * Throws RLP_TRUNCATED or RLP_NON_CANONICAL.
 */
export function rlpReadHeader(bytes: Uint8Array, pos: number, limit: number): RlpHeader {
  if (pos >= limit) throw truncated(pos);
  const b = bytes[pos];
  let isList: boolean;
  let payloadStart: number;
  let len: number;
  if (b < 0x80) {
    return { isList: false, payloadStart: pos, end: pos + 1 };
  } else if (b <= 0xb7) {
    isList = false;
    payloadStart = pos + 1;
    len = b - 0x80;
    if (len === 1) {
      if (payloadStart >= limit) throw truncated(payloadStart);
      if (bytes[payloadStart] < 0x80) throw nonCanonical(pos, 'single byte below 0x80 with a prefix');
    }
  } else if (b < 0xc0) {
    isList = false;
    const n = b - 0xb7;
    len = readLength(bytes, pos + 1, n, limit);
    payloadStart = pos + 1 + n;
  } else if (b <= 0xf7) {
    isList = true;
    payloadStart = pos + 1;
    len = b - 0xc0;
  } else {
    isList = true;
    const n = b - 0xf7;
    len = readLength(bytes, pos + 1, n, limit);
    payloadStart = pos + 1 + n;
  }
  const end = payloadStart + len;
  if (end > limit) throw truncated(pos);
  return { isList, payloadStart, end };
}

function decodeAt(bytes: Uint8Array, pos: number, limit: number, depth: number, maxDepth: number): [RlpItem, number] {
  const h = rlpReadHeader(bytes, pos, limit);
  if (!h.isList) return [bytes.subarray(h.payloadStart, h.end), h.end];
  if (depth >= maxDepth) throw new StorageError(StorageErrorCode.RLP_TOO_DEEP, { limit: maxDepth });
  const items: RlpItem[] = [];
  let p = h.payloadStart;
  while (p < h.end) {
    const [item, next] = decodeAt(bytes, p, h.end, depth + 1, maxDepth);
    items.push(item);
    p = next;
  }
  return [items, h.end];
}

/**
 * Decodes exactly one RLP item filling the whole input. Throws StorageError RLP_TRUNCATED,
 * RLP_NON_CANONICAL, RLP_TRAILING_BYTES or RLP_TOO_DEEP.
 */
export function rlpDecode(bytes: Uint8Array, opts: { maxDepth?: number } = {}): RlpItem {
  if (!(bytes instanceof Uint8Array)) throw new StorageError(StorageErrorCode.RLP_UNSUPPORTED_VALUE, { type: typeof bytes });
  const [item, end] = decodeAt(bytes, 0, bytes.length, 0, opts.maxDepth ?? RLP_MAX_DEPTH);
  if (end !== bytes.length) throw new StorageError(StorageErrorCode.RLP_TRAILING_BYTES, { offset: end });
  return item;
}

/**
 * Splits an encoded list that fills the whole input into the encodings of its items (views into
 * the input), checking the list header and each item header. Nested content is not decoded.
 */
export function rlpListItems(bytes: Uint8Array): Uint8Array[] {
  const h = rlpReadHeader(bytes, 0, bytes.length);
  if (h.end !== bytes.length) throw new StorageError(StorageErrorCode.RLP_TRAILING_BYTES, { offset: h.end });
  if (!h.isList) throw nonCanonical(0, 'expected a list');
  const out: Uint8Array[] = [];
  let p = h.payloadStart;
  while (p < h.end) {
    const ih = rlpReadHeader(bytes, p, h.end);
    out.push(bytes.subarray(p, ih.end));
    p = ih.end;
  }
  return out;
}

/** Size of the header for a payload of `len` bytes. */
function headerSize(len: number): number {
  if (len < 56) return 1;
  if (len < 0x100) return 2;
  if (len < 0x1_0000) return 3;
  let n = 3;
  let limit = 0x100_0000;
  while (len >= limit) {
    n++;
    limit *= 256;
  }
  return 1 + n;
}

function writeHeader(out: Uint8Array, pos: number, len: number, shortBase: number): number {
  if (len < 56) {
    out[pos] = shortBase + len;
    return pos + 1;
  }
  const n = headerSize(len) - 1;
  out[pos] = shortBase + 55 + n;
  for (let i = n; i >= 1; i--) {
    out[pos + i] = len & 0xff;
    len = Math.floor(len / 256);
  }
  return pos + 1 + n;
}

/** Encoded size of a byte string. */
export function rlpBytesSize(b: Uint8Array): number {
  if (b.length === 1 && b[0] < 0x80) return 1;
  return headerSize(b.length) + b.length;
}

/** Writes the encoding of byte string `b` at `pos`; returns the position after it. */
export function rlpWriteBytes(out: Uint8Array, pos: number, b: Uint8Array): number {
  if (b.length === 1 && b[0] < 0x80) {
    out[pos] = b[0];
    return pos + 1;
  }
  pos = writeHeader(out, pos, b.length, 0x80);
  out.set(b, pos);
  return pos + b.length;
}

/** RLP of one byte string. */
export function rlpEncodeBytes(b: Uint8Array): Uint8Array {
  const out = new Uint8Array(rlpBytesSize(b));
  rlpWriteBytes(out, 0, b);
  return out;
}

/** RLP of a list whose items are given already encoded. */
export function rlpEncodeListOfEncoded(items: readonly Uint8Array[]): Uint8Array {
  let payload = 0;
  for (const it of items) payload += it.length;
  const out = Buffer.allocUnsafe(headerSize(payload) + payload);
  let pos = writeHeader(out, 0, payload, 0xc0);
  for (const it of items) {
    out.set(it, pos);
    pos += it.length;
  }
  return out;
}

/** Writes a list header for a payload of `len` bytes at `pos`; returns the position after it. */
export function rlpWriteListHeader(out: Uint8Array, pos: number, len: number): number {
  return writeHeader(out, pos, len, 0xc0);
}

/** Size of a list header for a payload of `len` bytes. */
export function rlpListHeaderSize(len: number): number {
  return headerSize(len);
}

function sizeOf(item: RlpItem, depth: number): number {
  if (item instanceof Uint8Array) return rlpBytesSize(item);
  if (!Array.isArray(item)) throw new StorageError(StorageErrorCode.RLP_UNSUPPORTED_VALUE, { type: item === null ? 'null' : typeof item });
  if (depth >= RLP_MAX_DEPTH * 4) throw new StorageError(StorageErrorCode.RLP_TOO_DEEP, { limit: RLP_MAX_DEPTH * 4 });
  let payload = 0;
  for (const it of item) payload += sizeOf(it, depth + 1);
  return headerSize(payload) + payload;
}

function writeItem(out: Uint8Array, pos: number, item: RlpItem): number {
  if (item instanceof Uint8Array) return rlpWriteBytes(out, pos, item);
  let payload = 0;
  for (const it of item) payload += sizeOf(it, 0);
  pos = writeHeader(out, pos, payload, 0xc0);
  for (const it of item) pos = writeItem(out, pos, it);
  return pos;
}

/** Encodes a byte string or a (nested) list of them. Throws RLP_UNSUPPORTED_VALUE for anything else. */
export function rlpEncode(item: RlpItem): Uint8Array {
  const out = new Uint8Array(sizeOf(item, 0));
  writeItem(out, 0, item);
  return out;
}
