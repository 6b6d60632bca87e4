/**
 * GET_TXN_AUTHOR_AGREEMENT ("6", config; requests.md §9.2): the agreement by version, by digest,
 * or the latest (now or at a timestamp). The proof covers the key looked up first.
 */
import { LedgerId, TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { ReadAnswer, ReadHandler, StateLookup } from '../handler.js';
import { decodeText, decodeWrapped } from '../state-keys.js';
import { TAA_LATEST_KEY, taaDigestKey, taaVersionKey } from '../taa/taa-state.js';
import { Limits, integer, objectSchema, optional, sha256Hex, str } from '../validation/index.js';

const VALIDATOR = 'ClientGetTxnAuthorAgreementOperation';
const schema = objectSchema(VALIDATOR, {
  version: optional(str({ max: Limits.NAME }), { nullAsAbsent: true }),
  digest: optional(sha256Hex, { nullAsAbsent: true }),
  timestamp: optional(integer({ min: 0 }), { nullAsAbsent: true }),
});
const has = (op: Readonly<Record<string, unknown>>, k: string): boolean => op[k] !== undefined && op[k] !== null;

function answer(lookup: StateLookup, record: Uint8Array | undefined, key: string): ReadAnswer {
  if (record === undefined) return { data: null, seqNo: null, txnTime: null, proof: { ledgerId: LedgerId.CONFIG, lookup } };
  const w = decodeWrapped(record, key);
  return { data: w.val, seqNo: w.lsn, txnTime: w.lut, proof: { ledgerId: LedgerId.CONFIG, lookup } };
}

export const getTaaHandler: ReadHandler = {
  kind: 'read',
  type: TxnType.GET_TXN_AUTHOR_AGREEMENT,
  name: 'GET_TXN_AUTHOR_AGREEMENT',
  validator: VALIDATOR,
  ledgerId: LedgerId.CONFIG,

  validateStatic(request) {
    const op = request.operation;
    schema.validate(op);
    if (['version', 'digest', 'timestamp'].filter((k) => has(op, k)).length > 1) throw new RequestError(RequestErrorCode.GET_TAA_SELECTORS);
  },

  async read(request, ctx) {
    const op = request.operation;
    if (has(op, 'digest')) {
      const key = taaDigestKey(op.digest as string);
      const lookup = ctx.lookup(LedgerId.CONFIG, key);
      return answer(lookup, lookup.value, key);
    }
    let root: Uint8Array | undefined;
    if (has(op, 'timestamp')) {
      root = await ctx.rootAt(LedgerId.CONFIG, Number(op.timestamp));
      if (root === undefined) return { data: null, seqNo: null, txnTime: null };
    }
    const first = has(op, 'version') ? taaVersionKey(op.version as string) : TAA_LATEST_KEY;
    const lookup = ctx.lookup(LedgerId.CONFIG, first, root);
    if (lookup.value === undefined) return { data: null, seqNo: null, txnTime: null, proof: { ledgerId: LedgerId.CONFIG, lookup } };
    const digest = decodeText(lookup.value, first);
    const key = taaDigestKey(digest);
    return answer(lookup, ctx.get(LedgerId.CONFIG, key, lookup.root), key);
  },
};
