/**
 * Lossless JSON (formats.md 1.4): a strict RFC 8259 parser that keeps integers exact and rejects what
 * Quire must not accept, and a compact writer that writes them back exactly.
 *
 * parseJson returns the value model of json-value.ts:
 * - integer tokens (no `.`, `e`, `E`) -> `number` when safe, `bigint` otherwise; outside
 *   [-2^63, 2^64-1] -> INTEGER_OUT_OF_RANGE;
 * - float tokens -> `number`, or `JsonFloat` when the value is integral (`1.0`), so that the float
 *   survives re-encoding; overflow to Infinity -> NON_FINITE_NUMBER;
 * - objects -> plain objects; when a key is integer-like (so `Object.keys` would move it first) the
 *   order as received is recorded and returned by `receivedKeys(obj)`;
 * - duplicate keys -> DUPLICATE_KEY; lone surrogates (raw or escaped) -> LONE_SURROGATE;
 *   NaN / Infinity / any other syntax error -> INVALID_JSON; bytes that are not UTF-8 -> INVALID_UTF8.
 */
import { EncodingError, EncodingErrorCode } from './errors.js';
import { JsonFloat, defineKey, isWellFormedString, setReceivedKeys } from './json-value.js';
import { writeJson } from './json-writer.js';

export interface ParseJsonOptions {
  /** Maximum nesting depth of arrays and objects (default 128). */
  maxDepth?: number;
}

const DEFAULT_MAX_DEPTH = 128;
const MAX_U64 = 18446744073709551615n;
const MIN_I64 = -9223372036854775808n;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

// Parser state: parsing is synchronous and never re-entered, so module-level state is safe and fast.
let src = '';
let pos = 0;
let maxDepth = DEFAULT_MAX_DEPTH;

/** Parses JSON text (a string, or UTF-8 bytes) losslessly. Throws EncodingError. */
export function parseJson(text: string | Uint8Array, opts?: ParseJsonOptions): unknown {
  let s: string;
  if (typeof text === 'string') s = text;
  else if (text instanceof Uint8Array) {
    try {
      s = utf8.decode(text);
    } catch {
      throw new EncodingError(EncodingErrorCode.INVALID_UTF8, {}, 'JSON bytes are not valid UTF-8');
    }
  } else throw new EncodingError(EncodingErrorCode.INVALID_JSON, { position: 0, reason: 'input is not a string' });
  src = s;
  pos = 0;
  maxDepth = opts?.maxDepth ?? DEFAULT_MAX_DEPTH;
  try {
    skipWs();
    const v = parseValue(0);
    skipWs();
    if (pos !== src.length) fail('unexpected data after the JSON value');
    return v;
  } finally {
    src = '';
  }
}

function fail(reason: string, at = pos): never {
  throw new EncodingError(EncodingErrorCode.INVALID_JSON, { position: at, reason }, `invalid JSON at position ${at}: ${reason}`);
}

function skipWs(): void {
  const s = src;
  let p = pos;
  for (;;) {
    const c = s.charCodeAt(p);
    if (c === 32 || c === 10 || c === 13 || c === 9) p++;
    else break;
  }
  pos = p;
}

function parseValue(depth: number): unknown {
  const c = src.charCodeAt(pos);
  switch (c) {
    case 34: // "
      return parseString();
    case 123: // {
      return parseObject(depth + 1);
    case 91: // [
      return parseArray(depth + 1);
    case 116: // t
      return literal('true', true);
    case 102: // f
      return literal('false', false);
    case 110: // n
      return literal('null', null);
    default:
      if (c === 45 || (c >= 48 && c <= 57)) return parseNumber();
      if (pos >= src.length) fail('unexpected end of input');
      if (c === 78 || c === 73) {
        if (src.startsWith('NaN', pos) || src.startsWith('Infinity', pos)) {
          throw new EncodingError(EncodingErrorCode.NON_FINITE_NUMBER, { position: pos }, 'NaN and Infinity are not JSON');
        }
      }
      return fail(`unexpected character ${JSON.stringify(src[pos])}`);
  }
}

function literal<T>(word: string, value: T): T {
  if (!src.startsWith(word, pos)) fail('invalid literal');
  pos += word.length;
  return value;
}

