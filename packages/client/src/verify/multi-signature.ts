/**
 * BLS multi-signature verification (formats.md 9.2-9.4): participants are distinct validators with usable BLS keys,
 * at least n - f of them; the aggregate verifies over MP(value); the timestamp is fresh. A cache remembers the
 * multi-signatures already verified per state root, so reads under the same root skip the pairing.
 */
import { BoundedFifo, b58decode, isPlainObject, multiSignatureMessage, type MultiSignature, type MultiSignatureValue } from '@quire/common';
import { blsVerifyAggregate } from '@quire/crypto';
import { ClientErrorCode, VerificationError } from '../errors.js';

/** What the verifier needs to know of the pool: validator count and the usable BLS key of each validator. */
export interface PoolBlsKeys {
  /** Number of validators n (f = floor((n-1)/3)). */
  readonly validatorCount: number;
  /** alias -> 48-byte BLS public key, for validators whose key has a valid proof of possession. */
  readonly blsKeys: ReadonlyMap<string, Uint8Array>;
  /**
   * Identifies this key set; a cache entry verified under another epoch is not reused. Change it whenever the
   * validators or their keys change.
   */
  readonly epoch?: number | string;
}

/** Default freshness window of read replies, in seconds (indy-vdr's default). */
export const DEFAULT_FRESHNESS_SECONDS = 300;

/** f = floor((n-1)/3). */
export function faultsTolerated(n: number): number {
  return n <= 0 ? 0 : Math.floor((n - 1) / 3);
}

/** Participants a multi-signature needs: n - f. */
export function requiredParticipants(n: number): number {
  return n - faultsTolerated(n);
}

const ROOT_FIELDS = ['pool_state_root_hash', 'state_root_hash', 'txn_root_hash'] as const;

function malformed(field: string, reason: string): VerificationError {
  return new VerificationError(ClientErrorCode.REPLY_MALFORMED, { field: `multi_signature.${field}`, reason });
}

/** Checks the shape of a multi-signature taken from a reply; returns it typed. Throws REPLY_MALFORMED. */
export function parseMultiSignature(v: unknown): MultiSignature {
  if (!isPlainObject(v)) throw malformed('', 'not an object');
  if (typeof v.signature !== 'string' || v.signature.length === 0) throw malformed('signature', 'not a string');
  if (!Array.isArray(v.participants) || !v.participants.every((p) => typeof p === 'string')) throw malformed('participants', 'not a list of aliases');
  const value = v.value;
  if (!isPlainObject(value)) throw malformed('value', 'not an object');
  for (const f of ROOT_FIELDS) if (typeof value[f] !== 'string') throw malformed(`value.${f}`, 'not a base58 string');
  for (const f of ['ledger_id', 'timestamp'] as const) {
    if (typeof value[f] !== 'number' || !Number.isSafeInteger(value[f]) || value[f] < 0) throw malformed(`value.${f}`, 'not a non-negative integer');
  }
  return v as unknown as MultiSignature;
}

/** Freshness rule: what the multi-signature's timestamp is compared with. */
export type Freshness =
  /** A read of the current state: now - timestamp <= seconds. */
  | { kind: 'current'; now: number; seconds: number }
  /** A read "as of T": T <= timestamp + seconds. */
  | { kind: 'as-of'; at: number; seconds: number }
  /** No freshness requirement (GET_TXN, reads addressed by seqNo). */
  | { kind: 'none' };

export interface VerifyMultiSignatureInput {
  /** The `multi_signature` object of a reply. */
  multiSignature: unknown;
  pool: PoolBlsKeys;
  /** Default: current-state freshness with now = the wall clock and DEFAULT_FRESHNESS_SECONDS. */
  freshness?: Freshness;
  /** When given, the signature check is skipped for a multi-signature already verified under the same pool epoch. */
  cache?: MultiSignatureCache;
}

/**
 * Verifies a multi-signature; returns it typed. Throws VerificationError: REPLY_MALFORMED,
 * MULTISIG_DUPLICATE_PARTICIPANT, MULTISIG_UNKNOWN_PARTICIPANT, MULTISIG_TOO_FEW_PARTICIPANTS, MULTISIG_STALE,
 * MULTISIG_INVALID.
 */
