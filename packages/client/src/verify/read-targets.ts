/**
 * For each read type, what the state proof of a reply must prove (formats.md 5.3, 7.7, 8; requests.md 9.2): the
 * ledger, the state key recomputed from the reply, the value recomputed from the reply's `data` / `seqNo` /
 * `txnTime`, and the freshness rule. Pure; throws VerificationError REPLY_MALFORMED / NO_PROOF.
 */
import {
  AML_LATEST_KEY,
  CLAIM_DEF_DEFAULT_SIGNATURE_TYPE,
  CLAIM_DEF_DEFAULT_TAG,
  FROZEN_LEDGERS_KEY,
  LedgerId,
  QuireError,
  RULE_KEY_DELIMITER,
  TAA_LATEST_KEY,
  TxnType,
  amlVersionKey,
  attribKey,
  authRuleStateKey,
  canonicalJson,
  canonicalJsonBytes,
  claimDefKey,
  isPlainObject,
  nymKey,
  parseJson,
  revocRegAccumKey,
  revocRegEntryKey,
  richSchemaMetadataKey,
  schemaKey,
  sha256Hex,
  taaDigest,
  taaDigestKey,
  taaVersionKey,
  wrappedStateValue,
} from '@quire/common';
import { LruCache } from '@quire/crypto';
import { ClientErrorCode, VerificationError } from '../errors.js';

const utf8 = new TextEncoder();

export type FreshnessRule = { kind: 'current' } | { kind: 'as-of'; at: number } | { kind: 'none' };

/** One single-key proof to check. */
export interface ProofTarget {
  /** The state key. */
  key: Uint8Array | string;
  /** The state value the reply implies; null = the reply says the key is absent. */
  value: Uint8Array | null;
  /** A proof of absence is also acceptable (GET_AUTH_RULE: absent = the default rule applies). */
  absentAllowed?: boolean;
  /** Where the proof is: `state_proof` of the result, or a nested proof object (GET_REVOC_REG_DELTA `stateProofFrom`). */
  stateProof: unknown;
  freshness: FreshnessRule;
  /** GET_NYM: the seqNo the proven record carries (null when it has none or is absent), read once here for the caller. */
  recordSeqNo?: number | null;
}

export interface ReadTargets {
  ledgerId: number;
  /** One proof or more: a read proves at least the value it answers (or its absence). */
  targets: [ProofTarget, ...ProofTarget[]];
}

function malformed(field: string, reason: string): VerificationError {
  return new VerificationError(ClientErrorCode.REPLY_MALFORMED, { field, reason });
}

/** A reply's data text as JSON; text that is not JSON makes the reply malformed. */
function parseData(text: string): unknown {
  try {
    return parseJson(text);
  } catch (e) {
    throw malformed('data', `not JSON (${e instanceof QuireError ? e.code : 'unparsable'})`);
  }
}

function str(result: Record<string, unknown>, field: string, obj: Record<string, unknown> = result, prefix = ''): string {
  const v = obj[field];
  if (typeof v !== 'string') throw malformed(prefix + field, 'not a string');
  return v;
}

function intOrNull(v: unknown, field: string): number | bigint | null {
  if (v === null || v === undefined) return null;
  if ((typeof v === 'number' && Number.isSafeInteger(v)) || typeof v === 'bigint') return v;
  throw malformed(field, 'not an integer');
}

/** W(v, n, t) of a reply's value, its seqNo and txnTime (common's wrappedStateValue, what the nodes store). */
function wrapped(val: unknown, result: Record<string, unknown>): Uint8Array {
  return wrappedStateValue(val, intOrNull(result.seqNo, 'seqNo'), intOrNull(result.txnTime, 'txnTime'));
}

