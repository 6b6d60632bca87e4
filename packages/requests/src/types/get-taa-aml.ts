/**
 * GET_TXN_AUTHOR_AGREEMENT_AML ("7", config; requests.md §9.2): an AML by version, or the latest
 * (now or at a timestamp), with a proof.
 */
import { LedgerId, TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { ReadHandler } from '../handler.js';
import { decodeWrapped } from '../state-keys.js';
import { AML_LATEST_KEY, amlVersionKey } from '../taa/taa-state.js';
import { Limits, integer, objectSchema, optional, str } from '../validation/index.js';

const VALIDATOR = 'ClientGetTxnAuthorAgreementAmlOperation';
const schema = objectSchema(VALIDATOR, {
  version: optional(str({ max: Limits.NAME }), { nullAsAbsent: true }),
  timestamp: optional(integer({ min: 0 }), { nullAsAbsent: true }),
});
const has = (op: Readonly<Record<string, unknown>>, k: string): boolean => op[k] !== undefined && op[k] !== null;

export const getTaaAmlHandler: ReadHandler = {
  kind: 'read',
  type: TxnType.GET_TXN_AUTHOR_AGREEMENT_AML,
  name: 'GET_TXN_AUTHOR_AGREEMENT_AML',
  validator: VALIDATOR,
  ledgerId: LedgerId.CONFIG,

  validateStatic(request) {
    schema.validate(request.operation);
    if (has(request.operation, 'version') && has(request.operation, 'timestamp')) throw new RequestError(RequestErrorCode.GET_TAA_AML_SELECTORS);
  },

  async read(request, ctx) {
    const op = request.operation;
    let root: Uint8Array | undefined;
    if (has(op, 'timestamp')) {
      root = await ctx.rootAt(LedgerId.CONFIG, Number(op.timestamp));
      if (root === undefined) return { data: null, seqNo: null, txnTime: null };
    }
    const key = has(op, 'version') ? amlVersionKey(op.version as string) : AML_LATEST_KEY;
    const lookup = ctx.lookup(LedgerId.CONFIG, key, root);
    if (lookup.value === undefined) return { data: null, seqNo: null, txnTime: null, proof: { ledgerId: LedgerId.CONFIG, lookup } };
    const w = decodeWrapped(lookup.value, key);
    return { data: w.val, seqNo: w.lsn, txnTime: w.lut, proof: { ledgerId: LedgerId.CONFIG, lookup } };
  },
};
