/**
 * Signing serialization SER (formats.md 1.5) and the signature input of a request (3.2).
 * SER is ambiguous by design (no brackets, quotes or escaping): it reproduces Indy byte for byte.
 */
import { TxnType } from './codes.js';
import { EncodingError, EncodingErrorCode } from './errors.js';
import { sha256Hex } from './hash.js';
import { JsonFloat, codePointCompare, isPlainObject, pythonFloatRepr, sortedKeys, unsupported } from './json-value.js';

export interface SigningSerializationOptions {
  /** Skip the top-level keys `signature`, `signatures` and `fees` (signature-input mode). Default false. */
  skipTopLevel?: boolean;
  /** Apply the ATTRIB / GET_ATTR rule to `value.operation` (formats.md 1.5). Default false. */
  attribRule?: boolean;
}

const utf8 = new TextEncoder();
const TOP_LEVEL_SKIP: ReadonlySet<string> = new Set(['signature', 'signatures', 'fees']);

/** SER(value). Throws EncodingError UNSUPPORTED_VALUE / NON_FINITE_NUMBER / INVALID_ATTRIB_VALUE. */
export function signingSerialization(value: unknown, opts?: SigningSerializationOptions): string {
  if (opts?.attribRule && isPlainObject(value) && isPlainObject(value.operation)) {
    value = { ...value, operation: applyAttribRule(value.operation) };
  }
  if (opts?.skipTopLevel && isPlainObject(value)) return serObject(value, TOP_LEVEL_SKIP, 0);
  return ser(value, 0);
}

function ser(v: unknown, depth: number): string {
  switch (typeof v) {
    case 'string':
      return v;
    case 'number':
      return Number.isSafeInteger(v) ? String(v) : pythonFloatRepr(v);
    case 'bigint':
      return v.toString();
    case 'boolean':
      return v ? 'True' : 'False';
    case 'object':
      if (v === null) return '';
      if (depth > 512) throw new EncodingError(EncodingErrorCode.TOO_DEEP, { limit: 512 });
      if (Array.isArray(v)) {
        let out = '';
        for (let i = 0; i < v.length; i++) {
          const x = v[i];
          if (x === undefined) throw unsupported(undefined);
          out += i === 0 ? ser(x, depth + 1) : ',' + ser(x, depth + 1);
        }
        return out;
      }
      if (v instanceof JsonFloat) return pythonFloatRepr(v.value);
      if (v instanceof Map) return serMap(v, depth);
      if (isPlainObject(v)) return serObject(v, undefined, depth);
      throw unsupported(v);
    default:
      throw unsupported(v);
  }
}

function serObject(obj: Record<string, unknown>, skip: ReadonlySet<string> | undefined, depth: number): string {
  const keys = sortedKeys(obj);
  let out = '';
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (skip !== undefined && skip.has(k)) continue;
    const part = k + ':' + ser(obj[k], depth + 1);
    out = first ? part : out + '|' + part;
    first = false;
  }
  return out;
}

/** A Map (integer keys in audit data): keys sorted numerically, or by code point when strings. */
function serMap(m: Map<unknown, unknown>, depth: number): string {
  const entries = [...m].filter(([, x]) => x !== undefined);
  const allNumbers = entries.every(([k]) => typeof k === 'number' && Number.isSafeInteger(k));
  const allStrings = entries.every(([k]) => typeof k === 'string');
  if (!allNumbers && !allStrings) throw new EncodingError(EncodingErrorCode.INVALID_MAP_KEY, {}, 'map keys must be all integers or all strings');
  entries.sort(allNumbers ? (a, b) => (a[0] as number) - (b[0] as number) : (a, b) => codePointCompare(a[0] as string, b[0] as string));
  return entries.map(([k, x]) => String(k) + ':' + ser(x, depth + 1)).join('|');
}

/**
 * The ATTRIB / GET_ATTR rule: for operation types "100" and "104", the string value of `raw`, `enc`
 * and `hash` is replaced by the lowercase hex SHA-256 of its UTF-8 bytes. Returns a new operation
 * (or the same one when the rule does not apply). A null value is left as is; any other non-string
 * value is an EncodingError INVALID_ATTRIB_VALUE.
 */
export function applyAttribRule(operation: Record<string, unknown>): Record<string, unknown> {
  const type = operation.type;
  if (type !== TxnType.ATTRIB && type !== TxnType.GET_ATTR) return operation;
  let out: Record<string, unknown> | undefined;
  for (const field of ['raw', 'enc', 'hash'] as const) {
    const v = operation[field];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw new EncodingError(EncodingErrorCode.INVALID_ATTRIB_VALUE, { field }, `${field} must be a string`);
    out ??= { ...operation };
    out[field] = sha256Hex(v);
  }
  return out ?? operation;
}

/** The request fields a node keeps (formats.md 3.1); everything else is dropped on receipt. */
export const SIGNED_REQUEST_FIELDS = ['identifier', 'reqId', 'operation', 'protocolVersion', 'taaAcceptance', 'endorser'] as const;

/**
 * The bytes Ed25519 signs for a request (formats.md 3.2): UTF-8 of SER over the kept request fields
 * (`identifier`, `reqId`, `operation`, `protocolVersion`, `taaAcceptance`, `endorser`, as present),
 * with the ATTRIB rule applied. `signature`, `signatures`, `fees` and any other field are never part
 * of it, so a client and a node always compute the same input.
 */
export function signatureInput(request: object): Uint8Array {
  return utf8.encode(signatureInputString(request));
}

/** SER string of {@link signatureInput}. */
export function signatureInputString(request: object): string {
  if (!isPlainObject(request)) throw unsupported(request);
  const kept: Record<string, unknown> = {};
  for (const f of SIGNED_REQUEST_FIELDS) {
    const v = request[f];
    if (v !== undefined) kept[f] = v;
  }
  if (isPlainObject(kept.operation)) kept.operation = applyAttribRule(kept.operation);
  return serObject(kept, undefined, 0);
}
