/**
 * Canonical MessagePack MP (formats.md 1.7), encoder. Reproduces Indy's MsgPackSerializer exactly:
 *
 * - the top-level map is sorted; a sorted map sorts every map that is one of its values and every map
 *   that is a direct element of an array that is one of its values, recursively; a map anywhere else
 *   (inside an array inside an array, or below such a map) keeps its received order (receivedKeys);
 *   a top-level array is not a map, so nothing below it is sorted;
 * - string keys sort by code point; the integer keys of a `Map<number, …>` (the audit txn maps)
 *   sort numerically and are written as integers;
 * - smallest integer encodings (unsigned for >= 0), float64 only, str8 for 32..255 bytes, no bin/ext;
 * - a MsgpackEncoded value is written as its bytes, verbatim.
 */
import { EncodingError, EncodingErrorCode } from './errors.js';
import { JsonFloat, assertWellFormed, codePointCompare, isPlainObject, receivedKeys, sortedKeys, unsupported } from './json-value.js';

const MAX_DEPTH = 512;
const TWO_32 = 4294967296;
const MAX_U64 = 18446744073709551615n;
const MIN_I64 = -9223372036854775808n;
const utf8 = new TextEncoder();

/**
 * A value given as its msgpack bytes, written verbatim where it stands (nothing in it is sorted or checked): a
 * catch-up seeder puts the txns it stores as MP(txn) into a CATCHUP_REP without decoding and encoding them again.
 * Encoding a message holding `new MsgpackEncoded(encodeMsgpack(v))` in the place of a map `v` that is sorted there
 * (a value of a sorted map, as a txn in a reply's txns map is) gives the bytes of the message holding `v`.
 */
export class MsgpackEncoded {
  constructor(readonly bytes: Uint8Array) {}
}

// Encoder state. encodeMsgpack is synchronous and never re-entered; the scratch buffer is reused.
let buf = new Uint8Array(8192);
let view = new DataView(buf.buffer);
let pos = 0;

function ensure(n: number): void {
  if (pos + n <= buf.length) return;
  let size = buf.length * 2;
  while (size < pos + n) size *= 2;
  const next = new Uint8Array(size);
  next.set(buf.subarray(0, pos));
  buf = next;
  view = new DataView(buf.buffer);
}

/** MP(value): the canonical msgpack bytes. Throws EncodingError (UNSUPPORTED_VALUE, INVALID_MAP_KEY,
 * INTEGER_OUT_OF_RANGE, LONE_SURROGATE, NON_FINITE_NUMBER, TOO_DEEP). */
export function encodeMsgpack(value: unknown): Uint8Array {
  pos = 0;
  const isMap = value instanceof Map || (isPlainObject(value) && !(value instanceof JsonFloat));
  enc(value, isMap ? 2 : 0, 0);
  const out = buf.slice(0, pos);
  if (buf.length > 1 << 20) {
    // do not keep a huge scratch buffer alive after an unusually large value
    buf = new Uint8Array(8192);
    view = new DataView(buf.buffer);
  }
  return out;
}

// mode 2: maps sorted, array elements in mode 1; mode 1: maps sorted, array elements in mode 0;
// mode 0: nothing sorted below.
function enc(v: unknown, mode: number, depth: number): void {
  switch (typeof v) {
    case 'string':
      return writeString(v);
    case 'number':
      if (Number.isSafeInteger(v)) return writeInt(v);
      return writeFloat(v);
    case 'bigint':
      return writeBigInt(v);
    case 'boolean':
      ensure(1);
      buf[pos++] = v ? 0xc3 : 0xc2;
      return;
    case 'object': {
      if (v === null) {
        ensure(1);
        buf[pos++] = 0xc0;
        return;
      }
      if (v instanceof MsgpackEncoded) return writeEncoded(v.bytes);
      if (depth >= MAX_DEPTH) throw new EncodingError(EncodingErrorCode.TOO_DEEP, { limit: MAX_DEPTH });
      if (Array.isArray(v)) {
        writeHeader(v.length, 0x90, 0xdc, 0xdd);
        const m = mode === 2 ? 1 : 0;
        for (let i = 0; i < v.length; i++) {
          const x = v[i];
          if (x === undefined) throw unsupported(undefined);
          enc(x, m, depth + 1);
        }
        return;
      }
      if (v instanceof JsonFloat) return writeFloat(v.value);
      if (v instanceof Map) return writeMap(v, mode, depth);
      if (!isPlainObject(v)) throw unsupported(v);
      const keys = mode === 0 ? receivedKeys(v).filter((k) => v[k] !== undefined) : sortedKeys(v);
      const childMode = mode === 0 ? 0 : 2;
      writeHeader(keys.length, 0x80, 0xde, 0xdf);
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        writeString(k);
        enc(v[k], childMode, depth + 1);
      }
      return;
    }
    default:
      throw unsupported(v);
  }
}

