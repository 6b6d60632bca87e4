/**
 * The in-memory model of JSON values shared by every encoder of this package:
 *
 * - string, boolean, null;
 * - integer: a `number` that is a safe integer, or a `bigint` (any integer; parseJson returns bigint
 *   only outside the safe range);
 * - float: a `number` that is not a safe integer (14.8639, 1e300), or a {@link JsonFloat} for a float
 *   whose value happens to be integral (`1.0`, `-0.0`, `1e2`), which Python — and so Indy — keeps as a float;
 * - array;
 * - object: a plain object with string keys; the order in which parseJson / decodeMsgpack received
 *   its keys is retrievable with {@link receivedKeys} (plain objects move integer-like keys first);
 * - `Map<number, value>`: a map with integer keys (the audit txn's `ledgerSize`, `ledgerRoot`, `stateRoot`).
 *
 * In objects, a property whose value is `undefined` is treated as absent (as JSON.stringify does).
 */
import { EncodingError, EncodingErrorCode } from './errors.js';

/** A float whose value is integral, kept apart from the integer of the same value. */
export class JsonFloat {
  constructor(readonly value: number) {}
  valueOf(): number {
    return this.value;
  }
  toJSON(): number {
    return this.value;
  }
}

/** Symbol under which parseJson / decodeMsgpack store the received key order of an object when it
 * differs from `Object.keys` order (only possible when some key is integer-like). Non-enumerable. */
export const RECEIVED_KEY_ORDER: unique symbol = Symbol('quire.receivedKeyOrder');

type WithOrder = { [RECEIVED_KEY_ORDER]?: readonly string[] };

/**
 * The own enumerable keys of `obj` in the order they were received (by parseJson or decodeMsgpack),
 * or in `Object.keys` order for objects built in code. Keys added after parsing come last, keys
 * deleted after parsing are left out.
 */
export function receivedKeys(obj: object): string[] {
  const order = (obj as WithOrder)[RECEIVED_KEY_ORDER];
  const keys = Object.keys(obj);
  if (order === undefined) return keys;
  const out: string[] = [];
  const seen = new Set<string>();
  for (const k of order) {
    if (Object.prototype.hasOwnProperty.call(obj, k) && !seen.has(k)) {
      out.push(k);
      seen.add(k);
    }
  }
  if (out.length !== keys.length) for (const k of keys) if (!seen.has(k)) out.push(k);
  return out;
}

/** Records `keys` as the received key order of `obj` (used by decoders; harmless to call in code). */
export function setReceivedKeys(obj: object, keys: readonly string[]): void {
  Object.defineProperty(obj, RECEIVED_KEY_ORDER, { value: keys, enumerable: false, configurable: true, writable: true });
}

/** True when Object.keys would not list `key` in insertion order (a canonical array index). */
export function isIndexLikeKey(key: string): boolean {
  const n = key.length;
  if (n === 0 || n > 10) return false;
  const c0 = key.charCodeAt(0);
  if (c0 < 48 || c0 > 57) return false;
  if (c0 === 48) return n === 1;
  for (let i = 1; i < n; i++) {
    const c = key.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return n < 10 || Number(key) < 4294967295;
}

/** Sets `obj[key] = value` as an own data property, also for the key `__proto__`. */
export function defineKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/**
 * Compares two strings by Unicode code point (= UTF-8 byte order). JS's default string order
 * compares UTF-16 code units and puts U+10000.. before U+E000..U+FFFF.
 */
export function codePointCompare(a: string, b: string): number {
  if (a === b) return 0;
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x !== y) {
      if (x >= 0xd800 && y >= 0xd800) {
        // surrogates (D800-DFFF, code points >= U+10000) must sort after E000-FFFF
        x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
        y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
      }
      return x - y;
    }
  }
  return a.length - b.length;
}

