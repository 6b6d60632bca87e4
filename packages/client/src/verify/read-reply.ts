/**
 * Whole-reply verification of reads (formats.md 9.4): the reply answers the request, its trie proof (or GET_TXN's
 * audit path) proves exactly the value the reply claims, and a fresh BLS multi-signature of n - f validators signs
 * the proven root.
 */
import { LedgerId, TxnType, equalBytes, isPlainObject, stringifyJson, toHex, type MultiSignature } from '@quire/common';
import { ProofError, StorageError } from '@quire/storage/proofs';
import { ClientErrorCode, VerificationError } from '../errors.js';
import { DEFAULT_FRESHNESS_SECONDS, verifyMultiSignature, type Freshness, type MultiSignatureCache, type PoolBlsKeys } from './multi-signature.js';
import { sharedProvenValues, verifyAuditPath } from './proofs.js';
import { readTargets, type FreshnessRule, type ProofTarget } from './read-targets.js';

export interface VerifyReadReplyInput {
  /** The reply (`{"op":"REPLY","result":{...}}`) or its `result`, parsed losslessly. */
  reply: unknown;
  /** The request that was sent; when given the reply must answer exactly it. */
  request?: { identifier?: unknown; reqId?: unknown; operation: Record<string, unknown> };
  pool: PoolBlsKeys;
  /** Unix seconds used for freshness (default: the wall clock). */
  now?: number;
  /** Freshness window (default 300 s). */
  freshnessSeconds?: number;
  cache?: MultiSignatureCache;
}

export interface VerifiedRead {
  type: string;
  ledgerId: number;
  /** The reply's result, now trusted. */
  result: Record<string, unknown>;
  /** The state root (base58) that was proven and signed; for GET_TXN the ledger root. */
  root: string;
  multiSignature: MultiSignature;
  /** What the state proofs proved (key, value, freshness rule), in the order checked; absent for GET_TXN. */
  targets?: readonly ProofTarget[];
}

function malformed(field: string, reason: string): VerificationError {
  return new VerificationError(ClientErrorCode.REPLY_MALFORMED, { field, reason });
}

function resultOf(reply: unknown): Record<string, unknown> {
  if (!isPlainObject(reply)) throw malformed('reply', 'not an object');
  if (reply.op !== undefined) {
    if (reply.op !== 'REPLY') throw malformed('op', `not a REPLY: ${String(reply.op)}`);
    if (!isPlainObject(reply.result)) throw malformed('result', 'not an object');
    return reply.result;
  }
  return reply;
}

