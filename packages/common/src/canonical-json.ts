/**
 * Canonical JSON CJ (formats.md 1.6): what Python's json.dumps(sort_keys=True, ensure_ascii=False,
 * separators=(',', ':')) produces, in UTF-8. Keys sorted by code point at every depth (integer keys
 * of Maps numerically, written as decimal strings), no whitespace, non-ASCII raw, `/` not escaped,
 * integers exact, floats in Python repr.
 */
import { writeJson } from './json-writer.js';

const utf8 = new TextEncoder();

/** CJ(value) as a string. Throws EncodingError UNSUPPORTED_VALUE / LONE_SURROGATE / NON_FINITE_NUMBER / INVALID_MAP_KEY. */
export function canonicalJson(value: unknown): string {
  return writeJson(value, true);
}

/** UTF-8 bytes of CJ(value). */
export function canonicalJsonBytes(value: unknown): Uint8Array {
  return utf8.encode(writeJson(value, true));
}
