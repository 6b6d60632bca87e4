/**
 * Config-state layout of the transaction author agreement and its acceptance mechanisms
 * (formats.md 8.3): `2:d:<digest>` -> W({digest, ratification_ts, text, version, [retirement_ts]}),
 * `2:v:<version>` -> digest (raw), `2:latest` -> digest (raw); `3:latest` and `3:v:<version>` ->
 * W({version, aml, [amlContext]}).
 */
import type { StateAccess } from '../handler.js';
import { decodeText, decodeWrapped, isJsonObject } from '../state-keys.js';
import { RequestError, RequestErrorCode } from '../errors.js';

import { AML_LATEST_KEY, TAA_LATEST_KEY, amlVersionKey, taaDigestKey, taaVersionKey } from '@quire/common';

/** The config keys (one definition in @quire/common, shared with the light client). */
export { AML_LATEST_KEY, TAA_LATEST_KEY, amlVersionKey, taaDigestKey, taaVersionKey };

/** taaDigest = hex(sha256(utf8(version || text))) (formats.md 3.5): one definition, in @quire/common. */
export { taaDigest } from '@quire/common';

export interface StoredTaa {
  digest: string;
  version: string;
  text: string;
  ratification_ts: number | null;
  retirement_ts?: number;
  /** seqNo and txnTime of the txn that last wrote the record. */
  lsn: number;
  lut: number | null;
}

export interface StoredAml {
  version: string;
  aml: Record<string, unknown>;
  amlContext?: string;
  lsn: number;
  lut: number | null;
}

type Reader = (key: string) => Uint8Array | undefined;

export function reader(state: StateAccess, committed = false): Reader {
  return committed ? (k) => state.getCommitted(k) : (k) => state.get(k);
}

/** The agreement stored under a digest, or undefined. */
export function readTaaByDigest(get: Reader, digest: string): StoredTaa | undefined {
  const key = taaDigestKey(digest);
  const bytes = get(key);
  if (bytes === undefined) return undefined;
  const w = decodeWrapped<Record<string, unknown>>(bytes, key);
  const v = w.val;
  if (!isJsonObject(v) || typeof v.text !== 'string' || typeof v.version !== 'string' || typeof v.digest !== 'string') {
    throw new RequestError(RequestErrorCode.STATE_CORRUPT, { key, problem: 'malformed agreement' });
  }
  const out: StoredTaa = {
    digest: v.digest,
    version: v.version,
    text: v.text,
    ratification_ts: typeof v.ratification_ts === 'number' ? v.ratification_ts : null,
    lsn: w.lsn,
    lut: w.lut,
  };
  if (typeof v.retirement_ts === 'number') out.retirement_ts = v.retirement_ts;
  return out;
}

/** Digest stored under a raw-text key (`2:latest`, `2:v:<version>`). */
export function readDigest(get: Reader, key: string): string | undefined {
  const bytes = get(key);
  return bytes === undefined ? undefined : decodeText(bytes, key);
}

export function readLatestTaa(get: Reader): StoredTaa | undefined {
  const d = readDigest(get, TAA_LATEST_KEY);
  return d === undefined ? undefined : readTaaByDigest(get, d);
}

export function readAml(get: Reader, key: string = AML_LATEST_KEY): StoredAml | undefined {
  const bytes = get(key);
  if (bytes === undefined) return undefined;
  const w = decodeWrapped<Record<string, unknown>>(bytes, key);
  const v = w.val;
  if (!isJsonObject(v) || typeof v.version !== 'string' || !isJsonObject(v.aml)) {
    throw new RequestError(RequestErrorCode.STATE_CORRUPT, { key, problem: 'malformed AML' });
  }
  const out: StoredAml = { version: v.version, aml: v.aml, lsn: w.lsn, lut: w.lut };
  if (typeof v.amlContext === 'string') out.amlContext = v.amlContext;
  return out;
}

/** The agreement is enabled when `2:latest` names an agreement with non-empty text. */
export function taaEnabled(get: Reader): StoredTaa | undefined {
  const latest = readLatestTaa(get);
  return latest !== undefined && latest.text !== '' ? latest : undefined;
}