/** A seqNo as a safe non-negative integer, else null. */
function safeSeqNo(v: unknown): number | null {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  if (typeof v === 'bigint' && v >= 0n && v <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(v);
  return null;
}

function timeOf(result: Record<string, unknown>, field: string): number {
  const v = result[field];
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw malformed(field, 'not an integer');
  return v;
}

/** Freshness of GET_NYM / GET_ATTR: `timestamp` -> as of it; `seqNo` -> none (a historic txn's state); else current. */
function historicRule(op: Record<string, unknown>): FreshnessRule {
  if (op.timestamp !== undefined && op.timestamp !== null) return { kind: 'as-of', at: timeOf(op, 'timestamp') };
  if (op.seqNo !== undefined && op.seqNo !== null) return { kind: 'none' };
  return { kind: 'current' };
}

function renderRulePart(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  throw malformed('auth rule', 'key part is not a string');
}

function decimal(v: unknown, field: string): string {
  if ((typeof v === 'number' && Number.isSafeInteger(v)) || typeof v === 'bigint') return String(v);
  if (typeof v === 'string' && /^[0-9]+$/.test(v)) return v;
  throw malformed(field, 'not an integer');
}

/** GET_NYM data texts of at most this many characters are remembered (nymValues). */
export const NYM_VALUE_MAX_CHARS = 4096;
/** dests whose GET_NYM value is remembered (nymValues) */
export const NYM_VALUES = 1024;
/**
 * The state value a GET_NYM reply's data text implies (formats.md 8: CJ of the record without `dest`), by dest, with the
 * data text it was computed from: a pure function of the two, and a client reading a DID again gets the same text while
 * the record is unchanged. Only texts that gave a value are kept; an entry answers only its exact dest and text, with a
 * copy of its value. At most NYM_VALUES entries of up to NYM_VALUE_MAX_CHARS (least recently used first out).
 */
const nymValues = new LruCache<string, { data: string; value: Uint8Array; recordSeqNo: number | null }>(NYM_VALUES);

function rememberNymValue(dest: string, data: string, value: Uint8Array, recordSeqNo: number | null): void {
  if (data.length > NYM_VALUE_MAX_CHARS) return;
  nymValues.set(dest, { data, value: value.slice(), recordSeqNo });
}

/** A read of one key: its ledger and the one proof its reply's `state_proof` (sp) must be. */
function one(sp: unknown, ledgerId: number, key: Uint8Array | string, value: Uint8Array | null, freshness: FreshnessRule, absentAllowed = false): ReadTargets {
  return { ledgerId, targets: [{ key, value, freshness, stateProof: sp, absentAllowed }] };
}

/**
 * The proofs a read reply's `result` must carry. `op` holds the query fields (the request's operation when known,
 * else the echo in the result).
 */
export function readTargets(result: Record<string, unknown>, op: Record<string, unknown>): ReadTargets {
  const type = op.type;
  const data = result.data;
  const sp = result.state_proof;
  switch (type) {
    case TxnType.GET_NYM: {
      const dest = str(op, 'dest');
      let value: Uint8Array | null = null;
      let recordSeqNo: number | null = null;
      if (data !== null && data !== undefined) {
        if (typeof data !== 'string') throw malformed('data', 'GET_NYM data is not a JSON string');
        const known = nymValues.get(dest);
        if (known !== undefined && known.data === data) {
          value = known.value.slice();
          recordSeqNo = known.recordSeqNo;
        } else {
          const rec = parseData(data);
          if (!isPlainObject(rec)) throw malformed('data', 'not a JSON object');
          if (rec.dest !== undefined && rec.dest !== dest) throw malformed('data.dest', 'differs from the query');
          delete rec.dest;
          value = canonicalJsonBytes(rec);
          recordSeqNo = safeSeqNo(rec.seqNo);
          rememberNymValue(dest, data, value, recordSeqNo);
        }
      }
      const nym = one(sp, LedgerId.DOMAIN, nymKey(dest), value, historicRule(op));
      nym.targets[0].recordSeqNo = recordSeqNo;
      return nym;
    }
    case TxnType.GET_ATTR: {
      const dest = str(op, 'dest');
      const kinds = (['raw', 'enc', 'hash'] as const).filter((k) => op[k] !== undefined && op[k] !== null);
      if (kinds.length !== 1) throw malformed('raw/enc/hash', 'exactly one is expected');
      const kind = kinds[0];
      const name = str(op, kind);
      const key = attribKey(dest, kind, name);
      let value: Uint8Array | null = null;
      if (data !== null && data !== undefined) {
        if (typeof data !== 'string') throw malformed('data', 'not a string');
        const h = kind === 'raw' ? sha256Hex(canonicalJson(parseData(data))) : kind === 'enc' ? sha256Hex(data) : '';
        if (kind === 'raw') {
          const obj = parseData(data);
          if (!isPlainObject(obj) || !Object.prototype.hasOwnProperty.call(obj, name))
            throw malformed('data', 'raw attribute does not hold the name asked for');
        }
        value = wrapped(h, result);
      }
      return one(sp, LedgerId.DOMAIN, key, value, historicRule(op));
    }
    case TxnType.GET_SCHEMA: {
      const dest = str(op, 'dest');
      const q = op.data;
      if (!isPlainObject(q)) throw malformed('data', 'schema query without name/version');
      const key = schemaKey(dest, str(q, 'name', q, 'data.'), str(q, 'version', q, 'data.'));
      const ans = isPlainObject(data) ? data : {};
      const value =
        ans.attr_names === undefined || result.seqNo === null || result.seqNo === undefined ? null : wrapped({ attr_names: ans.attr_names }, result);
      return one(sp, LedgerId.DOMAIN, key, value, { kind: 'current' });
    }
    case TxnType.GET_CLAIM_DEF: {
      const sigType = op.signature_type === undefined || op.signature_type === null ? CLAIM_DEF_DEFAULT_SIGNATURE_TYPE : str(op, 'signature_type');
      const tag = op.tag === undefined || op.tag === null ? CLAIM_DEF_DEFAULT_TAG : str(op, 'tag');
      const key = claimDefKey(str(op, 'origin'), decimal(op.ref, 'ref'), sigType, tag);
      return one(sp, LedgerId.DOMAIN, key, data === null || data === undefined ? null : wrapped(data, result), { kind: 'current' });
    }
    case TxnType.GET_REVOC_REG_DEF:
      return one(sp, LedgerId.DOMAIN, str(op, 'id'), data === null || data === undefined ? null : wrapped(data, result), { kind: 'current' });
    case TxnType.GET_REVOC_REG:
      return one(sp, LedgerId.DOMAIN, revocRegAccumKey(str(op, 'revocRegDefId')), data === null || data === undefined ? null : wrapped(data, result), {
        kind: 'as-of',
        at: timeOf(op, 'timestamp'),
      });
    case TxnType.GET_REVOC_REG_DELTA:
      return revocDeltaTargets(result, op);
    case TxnType.GET_TXN_AUTHOR_AGREEMENT:
      return taaTargets(result, op);
    case TxnType.GET_TXN_AUTHOR_AGREEMENT_AML: {
      const hasVersion = op.version !== undefined && op.version !== null;
      const key = hasVersion ? amlVersionKey(str(op, 'version')) : AML_LATEST_KEY;
      const fresh: FreshnessRule = op.timestamp !== undefined && op.timestamp !== null ? { kind: 'as-of', at: timeOf(op, 'timestamp') } : { kind: 'current' };
      return one(sp, LedgerId.CONFIG, key, data === null || data === undefined ? null : wrapped(data, result), fresh);
    }
    case TxnType.GET_AUTH_RULE: {
      const fields = ['auth_type', 'auth_action', 'field', 'new_value'];
      if (fields.every((f) => op[f] === undefined) && op.old_value === undefined) throw new VerificationError(ClientErrorCode.NO_PROOF, { type });
      const action = str(op, 'auth_action');
      const old = action === 'ADD' ? '*' : renderRulePart(op.old_value);
      const key = authRuleStateKey([str(op, 'auth_type'), action, str(op, 'field'), old, renderRulePart(op.new_value)].join(RULE_KEY_DELIMITER));
      if (!Array.isArray(data) || data.length !== 1 || !isPlainObject(data[0])) throw malformed('data', 'one rule expected');
      return one(sp, LedgerId.CONFIG, key, canonicalJsonBytes(data[0].constraint), { kind: 'current' }, true);
    }
    case TxnType.GET_RICH_SCHEMA_OBJECT_BY_ID:
      return one(sp, LedgerId.DOMAIN, str(op, 'id'), data === null || data === undefined ? null : wrapped(data, result), { kind: 'current' });
    case TxnType.GET_RICH_SCHEMA_OBJECT_BY_METADATA: {
      const meta = ['rsType', 'rsName', 'rsVersion'].map((f) => str(op, f));
      if (data === null || data === undefined) return one(sp, LedgerId.DOMAIN, richSchemaMetadataKey(meta[0], meta[1], meta[2]), null, { kind: 'current' });
      if (!isPlainObject(data)) throw malformed('data', 'not an object');
      ['rsType', 'rsName', 'rsVersion'].forEach((f, i) => {
        if (data[f] !== meta[i]) throw malformed(`data.${f}`, 'differs from the query');
      });
      return one(sp, LedgerId.DOMAIN, str(data, 'id', data, 'data.'), wrapped(data, result), { kind: 'current' });
    }
    case TxnType.GET_FROZEN_LEDGERS:
      // data: {"<ledger id>": {ledger, state, seq_no}} or null (requests.md 7.3)
      if (data !== null && data !== undefined && !isPlainObject(data)) throw malformed('data', 'not an object');
      return one(sp, LedgerId.CONFIG, FROZEN_LEDGERS_KEY, data === null || data === undefined ? null : wrapped(data, result), { kind: 'current' });
    default:
      throw new VerificationError(ClientErrorCode.NO_PROOF, { type: String(type) });
  }
}

function taaTargets(result: Record<string, unknown>, op: Record<string, unknown>): ReadTargets {
  const data = result.data;
  const present = (f: string): boolean => op[f] !== undefined && op[f] !== null;
  let fresh: FreshnessRule = { kind: 'current' };
  if (present('digest')) {
    const key = taaDigestKey(str(op, 'digest'));
    let value: Uint8Array | null = null;
    if (data !== null && data !== undefined) {
      if (!isPlainObject(data)) throw malformed('data', 'not an object');
      if (data.digest !== op.digest) throw malformed('data.digest', 'differs from the query');
      value = wrapped(data, result);
    }
    return { ledgerId: LedgerId.CONFIG, targets: [{ key, value, freshness: fresh, stateProof: result.state_proof }] };
  }
  if (present('timestamp')) fresh = { kind: 'as-of', at: timeOf(op, 'timestamp') };
  const key = present('version') ? taaVersionKey(str(op, 'version')) : TAA_LATEST_KEY;
  let value: Uint8Array | null = null;
  if (data !== null && data !== undefined) {
    if (!isPlainObject(data)) throw malformed('data', 'not an object');
    const digest = str(data, 'digest', data, 'data.');
    // the proof covers the digest only; the digest binds version and text
    if (digest !== taaDigest(str(data, 'version', data, 'data.'), str(data, 'text', data, 'data.')))
      throw malformed('data.digest', 'is not the digest of version and text');
    if (present('version') && data.version !== op.version) throw malformed('data.version', 'differs from the query');
    value = utf8.encode(digest);
  }
  return { ledgerId: LedgerId.CONFIG, targets: [{ key, value, freshness: fresh, stateProof: result.state_proof }] };
}

function revocDeltaTargets(result: Record<string, unknown>, op: Record<string, unknown>): ReadTargets {
  const id = str(op, 'revocRegDefId');
  const to: FreshnessRule = { kind: 'as-of', at: timeOf(op, 'to') };
  const data = result.data;
  if (data === null || data === undefined) {
    return { ledgerId: LedgerId.DOMAIN, targets: [{ key: revocRegEntryKey(id), value: null, freshness: to, stateProof: result.state_proof }] };
  }
  if (!isPlainObject(data) || !isPlainObject(data.value)) throw malformed('data.value', 'not an object');
  const v = data.value;
  const accumTo = v.accum_to;
  const accumFrom = v.accum_from;
  let main: ProofTarget;
  if (accumTo === null || accumTo === undefined) {
    main = { key: revocRegEntryKey(id), value: null, freshness: to, stateProof: result.state_proof };
  } else {
    const key = accumFrom !== null && accumFrom !== undefined ? revocRegAccumKey(id) : revocRegEntryKey(id);
    main = { key, value: wrapped(accumTo, result), freshness: to, stateProof: result.state_proof };
  }
  const targets: ReadTargets['targets'] = [main];
  if (data.stateProofFrom !== undefined && data.stateProofFrom !== null) {
    const fromRule: FreshnessRule = op.from === undefined || op.from === null ? { kind: 'none' } : { kind: 'as-of', at: timeOf(op, 'from') };
    let value: Uint8Array | null = null;
    if (accumFrom !== null && accumFrom !== undefined) {
      if (!isPlainObject(accumFrom)) throw malformed('data.value.accum_from', 'not an object');
      value = wrappedStateValue(accumFrom, intOrNull(accumFrom.seqNo, 'accum_from.seqNo'), intOrNull(accumFrom.txnTime, 'accum_from.txnTime'));
    }
    targets.push({ key: revocRegAccumKey(id), value, freshness: fromRule, stateProof: data.stateProofFrom });
  }
  return { ledgerId: LedgerId.DOMAIN, targets };
}
