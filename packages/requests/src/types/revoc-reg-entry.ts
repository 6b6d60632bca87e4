/**
 * REVOC_REG_ENTRY ("114", domain; requests.md §3.6, transactions.md §2.6.2 and §7): a delta of a
 * revocation registry (issued / revoked indices and the new accumulator).
 *
 * - static: `revocRegDefId` non-empty, `revocDefType` `CL_ACCUM`, `value.accum` non-empty,
 *   optional `value.prevAccum` non-empty, optional `value.issued` / `value.revoked` integer arrays;
 * - dynamic: the definition must exist at `revocRegDefId`; EDIT (an entry exists; 1 signature of
 *   any role, owner) or ADD (1 TRUSTEE/STEWARD/ENDORSER, owner), owner = the DID before the first
 *   `:` of `revocRegDefId`; then: no index in both lists; `prevAccum` needs a previous entry; the
 *   first entry is accepted as is; later ones need `prevAccum` = the stored accumulator, a
 *   non-empty delta, a changed accumulator, and indices consistent with the issuance type;
 * - state: `5:<id>` -> W(accumulated entry + seqNo/txnTime), `6:<id>` -> W(accumulator record);
 *   txnId = `5:<id>`.
 */
import { LedgerId, TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { HandlerContext, ParsedRequest, StateAccess, Txn, WriteHandler } from '../handler.js';
import { arrayOf, integer, nonEmptyStr, objectSchema, optional, required } from '../validation/index.js';
import {
  IssuanceType,
  type JsonObject,
  type RevocIndex,
  accumulateRevocEntry,
  decodeWrapped,
  encodeRevocEntry,
  encodeWrapped,
  indexDifference,
  indexIntersection,
  indexList,
  isJsonObject,
  revocAccumRecord,
  revocRegAccumKey,
  revocRegEntryKey,
} from '../state-keys.js';
import { revocDefType } from './revoc-reg-def.js';

/** The codes of an index list that disagrees with the accumulated one (data: the indices and the current list, rendered). */
type IndexListCode =
  | typeof RequestErrorCode.REVOC_ISSUED_NOT_REVOKED
  | typeof RequestErrorCode.REVOC_ALREADY_REVOKED
  | typeof RequestErrorCode.REVOC_REVOKED_NOT_ISSUED
  | typeof RequestErrorCode.REVOC_ALREADY_ISSUED;

const VALIDATOR = 'ClientRevocRegEntrySubmitField';
const DOMAIN = LedgerId.DOMAIN;

const valueSchema = objectSchema(VALIDATOR, {
  accum: required(nonEmptyStr),
  prevAccum: optional(nonEmptyStr, { nullAsAbsent: true }),
  issued: optional(arrayOf(integer()), { nullAsAbsent: true }),
  revoked: optional(arrayOf(integer()), { nullAsAbsent: true }),
});

const schema = objectSchema(VALIDATOR, {
  revocRegDefId: required(nonEmptyStr),
  revocDefType: required(revocDefType),
  value: required(valueSchema.check),
});

/** Python-style list text of indices for reasons: `[1, 2, 3]`. */
export function renderIndices(list: readonly RevocIndex[]): string {
  return `[${list.map((i) => i.toString()).join(', ')}]`;
}

/**
 * The issuance type of the definition stored at `revocRegDefId`; undefined when nothing is stored
 * there or the value there is not a revocation registry definition.
 */
export function issuanceTypeOf(state: StateAccess, revocRegDefId: string): IssuanceType | undefined {
  const bytes = state.get(revocRegDefId);
  if (bytes === undefined) return undefined;
  let def: unknown;
  try {
    def = decodeWrapped(bytes, revocRegDefId).val;
  } catch {
    return undefined;
  }
  const t = isJsonObject(def) && isJsonObject(def.value) ? def.value.issuanceType : undefined;
  return t === IssuanceType.ISSUANCE_BY_DEFAULT || t === IssuanceType.ISSUANCE_ON_DEMAND ? t : undefined;
}

/** The current accumulated entry at `5:<id>` (its `val`), or undefined. */
function currentEntry(state: StateAccess, revocRegDefId: string): JsonObject | undefined {
  const key = revocRegEntryKey(revocRegDefId);
  const bytes = state.get(key);
  if (bytes === undefined) return undefined;
  const val = decodeWrapped(bytes, key).val;
  if (!isJsonObject(val)) throw new RequestError(RequestErrorCode.STATE_CORRUPT, { key, problem: 'entry is not an object' });
  return val;
}

export const revocRegEntryHandler: WriteHandler = {
  kind: 'write',
  type: TxnType.REVOC_REG_ENTRY,
  name: 'REVOC_REG_ENTRY',
  validator: VALIDATOR,
  ledgerId: DOMAIN,

  validateStatic(request) {
    schema.validate(request.operation);
  },

  validateDynamic(request: ParsedRequest, ctx: HandlerContext) {
    const op = request.operation;
    const id = op.revocRegDefId as string;
    const state = ctx.state(DOMAIN);
    const issuanceType = issuanceTypeOf(state, id);
    if (issuanceType === undefined) throw new RequestError(RequestErrorCode.REVOC_DEF_UNKNOWN, { revocRegDefId: id });

    const current = currentEntry(state, id);
    const isOwner = id.split(':')[0] === request.author;
    if (current !== undefined) ctx.auth.authorize(request, { kind: 'EDIT', field: '*', oldValue: '*', newValue: '*', isOwner });
    else ctx.auth.authorize(request, { kind: 'ADD', field: '*', newValue: '*', isOwner });

    const value = op.value as JsonObject;
    const issued = indexList(value, 'issued');
    const revoked = indexList(value, 'revoked');
    const prevAccum = (value.prevAccum ?? undefined) as string | undefined; // a non-empty string when given (schema)
    if (indexIntersection(issued, revoked).length > 0) throw new RequestError(RequestErrorCode.REVOC_INDEX_IN_BOTH, { revocRegDefId: id });
    if (prevAccum !== undefined && current === undefined) throw new RequestError(RequestErrorCode.REVOC_PREV_ACCUM_WITHOUT_ENTRY, { prevAccum });
    if (current === undefined) return;

    const stored = isJsonObject(current.value) ? current.value : {};
    if (stored.accum !== prevAccum) {
      // The second value is the *stored* prevAccum (Indy's wording, requests.md §3.6 step 6).
      throw new RequestError(RequestErrorCode.REVOC_ACCUM_MISMATCH, { current: stored.accum, last: stored.prevAccum });
    }
    if (issued.length === 0 && revoked.length === 0) throw new RequestError(RequestErrorCode.REVOC_LISTS_EMPTY, { revocRegDefId: id });
    if (prevAccum === value.accum) throw new RequestError(RequestErrorCode.REVOC_ACCUM_UNCHANGED, { revocRegDefId: id });

    const fail = (code: IndexListCode, indices: RevocIndex[], current: RevocIndex[]): never => {
      throw new RequestError(code, { indices: renderIndices(indices), current: renderIndices(indexDifference(current, [])) });
    };
    if (issuanceType === IssuanceType.ISSUANCE_BY_DEFAULT) {
      const r = indexList(stored, 'revoked');
      const missing = indexDifference(issued, r);
      if (missing.length > 0) fail(RequestErrorCode.REVOC_ISSUED_NOT_REVOKED, missing, r);
      const dup = indexIntersection(revoked, r);
      if (dup.length > 0) fail(RequestErrorCode.REVOC_ALREADY_REVOKED, dup, r);
    } else {
      const i = indexList(stored, 'issued');
      const missing = indexDifference(revoked, i);
      if (missing.length > 0) fail(RequestErrorCode.REVOC_REVOKED_NOT_ISSUED, missing, i);
      const dup = indexIntersection(issued, i);
      if (dup.length > 0) fail(RequestErrorCode.REVOC_ALREADY_ISSUED, dup, i);
    }
  },

  prepareTxn(txn: Txn) {
    return revocRegEntryKey(txn.txn.data.revocRegDefId as string);
  },

  updateState(txn: Txn, ctx: HandlerContext) {
    const data = txn.txn.data;
    const id = data.revocRegDefId as string;
    const state = ctx.state(DOMAIN);
    const current = currentEntry(state, id);
    // A first entry is stored as submitted; later ones fold in per the definition's issuance type,
    // which exists for every entry that passed validation.
    let issuanceType: IssuanceType = IssuanceType.ISSUANCE_BY_DEFAULT;
    if (current !== undefined) {
      const t = issuanceTypeOf(state, id);
      if (t === undefined) throw new RequestError(RequestErrorCode.STATE_CORRUPT, { key: id, problem: 'revocation entry without its definition' });
      issuanceType = t;
    }
    const entry = accumulateRevocEntry(current, data, issuanceType);
    const { seqNo, txnTime } = ctx.txn;
    state.set(revocRegEntryKey(id), encodeRevocEntry(entry, seqNo, txnTime));
    const accum = isJsonObject(entry.value) ? entry.value.accum : undefined;
    state.set(revocRegAccumKey(id), encodeWrapped(revocAccumRecord(data, accum, seqNo, txnTime), seqNo, txnTime));
  },
};
