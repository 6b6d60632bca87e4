/**
 * The JSON text writer behind canonical JSON CJ (formats.md 1.6: keys sorted at every depth) and stringifyJson
 * (formats.md 1.4: keys in received order). Both write compact text: no whitespace, integers and bigints exact,
 * floats in Python repr (`JsonFloat(1)` is `1.0`), strings escaped as Python's json.dumps(ensure_ascii=False)
 * escapes them, Maps as objects with decimal keys, undefined-valued properties and Map entries left out.
 */
import { BoundedFifo } from './bounded-fifo.js';
import { EncodingError, EncodingErrorCode } from './errors.js';
import { JsonFloat, assertWellFormed, codePointCompare, isPlainObject, pythonFloatRepr, receivedKeys, sortedKeys, unsupported } from './json-value.js';

const MAX_DEPTH = 512;

/** Strings of this many characters or more (up to MEMO_MAX_LENGTH) have their literal remembered. */
const MEMO_MIN_LENGTH = 512;
const MEMO_MAX_LENGTH = 16_384;
/**
 * Literals remembered, each kept with its string: 8 Mi characters for strings without escapes (a base64 proof), at most
 * 28 Mi when every character is escaped (\u00xx); the oldest goes first.
 */
const MEMO_ENTRIES = 256;
/** the literals of the last long strings written: a node writes the same base64 proof in every read of its key */
const literals = new BoundedFifo<string, string>(MEMO_ENTRIES);

/**
 * A value already written by stringifyJson, written again as that text: a part of a message sent many times (a read's
 * state proof with its multi-signature) is written once and spliced into each message. Made only by `JsonText.of`, from
 * the writer's own output, so its text is always JSON the writer would write for the value. stringifyJson writes it
 * as is; canonical JSON (sorted keys, hashed and signed) refuses it as UNSUPPORTED_VALUE.
 */
export class JsonText {
  private constructor(readonly text: string) {}

  /** The value's stringifyJson text, to be written as is. Throws as stringifyJson. */
  static of(value: unknown): JsonText {
    return new JsonText(writeJson(value, false));
  }
}

/** The JSON string literal of `s`. Throws LONE_SURROGATE. */
export function jsonString(s: string): string {
  if (s.length >= MEMO_MIN_LENGTH && s.length <= MEMO_MAX_LENGTH) {
    let out = literals.get(s);
    if (out === undefined) {
      assertWellFormed(s);
      out = JSON.stringify(s);
      literals.set(s, out);
    }
    return out;
  }
  assertWellFormed(s);
  // JSON.stringify escapes exactly what Python's encoder escapes for well-formed strings:
  // " \ \b \f \n \r \t, other controls as \u00xx (lowercase), nothing else.
  return JSON.stringify(s);
}

/**
 * JSON text of a value of the json-value model. `sorted`: object keys by code point and Map keys numerically (CJ,
 * where a Map's keys must be all integers or all strings); otherwise keys in received order.
 * Throws EncodingError UNSUPPORTED_VALUE / LONE_SURROGATE / NON_FINITE_NUMBER / INVALID_MAP_KEY / TOO_DEEP.
 */
export function writeJson(v: unknown, sorted: boolean, depth = 0): string {
  switch (typeof v) {
    case 'string':
      return jsonString(v);
    case 'number':
      return Number.isSafeInteger(v) ? String(v) : pythonFloatRepr(v);
    case 'bigint':
      return v.toString();
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (v === null) return 'null';
      if (depth > MAX_DEPTH) throw new EncodingError(EncodingErrorCode.TOO_DEEP, { limit: MAX_DEPTH });
      if (Array.isArray(v)) {
        let out = '[';
        for (let i = 0; i < v.length; i++) {
          const x = v[i];
          if (x === undefined) throw unsupported(undefined);
          out += (i === 0 ? '' : ',') + writeJson(x, sorted, depth + 1);
        }
        return out + ']';
      }
      if (v instanceof JsonFloat) return pythonFloatRepr(v.value);
      if (v instanceof Map) {
        let out = '{';
        const entries = mapEntries(v, sorted);
        for (let i = 0; i < entries.length; i++) {
          const [k, x] = entries[i];
          out += (i === 0 ? '' : ',') + jsonString(k) + ':' + writeJson(x, sorted, depth + 1);
        }
        return out + '}';
      }
      if (!isPlainObject(v)) {
        if (v instanceof JsonText && !sorted) return v.text;
        throw unsupported(v);
      }
      let out = '{';
      let first = true;
      for (const k of sorted ? sortedKeys(v) : receivedKeys(v)) {
        const x = v[k];
        if (x === undefined) continue;
        out += (first ? '' : ',') + jsonString(k) + ':' + writeJson(x, sorted, depth + 1);
        first = false;
      }
      return out + '}';
    }
    default:
      throw unsupported(v);
  }
}

/** The entries of a Map with a defined value, keys as decimal or plain strings, in the order they are written. */
function mapEntries(m: Map<unknown, unknown>, sorted: boolean): [string, unknown][] {
  const entries = [...m].filter(([, x]) => x !== undefined);
  if (!sorted) {
    for (const [k] of entries)
      if (typeof k !== 'number' && typeof k !== 'string') throw new EncodingError(EncodingErrorCode.INVALID_MAP_KEY, { type: typeof k });
    return entries.map(([k, x]) => [String(k), x]);
  }
  const allNumbers = entries.every(([k]) => typeof k === 'number' && Number.isSafeInteger(k));
  const allStrings = entries.every(([k]) => typeof k === 'string');
  if (!allNumbers && !allStrings) throw new EncodingError(EncodingErrorCode.INVALID_MAP_KEY, {}, 'map keys must be all integers or all strings');
  entries.sort(allNumbers ? (a, b) => (a[0] as number) - (b[0] as number) : (a, b) => codePointCompare(a[0] as string, b[0] as string));
  return entries.map(([k, x]) => [String(k), x]);
}
