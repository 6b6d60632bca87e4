/**
 * What the domain reads share: the "state as of" root of requests.md §9.1 / formats.md §7.6 for
 * reads taking `timestamp` or `seqNo`, and the schema fields for them.
 */
import { LedgerId } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { ParsedRequest, ReadAnswer, ReadContext, StateLookup } from '../handler.js';
import { integer, optional, seqNo } from '../validation/index.js';

export const DOMAIN = LedgerId.DOMAIN;

/** `timestamp` (integer ≥ 0) and `seqNo` (integer ≥ 1), both optional. */
export const historicFields = {
  timestamp: optional(integer({ min: 0 }), { nullAsAbsent: true }),
  seqNo: optional(seqNo, { nullAsAbsent: true }),
} as const;

export const given = (op: Readonly<Record<string, unknown>>, k: string): boolean => op[k] !== undefined && op[k] !== null;

/** `seqNo` and `timestamp` are mutually exclusive. */
export function checkSeqNoXorTimestamp(request: ParsedRequest): void {
  if (given(request.operation, 'seqNo') && given(request.operation, 'timestamp')) throw new RequestError(RequestErrorCode.READ_SEQNO_AND_TIMESTAMP);
}

/**
 * The domain state root a read uses: the committed root (`root` undefined, `found` true), or the
 * root recorded for the greatest batch time ≤ T where T = `timestamp`, or the txnTime of the
 * domain txn `seqNo`. `found` is false when there is no such root (the answer is then null).
 */
export async function domainReadRoot(request: ParsedRequest, ctx: ReadContext): Promise<{ found: boolean; root?: Uint8Array }> {
  const op = request.operation;
  let time: number | undefined;
  if (given(op, 'timestamp')) {
    time = Number(op.timestamp);
  } else if (given(op, 'seqNo')) {
    const n = Number(op.seqNo);
    const txn = Number.isSafeInteger(n) ? await ctx.ledger(DOMAIN).getTxn(n) : undefined;
    const t = txn?.txnMetadata.txnTime;
    if (typeof t !== 'number') return { found: false };
    time = t;
  } else {
    return { found: true };
  }
  if (!Number.isSafeInteger(time)) return { found: false };
  const root = await ctx.rootAt(DOMAIN, time);
  return root === undefined ? { found: false } : { found: true, root };
}

/** The answer for "nothing there" with the proof of absence when there was a lookup. */
export function absent(lookup?: StateLookup, data: unknown = null): ReadAnswer {
  return lookup ? { data, seqNo: null, txnTime: null, proof: { ledgerId: DOMAIN, lookup } } : { data, seqNo: null, txnTime: null };
}
