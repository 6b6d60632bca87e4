/**
 * Canonical MessagePack MP (formats.md 1.7), decoder: the inverse of encodeMsgpack.
 *
 * - integers -> `number` when safe, `bigint` otherwise; float64 -> `number`, or `JsonFloat` when
 *   integral, so that re-encoding gives the same bytes;
 * - maps with string keys -> plain objects (received order kept, see receivedKeys); maps with integer
 *   keys -> `Map<number, …>`; an empty map -> `{}`;
 * - bin, ext, float32 and the reserved byte -> MSGPACK_UNSUPPORTED_TYPE; truncation ->
 *   MSGPACK_TRUNCATED; bytes after the value -> MSGPACK_TRAILING_BYTES; invalid UTF-8 ->
 *   INVALID_UTF8; duplicate keys -> DUPLICATE_KEY; mixed or non-scalar keys -> INVALID_MAP_KEY.
 */
import { EncodingError, EncodingErrorCode } from './errors.js';
import { JsonFloat, defineKey, setReceivedKeys } from './json-value.js';

const MAX_DEPTH = 512;
const TWO_32 = 4294967296;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
// Node's native latin1 reader works on any Uint8Array; for ASCII bytes latin1 is the identity.
const latin1Slice = (Buffer.prototype as unknown as { latin1Slice(this: Uint8Array, start: number, end: number): string }).latin1Slice;

let data: Uint8Array = new Uint8Array(0);
let view: DataView = new DataView(data.buffer);
let pos = 0;

/** Decodes one canonical-MP value occupying all of `bytes`. Throws EncodingError. */
export function decodeMsgpack(bytes: Uint8Array): unknown {
  if (!(bytes instanceof Uint8Array)) throw new EncodingError(EncodingErrorCode.UNSUPPORTED_VALUE, { type: typeof bytes }, 'msgpack input must be bytes');
  data = bytes;
  view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  pos = 0;
  try {
    const v = dec(0);
    if (pos !== bytes.length)
      throw new EncodingError(EncodingErrorCode.MSGPACK_TRAILING_BYTES, { offset: pos }, `${bytes.length - pos} bytes after the msgpack value`);
    return v;
  } finally {
    data = new Uint8Array(0);
  }
}

function need(n: number): void {
  if (pos + n > data.length) throw new EncodingError(EncodingErrorCode.MSGPACK_TRUNCATED, { offset: pos }, 'msgpack value is truncated');
}

function dec(depth: number): unknown {
  need(1);
  const b = data[pos++];
  if (b < 0x80) return b;
  if (b >= 0xe0) return b - 256;
  if (b >= 0xa0 && b < 0xc0) return readString(b & 0x1f);
  if (b >= 0x90 && b < 0xa0) return readArray(b & 0x0f, depth);
  if (b >= 0x80 && b < 0x90) return readMap(b & 0x0f, depth);
  switch (b) {
    case 0xc0:
      return null;
    case 0xc2:
      return false;
    case 0xc3:
      return true;
    case 0xcb: {
      need(8);
      const v = view.getFloat64(pos);
      pos += 8;
      if (!Number.isFinite(v)) throw new EncodingError(EncodingErrorCode.NON_FINITE_NUMBER, { offset: pos - 9 });
      return Number.isSafeInteger(v) ? new JsonFloat(v) : v;
    }
    case 0xcc:
      need(1);
      return data[pos++];
    case 0xcd:
      need(2);
      pos += 2;
      return view.getUint16(pos - 2);
    case 0xce:
      need(4);
      pos += 4;
      return view.getUint32(pos - 4);
    case 0xcf: {
      need(8);
      const hi = view.getUint32(pos);
      const lo = view.getUint32(pos + 4);
      pos += 8;
      if (hi < 0x200000) return hi * TWO_32 + lo;
      return (BigInt(hi) << 32n) | BigInt(lo);
    }
    case 0xd0:
      need(1);
      pos += 1;
      return view.getInt8(pos - 1);
    case 0xd1:
      need(2);
      pos += 2;
      return view.getInt16(pos - 2);
    case 0xd2:
      need(4);
      pos += 4;
      return view.getInt32(pos - 4);
    case 0xd3: {
      need(8);
      const hi = view.getInt32(pos);
      const lo = view.getUint32(pos + 4);
      pos += 8;
      const n = hi * TWO_32 + lo;
      if (hi >= -0x200000 && hi < 0x200000 && Number.isSafeInteger(n)) return n;
      return (BigInt(hi) << 32n) + BigInt(lo);
    }
    case 0xd9:
      need(1);
      return readString(data[pos++]);
    case 0xda:
      need(2);
      pos += 2;
      return readString(view.getUint16(pos - 2));
    case 0xdb:
      need(4);
      pos += 4;
      return readString(view.getUint32(pos - 4));
    case 0xdc:
      need(2);
      pos += 2;
      return readArray(view.getUint16(pos - 2), depth);
    case 0xdd:
      need(4);
      pos += 4;
      return readArray(view.getUint32(pos - 4), depth);
    case 0xde:
      need(2);
      pos += 2;
      return readMap(view.getUint16(pos - 2), depth);
    case 0xdf:
      need(4);
      pos += 4;
      return readMap(view.getUint32(pos - 4), depth);
    default:
      throw new EncodingError(
        EncodingErrorCode.MSGPACK_UNSUPPORTED_TYPE,
        { byte: b, offset: pos - 1 },
        `msgpack type 0x${b.toString(16)} is not used by canonical MP`,
      );
  }
}