/** No lone surrogate (String.prototype.isWellFormed, Node >= 20; a lone surrogate cannot be written as JSON). */
const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Equal as JSON (the reply's echo of a query field): identical strings and safe integers at once, else compared as text. */
export function same(a: unknown, b: unknown): boolean {
  if (a === b && ((typeof a === 'string' && wellFormed(a)) || (typeof a === 'number' && Number.isSafeInteger(a)) || typeof a === 'bigint')) return true;
  try {
    return stringifyJson(a) === stringifyJson(b);
  } catch {
    return false;
  }
}

function mismatch(field: string, requested: unknown, answered: unknown): never {
  throw new VerificationError(ClientErrorCode.REPLY_NOT_FOR_REQUEST, {
    field,
    requested: stringifyJson(requested ?? null),
    answered: stringifyJson(answered ?? null),
  });
}

/** The result must echo the request: type, identifier, reqId and every query field (formats.md 5.3). */
function checkAnswersRequest(result: Record<string, unknown>, request: NonNullable<VerifyReadReplyInput['request']>): void {
  const op = request.operation;
  if (request.reqId !== undefined && !same(request.reqId, result.reqId)) mismatch('reqId', request.reqId, result.reqId);
  if (request.identifier !== undefined && result.identifier !== undefined && !same(request.identifier, result.identifier))
    mismatch('identifier', request.identifier, result.identifier);
  if (result.type !== op.type) mismatch('type', op.type, result.type);
  if (op.type === TxnType.GET_TXN) return; // GET_TXN echoes nothing else; its seqNo is checked by the audit path
  for (const k in op) {
    if (!Object.hasOwn(op, k)) continue;
    const v = op[k];
    if (k === 'data' || v === undefined) continue; // `data` is the answer in every result
    if (!same(v, result[k])) mismatch(k, v, result[k]);
  }
}

function freshnessOf(rule: FreshnessRule, now: number, seconds: number): Freshness {
  if (rule.kind === 'current') return { kind: 'current', now, seconds };
  if (rule.kind === 'as-of') return { kind: 'as-of', at: rule.at, seconds };
  return { kind: 'none' };
}

/**
 * Verifies a read reply. Returns what was proven; throws VerificationError with a precise code: NO_PROOF (no
 * state proof: fall back to f+1 matching replies), REPLY_MALFORMED, REPLY_NOT_FOR_REQUEST, PROOF_INVALID,
 * PROOF_VALUE_MISMATCH, AUDIT_PATH_INVALID, MULTISIG_ROOT_MISMATCH and the MULTISIG_* codes of verifyMultiSignature.
 */
export function verifyReadReply(input: VerifyReadReplyInput): VerifiedRead {
  const result = resultOf(input.reply);
  if (input.request !== undefined) checkAnswersRequest(result, input.request);
  const op = input.request?.operation ?? result;
  const type = op.type;
  if (typeof type !== 'string') throw malformed('type', 'not a string');
  const now = input.now ?? Math.floor(Date.now() / 1000);
  const seconds = input.freshnessSeconds ?? DEFAULT_FRESHNESS_SECONDS;
  if (type === TxnType.GET_TXN) return verifyGetTxn(result, op, input);

  const { ledgerId, targets } = readTargets(result, op);
  // the first proof's root and multi-signature stand for the reply; every other proof is checked the same way
  const first = verifyTarget(targets[0], type, ledgerId, input, now, seconds);
  for (let i = 1; i < targets.length; i++) verifyTarget(targets[i], type, ledgerId, input, now, seconds);
  return { type, ledgerId, result, root: first.root, multiSignature: first.ms, targets };
}

/** Checks one proof of a read reply (its multi-signature, its root and ledger, the value it proves); returns the signed root. */
function verifyTarget(
  t: ProofTarget,
  type: string,
  ledgerId: number,
  input: VerifyReadReplyInput,
  now: number,
  seconds: number,
): { root: string; ms: MultiSignature } {
  const sp = t.stateProof;
  if (!isPlainObject(sp) || sp.multi_signature === undefined || sp.multi_signature === null) throw new VerificationError(ClientErrorCode.NO_PROOF, { type });
  if (typeof sp.root_hash !== 'string' || typeof sp.proof_nodes !== 'string') throw malformed('state_proof', 'root_hash and proof_nodes expected');
  const ms = verifyMultiSignature({
    multiSignature: sp.multi_signature,
    pool: input.pool,
    freshness: freshnessOf(t.freshness, now, seconds),
    cache: input.cache,
  });
  if (ms.value.state_root_hash !== sp.root_hash) {
    throw new VerificationError(ClientErrorCode.MULTISIG_ROOT_MISMATCH, {
      field: 'state_root_hash',
      expected: sp.root_hash,
      signed: ms.value.state_root_hash,
    });
  }
  if (ms.value.ledger_id !== ledgerId) {
    throw new VerificationError(ClientErrorCode.MULTISIG_ROOT_MISMATCH, { field: 'ledger_id', expected: ledgerId, signed: ms.value.ledger_id });
  }
  let proven: Uint8Array | null;
  try {
    proven = sharedProvenValues.verify({ rootHash: sp.root_hash, key: t.key, proofNodes: sp.proof_nodes });
  } catch (e) {
    if (e instanceof ProofError) throw new VerificationError(ClientErrorCode.PROOF_INVALID, { proofCode: e.code, key: keyText(t.key) });
    throw e;
  }
  const ok = proven === null ? t.value === null || t.absentAllowed === true : t.value !== null && equalBytes(proven, t.value);
  if (!ok) {
    throw new VerificationError(ClientErrorCode.PROOF_VALUE_MISMATCH, {
      key: keyText(t.key),
      expected: t.value === null ? null : new TextDecoder().decode(t.value),
      proven: proven === null ? null : new TextDecoder().decode(proven),
    });
  }
  return { root: sp.root_hash, ms };
}

function verifyGetTxn(result: Record<string, unknown>, op: Record<string, unknown>, input: VerifyReadReplyInput): VerifiedRead {
  const data = result.data;
  const sp = result.state_proof;
  // a missing txn cannot be proven by an audit path: only f+1 matching replies settle it
  if (data === null || data === undefined || !isPlainObject(sp) || sp.multi_signature === undefined)
    throw new VerificationError(ClientErrorCode.NO_PROOF, { type: TxnType.GET_TXN });
  if (!isPlainObject(data)) throw malformed('data', 'not an object');
  const ledgerId = op.ledgerId === undefined || op.ledgerId === null ? LedgerId.DOMAIN : op.ledgerId;
  const seqNo = op === result ? result.seqNo : op.data;
  if (typeof seqNo !== 'number' || typeof data.ledgerSize !== 'number' || typeof data.rootHash !== 'string' || !Array.isArray(data.auditPath)) {
    throw malformed('data', 'seqNo, ledgerSize, rootHash and auditPath expected');
  }
  const meta = data.txnMetadata;
  if (isPlainObject(meta) && meta.seqNo !== undefined && meta.seqNo !== seqNo) throw malformed('data.txnMetadata.seqNo', 'differs from the query');
  const ms = verifyMultiSignature({ multiSignature: sp.multi_signature, pool: input.pool, freshness: { kind: 'none' }, cache: input.cache });
  if (ms.value.txn_root_hash !== data.rootHash) {
    throw new VerificationError(ClientErrorCode.MULTISIG_ROOT_MISMATCH, { field: 'txn_root_hash', expected: data.rootHash, signed: ms.value.txn_root_hash });
  }
  if (ms.value.ledger_id !== ledgerId)
    throw new VerificationError(ClientErrorCode.MULTISIG_ROOT_MISMATCH, { field: 'ledger_id', expected: ledgerId, signed: ms.value.ledger_id });
  try {
    verifyAuditPath({ rootHash: data.rootHash, seqNo, ledgerSize: data.ledgerSize, auditPath: data.auditPath as string[], txn: data });
  } catch (e) {
    if (e instanceof StorageError) {
      throw new VerificationError(ClientErrorCode.AUDIT_PATH_INVALID, { proofCode: e.code, seqNo, ledgerSize: data.ledgerSize });
    }
    throw e;
  }
  return { type: TxnType.GET_TXN, ledgerId: ledgerId as number, result, root: data.rootHash, multiSignature: ms };
}

function keyText(key: Uint8Array | string): string {
  return typeof key === 'string' ? key : toHex(key);
}
