/**
 * GET_FROZEN_LEDGERS ("10", config; requests.md §7.3, §9.2): the frozen ledgers, no fields.
 * `data` = the map of `4:FROZEN_LEDGERS` (`{"<lid>": {ledger, state, seq_no}}`) or null, with the
 * state proof of that key (absence proven too); seqNo/txnTime = lsn/lut of the record.
 */
import { LedgerId, TxnType } from '@quire/common';
import type { ReadHandler } from '../handler.js';
import { FROZEN_LEDGERS_KEY } from '../freeze/frozen-ledgers.js';
import { decodeWrapped } from '../state-keys.js';
import { objectSchema } from '../validation/index.js';

const VALIDATOR = 'GetFrozenLedgersOperation';
const schema = objectSchema(VALIDATOR, {});

export const getFrozenLedgersHandler: ReadHandler = {
  kind: 'read',
  type: TxnType.GET_FROZEN_LEDGERS,
  name: 'GET_FROZEN_LEDGERS',
  validator: VALIDATOR,
  ledgerId: LedgerId.CONFIG,

  validateStatic(request) {
    schema.validate(request.operation);
  },

  async read(_request, ctx) {
    const lookup = ctx.lookup(LedgerId.CONFIG, FROZEN_LEDGERS_KEY);
    if (lookup.value === undefined) return { data: null, seqNo: null, txnTime: null, proof: { ledgerId: LedgerId.CONFIG, lookup } };
    const w = decodeWrapped(lookup.value, FROZEN_LEDGERS_KEY);
    return { data: w.val, seqNo: w.lsn, txnTime: w.lut, proof: { ledgerId: LedgerId.CONFIG, lookup } };
  },
};
