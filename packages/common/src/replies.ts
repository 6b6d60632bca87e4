/** Builders of the client reply envelopes (formats.md 5.1) and of the BLS-signed value (9.2). */
import { encodeMsgpack } from './msgpack-encode.js';
import { REJECT_REASON_TEMPLATES, type MultiSignatureValue, type Reject, type RejectCode, type ReqAck, type ReqNack } from './types/reply.js';

/**
 * REQNACK reason of a node whose admission limit is reached (consensus.md §2 step 5). It speaks for that node only:
 * the request may still be ordered when another node took it in and propagated it.
 */
export const POOL_OVERLOADED_REASON = 'pool overloaded';

export function reqAck(identifier: string, reqId: number | bigint): ReqAck {
  return { op: 'REQACK', identifier, reqId };
}

export function reqNack(identifier: string, reqId: number | bigint, reason: string, code?: number | null): ReqNack {
  const m: ReqNack = { op: 'REQNACK', identifier, reqId, reason };
  if (code !== undefined && code !== null) m.code = code;
  return m;
}

export function reject(identifier: string, reqId: number | bigint, reason: string, code: number | null = null): Reject {
  return { op: 'REJECT', identifier, reqId, reason, code };
}

/** The reason text of a coded rejection, placeholders filled in order with String(arg). */
export function rejectReason(code: RejectCode, ...args: unknown[]): string {
  let i = 0;
  return REJECT_REASON_TEMPLATES[code].replace(/\{\}/g, () => (i < args.length ? String(args[i++]) : '{}'));
}

/** The bytes a BLS multi-signature signs: MP(value), a fixmap(5) with the keys in sorted order. */
export function multiSignatureMessage(value: MultiSignatureValue): Uint8Array {
  return encodeMsgpack({
    ledger_id: value.ledger_id,
    pool_state_root_hash: value.pool_state_root_hash,
    state_root_hash: value.state_root_hash,
    timestamp: value.timestamp,
    txn_root_hash: value.txn_root_hash,
  });
}
