/**
 * GET_CLAIM_DEF ("108", domain; requests.md §9.2): the credential definition
 * `<origin>:3:<signature_type>:<ref>:<tag>` (tag defaults to `tag`); `data` = `{primary,
 * [revocation]}` or null.
 */
import { TxnType } from '@quire/common';
import type { ReadHandler } from '../handler.js';
import { did, objectSchema, optional, required, seqNo, str } from '../validation/index.js';
import { Limits } from '../validation/limits.js';
import { CLAIM_DEF_DEFAULT_TAG, claimDefKey, decodeWrapped } from '../state-keys.js';
import { DOMAIN, absent } from './get-common.js';

const VALIDATOR = 'ClientGetClaimDefOperation';
const schema = objectSchema(VALIDATOR, {
  origin: required(did),
  ref: required(seqNo),
  signature_type: required(str({ max: Limits.SIGNATURE_TYPE })),
  tag: optional(str({ max: Limits.NAME }), { nullAsAbsent: true }),
});

export const getClaimDefHandler: ReadHandler = {
  kind: 'read',
  type: TxnType.GET_CLAIM_DEF,
  name: 'GET_CLAIM_DEF',
  validator: VALIDATOR,
  ledgerId: DOMAIN,

  validateStatic(request) {
    schema.validate(request.operation);
  },

  async read(request, ctx) {
    const op = request.operation;
    const tag = typeof op.tag === 'string' ? op.tag : CLAIM_DEF_DEFAULT_TAG;
    const key = claimDefKey(op.origin as string, op.ref as number | bigint, op.signature_type as string, tag);
    const lookup = ctx.lookup(DOMAIN, key);
    if (lookup.value === undefined) return absent(lookup);
    const w = decodeWrapped(lookup.value, key);
    return { data: w.val, seqNo: w.lsn, txnTime: w.lut, proof: { ledgerId: DOMAIN, lookup } };
  },
};
