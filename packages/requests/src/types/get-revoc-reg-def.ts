/** GET_REVOC_REG_DEF ("115", domain; requests.md §9.2): the stored definition at key `id`, or null. */
import { TxnType } from '@quire/common';
import type { ReadHandler } from '../handler.js';
import { nonEmptyStr, objectSchema, required } from '../validation/index.js';
import { decodeWrapped } from '../state-keys.js';
import { DOMAIN, absent } from './get-common.js';

const VALIDATOR = 'ClientGetRevocRegDefField';
const schema = objectSchema(VALIDATOR, { id: required(nonEmptyStr) });

export const getRevocRegDefHandler: ReadHandler = {
  kind: 'read',
  type: TxnType.GET_REVOC_REG_DEF,
  name: 'GET_REVOC_REG_DEF',
  validator: VALIDATOR,
  ledgerId: DOMAIN,

  validateStatic(request) {
    schema.validate(request.operation);
  },

  async read(request, ctx) {
    const key = request.operation.id as string;
    const lookup = ctx.lookup(DOMAIN, key);
    if (lookup.value === undefined) return absent(lookup);
    const w = decodeWrapped(lookup.value, key);
    return { data: w.val, seqNo: w.lsn, txnTime: w.lut, proof: { ledgerId: DOMAIN, lookup } };
  },
};
