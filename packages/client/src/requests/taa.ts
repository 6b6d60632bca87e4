/**
 * Transaction author agreement helper (formats.md 3.5): fetch the agreement and the acceptance mechanisms (verified
 * reads), compute the digest, round the acceptance time down to UTC midnight, and attach the acceptance to a
 * request before it is signed.
 */
import { isPlainObject, taaAcceptanceDay, taaDigest, type Request, type TaaAcceptance } from '@quire/common';
import { ClientError, ClientErrorCode } from '../errors.js';
import type { Pool } from '../pool/pool.js';
import { buildGetAcceptanceMechanismsRequest, buildGetTxnAuthorAgreementRequest } from './builders.js';

export interface TaaInfo {
  text: string;
  version: string;
  digest: string;
  ratification_ts?: number;
  retirement_ts?: number;
}

export interface AmlInfo {
  version: string;
  aml: Record<string, string>;
  amlContext?: string;
}

export interface TaaAcceptanceInput {
  /** The agreement accepted: its text and version, or its digest. */
  text?: string;
  version?: string;
  taaDigest?: string;
  /** An acceptance mechanism label of the AML. */
  mechanism: string;
  /** When it was accepted (Unix seconds); rounded down to UTC midnight. Default: now. */
  time?: number;
  /** When given, `mechanism` must be one of its labels. */
  aml?: AmlInfo | null;
}

/** The `taaAcceptance` object of a request. Throws ClientError INVALID_ARGUMENT. */
export function buildTaaAcceptance(i: TaaAcceptanceInput): TaaAcceptance {
  let digest = i.taaDigest;
  if (digest === undefined) {
    if (typeof i.text !== 'string' || typeof i.version !== 'string')
      throw new ClientError(ClientErrorCode.INVALID_ARGUMENT, { field: 'text/version', reason: 'text and version, or taaDigest, are required' });
    digest = taaDigest(i.version, i.text);
  } else if (!/^[0-9a-f]{64}$/.test(digest))
    throw new ClientError(ClientErrorCode.INVALID_ARGUMENT, { field: 'taaDigest', reason: 'not 64 lowercase hex digits' });
  if (typeof i.mechanism !== 'string' || i.mechanism.length === 0 || i.mechanism.length > 64) {
    throw new ClientError(ClientErrorCode.INVALID_ARGUMENT, { field: 'mechanism', reason: 'a string of 1 to 64 characters is required' });
  }
  if (i.aml !== undefined && i.aml !== null && !Object.prototype.hasOwnProperty.call(i.aml.aml, i.mechanism)) {
    throw new ClientError(ClientErrorCode.INVALID_ARGUMENT, { field: 'mechanism', reason: `not one of ${Object.keys(i.aml.aml).sort().join(', ')}` });
  }
  const t = i.time ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(t) || t < 0) throw new ClientError(ClientErrorCode.INVALID_ARGUMENT, { field: 'time', reason: 'not a Unix time in seconds' });
  return { mechanism: i.mechanism, taaDigest: digest, time: taaAcceptanceDay(t) };
}

/** Attaches an acceptance to an unsigned request (the acceptance is signed, so it must come first). */
export function appendTaaAcceptance<T extends Request>(request: T, acceptance: TaaAcceptance): T {
  if (request.signature !== undefined || request.signatures !== undefined) {
    throw new ClientError(ClientErrorCode.INVALID_REQUEST, { reason: 'the TAA acceptance must be added before signing' });
  }
  return { ...request, taaAcceptance: acceptance };
}

/** Reads the latest agreement and acceptance mechanisms (verified reads); null when none is set. */
export async function fetchTaa(pool: Pool): Promise<{ taa: TaaInfo | null; aml: AmlInfo | null; verified: boolean }> {
  const [t, a] = await Promise.all([pool.submitRead(buildGetTxnAuthorAgreementRequest()), pool.submitRead(buildGetAcceptanceMechanismsRequest())]);
  const taa = isPlainObject(t.result.data) ? (t.result.data as unknown as TaaInfo) : null;
  const aml = isPlainObject(a.result.data) ? (a.result.data as unknown as AmlInfo) : null;
  return { taa: taa !== null && taa.text === '' ? null : taa, aml, verified: t.verified && a.verified };
}
