/**
 * Field checks: one function per field type of requests.md §2. A check receives the value and
 * where it sits (validator name + field path) and throws a RequestError whose code names the rule
 * and whose reason names the field: `validation error [<Validator>]: <problem> (<field>=<value>)`.
 */
import { JsonFloat, b58decode, parseJson, isPlainObject as isJsonObject } from '@quire/common';
import { type FieldData, type PyType, RequestError, RequestErrorCode } from '../errors.js';
import { Limits } from './limits.js';

/** Where a value sits: the schema validator's name and the (dotted) field path. */
export interface FieldAt {
  readonly validator: string;
  readonly field: string;
}

/** A field check: throws RequestError on a bad value. */
export type Check = (value: unknown, at: FieldAt) => void;

const B58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const B58_SET = new Set(B58_ALPHABET);
const HEX64 = /^[0-9a-fA-F]{64}$/;

/** The data every field code carries: where the value sits and the value. */
export function fieldData(at: FieldAt, value: unknown): FieldData {
  return { validator: at.validator, field: at.field, value };
}

/** The field codes whose data is no more than {@link fieldData}: each names the rule the value breaks. */
export type BareFieldCode =
  | typeof RequestErrorCode.FIELD_EMPTY
  | typeof RequestErrorCode.FIELD_VERKEY
  | typeof RequestErrorCode.FIELD_HASH
  | typeof RequestErrorCode.FIELD_VERSION_CHARS
  | typeof RequestErrorCode.FIELD_ROLE
  | typeof RequestErrorCode.FIELD_IP
  | typeof RequestErrorCode.FIELD_PORT;

/** Refuses a value with a field code that carries where it sits and the value (the others are thrown with their own data). */
export function fail(code: BareFieldCode, at: FieldAt, value: unknown): never {
  throw new RequestError(code, fieldData(at, value));
}

/** Python-style type name of a JSON value, for `expected types '...', got '...'`. */
export function pyType(v: unknown): PyType {
  if (v === null || v === undefined) return 'NoneType';
  if (typeof v === 'string') return 'str';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (v instanceof JsonFloat) return 'float';
  if (Array.isArray(v)) return 'list';
  return 'dict';
}

/** A JSON object (not an array, Map, JsonFloat or bytes). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return isJsonObject(v);
}

export function isInteger(v: unknown): v is number | bigint {
  return (typeof v === 'number' && Number.isInteger(v)) || typeof v === 'bigint';
}

function typeError(at: FieldAt, value: unknown, expected: PyType): never {
  throw new RequestError(RequestErrorCode.FIELD_TYPE, { ...fieldData(at, value), expected, got: pyType(value) });
}

// ---- scalars -------------------------------------------------------------------------------------

/** A string; non-empty unless allowEmpty; at most `max` characters (code points). */
export function str(opts: { max?: number; allowEmpty?: boolean } = {}): Check {
  return (v, at) => {
    if (typeof v !== 'string') typeError(at, v, 'str');
    if (!opts.allowEmpty && v.length === 0) fail(RequestErrorCode.FIELD_EMPTY, at, v);
    if (opts.max !== undefined && v.length > opts.max && [...v].length > opts.max)
      throw new RequestError(RequestErrorCode.FIELD_TOO_LONG, { ...fieldData(at, v), max: opts.max });
  };
}

/** Non-empty string (no length bound beyond the message limit). */
export const nonEmptyStr: Check = str();

/** Integer (number or bigint), within [min, max] when given. */
export function integer(opts: { min?: number | bigint; max?: number | bigint } = {}): Check {
  return (v, at) => {
    if (!isInteger(v)) typeError(at, v, 'int');
    if (opts.min !== undefined && v < opts.min) throw new RequestError(RequestErrorCode.FIELD_TOO_SMALL, { ...fieldData(at, v), min: opts.min });
    if (opts.max !== undefined && v > opts.max) throw new RequestError(RequestErrorCode.FIELD_TOO_LARGE, { ...fieldData(at, v), max: opts.max });
  };
}

/** Ledger seqNo: integer >= 1. */
export const seqNo: Check = integer({ min: 1 });

/** Integer or a string of decimal digits (CLAIM_DEF ref, NODE ports; requests.md §10.9). */
export function integerOrDigits(opts: { min?: number; max?: number } = {}): Check {
  const intCheck = integer(opts);
  return (v, at) => {
    if (typeof v === 'string') {
      if (!/^[0-9]{1,20}$/.test(v)) typeError(at, v, 'int');
      intCheck(BigInt(v), at);
      return;
    }
    intCheck(v, at);
  };
}

export const bool: Check = (v, at) => {
  if (typeof v !== 'boolean') typeError(at, v, 'bool');
};

/** A JSON object (dict). */
export const object: Check = (v, at) => {
  if (!isPlainObject(v)) typeError(at, v, 'dict');
};

/** A non-empty JSON object. */
export const nonEmptyObject: Check = (v, at) => {
  object(v, at);
  if (Object.keys(v as object).length === 0) fail(RequestErrorCode.FIELD_EMPTY, at, v);
};