function readString(n: number): string {
  need(n);
  const start = pos;
  const end = pos + n;
  pos = end;
  let i = start;
  while (i < end && data[i] < 0x80) i++;
  if (i === end) {
    if (n <= 12) {
      let s = '';
      for (let j = start; j < end; j++) s += String.fromCharCode(data[j]);
      return s;
    }
    return latin1Slice.call(data, start, end);
  }
  try {
    return utf8.decode(data.subarray(start, end));
  } catch {
    throw new EncodingError(EncodingErrorCode.INVALID_UTF8, { offset: start }, 'msgpack string is not valid UTF-8');
  }
}

function readArray(n: number, depth: number): unknown[] {
  if (depth >= MAX_DEPTH) throw new EncodingError(EncodingErrorCode.TOO_DEEP, { limit: MAX_DEPTH });
  // every element takes at least one byte: refuse lengths the input cannot hold before allocating
  need(n);
  const out = new Array<unknown>(n);
  for (let i = 0; i < n; i++) out[i] = dec(depth + 1);
  return out;
}

function readMap(n: number, depth: number): Record<string, unknown> | Map<number, unknown> {
  if (depth >= MAX_DEPTH) throw new EncodingError(EncodingErrorCode.TOO_DEEP, { limit: MAX_DEPTH });
  need(2 * n);
  if (n === 0) return {};
  const keyPos = pos;
  const first = dec(depth + 1);
  if (typeof first === 'number') {
    const m = new Map<number, unknown>();
    let k: unknown = first;
    for (let i = 0; i < n; i++) {
      if (i > 0) k = dec(depth + 1);
      if (typeof k !== 'number') throw new EncodingError(EncodingErrorCode.INVALID_MAP_KEY, { offset: keyPos }, 'msgpack map mixes integer and other keys');
      if (m.has(k)) throw new EncodingError(EncodingErrorCode.DUPLICATE_KEY, { key: k, offset: keyPos });
      m.set(k, dec(depth + 1));
    }
    return m;
  }
  if (typeof first !== 'string')
    throw new EncodingError(EncodingErrorCode.INVALID_MAP_KEY, { offset: keyPos }, 'msgpack map key is neither a string nor a safe integer');
  const obj: Record<string, unknown> = {};
  let order: string[] | null = null;
  let k: unknown = first;
  for (let i = 0; i < n; i++) {
    if (i > 0) {
      k = dec(depth + 1);
      if (typeof k !== 'string') throw new EncodingError(EncodingErrorCode.INVALID_MAP_KEY, { offset: keyPos }, 'msgpack map mixes string and other keys');
    }
    const key = k as string;
    if (Object.prototype.hasOwnProperty.call(obj, key)) throw new EncodingError(EncodingErrorCode.DUPLICATE_KEY, { key });
    if (order !== null) order.push(key);
    else {
      const c = key.charCodeAt(0);
      if (c >= 48 && c <= 57) {
        order = Object.keys(obj);
        order.push(key);
      }
    }
    defineKey(obj, key, dec(depth + 1));
  }
  if (order !== null) setReceivedKeys(obj, order);
  return obj;
}
