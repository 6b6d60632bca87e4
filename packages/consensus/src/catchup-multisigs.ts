// BLS multi-signatures transferred with catch-up (formats.md §12.1: they cannot be recomputed, so a
// node that caught up would otherwise serve reads of the caught-up roots without one). A Quire
// extension of CATCHUP_REP, audit ledger only: `multiSigs`, MultiSigTuples.
// - Seeder (`multiSigsForAuditTxns`): the multi-signatures it stores for the state roots named by the
//   reply's audit txns, one per root.
// - Leecher (`CaughtUpMultiSigs`): an entry is kept only when it is well formed and its (ledger id,
//   state root) is named by the audit txns of the reply that carried it (whose consistency proof
//   must verify for anything of the reply to be stored). It is checked once its pool state root is
//   one this node knows (at once, or after the pool ledger has caught up): at least n−f distinct
//   participants, all validators of the registry at that root, and an aggregate that verifies under
//   their keys at that root (`ConsensusCrypto.blsVerifyMulti`; the ones checkable together are first verified
//   in one `blsVerifyMultiBatch`, and one by one only when that fails). A valid one is stored in the write
//   of the caught-up txns that complete its ledger (`appendCaughtUp(..., multiSigs)`), so that it
//   never names a txn root the node does not have; one that becomes checkable only after that
//   write is stored at the end of catch-up (`storeMultiSignatures`). A bad one is dropped, counted
//   and logged, and the sender suspected; catch-up itself goes on.
import { multiSignatureProblem } from '@quire/storage/proofs';
import type { CoreContext } from './context.js';
import { Suspicion } from './context.js';
import type { BatchExecutor } from './interfaces.js';
import { type MultiSigTuple, type MultiSignature, multiSigFromTuple, multiSigToTuple } from './messages.js';
import { MultiSigVerdict, checkBeforeSignature, checkMultiSignature, registryAtPoolRoot } from './multisig-check.js';
import { parseMultiSigTuple } from './parse.js';

/** Why a received multi-signature was not stored. */
export const CaughtUpMultiSigDrop = {
  /** not a multi-signature tuple, or roots / signature of the wrong length */
  MALFORMED: 'malformed',
  /** its ledger id and state root are not named by the audit txns of the reply that carried it */
  UNNAMED_ROOT: 'unnamedRoot',
  /** its pool state root is still unknown when catch-up is complete */
  UNKNOWN_POOL_ROOT: 'unknownPoolRoot',
  /** duplicate participants, participants that are not validators at the pool state root, or fewer than n−f */
  PARTICIPANTS: 'participants',
  /** the aggregate does not verify under the participants' keys at the pool state root */
  SIGNATURE: 'signature',
  /** sent by a peer whose other multi-signatures failed a check: not verified */
  FAULTY_SENDER: 'faultySender',
  /** more waiting for their pool state root than are kept (the oldest go) */
  OVERFLOW: 'overflow',
} as const;
export type CaughtUpMultiSigDrop = (typeof CaughtUpMultiSigDrop)[keyof typeof CaughtUpMultiSigDrop];

/** multi-signatures kept while their pool state root is unknown (~0.5 KB each) */
const MAX_WAITING = 100_000;

/**
 * Seeder: the stored multi-signatures of the state roots the audit txns name, one per root (the
 * store holds one per root: two ledgers with equal roots, e.g. both empty, share it), in the order
 * the txns name them. `cache` (state
 * root -> tuple or null) spares the lookups when a reply is split.
 */
export function multiSigsForAuditTxns(ex: BatchExecutor, auditTxns: readonly unknown[], cache: Map<string, MultiSigTuple | null>): MultiSigTuple[] {
  const out: MultiSigTuple[] = [];
  const sent = new Set<string>();
  for (const t of auditTxns) {
    for (const { ledgerId, stateRoot } of ex.auditStateRoots(t)) {
      if (sent.has(stateRoot)) continue;
      let tuple = cache.get(stateRoot);
      if (tuple === undefined) {
        const ms = ex.multiSignatureFor(stateRoot);
        tuple = ms !== undefined && ms.value.state_root_hash === stateRoot ? multiSigToTuple(ms) : null;
        cache.set(stateRoot, tuple);
      }
      if (tuple === null || tuple[2][0] !== ledgerId) continue;
      sent.add(stateRoot);
      out.push(tuple);
    }
  }
  return out;
}