/** One of a fixed set of strings. */
export function oneOf(values: readonly string[]): Check {
  const set = new Set(values);
  return (v, at) => {
    if (typeof v !== 'string' || !set.has(v)) throw new RequestError(RequestErrorCode.FIELD_ENUM, { ...fieldData(at, v), allowed: values });
  };
}

/** Exactly this value. */
export function constant(value: string): Check {
  return oneOf([value]);
}

/** Anything (field is allowed, content unchecked). */
export const any: Check = () => undefined;

// ---- base58, DIDs, keys --------------------------------------------------------------------------

const B58_OK = new Uint8Array(128);
for (const c of B58_ALPHABET) B58_OK[c.charCodeAt(0)] = 1;

/** True when every character of `v` is in the base58 alphabet (no allocation). */
export function isBase58Text(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c >= 128 || B58_OK[c] === 0) return false;
  }
  return true;
}

function badBase58Chars(v: string): string[] {
  return [...new Set([...v].filter((c) => !B58_SET.has(c)))].sort();
}

/** Decodes base58 text; reports characters outside the alphabet. */
export function decodeBase58(v: unknown, at: FieldAt): Uint8Array {
  if (typeof v !== 'string') typeError(at, v, 'str');
  if (v.length === 0) fail(RequestErrorCode.FIELD_EMPTY, at, v);
  if (!isBase58Text(v)) throw new RequestError(RequestErrorCode.FIELD_BASE58_CHARS, { ...fieldData(at, v), chars: badBase58Chars(v) });
  try {
    return b58decode(v);
  } catch {
    throw new RequestError(RequestErrorCode.FIELD_BASE58_CHARS, { ...fieldData(at, v), chars: [] });
  }
}

/** Base58 text whose decoded length is one of `lengths`. */
export function base58(lengths: readonly number[]): Check {
  return (v, at) => {
    const bytes = decodeBase58(v, at);
    if (!lengths.includes(bytes.length))
      throw new RequestError(RequestErrorCode.FIELD_BASE58_LENGTH, { ...fieldData(at, v), length: bytes.length, allowed: lengths });
  };
}

/** DID: base58 decoding to 16 or 32 bytes. */
export const did: Check = base58(Limits.DID_BYTES);

/** Full verkey (32 bytes) or abbreviated `~` + 16 bytes. */
export const verkey: Check = (v, at) => {
  if (typeof v !== 'string') typeError(at, v, 'str');
  const abbreviated = v.startsWith('~');
  const text = abbreviated ? v.slice(1) : v;
  const ok = (() => {
    if (text.length === 0 || !isBase58Text(text)) return false;
    try {
      const n = b58decode(text).length;
      return abbreviated ? n === Limits.ABBREVIATED_VERKEY_BYTES : n === Limits.FULL_VERKEY_BYTES;
    } catch {
      return false;
    }
  })();
  if (!ok) fail(RequestErrorCode.FIELD_VERKEY, at, v);
};

/** Ed25519 node key (NODE dest): base58 of exactly 32 bytes. */
export const ed25519Key: Check = base58([32]);

/** BLS public key: base58 of 48 bytes. BLS proof of possession: base58 of 96 bytes. */
export const blsKey: Check = base58([Limits.BLS_KEY_BYTES]);
export const blsPop: Check = base58([Limits.BLS_POP_BYTES]);

/** Signature text: base58, 1..512 characters. */
const signatureStr = str({ max: Limits.SIGNATURE_TEXT });
export const signatureText: Check = (v, at) => {
  signatureStr(v, at);
  if (!isBase58Text(v as string)) throw new RequestError(RequestErrorCode.FIELD_BASE58_CHARS, { ...fieldData(at, v), chars: badBase58Chars(v as string) });
};

// ---- hashes, versions, roles, network ------------------------------------------------------------

/** Exactly 64 hex digits. */
export const sha256Hex: Check = (v, at) => {
  if (typeof v !== 'string') typeError(at, v, 'str');
  if (!HEX64.test(v)) fail(RequestErrorCode.FIELD_HASH, at, v);
};

/** SchemaVersion: 2 or 3 dot-separated decimal integers, <= 128 characters. */
export const schemaVersion: Check = (v, at) => {
  str({ max: Limits.VERSION })(v, at);
  const parts = (v as string).split('.');
  if (parts.length < 2 || parts.length > 3) throw new RequestError(RequestErrorCode.FIELD_VERSION_PARTS, { ...fieldData(at, v), parts: parts.length });
  if (parts.some((p) => !/^[0-9]+$/.test(p))) fail(RequestErrorCode.FIELD_VERSION_CHARS, at, v);
};

/** Role codes (null = identity owner). */
export const ROLES = ['0', '2', '101', '201'] as const;
export const role: Check = (v, at) => {
  if (v === null) return;
  if (typeof v !== 'string' || !(ROLES as readonly string[]).includes(v)) fail(RequestErrorCode.FIELD_ROLE, at, v);
};

