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
    const value = lookup.value;
    if (value === undefined) return absent(lookup);
    // a lookup the read context kept holds the same value bytes each time: the record is decoded and written once
    let d = decoded.get(value);
    if (d === undefined || d.dest !== dest) {
      const rec = decodeNymRecord(value, dest);
      d = { dest, data: nymReadData(rec, dest), seqNo: rec.seqNo, txnTime: rec.txnTime };
      decoded.set(value, d);
    }
    return { data: d.data, seqNo: d.seqNo, txnTime: d.txnTime, proof: { ledgerId: DOMAIN, lookup } };
  },
};

/** GET_NYM's answer from a record's stored bytes, by those bytes (read only, never changed once stored) */
const decoded = new WeakMap<Uint8Array, { dest: string; data: string; seqNo: number; txnTime: number | null }>();
