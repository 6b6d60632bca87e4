/**
 * GET_REVOC_REG_DELTA ("117", domain; requests.md §9.3, formats.md §7.7): what changed in a
 * revocation registry between `from` (optional) and `to`, with single-key proofs against the
 * historic roots of both times.
 *
 * - `to` entry and accumulator present, `from` given with both present: `accum_to` = the `6:`
 *   record at `to` (the main proof), `accum_from` = the `6:` record at `from` (proved by
 *   `data.stateProofFrom`), `issued`/`revoked` = the set differences of the two accumulated
 *   entries per issuance type;
 * - otherwise with a `to` entry: `accum_to` = the whole `5:` entry at `to` (the main proof) and its
 *   full lists; with `from` given, `accum_from` (possibly null) and `stateProofFrom` are added;
 * - no `to` entry: `data` is null (or, with `from`, only `accum_from` and `stateProofFrom`), the
 *   main proof proves the entry absent.
 * `stateProofFrom` carries `root_hash` and `proof_nodes`; the node adds the multi-signature of
 * that root as it does for `state_proof`.
 */
import { TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { ReadAnswer, ReadContext, ReadHandler, StateLookup } from '../handler.js';
import { stateProofOf } from '../reads/read-context.js';
import { integer, nonEmptyStr, objectSchema, optional, required } from '../validation/index.js';
import {
  IssuanceType,
  type JsonObject,
  type WrappedValue,
  decodeWrapped,
  indexDifference,
  indexList,
  indexUnion,
  isJsonObject,
  revocRegAccumKey,
  revocRegEntryKey,
} from '../state-keys.js';
import { DOMAIN, given } from './get-common.js';

const VALIDATOR = 'ClientGetRevocRegDeltaField';
const schema = objectSchema(VALIDATOR, {
  revocRegDefId: required(nonEmptyStr),
  to: required(integer({ min: 0 })),
  from: optional(integer({ min: 0 }), { nullAsAbsent: true }),
});

interface Proved {
  lookup: StateLookup;
  record: WrappedValue<JsonObject> | undefined;
}

function proved(ctx: ReadContext, key: string, root: Uint8Array): Proved {
  const lookup = ctx.lookup(DOMAIN, key, root);
  return { lookup, record: lookup.value === undefined ? undefined : (decodeWrapped(lookup.value, key) as WrappedValue<JsonObject>) };
}

function recordAt(ctx: ReadContext, key: string, root: Uint8Array): WrappedValue<JsonObject> | undefined {
  const bytes = ctx.get(DOMAIN, key, root);
  return bytes === undefined ? undefined : (decodeWrapped(bytes, key) as WrappedValue<JsonObject>);
}

/** The issued/revoked delta between two accumulated entries (requests.md §9.3 `delta`). */
export function revocDelta(issuanceType: unknown, to: unknown, from: unknown): { issued: (number | bigint)[]; revoked: (number | bigint)[] } {
  if (issuanceType === IssuanceType.ISSUANCE_ON_DEMAND) {
    const it = indexList(to, 'issued');
    const ifr = indexList(from, 'issued');
    return { issued: indexDifference(it, ifr), revoked: indexDifference(ifr, it) };
  }
  const rt = indexList(to, 'revoked');
  const rf = indexList(from, 'revoked');
  return { issued: indexDifference(rf, rt), revoked: indexDifference(rt, rf) };
}

export const getRevocRegDeltaHandler: ReadHandler = {
  kind: 'read',
  type: TxnType.GET_REVOC_REG_DELTA,
  name: 'GET_REVOC_REG_DELTA',
  validator: VALIDATOR,
  ledgerId: DOMAIN,

  validateStatic(request) {
    const op = request.operation;
    schema.validate(op);
    const from = op.from as number | bigint;
    const to = op.to as number | bigint;
    if (given(op, 'from') && BigInt(from) > BigInt(to)) {
      throw new RequestError(RequestErrorCode.GET_REVOC_DELTA_RANGE, { from, to });
    }
  },

  async read(request, ctx): Promise<ReadAnswer> {
    const op = request.operation;
    const id = op.revocRegDefId as string;
    const entryKey = revocRegEntryKey(id);
    const accumKey = revocRegAccumKey(id);
    const withFrom = given(op, 'from');

    const toRoot = await ctx.rootAt(DOMAIN, Number(op.to));
    const entryTo = toRoot === undefined ? undefined : proved(ctx, entryKey, toRoot);
    const accumTo = toRoot === undefined ? undefined : proved(ctx, accumKey, toRoot);

    let accumFrom: Proved | undefined;
    let entryFrom: WrappedValue<JsonObject> | undefined;
    if (withFrom) {
      const fromRoot = await ctx.rootAt(DOMAIN, Number(op.from));
      if (fromRoot !== undefined) {
        accumFrom = proved(ctx, accumKey, fromRoot);
        entryFrom = recordAt(ctx, entryKey, fromRoot);
      }
    }
    const stateProofFrom = accumFrom ? stateProofOf(accumFrom.lookup) : null;
    const accumFromVal = accumFrom?.record?.val ?? null;

    // the root of `data.stateProofFrom`, whose multi-signature the node attaches there
    const from = withFrom && accumFrom !== undefined ? { proofFrom: { ledgerId: DOMAIN, lookup: accumFrom.lookup } } : {};

    if (toRoot === undefined || entryTo?.record === undefined || accumTo?.record === undefined) {
      const data = withFrom ? { stateProofFrom, value: { accum_to: null, accum_from: accumFromVal } } : null;
      return entryTo
        ? { data, seqNo: null, txnTime: null, proof: { ledgerId: DOMAIN, lookup: entryTo.lookup }, ...from }
        : { data, seqNo: null, txnTime: null, ...from };
    }

    const def = recordAt(ctx, id, toRoot)?.val;
    if (!isJsonObject(def)) return { data: null, seqNo: null, txnTime: null, proof: { ledgerId: DOMAIN, lookup: entryTo.lookup } };
    const issuanceType = isJsonObject(def.value) ? def.value.issuanceType : undefined;

    // the answer's record (and the proof of it): the accumulator with a `from`, else the entry
    let main: StateLookup;
    let record: WrappedValue<JsonObject>;
    let issued: (number | bigint)[];
    let revoked: (number | bigint)[];
    if (withFrom && entryFrom !== undefined && accumFrom?.record !== undefined) {
      ({ issued, revoked } = revocDelta(issuanceType, entryTo.record.val.value, entryFrom.val.value));
      main = accumTo.lookup;
      record = accumTo.record;
    } else {
      issued = indexUnion(indexList(entryTo.record.val.value, 'issued'), []);
      revoked = indexUnion(indexList(entryTo.record.val.value, 'revoked'), []);
      main = entryTo.lookup;
      record = entryTo.record;
    }
    const value: Record<string, unknown> = { accum_to: record.val, issued, revoked };
    const data: Record<string, unknown> = { revocRegDefId: id, revocDefType: def.revocDefType, value };
    if (withFrom) {
      data.stateProofFrom = stateProofFrom;
      value.accum_from = accumFromVal;
    }
    return { data, seqNo: record.lsn, txnTime: record.lut, proof: { ledgerId: DOMAIN, lookup: main }, ...(withFrom ? from : {}) };
  },
};