function writeMap(m: Map<unknown, unknown>, mode: number, depth: number): void {
  const entries: [unknown, unknown][] = [];
  let numbers = 0;
  let strings = 0;
  for (const e of m) {
    if (e[1] === undefined) continue;
    if (typeof e[0] === 'number' && Number.isSafeInteger(e[0])) numbers++;
    else if (typeof e[0] === 'string') strings++;
    else throw new EncodingError(EncodingErrorCode.INVALID_MAP_KEY, { type: typeof e[0] }, 'map keys must be integers or strings');
    entries.push(e);
  }
  if (numbers > 0 && strings > 0) throw new EncodingError(EncodingErrorCode.INVALID_MAP_KEY, {}, 'map mixes integer and string keys');
  if (mode !== 0 && entries.length > 1) {
    if (numbers > 0) entries.sort((a, b) => (a[0] as number) - (b[0] as number));
    else entries.sort((a, b) => codePointCompare(a[0] as string, b[0] as string));
  }
  const childMode = mode === 0 ? 0 : 2;
  writeHeader(entries.length, 0x80, 0xde, 0xdf);
  for (const [k, x] of entries) {
    if (typeof k === 'number') writeInt(k);
    else writeString(k as string);
    enc(x, childMode, depth + 1);
  }
}

function writeEncoded(bytes: Uint8Array): void {
  ensure(bytes.length);
  buf.set(bytes, pos);
  pos += bytes.length;
}

function writeHeader(n: number, fix: number, b16: number, b32: number): void {
  ensure(5);
  if (n < 16) buf[pos++] = fix | n;
  else if (n < 65536) {
    buf[pos++] = b16;
    buf[pos++] = n >>> 8;
    buf[pos++] = n & 0xff;
  } else {
    buf[pos++] = b32;
    view.setUint32(pos, n);
    pos += 4;
  }
}

function writeString(s: string): void {
  const n = s.length;
  ensure(5 + n);
  const start = pos;
  // optimistic ASCII path: the header is the character count
  writeStrHeader(n);
  let p = pos;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) {
      pos = start;
      return writeUtf8String(s);
    }
    buf[p++] = c;
  }
  pos = p;
}

function writeUtf8String(s: string): void {
  assertWellFormed(s);
  const bytes = utf8.encode(s);
  const n = bytes.length;
  ensure(5 + n);
  writeStrHeader(n);
  buf.set(bytes, pos);
  pos += n;
}

/** fixstr, str8, str16 or str32 header of a string of `n` UTF-8 bytes; the caller has ensured 5 bytes of room. */
function writeStrHeader(n: number): void {
  if (n < 32) buf[pos++] = 0xa0 | n;
  else if (n < 256) {
    buf[pos++] = 0xd9;
    buf[pos++] = n;
  } else if (n < 65536) {
    buf[pos++] = 0xda;
    buf[pos++] = n >>> 8;
    buf[pos++] = n & 0xff;
  } else {
    buf[pos++] = 0xdb;
    view.setUint32(pos, n);
    pos += 4;
  }
}

function writeInt(v: number): void {
  ensure(9);
  if (v >= 0) {
    if (v < 128) buf[pos++] = v;
    else if (v < 256) {
      buf[pos++] = 0xcc;
      buf[pos++] = v;
    } else if (v < 65536) {
      buf[pos++] = 0xcd;
      buf[pos++] = v >>> 8;
      buf[pos++] = v & 0xff;
    } else if (v < TWO_32) {
      buf[pos++] = 0xce;
      view.setUint32(pos, v);
      pos += 4;
    } else {
      buf[pos++] = 0xcf;
      view.setUint32(pos, Math.floor(v / TWO_32));
      view.setUint32(pos + 4, v >>> 0);
      pos += 8;
    }
  } else if (v >= -32) {
    buf[pos++] = v & 0xff;
  } else if (v >= -128) {
    buf[pos++] = 0xd0;
    buf[pos++] = v & 0xff;
  } else if (v >= -32768) {
    buf[pos++] = 0xd1;
    view.setInt16(pos, v);
    pos += 2;
  } else if (v >= -2147483648) {
    buf[pos++] = 0xd2;
    view.setInt32(pos, v);
    pos += 4;
  } else {
    buf[pos++] = 0xd3;
    const hi = Math.floor(v / TWO_32);
    view.setInt32(pos, hi);
    view.setUint32(pos + 4, v - hi * TWO_32);
    pos += 8;
  }
}

