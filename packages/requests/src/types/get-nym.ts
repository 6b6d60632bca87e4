/**
 * GET_NYM ("105", domain; requests.md §9.2): the NYM record of `dest` as a canonical JSON string
 * (with `dest` added), now or as of `timestamp` / the txnTime of `seqNo`, with its state proof.
 */
import { TxnType } from '@quire/common';
import type { ReadHandler } from '../handler.js';
import { did, objectSchema, required } from '../validation/index.js';
import { decodeNymRecord, nymKey, nymReadData } from '../state-keys.js';
import { DOMAIN, absent, checkSeqNoXorTimestamp, domainReadRoot, historicFields } from './get-common.js';

const VALIDATOR = 'ClientGetNymOperation';
const schema = objectSchema(VALIDATOR, { dest: required(did), ...historicFields });

export const getNymHandler: ReadHandler = {
  kind: 'read',
  type: TxnType.GET_NYM,
  name: 'GET_NYM',
  validator: VALIDATOR,
  ledgerId: DOMAIN,

  validateStatic(request) {
    schema.validate(request.operation);
    checkSeqNoXorTimestamp(request);
  },

  async read(request, ctx) {
    const dest = request.operation.dest as string;
    const at = await domainReadRoot(request, ctx);
    if (!at.found) return absent();
    const lookup = ctx.lookup(DOMAIN, nymKey(dest), at.root);
    if (lookup.value === undefined) return absent(lookup);
    const rec = decodeNymRecord(lookup.value, dest);
    return { data: nymReadData(rec, dest), seqNo: rec.seqNo, txnTime: rec.txnTime, proof: { ledgerId: DOMAIN, lookup } };
  },
};
