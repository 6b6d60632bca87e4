/**
 * GET_TXN ("3", any ledger; requests.md §9.2, formats.md 5.3): a committed txn by seqNo with its
 * audit path against the current size. `result = {identifier, reqId, type, data, [seqNo]}`; the
 * node adds `state_proof.multi_signature` from the audit ledger. The audit ledger (3) is served too,
 * as indy-plenum's GetTxnHandler does (AUDIT_LEDGER_ID is one of the node's ledger ids): its txns
 * come with their audit path but without a multi-signature (no state root of its own is ever
 * recorded), so a client settles them by f+1 matching replies. A plugin ledger of the node is served
 * like the base ledgers.
 */
import { b58encode, TxnType } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { LedgerIdValue, ReadHandler } from '../handler.js';
import { PLUGIN_LEDGER_ID_MAX, PLUGIN_LEDGER_ID_MIN } from '../plugin.js';
import { integer, isInteger, objectSchema, optional, required } from '../validation/index.js';

const VALIDATOR = 'ClientGetTxnOperation';
const schema = objectSchema(VALIDATOR, {
  ledgerId: optional(integer()),
  data: required(integer()),
});

export const getTxnHandler: ReadHandler = {
  kind: 'read',
  type: TxnType.GET_TXN,
  name: 'GET_TXN',
  validator: VALIDATOR,
  ledgerId: 'any',

  validateStatic(request) {
    const op = request.operation;
    schema.validate(op);
    const lid = (op.ledgerId ?? 1) as number | bigint; // an integer (schema)
    // the base ledgers, or a plugin ledger's id (a node without that plugin answers READ_INVALID_LEDGER when it reads)
    const plugin = typeof lid === 'number' && Number.isSafeInteger(lid) && lid >= PLUGIN_LEDGER_ID_MIN && lid <= PLUGIN_LEDGER_ID_MAX;
    if (lid !== 0 && lid !== 1 && lid !== 2 && lid !== 3 && !plugin) throw new RequestError(RequestErrorCode.READ_INVALID_LEDGER, { ledgerId: lid });
    if (isInteger(op.data) && op.data < 1) throw new RequestError(RequestErrorCode.READ_INVALID_SEQNO, { seqNo: op.data });
  },

  async read(request, ctx) {
    const op = request.operation;
    const lid = (op.ledgerId ?? 1) as LedgerIdValue;
    const base = { identifier: request.author, reqId: request.reqId, type: TxnType.GET_TXN };
    const ledger = ctx.ledger(lid);
    const seqNo = Number(op.data);
    const txn = Number.isSafeInteger(seqNo) ? await ledger.getTxn(seqNo) : undefined;
    if (txn === undefined) return { data: null, seqNo: null, txnTime: null, result: { ...base, data: null } };
    if (txn.txn.type === TxnType.ATTRIB) {
      // ATTRIB: restore raw / enc from the attribute store
      const d = txn.txn.data;
      for (const f of ['raw', 'enc'] as const) {
        if (typeof d[f] === 'string') {
          const original = await ctx.attribute(d[f] as string);
          if (original !== undefined) d[f] = original;
        }
      }
    }
    const proof = await ledger.inclusionProof(seqNo, ledger.size);
    const data = { ...txn, rootHash: b58encode(ledger.root), auditPath: proof.map((h) => b58encode(h)), ledgerSize: ledger.size };
    return { data, seqNo, txnTime: null, result: { ...base, data, seqNo } };
  },
};
