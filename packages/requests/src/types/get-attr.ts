/**
 * GET_ATTR ("104", domain; requests.md §9.2): an attribute of `dest` selected by exactly one of
 * `raw` (the attribute name), `enc` (the enc text) or `hash`, now or as of `timestamp` / `seqNo`.
 * `data`: raw -> the canonical JSON `{"<name>":<value>}` from the attribute store; enc -> the enc
 * text; hash -> the hash as asked; null when absent. The proof covers the ATTRIB state key.
 */
import { TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { ReadHandler } from '../handler.js';
import { did, objectSchema, optional, required, sha256Hex, str } from '../validation/index.js';
import { Limits } from '../validation/limits.js';
import { attribKey, decodeWrapped } from '../state-keys.js';
import { attribSelectors } from './attrib.js';
import { DOMAIN, absent, checkSeqNoXorTimestamp, domainReadRoot, historicFields } from './get-common.js';

const VALIDATOR = 'ClientGetAttribOperation';
const schema = objectSchema(VALIDATOR, {
  dest: required(did),
  raw: optional(str({ max: Limits.ATTRIB_CONTENT }), { nullAsAbsent: true }),
  enc: optional(str({ max: Limits.ATTRIB_CONTENT }), { nullAsAbsent: true }),
  hash: optional(sha256Hex, { nullAsAbsent: true }),
  ...historicFields,
});

export const getAttrHandler: ReadHandler = {
  kind: 'read',
  type: TxnType.GET_ATTR,
  name: 'GET_ATTR',
  validator: VALIDATOR,
  ledgerId: DOMAIN,

  validateStatic(request) {
    const op = request.operation;
    schema.validate(op);
    if (attribSelectors(op).length !== 1) throw new RequestError(RequestErrorCode.GET_ATTR_SELECTOR);
    checkSeqNoXorTimestamp(request);
  },

  async read(request, ctx) {
    const op = request.operation;
    const kind = attribSelectors(op)[0];
    const selector = op[kind] as string;
    const key = attribKey(op.dest as string, kind, selector);
    const at = await domainReadRoot(request, ctx);
    if (!at.found) return absent();
    const lookup = ctx.lookup(DOMAIN, key, at.root);
    if (lookup.value === undefined) return absent(lookup);
    const w = decodeWrapped(lookup.value, key);
    let data: string;
    if (kind === 'hash') {
      data = selector;
    } else {
      const hash = typeof w.val === 'string' ? w.val : '';
      const stored = await ctx.attribute(hash);
      if (stored === undefined) throw new RequestError(RequestErrorCode.STATE_CORRUPT, { key, problem: `attribute store has no value for ${hash}` });
      data = stored;
    }
    return { data, seqNo: w.lsn, txnTime: w.lut, proof: { ledgerId: DOMAIN, lookup } };
  },
};
