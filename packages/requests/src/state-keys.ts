/**
 * Domain ledger state keys and values (formats.md §8.2).
 *
 * Every key and every value the domain write types put into the state trie is built here (the keys in
 * @quire/common, shared with the light client), so that the write handlers, the read handlers, the light client
 * and the tests share one definition of the byte layouts:
 *
 * | Txn                | Key                                                    | Value                       |
 * |--------------------|--------------------------------------------------------|-----------------------------|
 * | NYM                | raw SHA-256(UTF-8 dest)                                | CJ(NYM record), not wrapped |
 * | ATTRIB             | `<dest>:1:<hex sha256(name)>` / `<dest>:1:<hash>`      | W(H, n, t)                  |
 * | SCHEMA             | `<from>:2:<name>:<version>`                            | W({attr_names}, n, t)       |
 * | CLAIM_DEF          | `<from>:3:<signature_type>:<ref>:<tag>`                | W(data, n, t)               |
 * | REVOC_REG_DEF      | `<from>:4:<credDefId>:<revocDefType>:<tag>`            | W(txn.data, n, t)           |
 * | REVOC_REG_ENTRY    | `5:<revocRegDefId>`                                    | W(E + {seqNo, txnTime}, ...) |
 * | accumulator        | `6:<revocRegDefId>`                                    | W({...data, value:{accum}}) |
 * | rich schema object | UTF-8 `id`; secondary `<rsType>:<rsName>:<rsVersion>`  | W(object, n, t); raw `id`   |
 *
 * W(v, n, t) = CJ({"lsn": n, "lut": t, "val": v}); CJ is canonical JSON (formats.md §1.6).
 */
import { type AttribKind, canonicalJson, canonicalJsonBytes, deepCopy, isPlainObject, nymKey, parseJson, sha256Hex, wrappedStateValue } from '@quire/common';
import { RequestError, RequestErrorCode } from './errors.js';
import type { StateKey } from './handler.js';

/** JSON object as stored in state (parsed losslessly: integers beyond 2^53 are bigint). */
export type JsonObject = Record<string, unknown>;

/** The keys themselves: one definition in @quire/common, shared with the light client. */
export {
  DomainMarker,
  CLAIM_DEF_DEFAULT_SIGNATURE_TYPE,
  CLAIM_DEF_DEFAULT_TAG,
  nymKey,
  nymTxnId,
  attribKey,
  schemaKey,
  claimDefKey,
  revocRegDefKey,
  revocRegEntryKey,
  revocRegAccumKey,
  richSchemaIdKey,
  richSchemaMetadataKey,
} from '@quire/common';
export type { AttribKind } from '@quire/common';

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder('utf-8', { fatal: true });

/** Bytes of a state key (the trie takes either form; proofs are verified against bytes). */
export function stateKeyBytes(key: StateKey): Uint8Array {
  return typeof key === 'string' ? textEncoder.encode(key) : key;
}

// ---------------------------------------------------------------------------------------------
// Wrapped values W(v, n, t)
// ---------------------------------------------------------------------------------------------

/** A decoded W(v, n, t) value: `lsn` = seqNo of the last write, `lut` = its txnTime (null in genesis). */
export interface WrappedValue<T = unknown> {
  lsn: number;
  lut: number | null;
  val: T;
}

/** W(v, n, t) = CJ({"lsn": n, "lut": t, "val": v}) as UTF-8 bytes: common's wrappedStateValue, the light client's too. */
export function encodeWrapped(val: unknown, seqNo: number, txnTime: number | null): Uint8Array {
  return wrappedStateValue(val, seqNo, txnTime);
}

/** Decodes a W value; a malformed one is reported as STATE_CORRUPT (never a silently wrong result). */
export function decodeWrapped<T = unknown>(bytes: Uint8Array, key: StateKey): WrappedValue<T> {
  const parsed = decodeJsonObject(bytes, key);
  const { lsn, lut } = parsed;
  if (!('val' in parsed) || typeof lsn !== 'number' || !(lut === null || typeof lut === 'number')) {
    throw corrupt(key, 'missing lsn/lut/val');
  }
  return { lsn, lut, val: parsed.val as T };
}

/** Decodes a CJ state value that must be a JSON object. */
export function decodeJsonObject(bytes: Uint8Array, key: StateKey): JsonObject {
  let parsed: unknown;
  try {
    parsed = parseJson(textDecoder.decode(bytes));
  } catch {
    throw corrupt(key, 'not JSON');
  }
  if (!isJsonObject(parsed)) throw corrupt(key, 'not a JSON object');
  return parsed;
}

/** Decodes a raw UTF-8 text state value (the rich schema secondary key's `id`). */
export function decodeText(bytes: Uint8Array, key: StateKey): string {
  try {
    return textDecoder.decode(bytes);
  } catch {
    throw corrupt(key, 'not UTF-8');
  }
}

export function encodeText(text: string): Uint8Array {
  return textEncoder.encode(text);
}

export function isJsonObject(v: unknown): v is JsonObject {
  return isPlainObject(v);
}

