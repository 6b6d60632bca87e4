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
/** depth whose maps get their encodings kept in this decoding (-1: none) */
let keepDepth = -1;
/** maps decoded with `keepMapsAtDepth` -> a copy of the bytes each was decoded from, until taken */
const keptEncodings = new WeakMap<object, Uint8Array>();

export interface DecodeMsgpackOptions {
  /**
   * Keep, for every map at this depth (the value's own maps are at depth 0, their values' maps at depth 1...), a
   * copy of the bytes it was decoded from, for `takeDecodedEncoding`: a CATCHUP_REP's txns are at depth 2, and the
   * ledger that appends them hashes and stores those bytes instead of encoding each txn again.
   */
  keepMapsAtDepth?: number;
}

/**
 * The bytes `value` was decoded from, kept by a decoding with `keepMapsAtDepth`, or undefined; given once (the
 * entry goes), so that nothing done to the value after its first use can be paired with bytes it no longer
 * matches. They are the bytes received: the caller relies on them only where they are checked (a caught-up
 * txn's leaf hash against the proven root), since a peer may send an encoding that is not canonical.
 */
export function takeDecodedEncoding(value: object): Uint8Array | undefined {
  const bytes = keptEncodings.get(value);
  if (bytes !== undefined) keptEncodings.delete(value);
  return bytes;
}

/** Decodes one canonical-MP value occupying all of `bytes`. Throws EncodingError. */
export function decodeMsgpack(bytes: Uint8Array, options?: DecodeMsgpackOptions): unknown {
  if (!(bytes instanceof Uint8Array)) throw new EncodingError(EncodingErrorCode.UNSUPPORTED_VALUE, { type: typeof bytes }, 'msgpack input must be bytes');
  data = bytes;
  view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  pos = 0;
  keepDepth = options?.keepMapsAtDepth ?? -1;
  try {
    const v = dec(0);
    if (pos !== bytes.length)
      throw new EncodingError(EncodingErrorCode.MSGPACK_TRAILING_BYTES, { offset: pos }, `${bytes.length - pos} bytes after the msgpack value`);
    return v;
  } finally {
    data = new Uint8Array(0);
    keepDepth = -1;
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
  if (b >= 0x80 && b < 0x90) return depth === keepDepth ? keptMap(b & 0x0f, depth, pos - 1) : readMap(b & 0x0f, depth);
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
      return depth === keepDepth ? keptMap(view.getUint16(pos - 2), depth, pos - 3) : readMap(view.getUint16(pos - 2), depth);
    case 0xdf:
      need(4);
      pos += 4;
      return depth === keepDepth ? keptMap(view.getUint32(pos - 4), depth, pos - 5) : readMap(view.getUint32(pos - 4), depth);
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

/**
 * Map keys of at most KEY_CACHE_MAX_LENGTH ASCII bytes seen before, direct-mapped by a hash of their bytes: a
 * message's keys repeat in every map of its kind (a catch-up reply holds thousands of txns with the same dozen
 * keys), and a cached key is neither allocated again nor hashed again when it becomes a property name.
 */
const KEY_CACHE_SIZE = 1024;
const KEY_CACHE_MAX_LENGTH = 16;
const keyCache: (string | undefined)[] = new Array<string | undefined>(KEY_CACHE_SIZE).fill(undefined);

/** A map key: a fixstr of a few ASCII bytes from the key cache, any other key as dec reads it. */
function readKey(depth: number): unknown {
  if (pos >= data.length) return dec(depth);
  const b = data[pos];
  const n = b - 0xa0;
  if (n < 1 || n > KEY_CACHE_MAX_LENGTH || pos + 1 + n > data.length) return dec(depth);
  const start = pos + 1;
  const end = start + n;
  let h = n;
  for (let i = start; i < end; i++) {
    const c = data[i];
    if (c >= 0x80) return dec(depth);
    h = (h * 31 + c) | 0;
  }
  const slot = h & (KEY_CACHE_SIZE - 1);
  const cached = keyCache[slot];
  pos = end;
  if (cached !== undefined && cached.length === n) {
    let same = true;
    for (let i = 0; i < n; i++) {
      if (cached.charCodeAt(i) !== data[start + i]) {
        same = false;
        break;
      }
    }
    if (same) return cached;
  }
  const key = latin1Slice.call(data, start, end);
  keyCache[slot] = key;
  return key;
}

function readArray(n: number, depth: number): unknown[] {
  if (depth >= MAX_DEPTH) throw new EncodingError(EncodingErrorCode.TOO_DEEP, { limit: MAX_DEPTH });
  // every element takes at least one byte: refuse lengths the input cannot hold before allocating
  need(n);
  const out = new Array<unknown>(n);
  for (let i = 0; i < n; i++) out[i] = dec(depth + 1);
  return out;
}

/** readMap, keeping a copy of the map's bytes from `start` (its header) for takeDecodedEncoding. */
function keptMap(n: number, depth: number, start: number): Record<string, unknown> | Map<number, unknown> {
  const m = readMap(n, depth);
  keptEncodings.set(m, data.slice(start, pos));
  return m;
}

function readMap(n: number, depth: number): Record<string, unknown> | Map<number, unknown> {
  if (depth >= MAX_DEPTH) throw new EncodingError(EncodingErrorCode.TOO_DEEP, { limit: MAX_DEPTH });
  need(2 * n);
  if (n === 0) return {};
  const keyPos = pos;
  const first = readKey(depth + 1);
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
      k = readKey(depth + 1);
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