function parseNumber(): number | bigint | JsonFloat {
  const s = src;
  const start = pos;
  let p = pos;
  let neg = false;
  if (s.charCodeAt(p) === 45) {
    neg = true;
    p++;
    if (s.startsWith('Infinity', p)) throw new EncodingError(EncodingErrorCode.NON_FINITE_NUMBER, { position: start }, 'NaN and Infinity are not JSON');
  }
  let c = s.charCodeAt(p);
  let acc = 0;
  const digitsStart = p;
  if (c === 48) {
    p++;
  } else if (c >= 49 && c <= 57) {
    do {
      acc = acc * 10 + (c - 48);
      c = s.charCodeAt(++p);
    } while (c >= 48 && c <= 57);
  } else {
    fail('digit expected', p);
  }
  const intDigits = p - digitsStart;
  let isFloat = false;
  c = s.charCodeAt(p);
  if (c === 46) {
    isFloat = true;
    c = s.charCodeAt(++p);
    if (!(c >= 48 && c <= 57)) fail('digit expected after the decimal point', p);
    do c = s.charCodeAt(++p);
    while (c >= 48 && c <= 57);
  }
  if (c === 101 || c === 69) {
    isFloat = true;
    c = s.charCodeAt(++p);
    if (c === 43 || c === 45) c = s.charCodeAt(++p);
    if (!(c >= 48 && c <= 57)) fail('digit expected in the exponent', p);
    do c = s.charCodeAt(++p);
    while (c >= 48 && c <= 57);
  }
  pos = p;
  if (!isFloat) {
    if (intDigits <= 15) return neg ? (acc === 0 ? 0 : -acc) : acc;
    const big = BigInt(s.slice(start, p));
    if (big > MAX_U64 || big < MIN_I64) {
      throw new EncodingError(EncodingErrorCode.INTEGER_OUT_OF_RANGE, { value: big, position: start }, `integer ${big} is outside [-2^63, 2^64-1]`);
    }
    if (big <= 9007199254740991n && big >= -9007199254740991n) return Number(big);
    return big;
  }
  const v = Number(s.slice(start, p));
  if (!Number.isFinite(v)) throw new EncodingError(EncodingErrorCode.NON_FINITE_NUMBER, { position: start }, 'float overflows float64');
  return Number.isSafeInteger(v) ? new JsonFloat(v) : v;
}

/** A control character (which JSON strings must escape). */
// eslint-disable-next-line no-control-regex -- the characters JSON forbids raw in a string
const CONTROL = /[\u0000-\u001f]/;
/** Strings at least this long are checked with native searches instead of character by character. */
const LONG_STRING = 48;

function parseString(): string {
  const s = src;
  let p = pos + 1;
  const start = p;
  let surrogates = false;
  for (;;) {
    if (p - start === LONG_STRING) {
      // a long string (a base64 proof, a signature): the rest up to the next quote is checked with native searches
      // for what this loop refuses (control characters) or handles (escapes); the loop goes on when there are any
      const close = s.indexOf('"', p);
      if (close !== -1) {
        const rest = s.slice(p, close);
        if (rest.indexOf('\\') === -1 && !CONTROL.test(rest)) {
          const out = s.slice(start, close);
          if (!isWellFormedString(out)) loneSurrogate(start);
          pos = close + 1;
          return out;
        }
      }
    }
    const c = s.charCodeAt(p);
    if (c === 34) {
      const out = s.slice(start, p);
      pos = p + 1;
      if (surrogates && !isWellFormedString(out)) loneSurrogate(start);
      return out;
    }
    if (c === 92) break;
    if (c < 0x20 || p >= s.length) {
      if (p >= s.length) fail('unterminated string', start - 1);
      fail('control character in string', p);
    }
    if (c >= 0xd800 && c <= 0xdfff) surrogates = true;
    p++;
  }
  // slow path: escapes
  let out = s.slice(start, p);
  let chunk = p;
  for (;;) {
    const c = s.charCodeAt(p);
    if (c === 34) {
      out += s.slice(chunk, p);
      pos = p + 1;
      if (surrogates && !isWellFormedString(out)) loneSurrogate(start);
      return out;
    }
    if (c === 92) {
      out += s.slice(chunk, p);
      const e = s.charCodeAt(p + 1);
      switch (e) {
        case 34:
          out += '"';
          break;
        case 92:
          out += '\\';
          break;
        case 47:
          out += '/';
          break;
        case 98:
          out += '\b';
          break;
        case 102:
          out += '\f';
          break;
        case 110:
          out += '\n';
          break;
        case 114:
          out += '\r';
          break;
        case 116:
          out += '\t';
          break;
        case 117: {
          let code = 0;
          for (let i = 2; i < 6; i++) {
            const h = s.charCodeAt(p + i);
            let d: number;
            if (h >= 48 && h <= 57) d = h - 48;
            else if (h >= 97 && h <= 102) d = h - 87;
            else if (h >= 65 && h <= 70) d = h - 55;
            else return fail('invalid \\u escape', p);
            code = code * 16 + d;
          }
          if (code >= 0xd800 && code <= 0xdfff) surrogates = true;
          out += String.fromCharCode(code);
          p += 4;
          break;
        }
        default:
          fail('invalid escape', p);
      }
      p += 2;
      chunk = p;
      continue;
    }
    if (c < 0x20 || p >= s.length) {
      if (p >= s.length) fail('unterminated string', start - 1);
      fail('control character in string', p);
    }
    if (c >= 0xd800 && c <= 0xdfff) surrogates = true;
    p++;
  }
}