export function verifyMultiSignature(input: VerifyMultiSignatureInput): MultiSignature {
  const ms = parseMultiSignature(input.multiSignature);
  const { pool, cache } = input;
  const freshness = input.freshness ?? { kind: 'current', now: Math.floor(Date.now() / 1000), seconds: DEFAULT_FRESHNESS_SECONDS };
  const seen = new Set<string>();
  const keys: Uint8Array[] = [];
  for (const p of ms.participants) {
    if (seen.has(p)) throw new VerificationError(ClientErrorCode.MULTISIG_DUPLICATE_PARTICIPANT, { participant: p });
    seen.add(p);
    const key = pool.blsKeys.get(p);
    if (key === undefined) throw new VerificationError(ClientErrorCode.MULTISIG_UNKNOWN_PARTICIPANT, { participant: p });
    keys.push(key);
  }
  const required = requiredParticipants(pool.validatorCount);
  if (keys.length < required || keys.length === 0) {
    throw new VerificationError(ClientErrorCode.MULTISIG_TOO_FEW_PARTICIPANTS, { participants: keys.length, required });
  }
  checkFreshness(ms.value, freshness);
  // a multi-signature equal to one verified under this epoch: its aggregate was verified; its participants are checked
  // above with the keys of this read (a caller may share one cache across key sets without an epoch)
  if (cache !== undefined && cache.holds(ms, pool.epoch)) return ms;
  let sig: Uint8Array;
  try {
    sig = b58decode(ms.signature);
  } catch {
    throw malformed('signature', 'not base58');
  }
  if (!blsVerifyAggregate(keys, multiSignatureMessage(ms.value), sig)) {
    throw new VerificationError(ClientErrorCode.MULTISIG_INVALID, { participants: ms.participants.length });
  }
  cache?.add(ms, pool.epoch);
  return ms;
}

function checkFreshness(value: MultiSignatureValue, f: Freshness): void {
  if (f.kind === 'none') return;
  const ok = f.kind === 'current' ? f.now - value.timestamp <= f.seconds : f.at <= value.timestamp + f.seconds;
  if (!ok) {
    throw new VerificationError(ClientErrorCode.MULTISIG_STALE, {
      timestamp: value.timestamp,
      ...(f.kind === 'current' ? { now: f.now } : { asOf: f.at }),
      freshnessSeconds: f.seconds,
    });
  }
}

/** A multi-signature kept by MultiSignatureCache: the parts it is made of, participants sorted. */
interface Kept {
  signature: string;
  participants: readonly string[];
  value: MultiSignatureValue;
}

/** The participants in sorted order (the list itself when it is sorted already). */
function sortedParticipants(ps: readonly string[]): readonly string[] {
  for (let i = 1; i < ps.length; i++) if (ps[i - 1] > ps[i]) return [...ps].sort();
  return ps;
}

/** Whether `ms` is the multi-signature `k` was made from: the same signature, participants (in any order) and value. */
function sameAsKept(k: Kept, ms: MultiSignature): boolean {
  const v = ms.value;
  const kv = k.value;
  if (
    k.signature !== ms.signature ||
    kv.state_root_hash !== v.state_root_hash ||
    kv.timestamp !== v.timestamp ||
    kv.ledger_id !== v.ledger_id ||
    kv.pool_state_root_hash !== v.pool_state_root_hash ||
    kv.txn_root_hash !== v.txn_root_hash ||
    k.participants.length !== ms.participants.length
  )
    return false;
  const ps = sortedParticipants(ms.participants);
  for (let i = 0; i < ps.length; i++) if (ps[i] !== k.participants[i]) return false;
  return true;
}

/**
 * Multi-signatures already verified, by state root (bounded, oldest root evicted first). Under one root it keeps the
 * exact multi-signatures (signature, sorted participants, value) verified under a pool epoch, up to
 * `perRoot` of them: honest nodes aggregate the first n-f COMMITs each received, so they answer reads of the same root
 * with different participants and signatures, and a client reading from several nodes would otherwise verify again
 * at every change of node. Anything not held is verified again. A read finds its multi-signature by comparing its parts
 * with those kept (holds).
 */
export class MultiSignatureCache {
  private readonly entries: BoundedFifo<string, { kept: Kept[]; epoch: number | string | undefined }>;

  constructor(
    maxEntries = 1024,
    private readonly perRoot = 8,
  ) {
    this.entries = new BoundedFifo(maxEntries);
  }

  /** Whether `ms` (its signature, participants in any order and value) was verified under `epoch`. */
  holds(ms: MultiSignature, epoch: number | string | undefined): boolean {
    const e = this.entries.get(ms.value.state_root_hash);
    if (e === undefined || e.epoch !== epoch) return false;
    for (const k of e.kept) if (sameAsKept(k, ms)) return true;
    return false;
  }

  /** Keeps `ms`, verified under `epoch` (once: a multi-signature held already is not kept again). */
  add(ms: MultiSignature, epoch: number | string | undefined): void {
    if (this.holds(ms, epoch)) return;
    const v = ms.value;
    this.keep(v.state_root_hash, epoch, {
      signature: ms.signature,
      participants: [...sortedParticipants(ms.participants)],
      value: {
        ledger_id: v.ledger_id,
        pool_state_root_hash: v.pool_state_root_hash,
        state_root_hash: v.state_root_hash,
        timestamp: v.timestamp,
        txn_root_hash: v.txn_root_hash,
      },
    });
  }

  private keep(root: string, epoch: number | string | undefined, k: Kept): void {
    const e = this.entries.get(root);
    const kept = e !== undefined && e.epoch === epoch ? e.kept : [];
    kept.push(k);
    if (kept.length > this.perRoot) kept.shift();
    this.entries.setNewest(root, { kept, epoch });
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}
