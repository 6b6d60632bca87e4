/**
 * GET_REVOC_REG ("116", domain; requests.md §9.2): the accumulator `6:<revocRegDefId>` as of
 * `timestamp` (root for the greatest batch time ≤ timestamp); `data` = `{revocRegDefId,
 * revocDefType, value: {accum}, seqNo, txnTime}` or null.
 */
import { TxnType } from '@quire/common';
import type { ReadHandler } from '../handler.js';
import { integer, nonEmptyStr, objectSchema, required } from '../validation/index.js';
import { decodeWrapped, revocRegAccumKey } from '../state-keys.js';
import { DOMAIN, absent } from './get-common.js';

const VALIDATOR = 'ClientGetRevocRegField';
const schema = objectSchema(VALIDATOR, { revocRegDefId: required(nonEmptyStr), timestamp: required(integer({ min: 0 })) });

export const getRevocRegHandler: ReadHandler = {
  kind: 'read',
  type: TxnType.GET_REVOC_REG,
  name: 'GET_REVOC_REG',
  validator: VALIDATOR,
  ledgerId: DOMAIN,

  validateStatic(request) {
    schema.validate(request.operation);
  },

  async read(request, ctx) {
    const op = request.operation;
    const root = await ctx.rootAt(DOMAIN, Number(op.timestamp));
    if (root === undefined) return absent();
    const key = revocRegAccumKey(op.revocRegDefId as string);
    const lookup = ctx.lookup(DOMAIN, key, root);
    if (lookup.value === undefined) return absent(lookup);
    const w = decodeWrapped(lookup.value, key);
    return { data: w.val, seqNo: w.lsn, txnTime: w.lut, proof: { ledgerId: DOMAIN, lookup } };
  },
};