/** The keys of a plain object (undefined-valued ones left out), sorted by code point. */
export function sortedKeys(obj: Record<string, unknown>): string[] {
  const keys = Object.keys(obj);
  const n = keys.length;
  let out = keys;
  let astral = false;
  for (let i = 0; i < n; i++) {
    const k = keys[i];
    if (obj[k] === undefined) {
      out = keys.filter((x) => obj[x] !== undefined);
      break;
    }
    for (let j = 0; j < k.length; j++) {
      if (k.charCodeAt(j) >= 0xd800) {
        astral = true;
        break;
      }
    }
  }
  if (out !== keys) astral = out.some((k) => /[\ud800-\uffff]/.test(k));
  if (astral) return out.sort(codePointCompare);
  // Without code units >= U+D800, UTF-16 order is code-point order: a plain insertion sort with the
  // native string comparison is the fastest for the handful of keys a txn map has.
  const m = out.length;
  if (m > 24) return out.sort();
  for (let i = 1; i < m; i++) {
    const k = out[i];
    let j = i - 1;
    while (j >= 0 && out[j] > k) {
      out[j + 1] = out[j];
      j--;
    }
    out[j + 1] = k;
  }
  return out;
}

/** True when `v` is a plain object (prototype Object.prototype or null). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const p = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

/** True when `s` holds no unpaired UTF-16 surrogate. */
export function isWellFormedString(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** Throws LONE_SURROGATE unless `s` is well-formed UTF-16. */
export function assertWellFormed(s: string): void {
  if (!isWellFormedString(s)) throw new EncodingError(EncodingErrorCode.LONE_SURROGATE, {}, 'string holds a lone UTF-16 surrogate');
}

/**
 * Python `repr` of a float64 (formats.md 1.5): shortest round-trip digits; positional notation with
 * at least one fractional digit when the decimal exponent is in [-4, 16), otherwise `d[.ddd]e±XX`.
 */
export function pythonFloatRepr(v: number): string {
  if (!Number.isFinite(v)) throw new EncodingError(EncodingErrorCode.NON_FINITE_NUMBER, { value: String(v) });
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  const e = v.toExponential(); // "-1.4864e+1"
  const neg = e.charCodeAt(0) === 45;
  const ePos = e.indexOf('e');
  const mantissa = e.slice(neg ? 1 : 0, ePos);
  const exp = Number(e.slice(ePos + 1));
  const digits = mantissa.length > 1 ? mantissa[0] + mantissa.slice(2) : mantissa;
  let out: string;
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      if (digits.length <= exp + 1) out = digits + '0'.repeat(exp + 1 - digits.length) + '.0';
      else out = digits.slice(0, exp + 1) + '.' + digits.slice(exp + 1);
    } else {
      out = '0.' + '0'.repeat(-exp - 1) + digits;
    }
  } else {
    const m = digits.length > 1 ? digits[0] + '.' + digits.slice(1) : digits;
    const a = Math.abs(exp);
    out = m + (exp < 0 ? 'e-' : 'e+') + (a < 10 ? '0' + a : String(a));
  }
  return neg ? '-' + out : out;
}

/** Renders an integer or float number the way SER and CJ do. */
export function renderNumber(v: number): string {
  return Number.isSafeInteger(v) ? String(v) : pythonFloatRepr(v);
}

export function describeType(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v !== 'object') return typeof v;
  const p = Object.getPrototypeOf(v);
  return p?.constructor?.name ?? 'object';
}

export function unsupported(v: unknown): EncodingError {
  return new EncodingError(EncodingErrorCode.UNSUPPORTED_VALUE, { type: describeType(v) });
}

/**
 * Deep copy of a value of the json-value model: arrays, plain objects (with their received key order)
 * and Maps are copied; strings, numbers, bigints, booleans, null and JsonFloat (immutable) are shared.
 */
export function deepCopy<T>(v: T, depth = 0): T {
  if (v === null || typeof v !== 'object' || v instanceof JsonFloat) return v;
  if (depth > 512) throw new EncodingError(EncodingErrorCode.TOO_DEEP, { limit: 512 });
  if (Array.isArray(v)) return v.map((x) => deepCopy(x, depth + 1)) as T;
  if (v instanceof Map) {
    const m = new Map();
    for (const [k, x] of v) m.set(k, deepCopy(x, depth + 1));
    return m as T;
  }
  if (!isPlainObject(v)) throw unsupported(v);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) defineKey(out, k, deepCopy(v[k], depth + 1));
  const order = (v as WithOrder)[RECEIVED_KEY_ORDER];
  if (order !== undefined) setReceivedKeys(out, order);
  return out as T;
}