/** A received multi-signature that passed the shape and named-root checks. */
export interface CaughtUpMultiSig {
  ms: MultiSignature;
  from: string;
  /** passed the participant and signature checks (waits only for its ledger to be caught up) */
  verified?: boolean;
}

/** The outcome of one check pass: the valid ones to store, and what to keep once the write is known. */
export interface MultiSigCheck {
  /** valid, one per state root (the latest timestamp) */
  valid: MultiSignature[];
  /** `stored`: the write that carries `valid` was made; otherwise `incoming` is forgotten and the rest kept */
  settle(stored: boolean): void;
}

/** Leecher side: the multi-signatures received during one catch-up, until stored or dropped. */
export class CaughtUpMultiSigs {
  /** received, waiting for their pool state root to become known (insertion order = age) */
  private waiting: CaughtUpMultiSig[] = [];
  stored = 0;
  readonly dropped = new Map<CaughtUpMultiSigDrop, number>();

  constructor(private readonly ctx: CoreContext) {}

  /** A new catch-up: what an unfinished one received is forgotten. */
  reset(): void {
    this.waiting = [];
  }

  get waitingCount(): number {
    return this.waiting.length;
  }

  /**
   * The entries of one audit-ledger reply that are well formed and name a state root of its audit
   * txns; the others are dropped (the sender is suspected).
   */
  candidates(from: string, auditTxns: readonly unknown[], raw: readonly unknown[] | undefined): CaughtUpMultiSig[] {
    if (raw === undefined || raw.length === 0) return [];
    const ex = this.ctx.modules.executor;
    const named = new Set<string>();
    for (const t of auditTxns) for (const r of ex.auditStateRoots(t)) named.add(`${r.ledgerId}|${r.stateRoot}`);
    const out: CaughtUpMultiSig[] = [];
    for (const entry of raw) {
      let ms: MultiSignature;
      try {
        ms = multiSigFromTuple(parseMultiSigTuple('CATCHUP_REP', entry, 'multiSigs'));
      } catch {
        this.drop(from, CaughtUpMultiSigDrop.MALFORMED, true);
        continue;
      }
      if (multiSignatureProblem(ms) !== undefined) this.drop(from, CaughtUpMultiSigDrop.MALFORMED, true, ms);
      else if (!named.has(`${ms.value.ledger_id}|${ms.value.state_root_hash}`)) this.drop(from, CaughtUpMultiSigDrop.UNNAMED_ROOT, true, ms);
      else out.push({ ms, from });
    }
    return out;
  }