function corrupt(key: StateKey, problem: string): RequestError {
  const rendered = typeof key === 'string' ? key : Buffer.from(key).toString('hex');
  return new RequestError(RequestErrorCode.STATE_CORRUPT, { key: rendered, problem });
}

// ---------------------------------------------------------------------------------------------
// NYM record
// ---------------------------------------------------------------------------------------------

/** The NYM state record (formats.md §8.2): `identifier` is the creator, `null` in some genesis txns. */
export interface NymRecord {
  identifier: string | null;
  role: string | null;
  verkey: string | null;
  seqNo: number;
  txnTime: number | null;
  diddocContent?: string | null;
  version?: number;
  [extra: string]: unknown;
}

const NYM_MERGED_FIELDS = ['role', 'verkey', 'diddocContent', 'version'] as const;

/**
 * The NYM merge rule: start from the current record (or `{identifier: from, role: null, verkey:
 * null}`), overwrite every one of role, verkey, diddocContent, version that is a key of txn.data,
 * and always set seqNo/txnTime to this txn's.
 */
export function mergeNymRecord(current: NymRecord | undefined, txnData: JsonObject, from: string | null, seqNo: number, txnTime: number | null): NymRecord {
  const rec: NymRecord = current ? { ...current } : { identifier: from, role: null, verkey: null, seqNo, txnTime };
  const merged = rec as Record<string, unknown>;
  for (const f of NYM_MERGED_FIELDS) {
    if (Object.hasOwn(txnData, f)) merged[f] = txnData[f];
  }
  rec.seqNo = seqNo;
  rec.txnTime = txnTime;
  return rec;
}

/** CJ(NYM record) = canonicalJsonBytes(rec), byte for byte; written directly for the records every NYM write makes. */
export function encodeNymRecord(rec: NymRecord): Uint8Array {
  const text = plainNymRecordJson(rec);
  return text === undefined ? canonicalJsonBytes(rec) : Buffer.from(text, 'latin1');
}

/** The keys of a NYM record, in CJ's order (by code point). */
const NYM_RECORD_KEYS = ['diddocContent', 'identifier', 'role', 'seqNo', 'txnTime', 'verkey', 'version'] as const;
/** Printable ASCII but `"` and `\`: a string JSON writes as itself between quotes, and whose UTF-8 is its latin1. */
const PLAIN_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * CJ(rec) for a record of the NYM record's keys only, each null, a safe integer or a string of plain ASCII
 * ({@link PLAIN_TEXT}): the keys in order and the values as CJ writes them, without sorting keys or escaping. Undefined
 * for any other record (another key, a float, a string to escape), which canonicalJsonBytes writes.
 */
function plainNymRecordJson(rec: NymRecord): string | undefined {
  if (!isPlainObject(rec)) return undefined;
  const fields = rec as Record<string, unknown>;
  let out = '{';
  let written = 0;
  for (const k of NYM_RECORD_KEYS) {
    const v = fields[k];
    if (v === undefined) continue;
    let literal: string;
    if (v === null) literal = 'null';
    else if (typeof v === 'string' && PLAIN_TEXT.test(v)) literal = `"${v}"`;
    else if (typeof v === 'number' && Number.isSafeInteger(v)) literal = String(v);
    else return undefined;
    out += `${written === 0 ? '"' : ',"'}${k}":${literal}`;
    written++;
  }
  // no other key with a value (CJ leaves out the undefined ones)
  let defined = 0;
  for (const k of Object.keys(fields)) if (fields[k] !== undefined) defined++;
  return defined === written ? `${out}}` : undefined;
}

export function decodeNymRecord(bytes: Uint8Array, dest: string): NymRecord {
  const key = nymKey(dest);
  const obj = decodeJsonObject(bytes, key);
  const { identifier, role, verkey, seqNo, txnTime } = obj;
  if (
    !(identifier === null || identifier === undefined || typeof identifier === 'string') ||
    !(role === null || role === undefined || typeof role === 'string') ||
    !(verkey === null || verkey === undefined || typeof verkey === 'string') ||
    !(seqNo === null || seqNo === undefined || typeof seqNo === 'number') ||
    !(txnTime === null || txnTime === undefined || typeof txnTime === 'number')
  ) {
    throw corrupt(key, 'malformed NYM record');
  }
  return {
    ...obj,
    identifier: identifier ?? null,
    role: role ?? null,
    verkey: verkey ?? null,
    seqNo: seqNo ?? 0,
    txnTime: txnTime ?? null,
  } as NymRecord;
}

/** GET_NYM `data`: CJ of the NYM record plus `dest`, as a string. */
export function nymReadData(rec: NymRecord, dest: string): string {
  return canonicalJson({ ...rec, dest });
}

// ---------------------------------------------------------------------------------------------
// ATTRIB
// ---------------------------------------------------------------------------------------------

/** The hash stored for an ATTRIB: hex SHA-256 of CJ(raw object), of the enc string, or "" for hash. */
export function attribStoredHash(kind: AttribKind, content: unknown): string {
  if (kind === 'hash') return '';
  if (kind === 'enc') return sha256Hex(textEncoder.encode(content as string));
  return sha256Hex(canonicalJsonBytes(content));
}