/** IPv4 dotted quad or IPv6 literal, not the unspecified address. */
export function isValidIp(v: string): boolean {
  if (v === '0.0.0.0' || v === '::' || v === '0:0:0:0:0:0:0:0') return false;
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(v);
  if (m) return m.slice(1).every((p) => Number(p) <= 255 && (p === '0' || !p.startsWith('0')));
  return isIpv6(v);
}

function isIpv6(v: string): boolean {
  if (!/^[0-9a-fA-F:.]+$/.test(v) || v.length > 45) return false;
  let text = v;
  let extraGroups = 0;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    if (!isValidIp(tail) && tail !== '0.0.0.0') return false;
    text = `${text.slice(0, lastColon + 1)}0:0`;
    extraGroups = 0;
  }
  const halves = text.split('::');
  if (halves.length > 2) return false;
  const groups = (h: string): string[] | null => {
    if (h === '') return [];
    const g = h.split(':');
    return g.every((x) => /^[0-9a-fA-F]{1,4}$/.test(x)) ? g : null;
  };
  const a = groups(halves[0]);
  const b = halves.length === 2 ? groups(halves[1]) : [];
  if (a === null || b === null) return false;
  const n = a.length + b.length + extraGroups;
  return halves.length === 2 ? n < 8 : n === 8;
}

export const ip: Check = (v, at) => {
  if (typeof v !== 'string') typeError(at, v, 'str');
  if (!isValidIp(v)) fail(RequestErrorCode.FIELD_IP, at, v);
};

/** Port: integer (or decimal-digit string) 1..65535. */
export const port: Check = (v, at) => {
  let n: bigint;
  if (typeof v === 'string' && /^[0-9]{1,10}$/.test(v)) n = BigInt(v);
  else if (isInteger(v)) n = BigInt(v);
  else return typeError(at, v, 'int');
  if (n < 1n || n > 65535n) fail(RequestErrorCode.FIELD_PORT, at, v);
};

/** Numeric value of a port field already checked by `port`. */
export function portNumber(v: unknown): number | undefined {
  if (typeof v === 'string' && /^[0-9]+$/.test(v)) return Number(v);
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

// ---- composites ----------------------------------------------------------------------------------

/** Array of items each passing `item`, with optional bounds on the count. */
export function arrayOf(item: Check, opts: { min?: number; max?: number } = {}): Check {
  return (v, at) => {
    if (!Array.isArray(v)) typeError(at, v, 'list');
    if (opts.min !== undefined && v.length < opts.min) {
      if (opts.min === 1) fail(RequestErrorCode.FIELD_EMPTY, at, v);
      throw new RequestError(RequestErrorCode.FIELD_TOO_SMALL, { ...fieldData(at, v), min: opts.min });
    }
    if (opts.max !== undefined && v.length > opts.max) throw new RequestError(RequestErrorCode.FIELD_TOO_LONG, { ...fieldData(at, v), max: opts.max });
    v.forEach((x, i) => item(x, { validator: at.validator, field: `${at.field}[${i}]` }));
  };
}

/** Map of string keys to values each passing `value` (keys checked by `key` when given). */
export function mapOf(value: Check, key?: Check): Check {
  return (v, at) => {
    object(v, at);
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (key) key(k, { validator: at.validator, field: `${at.field}.<key>` });
      value(x, { validator: at.validator, field: `${at.field}.${k}` });
    }
  };
}

/** `null` or a value passing `check`. */
export function nullable(check: Check): Check {
  return (v, at) => {
    if (v !== null) check(v, at);
  };
}

/** A JSON-serialized string of at most `max` characters that parses (losslessly) to an object. */
export function jsonObjectString(opts: { max?: number } = {}): Check {
  return (v, at) => {
    str({ max: opts.max, allowEmpty: false })(v, at);
    let parsed: unknown;
    try {
      parsed = parseJson(v as string);
    } catch {
      throw new RequestError(RequestErrorCode.FIELD_INVALID, { ...fieldData(at, v), problem: 'should be a valid JSON string' });
    }
    if (!isPlainObject(parsed)) throw new RequestError(RequestErrorCode.FIELD_INVALID, { ...fieldData(at, v), problem: 'should be a dict' });
  };
}

/** ISO-8601 date-time with an explicit UTC offset (`Z` or `±hh:mm`); returns epoch seconds or null. */
export function parseDateTimeWithOffset(text: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?\s*(Z|[+-]\d{2}:?\d{2})$/.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, sec, , off] = m;
  const year = Number(y),
    month = Number(mo),
    day = Number(d),
    hour = Number(h),
    minute = Number(mi),
    second = Number(sec ?? '0');
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return null;
  const base = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(base);
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return null;
  let offsetMinutes = 0;
  if (off !== 'Z') {
    const sign = off.startsWith('-') ? -1 : 1;
    const digits = off.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2)),
      om = Number(digits.slice(2, 4));
    if (oh > 23 || om > 59) return null;
    offsetMinutes = sign * (oh * 60 + om);
  }
  return Math.floor(base / 1000) - offsetMinutes * 60;
}
