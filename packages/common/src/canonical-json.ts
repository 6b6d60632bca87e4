/**
 * Canonical JSON CJ (formats.md 1.6): what Python's json.dumps(sort_keys=True, ensure_ascii=False,
 * separators=(',', ':')) produces, in UTF-8. Keys sorted by code point at every depth (integer keys
 * of Maps numerically, written as decimal strings), no whitespace, non-ASCII raw, `/` not escaped,
 * integers exact, floats in Python repr.
 */
import { EncodingError, EncodingErrorCode } from './errors.js';
import { JsonFloat, codePointCompare, isPlainObject, isWellFormedString, pythonFloatRepr, sortedKeys, unsupported } from './json-value.js';

const utf8 = new TextEncoder();

/** CJ(value) as a string. Throws EncodingError UNSUPPORTED_VALUE / LONE_SURROGATE / NON_FINITE_NUMBER. */
export function canonicalJson(value: unknown): string {
  return cj(value, 0);
}

/** UTF-8 bytes of CJ(value). */
export function canonicalJsonBytes(value: unknown): Uint8Array {
  return utf8.encode(cj(value, 0));
}

function str(s: string): string {
  if (!isWellFormedString(s)) throw new EncodingError(EncodingErrorCode.LONE_SURROGATE, {}, 'string holds a lone UTF-16 surrogate');
  // JSON.stringify escapes exactly what Python's encoder escapes for well-formed strings:
  // " \ \b \f \n \r \t, other controls as \u00xx (lowercase), nothing else.
  return JSON.stringify(s);
}

function cj(v: unknown, depth: number): string {
  switch (typeof v) {
    case 'string':
      return str(v);
    case 'number':
      return Number.isSafeInteger(v) ? String(v) : pythonFloatRepr(v);
    case 'bigint':
      return v.toString();
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (v === null) return 'null';
      if (depth > 512) throw new EncodingError(EncodingErrorCode.TOO_DEEP, { limit: 512 });
      if (Array.isArray(v)) {
        let out = '[';
        for (let i = 0; i < v.length; i++) {
          const x = v[i];
          if (x === undefined) throw unsupported(undefined);
          out += (i === 0 ? '' : ',') + cj(x, depth + 1);
        }
        return out + ']';
      }
      if (v instanceof JsonFloat) return pythonFloatRepr(v.value);
      if (v instanceof Map) return cjMap(v, depth);
      if (!isPlainObject(v)) throw unsupported(v);
      const keys = sortedKeys(v);
      let out = '{';
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]!;
        out += (i === 0 ? '' : ',') + str(k) + ':' + cj(v[k], depth + 1);
      }
      return out + '}';
    }
    default:
      throw unsupported(v);
  }
}

function cjMap(m: Map<unknown, unknown>, depth: number): string {
  const entries = [...m].filter(([, x]) => x !== undefined);
  const allNumbers = entries.every(([k]) => typeof k === 'number' && Number.isSafeInteger(k));
  const allStrings = entries.every(([k]) => typeof k === 'string');
  if (!allNumbers && !allStrings) throw new EncodingError(EncodingErrorCode.INVALID_MAP_KEY, {}, 'map keys must be all integers or all strings');
  entries.sort(allNumbers ? (a, b) => (a[0] as number) - (b[0] as number) : (a, b) => codePointCompare(a[0] as string, b[0] as string));
  let out = '{';
  for (let i = 0; i < entries.length; i++) {
    const [k, x] = entries[i]!;
    out += (i === 0 ? '' : ',') + str(String(k)) + ':' + cj(x, depth + 1);
  }
  return out + '}';
}