// ---------------------------------------------------------------------------------------------
// Revocation entries
// ---------------------------------------------------------------------------------------------

/** A revocation index: an integer as parsed (number, or bigint beyond 2^53). */
export type RevocIndex = number | bigint;

export const IssuanceType = {
  ISSUANCE_BY_DEFAULT: 'ISSUANCE_BY_DEFAULT',
  ISSUANCE_ON_DEMAND: 'ISSUANCE_ON_DEMAND',
} as const;
export type IssuanceType = (typeof IssuanceType)[keyof typeof IssuanceType];

/** Numeric ascending order for indices that may mix number and bigint. */
export function compareIndex(a: RevocIndex, b: RevocIndex): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Index set operations keyed by the decimal rendering, so 5 and 5n are the same index. */
export function indexSet(items: readonly RevocIndex[]): Map<string, RevocIndex> {
  const m = new Map<string, RevocIndex>();
  for (const i of items) m.set(BigInt(i).toString(10), i);
  return m;
}

/** a − b, ascending. */
export function indexDifference(a: readonly RevocIndex[], b: readonly RevocIndex[]): RevocIndex[] {
  const bs = indexSet(b);
  return [...indexSet(a)]
    .filter(([k]) => !bs.has(k))
    .map(([, v]) => v)
    .sort(compareIndex);
}

/** a ∩ b, ascending. */
export function indexIntersection(a: readonly RevocIndex[], b: readonly RevocIndex[]): RevocIndex[] {
  const bs = indexSet(b);
  return [...indexSet(a)]
    .filter(([k]) => bs.has(k))
    .map(([, v]) => v)
    .sort(compareIndex);
}

/** a ∪ b, ascending. */
export function indexUnion(a: readonly RevocIndex[], b: readonly RevocIndex[]): RevocIndex[] {
  return [...indexSet([...a, ...b]).values()].sort(compareIndex);
}

/** The `issued`/`revoked` list of a stored or submitted entry value (absent -> []). */
export function indexList(value: unknown, field: 'issued' | 'revoked'): RevocIndex[] {
  if (!isJsonObject(value)) return [];
  const list = value[field];
  return Array.isArray(list) ? (list as RevocIndex[]) : [];
}

/**
 * The accumulated entry E of formats.md §8.2: the first entry is txn.data as submitted; later ones
 * fold the delta into the current entry's list per issuance type and clear the other list.
 */
export function accumulateRevocEntry(current: JsonObject | undefined, txnData: JsonObject, issuanceType: IssuanceType): JsonObject {
  if (current === undefined) return deepCopy(txnData);
  const submitted = isJsonObject(txnData.value) ? txnData.value : {};
  const issued = indexList(submitted, 'issued');
  const revoked = indexList(submitted, 'revoked');
  const value: JsonObject = { ...deepCopy(submitted) };
  if (issuanceType === IssuanceType.ISSUANCE_BY_DEFAULT) {
    const r = indexList(current.value, 'revoked');
    value.revoked = indexUnion(indexDifference(r, issued), revoked);
    value.issued = [];
  } else {
    const i = indexList(current.value, 'issued');
    value.issued = indexUnion(indexDifference(i, revoked), issued);
    value.revoked = [];
  }
  return { ...deepCopy(txnData), value };
}

/** `5:<id>` value: W(E + {seqNo, txnTime}, n, t). */
export function encodeRevocEntry(entry: JsonObject, seqNo: number, txnTime: number | null): Uint8Array {
  return encodeWrapped({ ...entry, seqNo, txnTime }, seqNo, txnTime);
}

/** `6:<id>` value: W({...txn.data, value: {accum}, seqNo, txnTime}, n, t). */
export function revocAccumRecord(txnData: JsonObject, accum: unknown, seqNo: number, txnTime: number | null): JsonObject {
  return { ...deepCopy(txnData), value: { accum }, seqNo, txnTime };
}

// ---------------------------------------------------------------------------------------------
// Rich schema objects
// ---------------------------------------------------------------------------------------------

/** The stored rich schema object (formats.md §8.2), also the `data` of the GET_RICH_SCHEMA_* reads. */
export interface RichSchemaObject {
  id: string;
  rsType: string;
  rsName: string;
  rsVersion: string;
  content: string;
  from: string | null;
  endorser: string | null;
  /** Payload version (`txn.ver`) as stored, or null. */
  ver: unknown;
}

export function richSchemaObjectFromValue(val: unknown, key: StateKey): RichSchemaObject {
  if (!isJsonObject(val)) throw corrupt(key, 'rich schema object is not an object');
  const { id, rsType, rsName, rsVersion, content } = val;
  if (![id, rsType, rsName, rsVersion, content].every((v) => typeof v === 'string')) {
    throw corrupt(key, 'malformed rich schema object');
  }
  return {
    id: id as string,
    rsType: rsType as string,
    rsName: rsName as string,
    rsVersion: rsVersion as string,
    content: content as string,
    from: typeof val.from === 'string' ? val.from : null,
    endorser: typeof val.endorser === 'string' ? val.endorser : null,
    ver: val.ver ?? null,
  };
}