function writeBigInt(v: bigint): void {
  if (v <= 9007199254740991n && v >= -9007199254740991n) return writeInt(Number(v));
  if (v > MAX_U64 || v < MIN_I64) {
    throw new EncodingError(EncodingErrorCode.INTEGER_OUT_OF_RANGE, { value: v }, `integer ${v} is outside [-2^63, 2^64-1]`);
  }
  ensure(9);
  if (v > 0n) {
    buf[pos++] = 0xcf;
    view.setBigUint64(pos, v);
  } else {
    buf[pos++] = 0xd3;
    view.setBigInt64(pos, v);
  }
  pos += 8;
}

function writeFloat(v: number): void {
  if (!Number.isFinite(v)) throw new EncodingError(EncodingErrorCode.NON_FINITE_NUMBER, { value: String(v) });
  ensure(9);
  buf[pos++] = 0xcb;
  view.setFloat64(pos, v);
  pos += 8;
}

/**
 * The length of MP(value), `encodeMsgpack(value).length`, without building the bytes: what a sender
 * that cuts messages to a size limit needs for each piece (catch-up replies). Key order does not
 * change the length, so no map is sorted. Throws the EncodingError encodeMsgpack would throw.
 */
export function encodedMsgpackSize(value: unknown): number {
  return sizeOf(value, 0);
}

function sizeOf(v: unknown, depth: number): number {
  switch (typeof v) {
    case 'string':
      return stringSize(v);
    case 'number':
      if (Number.isSafeInteger(v)) return intSize(v);
      if (!Number.isFinite(v)) throw new EncodingError(EncodingErrorCode.NON_FINITE_NUMBER, { value: String(v) });
      return 9;
    case 'bigint':
      if (v <= 9007199254740991n && v >= -9007199254740991n) return intSize(Number(v));
      if (v > MAX_U64 || v < MIN_I64) throw new EncodingError(EncodingErrorCode.INTEGER_OUT_OF_RANGE, { value: v }, `integer ${v} is outside [-2^63, 2^64-1]`);
      return 9;
    case 'boolean':
      return 1;
    case 'object': {
      if (v === null) return 1;
      if (v instanceof MsgpackEncoded) return v.bytes.length;
      if (depth >= MAX_DEPTH) throw new EncodingError(EncodingErrorCode.TOO_DEEP, { limit: MAX_DEPTH });
      if (Array.isArray(v)) {
        let n = headerSize(v.length);
        for (let i = 0; i < v.length; i++) {
          const x = v[i];
          if (x === undefined) throw unsupported(undefined);
          n += sizeOf(x, depth + 1);
        }
        return n;
      }
      if (v instanceof JsonFloat) {
        if (!Number.isFinite(v.value)) throw new EncodingError(EncodingErrorCode.NON_FINITE_NUMBER, { value: String(v.value) });
        return 9;
      }
      if (v instanceof Map) return mapSize(v, depth);
      if (!isPlainObject(v)) throw unsupported(v);
      let count = 0;
      let n = 0;
      for (const k of Object.keys(v)) {
        const x = v[k];
        if (x === undefined) continue;
        count++;
        n += stringSize(k) + sizeOf(x, depth + 1);
      }
      return headerSize(count) + n;
    }
    default:
      throw unsupported(v);
  }
}

function mapSize(m: Map<unknown, unknown>, depth: number): number {
  let numbers = 0;
  let strings = 0;
  let n = 0;
  for (const [k, x] of m) {
    if (x === undefined) continue;
    if (typeof k === 'number' && Number.isSafeInteger(k)) {
      numbers++;
      n += intSize(k);
    } else if (typeof k === 'string') {
      strings++;
      n += stringSize(k);
    } else throw new EncodingError(EncodingErrorCode.INVALID_MAP_KEY, { type: typeof k }, 'map keys must be integers or strings');
    n += sizeOf(x, depth + 1);
  }
  if (numbers > 0 && strings > 0) throw new EncodingError(EncodingErrorCode.INVALID_MAP_KEY, {}, 'map mixes integer and string keys');
  return headerSize(numbers + strings) + n;
}

function headerSize(n: number): number {
  return n < 16 ? 1 : n < 65536 ? 3 : 5;
}

function stringSize(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) >= 0x80) {
      assertWellFormed(s);
      n = utf8.encode(s).length;
      break;
    }
  }
  return (n < 32 ? 1 : n < 256 ? 2 : n < 65536 ? 3 : 5) + n;
}

function intSize(v: number): number {
  if (v >= 0) return v < 128 ? 1 : v < 256 ? 2 : v < 65536 ? 3 : v < TWO_32 ? 5 : 9;
  return v >= -32 ? 1 : v >= -128 ? 2 : v >= -32768 ? 3 : v >= -2147483648 ? 5 : 9;
}