function loneSurrogate(at: number): never {
  throw new EncodingError(EncodingErrorCode.LONE_SURROGATE, { position: at }, `string at position ${at} holds a lone UTF-16 surrogate`);
}

function parseObject(depth: number): Record<string, unknown> {
  if (depth > maxDepth) throw new EncodingError(EncodingErrorCode.TOO_DEEP, { limit: maxDepth, position: pos });
  pos++;
  skipWs();
  const obj: Record<string, unknown> = {};
  if (src.charCodeAt(pos) === 125) {
    pos++;
    return obj;
  }
  let order: string[] | null = null;
  for (;;) {
    if (src.charCodeAt(pos) !== 34) fail('object key expected');
    const keyPos = pos;
    const key = parseString();
    skipWs();
    if (src.charCodeAt(pos) !== 58) fail("':' expected");
    pos++;
    skipWs();
    const value = parseValue(depth);
    if (Object.prototype.hasOwnProperty.call(obj, key)) {
      throw new EncodingError(EncodingErrorCode.DUPLICATE_KEY, { key, position: keyPos }, `duplicate key ${JSON.stringify(key)}`);
    }
    if (order !== null) order.push(key);
    else {
      const k0 = key.charCodeAt(0);
      if (k0 >= 48 && k0 <= 57) {
        order = Object.keys(obj);
        order.push(key);
      }
    }
    defineKey(obj, key, value);
    skipWs();
    const c = src.charCodeAt(pos);
    if (c === 44) {
      pos++;
      skipWs();
      continue;
    }
    if (c === 125) {
      pos++;
      break;
    }
    fail("',' or '}' expected");
  }
  if (order !== null) setReceivedKeys(obj, order);
  return obj;
}

function parseArray(depth: number): unknown[] {
  if (depth > maxDepth) throw new EncodingError(EncodingErrorCode.TOO_DEEP, { limit: maxDepth, position: pos });
  pos++;
  skipWs();
  const arr: unknown[] = [];
  if (src.charCodeAt(pos) === 93) {
    pos++;
    return arr;
  }
  for (;;) {
    arr.push(parseValue(depth));
    skipWs();
    const c = src.charCodeAt(pos);
    if (c === 44) {
      pos++;
      skipWs();
      continue;
    }
    if (c === 93) {
      pos++;
      return arr;
    }
    fail("',' or ']' expected");
  }
}

/**
 * Compact JSON text of a value of the json-value model: integers and bigints written exactly, floats
 * in Python repr (so `JsonFloat(1)` is written `1.0`), object keys in received order (see
 * receivedKeys), integer-keyed Maps as objects with decimal keys, undefined-valued properties left out.
 * Throws EncodingError UNSUPPORTED_VALUE / LONE_SURROGATE / NON_FINITE_NUMBER.
 */
export function stringifyJson(value: unknown): string {
  return writeJson(value, false);
}
