/**
 * NYM ("1", domain; requests.md §3.1, transactions.md §2.3 and §3): creates a DID or updates its
 * record (verkey rotation or guardianship, role changes, DID document content).
 *
 * - static: `dest` DID, `verkey` (full, `~`abbreviated or null), `role` (role code or null),
 *   `alias` str≤256, `diddocContent` JSON object text of at most 10 KiB (UTF-8 bytes; no `id` at the
 *   root, no array item whose `id` fragment is `verkey`), `version` ∈ {0, 1, 2};
 * - dynamic, create: an author not on the ledger may only create itself with a verkey; versions
 *   1/2 bind the DID to the verkey; authorize `1--ADD--role--*--<role>`;
 * - dynamic, update: `version` may not be sent; authorize `1--EDIT--role--<old>--<new>` when
 *   `role` is present, then `1--EDIT--verkey--*--*` when `verkey` is present; with neither the
 *   author must be the owner;
 * - state: `sha256(dest)` -> CJ(merged NYM record), formats.md §8.2; txnId = hex of the key.
 */
import { checkNymDidBinding, checkNymVersionValue, LedgerId, parseJson, TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { HandlerContext, NymInfo, ParsedRequest, Txn, WriteHandler } from '../handler.js';
import {
  type Check,
  did,
  fieldData,
  integer,
  isPlainObject,
  jsonObjectString,
  nullable,
  objectSchema,
  optional,
  required,
  role,
  str,
  verkey,
} from '../validation/index.js';
import { Limits } from '../validation/limits.js';
import { decodeNymRecord, encodeNymRecord, mergeNymRecord, nymKey, nymTxnId } from '../state-keys.js';

const VALIDATOR = 'ClientNYMOperation';
const DOMAIN = LedgerId.DOMAIN;
const utf8 = new TextEncoder();

/** `dest`: a blank value reads `dest needs to be present`; otherwise a DID. */
const nymDest: Check = (v, at) => {
  if (v === null || v === '') throw new RequestError(RequestErrorCode.NYM_DEST_MISSING, { validator: at.validator, field: at.field });
  did(v, at);
};

/** `diddocContent`: JSON object text, at most 10 KiB of UTF-8 (transactions.md §8). */
const diddocContent: Check = (v, at) => {
  jsonObjectString({ max: Limits.DIDDOC_CONTENT })(v, at);
  if (utf8.encode(v as string).length > Limits.DIDDOC_CONTENT)
    throw new RequestError(RequestErrorCode.FIELD_TOO_LONG, { ...fieldData(at, v), max: Limits.DIDDOC_CONTENT });
};

/** `version`: an integer in {0, 1, 2}. */
const nymVersion: Check = (v, at) => {
  integer()(v, at);
  if (checkNymVersionValue(v) !== null) throw new RequestError(RequestErrorCode.NYM_VERSION_INVALID, { version: v, field: at.field });
};

const schema = objectSchema(VALIDATOR, {
  dest: required(nymDest),
  verkey: optional(nullable(verkey)),
  role: optional(role),
  alias: optional(str({ max: Limits.NAME }), { nullAsAbsent: true }),
  diddocContent: optional(diddocContent, { nullAsAbsent: true }),
  version: optional(nymVersion, { nullAsAbsent: true }),
});

/** The diddocContent rules of requests.md §3.1 (on a content already known to parse to an object). */
function checkDiddocContent(text: string): void {
  const doc = parseJson(text) as Record<string, unknown>;
  if (truthy(doc.id)) throw new RequestError(RequestErrorCode.NYM_DIDDOC_ID, { field: 'diddocContent' });
  for (const value of Object.values(doc)) {
    if (!Array.isArray(value)) continue;
    for (const item of value) {
      if (!isPlainObject(item) || typeof item.id !== 'string') continue;
      const hash = item.id.indexOf('#');
      if (hash >= 0 && item.id.slice(hash + 1) === 'verkey') {
        throw new RequestError(RequestErrorCode.NYM_DIDDOC_VERKEY_FRAGMENT, { field: 'diddocContent' });
      }
    }
  }
}

/** Python truthiness of a JSON value. */
function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === 0n || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isPlainObject(v)) return Object.keys(v).length > 0;
  return true;
}

const has = (op: Readonly<Record<string, unknown>>, k: string): boolean => Object.hasOwn(op, k) && op[k] !== undefined;

export const nymHandler: WriteHandler = {
  kind: 'write',
  type: TxnType.NYM,
  name: 'NYM',
  validator: VALIDATOR,
  ledgerId: DOMAIN,

  validateStatic(request) {
    const op = request.operation;
    schema.validate(op);
    if (typeof op.diddocContent === 'string' && op.diddocContent.length > 0) checkDiddocContent(op.diddocContent);
  },

  validateDynamic(request, ctx) {
    const op = request.operation;
    const dest = op.dest as string;
    const existing = ctx.idr.getNym(dest);
    if (existing === undefined) validateCreate(request, ctx, dest);
    else validateUpdate(request, ctx, dest, existing);
  },

  prepareTxn(txn) {
    return nymTxnId(txn.txn.data.dest as string);
  },

  updateState(txn: Txn, ctx: HandlerContext) {
    const data = txn.txn.data;
    const dest = data.dest as string;
    const state = ctx.state(DOMAIN);
    const key = nymKey(dest);
    const bytes = state.get(key);
    const current = bytes === undefined ? undefined : decodeNymRecord(bytes, dest);
    const from = typeof txn.txn.metadata.from === 'string' ? txn.txn.metadata.from : null;
    const rec = mergeNymRecord(current, data, from, ctx.txn.seqNo, ctx.txn.txnTime);
    state.set(key, encodeNymRecord(rec));
  },
};

function validateCreate(request: ParsedRequest, ctx: HandlerContext, dest: string): void {
  const op = request.operation;
  if (ctx.idr.getNym(request.author) === undefined) {
    if (request.identifier !== dest) throw new RequestError(RequestErrorCode.NYM_OFF_LEDGER_NOT_SELF, { dest });
    if (op.verkey === undefined || op.verkey === null) throw new RequestError(RequestErrorCode.NYM_OFF_LEDGER_NO_VERKEY, { dest });
  }
  const binding = checkNymDidBinding(dest, op.verkey as string | null | undefined, op.version);
  if (binding !== null) {
    if (Number(op.version) === 1) throw new RequestError(RequestErrorCode.NYM_VERSION_1_MISMATCH, { dest, version: 1 });
    throw new RequestError(RequestErrorCode.NYM_VERSION_2_MISMATCH, { dest, version: 2 });
  }
  ctx.auth.authorize(request, { kind: 'ADD', field: 'role', newValue: op.role ?? null, isOwner: true });
}

function validateUpdate(request: ParsedRequest, ctx: HandlerContext, dest: string, stored: NymInfo): void {
  const op = request.operation;
  if (op.version !== undefined && op.version !== null) throw new RequestError(RequestErrorCode.NYM_VERSION_ON_UPDATE, { dest });
  const isOwner = ctx.idr.ownerOf(dest) === request.author;
  const roleSent = has(op, 'role');
  const verkeySent = has(op, 'verkey');
  if (roleSent) ctx.auth.authorize(request, { kind: 'EDIT', field: 'role', oldValue: stored.role, newValue: op.role, isOwner });
  if (verkeySent) ctx.auth.authorize(request, { kind: 'EDIT', field: 'verkey', oldValue: stored.verkey, newValue: op.verkey, isOwner });
  if (!roleSent && !verkeySent && !isOwner) throw new RequestError(RequestErrorCode.AUTH_EMPTY, { dest });
}
