/**
 * TAA acceptance check run at ordering for every write (requests.md §1.6, formats.md 3.5),
 * in the spec's order, with REJECT codes 200-207.
 */
import { LedgerId, codePointCompare } from '@quire/common';
import { RequestError, RequestErrorCode } from '../errors.js';
import type { ParsedRequest, StateAccess } from '../handler.js';
import { readAml, reader, taaEnabled } from './taa-state.js';

const DAY = 86400;
/** Largest time Python's datetime accepts (9999-12-31T23:59:59Z). */
const MAX_DATE_TS = 253402300799;
const WINDOW = 120;

/** Ledgers whose writes need an acceptance while an agreement is enabled: the domain ledger. */
export function ledgerRequiresTaa(ledgerId: number): boolean {
  return ledgerId === LedgerId.DOMAIN;
}

/** YYYY-MM-DD of a UTC time in seconds. */
export function utcDate(ts: number): string {
  return new Date(ts * 1000).toISOString().slice(0, 10);
}

/**
 * Throws the TAA RequestError of the first failing step; returns when the request passes. `required`:
 * whether the ledger's writes need an acceptance (default `ledgerRequiresTaa`; a plugin ledger says so itself).
 */
export function checkTaaAcceptance(req: ParsedRequest, ledgerId: number, config: StateAccess, ppTime: number, required = ledgerRequiresTaa(ledgerId)): void {
  const acc = req.taaAcceptance;
  if (!required) {
    if (acc !== null) throw new RequestError(RequestErrorCode.TAA_NOT_EXPECTED, { ledgerId });
    return;
  }
  const get = reader(config);
  const taa = taaEnabled(get);
  if (taa === undefined) return;
  if (acc === null) throw new RequestError(RequestErrorCode.TAA_MISSING, { ledgerId });
  if (acc.taaDigest !== taa.digest) throw new RequestError(RequestErrorCode.TAA_WRONG_DIGEST, { digest: acc.taaDigest });
  if (taa.retirement_ts !== undefined && taa.retirement_ts < ppTime) {
    throw new RequestError(RequestErrorCode.TAA_RETIRED, { version: taa.version, seqNo: taa.lsn, txnTime: taa.lut });
  }
  const t = acc.time;
  if (typeof t === 'bigint' || t < 0 || t > MAX_DATE_TS) throw new RequestError(RequestErrorCode.TAA_TIME_OUT_OF_RANGE, { time: t });
  if (t % DAY !== 0) throw new RequestError(RequestErrorCode.TAA_TIME_TOO_PRECISE, { time: t });
  const ratified = taa.ratification_ts ?? taa.lut ?? 0;
  const lowTs = Math.max(0, ratified - WINDOW);
  const highTs = Math.min(MAX_DATE_TS, ppTime + WINDOW);
  const low = lowTs - (lowTs % DAY);
  const high = highTs - (highTs % DAY);
  if (t < low || t > high) throw new RequestError(RequestErrorCode.TAA_TIME_INAPPROPRIATE, { time: t, low: utcDate(low), high: utcDate(high) });
  const aml = readAml(get);
  const labels = aml ? Object.keys(aml.aml).sort(codePointCompare) : [];
  if (!labels.includes(acc.mechanism)) throw new RequestError(RequestErrorCode.TAA_MECHANISM_INAPPROPRIATE, { mechanism: acc.mechanism, labels });
}
