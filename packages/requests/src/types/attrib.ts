/**
 * ATTRIB ("100", domain; requests.md §3.2, transactions.md §2.4): sets an attribute of a NYM.
 *
 * - static: `dest` DID and exactly one of `raw` (JSON object text with one attribute; an
 *   `endpoint` attribute's `ha` must be `ip:port`), `enc` (str≤5120), `hash` (64 hex digits);
 * - dynamic: `dest` must be on the ledger; ADD or EDIT (key present) `100--*--*--*--*`, 1 signature
 *   of any role by the owner of `dest`;
 * - ledger: `raw`/`enc` are replaced by their SHA-256 and the original goes to the attribute
 *   store (prepareTxn); replaying a stored txn reads the original back from the store;
 * - state: `<dest>:1:<sha256(name)>` (raw, enc) or `<dest>:1:<hash>` -> W(H, n, t).
 */
import { canonicalJson, isSha256Hex, LedgerId, parseJson, receivedKeys, TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { HandlerContext, ParsedRequest, Txn, WriteHandler } from '../handler.js';
import { type Check, type FieldAt, did, fieldData, isPlainObject, isValidIp, objectSchema, optional, required, sha256Hex, str } from '../validation/index.js';
import { Limits } from '../validation/limits.js';
import { type AttribKind, attribKey, attribStoredHash, decodeWrapped, encodeWrapped } from '../state-keys.js';

const VALIDATOR = 'ClientAttribOperation';
const DOMAIN = LedgerId.DOMAIN;
export const ATTRIB_KINDS: readonly AttribKind[] = ['raw', 'enc', 'hash'];

/** The attribute selectors present in an operation (null counts as absent). */
export function attribSelectors(op: Readonly<Record<string, unknown>>): AttribKind[] {
  return ATTRIB_KINDS.filter((k) => op[k] !== undefined && op[k] !== null);
}

/** `raw`: JSON object text with exactly one attribute; an `endpoint` must carry a valid `ha`. */
const rawAttribute: Check = (v, at) => {
  str({ max: Limits.ATTRIB_CONTENT })(v, at);
  let parsed: unknown;
  try {
    parsed = parseJson(v as string);
  } catch {
    throw new RequestError(RequestErrorCode.FIELD_INVALID, { ...fieldData(at, v), problem: 'should be a valid JSON string' });
  }
  if (!isPlainObject(parsed)) throw new RequestError(RequestErrorCode.FIELD_INVALID, { ...fieldData(at, v), problem: 'should be a dict' });
  const keys = Object.keys(parsed);
  if (keys.length !== 1) throw new RequestError(RequestErrorCode.FIELD_INVALID, { ...fieldData(at, v), problem: 'should contain one attribute' });
  if (keys[0] === 'endpoint') checkEndpoint(parsed.endpoint, at);
};

function checkEndpoint(endpoint: unknown, at: FieldAt): void {
  if (endpoint === null) return;
  if (!isPlainObject(endpoint)) throw new RequestError(RequestErrorCode.ATTRIB_ENDPOINT_FORMAT, { field: at.field });
  const ha = endpoint.ha;
  if (ha === null || ha === undefined) return;
  if (typeof ha !== 'string') throw new RequestError(RequestErrorCode.ATTRIB_ENDPOINT_FORMAT, { field: at.field });
  const parts = ha.split(':');
  if (parts.length !== 2) throw new RequestError(RequestErrorCode.ATTRIB_ENDPOINT_FORMAT, { field: at.field });
  if (!isValidIp(parts[0])) throw new RequestError(RequestErrorCode.ATTRIB_ENDPOINT_ADDRESS, { field: at.field });
  const port = parts[1];
  if (!/^[0-9]{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw new RequestError(RequestErrorCode.ATTRIB_ENDPOINT_PORT, { field: at.field });
  }
}

const schema = objectSchema(VALIDATOR, {
  dest: required(did),
  raw: optional(rawAttribute, { nullAsAbsent: true }),
  enc: optional(str({ max: Limits.ATTRIB_CONTENT }), { nullAsAbsent: true }),
  hash: optional(sha256Hex, { nullAsAbsent: true }),
});

/** What an ATTRIB sets: the selector, the attribute name used in the key, the stored hash H. */
export interface AttribTarget {
  kind: AttribKind;
  /** raw: the attribute name; enc: the enc text; hash: the hash as given. */
  name: string;
  /** The state value's `val`: sha256 of CJ(raw object) / of enc, or "" for hash. */
  storedHash: string;
  /** The attribute-store content (CJ of the raw object, or the enc text); none for hash. */
  original?: string;
  /** True when `original` comes from the txn itself rather than from the attribute store. */
  fromTxn?: boolean;
}

/** The target of a request whose static validation passed. */
export function attribTargetOfRequest(op: Readonly<Record<string, unknown>>): AttribTarget {
  const kind = attribSelectors(op)[0];
  const value = op[kind] as string;
  if (kind === 'raw') {
    const obj = parseJson(value) as Record<string, unknown>;
    return { kind, name: receivedKeys(obj)[0], storedHash: attribStoredHash('raw', obj), original: canonicalJson(obj) };
  }
  if (kind === 'enc') return { kind, name: value, storedHash: attribStoredHash('enc', value), original: value };
  return { kind, name: value, storedHash: '' };
}

/**
 * The target of a stored txn (genesis, rebuild, catch-up): `raw`/`enc` hold either the original
 * (genesis, catch-up) or its hash (this node's ledger), in which case the attribute store gives
 * the original back.
 */
function attribTargetOfTxn(data: Record<string, unknown>, ctx: HandlerContext): AttribTarget {
  const kind = attribSelectors(data)[0];
  if (kind === undefined) throw new RequestError(RequestErrorCode.STATE_CORRUPT, { key: String(data.dest), problem: 'ATTRIB txn without raw, enc or hash' });
  const value = data[kind];
  if (typeof value !== 'string') throw new RequestError(RequestErrorCode.STATE_CORRUPT, { key: String(data.dest), problem: `ATTRIB ${kind} is not a string` });
  if (kind === 'hash') return { kind, name: value, storedHash: '' };
  if (kind === 'raw') {
    const direct = tryParseObject(value);
    if (direct !== undefined) return { ...attribTargetOfRequest({ raw: value }), fromTxn: true };
    const original = ctx.attributes.get(value);
    const obj = original === undefined ? undefined : tryParseObject(original);
    if (obj === undefined)
      throw new RequestError(RequestErrorCode.STATE_CORRUPT, { key: value, problem: 'attribute store has no raw attribute for this hash' });
    return { kind, name: receivedKeys(obj)[0], storedHash: value, original };
  }
  if (isSha256Hex(value)) {
    const original = ctx.attributes.get(value);
    if (original !== undefined) return { kind, name: original, storedHash: value, original };
  }
  return { ...attribTargetOfRequest({ enc: value }), fromTxn: true };
}

function tryParseObject(text: string): Record<string, unknown> | undefined {
  try {
    const v = parseJson(text);
    return isPlainObject(v) && Object.keys(v).length === 1 ? v : undefined;
  } catch {
    return undefined;
  }
}

export const attribHandler: WriteHandler = {
  kind: 'write',
  type: TxnType.ATTRIB,
  name: 'ATTRIB',
  validator: VALIDATOR,
  ledgerId: DOMAIN,

  validateStatic(request) {
    const op = request.operation;
    const present = attribSelectors(op);
    if (present.length > 1) throw new RequestError(RequestErrorCode.ATTRIB_SEVERAL, { fields: present });
    schema.validate(op);
    if (present.length === 0) throw new RequestError(RequestErrorCode.ATTRIB_NONE, { validator: VALIDATOR });
  },

  validateDynamic(request: ParsedRequest, ctx: HandlerContext) {
    const op = request.operation;
    const dest = op.dest as string;
    if (ctx.idr.getNym(dest) === undefined) throw new RequestError(RequestErrorCode.ATTRIB_DEST_UNKNOWN, { dest });
    const target = attribTargetOfRequest(op);
    const key = attribKey(dest, target.kind, target.name);
    const isOwner = ctx.idr.ownerOf(dest) === request.author;
    const stored = ctx.state(DOMAIN).get(key);
    if (stored === undefined) {
      ctx.auth.authorize(request, { kind: 'ADD', field: target.kind, newValue: op[target.kind], isOwner });
    } else {
      ctx.auth.authorize(request, { kind: 'EDIT', field: target.kind, oldValue: decodeWrapped(stored, key).val, newValue: op[target.kind], isOwner });
    }
  },

  prepareTxn(txn: Txn, request: ParsedRequest, ctx: HandlerContext) {
    const target = attribTargetOfRequest(request.operation);
    if (target.original !== undefined) {
      // the ledger keeps the hash; the original goes to the attribute store (formats.md §4.5)
      txn.txn.data[target.kind] = target.storedHash;
      ctx.attributes.put(target.storedHash, target.original);
    }
    return attribKey(request.operation.dest as string, target.kind, target.name);
  },

  updateState(txn: Txn, ctx: HandlerContext, request?: ParsedRequest) {
    const data = txn.txn.data;
    let target: AttribTarget;
    if (request) target = attribTargetOfRequest(request.operation);
    else {
      target = attribTargetOfTxn(data, ctx);
      // a genesis (or caught-up) txn carrying the original: the attribute store must hold it for GET_ATTR
      if (target.original !== undefined && target.fromTxn) ctx.attributes.put(target.storedHash, target.original);
    }
    const key = attribKey(data.dest as string, target.kind, target.name);
    ctx.state(DOMAIN).set(key, encodeWrapped(target.storedHash, ctx.txn.seqNo, ctx.txn.txnTime));
  },
};