  /**
   * Checks the waiting multi-signatures and `incoming` whose pool state root this node knows now;
   * valid ones of a ledger for which `storable` is false keep waiting. `final`: catch-up is
   * complete, so an unknown pool state root stays unknown (dropped).
   */
  check(incoming: readonly CaughtUpMultiSig[], final: boolean, storable: (ledgerId: number) => boolean): MultiSigCheck {
    const ctx = this.ctx;
    const before = this.waiting;
    const stillWaiting: CaughtUpMultiSig[] = [];
    const valid: CaughtUpMultiSig[] = [];
    const faulty = new Set<string>();
    const registries = new Map<string, readonly string[] | undefined>();
    const all = [...before, ...incoming];
    const batchVerified = this.verifyTogether(all, registries);
    for (const c of all) {
      const v = c.ms.value;
      if (faulty.has(c.from)) {
        this.drop(c.from, CaughtUpMultiSigDrop.FAULTY_SENDER, false, c.ms);
        continue;
      }
      if (c.verified !== true) {
        const root = v.pool_state_root_hash;
        // a root missing from this node's pool state (older than its pool genesis) has no keys here:
        // unknown, like a root not reached yet, never a bad signature of an honest sender
        if (!registries.has(root)) registries.set(root, registryAtPoolRoot(ctx, root));
        // the check PRE-PREPAREs get too (multisig-check.ts), its signature verified with the others when they all verify
        const verdict = batchVerified.has(c) ? MultiSigVerdict.VALID : checkMultiSignature(ctx, c.ms, registries.get(root));
        if (verdict === MultiSigVerdict.UNKNOWN_POOL_ROOT) {
          if (final) this.drop(c.from, CaughtUpMultiSigDrop.UNKNOWN_POOL_ROOT, false, c.ms);
          else stillWaiting.push(c);
          continue;
        }
        if (verdict !== MultiSigVerdict.VALID) {
          const reason =
            verdict === MultiSigVerdict.SIGNATURE
              ? CaughtUpMultiSigDrop.SIGNATURE
              : verdict === MultiSigVerdict.MALFORMED
                ? CaughtUpMultiSigDrop.MALFORMED
                : CaughtUpMultiSigDrop.PARTICIPANTS;
          this.drop(c.from, reason, true, c.ms);
          faulty.add(c.from);
          continue;
        }
        c.verified = true;
      }
      if (storable(v.ledger_id)) valid.push(c);
      else stillWaiting.push(c);
    }
    // one per state root: the latest value (a root kept by empty batches is signed again at each)
    const byRoot = new Map<string, CaughtUpMultiSig>();
    for (const c of valid) {
      const prev = byRoot.get(c.ms.value.state_root_hash);
      if (prev === undefined || c.ms.value.timestamp >= prev.ms.value.timestamp) byRoot.set(c.ms.value.state_root_hash, c);
    }
    const chosen = [...byRoot.values()];
    return {
      valid: chosen.map((c) => c.ms),
      settle: (stored) => {
        const incomingSet = new Set(incoming);
        if (stored) this.stored += chosen.length;
        // not stored: the ones received before stay (checked again with the next write), the reply's go
        const kept = stored ? stillWaiting : [...stillWaiting, ...chosen].filter((c) => !incomingSet.has(c));
        const over = kept.length - MAX_WAITING;
        if (over > 0) for (const c of kept.splice(0, over)) this.drop(c.from, CaughtUpMultiSigDrop.OVERFLOW, false, c.ms);
        this.waiting = kept;
      },
    };
  }

  /**
   * The candidates not verified yet that pass every check but their signature, verified together in one
   * `blsVerifyMultiBatch` (about half the cost of verifying them one by one): all of them when it succeeds; none
   * when it fails, or there are fewer than two, or the crypto module has no batch verification (the check then
   * verifies each one on its own, as it would without this, and finds the bad one). Fills `registries`.
   */
  private verifyTogether(candidates: readonly CaughtUpMultiSig[], registries: Map<string, readonly string[] | undefined>): Set<CaughtUpMultiSig> {
    const ctx = this.ctx;
    const batch = ctx.modules.crypto.blsVerifyMultiBatch?.bind(ctx.modules.crypto);
    if (batch === undefined) return new Set();
    const pending: CaughtUpMultiSig[] = [];
    for (const c of candidates) {
      if (c.verified === true) continue;
      const root = c.ms.value.pool_state_root_hash;
      if (!registries.has(root)) registries.set(root, registryAtPoolRoot(ctx, root));
      if (checkBeforeSignature(c.ms, registries.get(root)) === MultiSigVerdict.VALID) pending.push(c);
    }
    if (pending.length < 2) return new Set();
    let ok: boolean;
    try {
      ok = batch(pending.map((c) => ({ participants: c.ms.participants, value: c.ms.value, signature: c.ms.signature })));
    } catch {
      ok = false;
    }
    return ok ? new Set(pending) : new Set();
  }

  private drop(from: string, reason: CaughtUpMultiSigDrop, suspect: boolean, ms?: MultiSignature): void {
    this.dropped.set(reason, (this.dropped.get(reason) ?? 0) + 1);
    const data = { peer: from, reason, ...(ms !== undefined ? { ledgerId: ms.value.ledger_id, stateRoot: ms.value.state_root_hash } : {}) };
    // evidence against the sender is a warning; the follow-ups of one (unverified, unknown root) are not
    if (suspect) {
      this.ctx.modules.logger?.warn(data, 'catch-up multi-signature dropped');
      this.ctx.suspect(from, Suspicion.INVALID_CATCHUP_DATA);
    } else this.ctx.modules.logger?.debug(data, 'catch-up multi-signature dropped');
  }
}
