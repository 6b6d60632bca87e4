// Normal-case ordering (consensus.md §3): accepting PRE-PREPAREs, PREPARE, COMMIT with BLS shares,
// the order condition and ordering, reverting unordered batches. Batch creation by the primary
// lives in batching.ts; checkpoints in checkpoints.ts.
import { BoundedFifo, BoundedFifoSet } from '@quire/common';
import type { CoreContext, CoreStateWriters } from './context.js';
import { Suspicion } from './context.js';
import { batchDigest, decodeDiscarded, encodeDiscarded, multiSigValue } from './digest.js';
import type { AppliedBatch, BatchStages, CommittedBatch, ConsensusCrypto } from './interfaces.js';
import type { RequestIntake } from './intake.js';
import type { BatchId, ClientRequestBody, Commit, MultiSignature, MultiSignatureValue, Prepare, PrePrepare } from './messages.js';
import { multiSigFromTuple } from './messages.js';
import { MultiSigVerdict, checkMultiSignature, registryAtPoolRoot } from './multisig-check.js';
import { type BatchRecord, newRecord, prepareMatches, prepareOf, samePrePrepare } from './three-pc-log.js';

export interface OrderingHooks {
  /** after batch k was ordered (checkpoints, batching) */
  onOrdered(ppSeqNo: number, applied: AppliedBatch): void;
  /** a message must wait (future view or above the window) */
  stash(from: string, msg: PrePrepare | Prepare | Commit): void;
  /** a PRE-PREPARE of an earlier view fetched from `relayer` failed its checks: fetch it elsewhere (#15 F7) */
  onFetchedRejected(ppSeqNo: number, relayer: string): void;
  /** `from` COMMITted batch `ppSeqNo`, above this node's last ordered one, in this view or an earlier one */
  onCommitAbove(from: string, ppSeqNo: number): void;
}

type AcceptResult = 'accepted' | 'wait' | 'rejected';

/**
 * Check 12's outcome for a PRE-PREPARE's multi-signature over a batch this node applied itself, other than the one it
 * holds: not verified (a second BLS verification per batch, for a copy of what this node builds from the COMMITs), not
 * stored, and not a reason to refuse the PRE-PREPARE (docs/consensus-deviations.md §12).
 */
const OWN_VALUE = 'ownValue';
/** values of known-valid multi-signatures kept (a few batches in flight, their PRE-PREPAREs a few behind) */
const KNOWN_VALID_KEPT = 64;
/** values of applied batches kept: more than a 3PC log holds between two stable checkpoints */
const APPLIED_VALUES_KEPT = 1024;
/** pool state roots whose registry is kept (those of the batches applied lately) */
const REGISTRIES_KEPT = 256;
/** verified multi-signatures kept (check 12 of the PRE-PREPAREs received lately) */
const VERIFIED_MULTI_SIGS_KEPT = 1024;

function valueKeyOf(v: MultiSignatureValue): string {
  return `${v.ledger_id}|${v.pool_state_root_hash}|${v.state_root_hash}|${v.timestamp}|${v.txn_root_hash}`;
}

function sameParticipants(a: MultiSignature, b: MultiSignature): boolean {
  return a.participants.length === b.participants.length && [...a.participants].sort().join(',') === [...b.participants].sort().join(',');
}

export class Ordering {
  /** the 3PC log of the current view, by ppSeqNo */
  readonly log = new Map<number, BatchRecord>();
  /** when each batch of the log was applied and prepared here (write-path latency metrics only) */
  private readonly stageTimes = new Map<number, { appliedAt: number; preparedAt?: number }>();
  /** PRE-PREPAREs from the primary not yet applied (gap, missing requests, wrong time) */
  readonly held = new Map<number, PrePrepare>();
  /** BatchIDs pre-prepared / prepared by this node since the stable checkpoint (view change) */
  preprepared: BatchId[] = [];
  prepared: BatchId[] = [];
  /** multi-signatures built since the last PRE-PREPARE this node sent */
  pendingMultiSigs: MultiSignature[] = [];
  /** ppTime of the last ordered batch per ledger with state (freshness; kept in the context for the monitor) */
  get lastUpdate(): Map<number, number> {
    return this.ctx.lastUpdate;
  }
  /** pool state root -> the registry in force with it (R_uncommitted when a batch was applied on it) */
  private readonly registryAtRoot = new BoundedFifo<string, readonly string[]>(REGISTRIES_KEPT);
  /** R_uncommitted: the registry after the last applied batch; undefined when none changed it (R_committed) */
  uncommittedRegistry: readonly string[] | undefined;
  /** multi-sig signatures already verified (PRE-PREPARE check 12) */
  private readonly verifiedMultiSigs = new BoundedFifoSet<string>(VERIFIED_MULTI_SIGS_KEPT);
  /**
   * value -> a multi-signature over it known valid here, the last KNOWN_VALID_KEPT: this node's own (`own`: built from
   * COMMIT shares whose aggregate verified when it ordered the batch) or one a PRE-PREPARE carried that passed check 12.
   * BLS signatures are unique (one valid signature per key and message), so a multi-signature over the same value and
   * participants is valid exactly when its bytes are these: the node's own aggregate and the PRE-PREPARE's copy of the
   * same batch's cost one verification between them instead of one each (see `checkMultiSig`, `adoptKnownValid`).
   */
  private readonly knownValid = new BoundedFifo<string, { ms: MultiSignature; own: boolean }>(KNOWN_VALID_KEPT);
  /** values the batches this node applied sign (the last APPLIED_VALUES_KEPT): it builds their multi-signatures itself */
  private readonly appliedValues = new BoundedFifoSet<string>(APPLIED_VALUES_KEPT);
  /**
   * PRE-PREPAREs of earlier views re-injected from a peer's OLD_VIEW_PREPREPARE_REP -> that peer
   * (consensus.md §6.7): the digest binds ppTime and requests but not the roots, the discarded list
   * or the multi-signatures, so a copy failing those checks is blamed on the relaying peer, not on
   * the new primary, and is fetched from another peer (#15 F7).
   */
  readonly fetched = new WeakMap<PrePrepare, string>();
  /**
   * Restored from the vote journal after a restart (#15 F8): ppSeqNo -> the view and digest this
   * node pre-prepared (and PREPAREd) it with before the crash. A PRE-PREPARE of that view with
   * another digest is the primary equivocating to an amnesiac node: refused (vote 60).
   */
  readonly votedBefore = new Map<number, { viewNo: number; digest: string }>();

  constructor(
    private readonly ctx: CoreContext,
    private readonly intake: RequestIntake,
    private readonly ordered: CoreStateWriters['ordered'],
    private readonly hooks: OrderingHooks,
  ) {}

  record(ppSeqNo: number): BatchRecord {
    let r = this.log.get(ppSeqNo);
    if (r === undefined) {
      r = newRecord(ppSeqNo);
      this.log.set(ppSeqNo, r);
    }
    return r;
  }

  /** Common admission of a 3PC message: 'process', or it was stashed / discarded. */
  private admit(from: string, msg: PrePrepare | Prepare | Commit): boolean {
    const ctx = this.ctx;
    // evidence that the pool orders past this node (in the view it left, or in this one on a
    // batch an equivocating primary gave it in another version): see Repair.catchUpIfLeftBehind
    if (msg.op === 'COMMIT' && msg.viewNo <= ctx.viewNo && msg.ppSeqNo > ctx.lastOrdered.ppSeqNo) this.hooks.onCommitAbove(from, msg.ppSeqNo);
    if (msg.viewNo < ctx.viewNo || msg.ppSeqNo <= ctx.h) return false;
    if (msg.viewNo > ctx.viewNo || msg.ppSeqNo > ctx.H || ctx.waitingForNewView || ctx.catchingUp) {
      this.hooks.stash(from, msg);
      return false;
    }
    if (msg.ppSeqNo <= ctx.lastOrdered.ppSeqNo) return false;
    // after a view change, nothing beyond the first new batch until it is ordered
    if (msg.ppSeqNo > ctx.prevViewPrepareCert + 1 && ctx.lastOrdered.ppSeqNo < ctx.prevViewPrepareCert + 1) {
      this.hooks.stash(from, msg);
      return false;
    }
    return true;
  }

  // ---- PRE-PREPARE ------------------------------------------------------------------------------

  onPrePrepare(from: string, pp: PrePrepare): void {
    const ctx = this.ctx;
    if (!this.admit(from, pp)) return;
    if (from !== ctx.primaryName(pp.viewNo)) {
      ctx.suspect(from, Suspicion.PP_FROM_NON_PRIMARY);
      return;
    }
    // its own PRE-PREPARE back (an echo) is the one it holds, below; one it no longer holds (a
    // restarted primary whose last write was torn, relayed back by peers that ordered it) is taken
    // like any other, or this node could never order the batch the others ordered without it
    if (batchDigest(pp.originalViewNo ?? pp.viewNo, pp.ppTime, pp.reqIdr, pp.ledgerId) !== pp.digest) {
      ctx.suspect(from, Suspicion.PPR_DIGEST_WRONG, true);
      return;
    }
    const existing = this.log.get(pp.ppSeqNo)?.pp ?? this.held.get(pp.ppSeqNo);
    if (existing !== undefined) {
      if (!samePrePrepare(existing, pp)) ctx.suspect(from, Suspicion.PPR_EQUIVOCATION, true);
      return;
    }
    ctx.lastProposalAt = ctx.now();
    this.held.set(pp.ppSeqNo, pp);
    this.processHeld();
  }

  /** Applies held PRE-PREPAREs in sequence while they can be accepted. */
  processHeld(): void {
    if (this.ctx.catchingUp || this.ctx.waitingForNewView) return;
    for (;;) {
      const k = this.ctx.lastPrePrepareSeqNo + 1;
      const pp = this.held.get(k);
      if (pp === undefined || pp.viewNo !== this.ctx.viewNo) return;
      const r = this.tryAccept(pp);
      if (r === 'wait') return;
      this.held.delete(k);
      if (r === 'rejected') return;
    }
  }

  private timeAcceptable(pp: PrePrepare, rec: BatchRecord | undefined): boolean {
    const ctx = this.ctx;
    const dev = Math.abs(pp.ppTime - ctx.modules.clock.utcSeconds());
    if (pp.ppTime >= ctx.lastAcceptedPPTime && dev <= ctx.opts.acceptableDeviationPrePrepareSec) return true;
    // rescued by f+1 PREPAREs carrying the same ppTime
    let same = 0;
    if (rec !== undefined) for (const p of rec.prepares.values()) if (p.ppTime === pp.ppTime && p.digest === pp.digest) same++;
    return same >= ctx.quorums.timestamp && pp.ppTime >= ctx.lastAcceptedPPTime;
  }

  private tryAccept(pp: PrePrepare): AcceptResult {
    const ctx = this.ctx;
    const ex = ctx.modules.executor;
    const primary = ctx.primaryName(pp.viewNo);
    const rec = this.log.get(pp.ppSeqNo);
    if (!this.timeAcceptable(pp, rec)) {
      const r = this.record(pp.ppSeqNo);
      if (!r.timeSuspected) {
        r.timeSuspected = true;
        ctx.suspect(primary, Suspicion.PPR_TIME_WRONG, true);
      }
      return 'wait';
    }
    const voted = this.votedBefore.get(pp.ppSeqNo);
    if (voted !== undefined && voted.viewNo === pp.viewNo && voted.digest !== pp.digest) return this.refuse(pp, primary, Suspicion.PPR_EQUIVOCATION);
    if (!this.intake.ensureKnown(pp.reqIdr)) return 'wait';
    const payloads = new Set<string>();
    const requests: ClientRequestBody[] = [];
    for (const d of pp.reqIdr) {
      const entry = this.intake.entries.get(d);
      // ensureKnown holds them all; a request not held is waited for, as ensureKnown would have it
      if (entry === undefined) return 'wait';
      const info = entry.info;
      // the digest covers the requests, not the ledger: the requests must fix it (formats.md §10.2)
      if (info.ledgerId !== pp.ledgerId) return this.refuse(pp, primary, Suspicion.PPR_DIGEST_WRONG);
      const pd = info.payloadDigest;
      if (payloads.has(pd) || this.intake.payloadsInBatches.has(pd) || ex.isPayloadCommitted(pd)) {
        return this.refuse(pp, primary, Suspicion.PPR_WITH_ORDERED_REQUEST);
      }
      payloads.add(pd);
      requests.push(entry.request);
    }
    if (pp.poolStateRootHash !== ex.uncommittedPoolStateRoot()) return this.refuse(pp, primary, Suspicion.PPR_POOL_STATE_ROOT_HASH_WRONG);
    // check 12: a multi-signature that is bad (not merely unverifiable here) refuses the PRE-PREPARE
    // before this node PREPAREs it; one at an unknown pool state root is never stored (order())
    for (const t of pp.blsMultiSigs ?? []) {
      const verdict = this.checkMultiSig(multiSigFromTuple(t));
      if (verdict !== MultiSigVerdict.VALID && verdict !== MultiSigVerdict.UNKNOWN_POOL_ROOT && verdict !== OWN_VALUE) {
        ctx.modules.logger?.debug({ primary, ppSeqNo: pp.ppSeqNo, verdict }, 'PRE-PREPARE with a bad multi-signature');
        return this.refuse(pp, primary, Suspicion.PPR_BLS_MULTISIG_WRONG);
      }
    }
    const originalViewNo = pp.originalViewNo ?? pp.viewNo;
    const regBefore = this.uncommittedRegistry;
    const applied = ex.applyBatch({
      ledgerId: pp.ledgerId,
      requests,
      digests: pp.reqIdr,
      ppTime: pp.ppTime,
      ppSeqNo: pp.ppSeqNo,
      originalViewNo,
      primaries: [ctx.primaryName(originalViewNo)],
      digest: pp.digest,
    });
    let code = 0;
    if (encodeDiscarded(applied.discarded) !== pp.discarded) code = Suspicion.PPR_REJECT_WRONG;
    else if (applied.stateRoot !== pp.stateRootHash) code = Suspicion.PPR_STATE_WRONG;
    else if (applied.txnRoot !== pp.txnRootHash) code = Suspicion.PPR_TXN_WRONG;
    else if (applied.auditRoot !== pp.auditTxnRootHash) code = Suspicion.PPR_AUDIT_TXN_ROOT_HASH_WRONG;
    if (code !== 0) {
      ex.revertLastBatch();
      this.uncommittedRegistry = regBefore;
      return this.refuse(pp, primary, code);
    }
    this.recordApplied(pp, applied);
    const r = this.record(pp.ppSeqNo);
    if (ctx.isPrimary()) {
      // a batch re-proposed by this node as the new primary: no PREPARE from the primary
      this.checkPrepared(r);
      return 'accepted';
    }
    const prepare = prepareOf(pp);
    r.ownPrepare = prepare;
    r.prepares.set(ctx.name, prepare);
    ctx.broadcast(prepare);
    this.checkPrepared(r);
    return 'accepted';
  }

  /**
   * A PRE-PREPARE that fails its checks: evidence against the primary (a vote), or, for a copy of an
   * earlier view's PRE-PREPARE fetched from a peer, against that peer only (no vote: the new primary
   * may be right), and another copy is fetched (consensus.md §6.7, #15 F7).
   */
  private refuse(pp: PrePrepare, primary: string, code: number): 'rejected' {
    const relayer = this.fetched.get(pp);
    if (relayer === undefined) {
      this.ctx.suspect(primary, code, true);
    } else {
      this.ctx.suspect(relayer, code);
      this.hooks.onFetchedRejected(pp.ppSeqNo, relayer);
    }
    return 'rejected';
  }

  /** Bookkeeping shared by the primary (own batch) and backups (accepted PRE-PREPARE). */
  recordApplied(pp: PrePrepare, applied: AppliedBatch): void {
    const ctx = this.ctx;
    const r = this.record(pp.ppSeqNo);
    r.pp = pp;
    r.applied = applied;
    this.stageTimes.set(pp.ppSeqNo, { appliedAt: ctx.now() });
    for (const l of applied.signedLedgers) {
      const key = valueKeyOf(multiSigValue(l, pp.poolStateRootHash, pp.ppTime));
      this.appliedValues.addNewest(key);
    }
    // PREPAREs that arrived first and do not match are dropped now
    for (const [from, p] of r.prepares) {
      if (!prepareMatches(p, pp)) {
        r.prepares.delete(from);
        ctx.suspect(from, Suspicion.PREPARE_WRONG_DIGEST);
      }
    }
    ctx.lastPrePrepareSeqNo = pp.ppSeqNo;
    ctx.lastAcceptedPPTime = pp.ppTime;
    this.noteRegistryAt(pp.poolStateRootHash, applied);
    this.intake.markInBatch(pp.reqIdr, applied.discarded);
    this.preprepared.push(batchIdOf(pp));
  }

  private noteRegistryAt(poolStateRoot: string, applied: AppliedBatch): void {
    this.registryAtRoot.set(poolStateRoot, this.uncommittedRegistry ?? [...this.ctx.validators]);
    if (applied.nodeReg.length > 0) this.uncommittedRegistry = [...applied.nodeReg];
  }

  /**
   * PRE-PREPARE check 12 on one multi-signature (multisig-check.ts, the check catch-up makes too):
   * n−f distinct validators of the registry in force at the value's pool state root, and an
   * aggregate that verifies under their keys at that root. The registry is the one this node applied
   * a batch with at that root, else the executor's. A root this node does not know (older than its
   * pool genesis) gives UNKNOWN_POOL_ROOT: the PRE-PREPARE is not refused for it (the n−f nodes
   * that ordered the batch it signs checked it), but the multi-signature is never stored here.
   */
  private checkMultiSig(ms: MultiSignature): MultiSigVerdict | typeof OWN_VALUE {
    const ctx = this.ctx;
    // over a value this node holds a valid multi-signature of: the same participants and bytes are that one (a different
    // signature over the same participants cannot verify: the full check below finds it bad); other participants over
    // a batch this node applied itself are left unchecked and unstored: it builds (or built) its own multi-signature of
    // the batch from the COMMITs, and that one is stored
    const valueKey = valueKeyOf(ms.value);
    const known = this.knownValid.get(valueKey);
    if (known !== undefined && sameParticipants(known.ms, ms)) {
      if (known.ms.signature === ms.signature) return MultiSigVerdict.VALID;
    } else if (known?.own === true || this.appliedValues.has(valueKey)) return OWN_VALUE;
    const root = ms.value.pool_state_root_hash;
    const registry = this.registryAtRoot.get(root) ?? registryAtPoolRoot(ctx, root);
    const key = `${ms.signature}|${ms.participants.join(',')}|${JSON.stringify(ms.value)}|${registry?.join(',') ?? ''}`;
    if (this.verifiedMultiSigs.has(key)) return MultiSigVerdict.VALID;
    const verdict = checkMultiSignature(ctx, ms, registry);
    if (verdict === MultiSigVerdict.VALID) {
      this.noteVerified(key);
      if (known === undefined) this.noteKnownValid(ms, false);
    }
    return verdict;
  }

  private noteKnownValid(ms: MultiSignature, own: boolean): void {
    const key = valueKeyOf(ms.value);
    this.knownValid.setNewest(key, { ms, own });
  }

  /**
   * The multi-signatures of batch `r` from a valid one already known here for each of its values (a PRE-PREPARE
   * carried it and it passed check 12) whose participants all COMMITted here: when their shares aggregate to exactly
   * those bytes, they are valid as a whole without a verification (BLS signatures are unique), as after an aggregate
   * verification of our own. Undefined when there is none, or the shares held here do not make it.
   */
  private adoptKnownValid(r: BatchRecord, values: readonly MultiSignatureValue[], candidates: readonly string[]): MultiSignature[] | undefined {
    const known = values.map((v) => this.knownValid.get(valueKeyOf(v))?.ms);
    const first = known[0];
    if (first === undefined || !known.every((k) => k !== undefined && sameParticipants(k, first))) return undefined;
    const who = [...first.participants].sort();
    if (who.length < this.ctx.quorums.commit || !who.every((p) => candidates.includes(p))) return undefined;
    const crypto = this.ctx.modules.crypto;
    const out: MultiSignature[] = [];
    for (const [i, v] of values.entries()) {
      const shares: string[] = [];
      for (const c of who) {
        const share = r.commits.get(c)?.blsSigs[String(v.ledger_id)];
        if (share === undefined) return undefined;
        shares.push(share);
      }
      const sig = crypto.blsAggregate(shares);
      if (sig === undefined || sig !== known[i]?.signature) return undefined;
      out.push({ signature: sig, participants: [...who], value: v });
    }
    for (const c of who) r.verifiedCommitters.add(c);
    return out;
  }

  private noteVerified(key: string): void {
    this.verifiedMultiSigs.add(key);
  }

  /** The multi-signatures of a PRE-PREPARE that may be stored: those that pass check 12 here. */
  private storableMultiSigs(pp: PrePrepare): MultiSignature[] {
    const out: MultiSignature[] = [];
    for (const t of pp.blsMultiSigs ?? []) {
      const ms = multiSigFromTuple(t);
      const verdict = this.checkMultiSig(ms);
      if (verdict === MultiSigVerdict.VALID) out.push(ms);
      else if (verdict !== OWN_VALUE)
        this.ctx.modules.logger?.debug(
          { ppSeqNo: pp.ppSeqNo, ledgerId: ms.value.ledger_id, poolStateRoot: ms.value.pool_state_root_hash, verdict },
          'multi-signature of a PRE-PREPARE not stored',
        );
    }
    return out;
  }

  // ---- PREPARE ----------------------------------------------------------------------------------

  onPrepare(from: string, p: Prepare): void {
    const ctx = this.ctx;
    if (!this.admit(from, p)) return;
    if (from === ctx.primaryName(p.viewNo)) {
      ctx.suspect(from, Suspicion.PREPARE_FROM_PRIMARY);
      return;
    }
    const r = this.record(p.ppSeqNo);
    const prev = r.prepares.get(from);
    if (prev !== undefined) {
      if (JSON.stringify(prev) !== JSON.stringify(p)) ctx.suspect(from, Suspicion.DUPLICATE_PREPARE);
      return;
    }
    if (r.pp !== undefined && !prepareMatches(p, r.pp)) {
      const code =
        p.digest !== r.pp.digest
          ? Suspicion.PREPARE_WRONG_DIGEST
          : p.stateRootHash !== r.pp.stateRootHash
            ? Suspicion.PREPARE_WRONG_STATE
            : p.txnRootHash !== r.pp.txnRootHash
              ? Suspicion.PREPARE_WRONG_TXN
              : Suspicion.PREPARE_WRONG_AUDIT;
      ctx.suspect(from, code);
      return;
    }
    r.prepares.set(from, p);
    if (r.pp === undefined) {
      // may rescue a PRE-PREPARE held for its time
      if (this.held.has(p.ppSeqNo)) this.processHeld();
      return;
    }
    this.checkPrepared(r);
  }

  private checkPrepared(r: BatchRecord): void {
    const ctx = this.ctx;
    if (r.prepared || r.pp === undefined || r.applied === undefined) return;
    const primary = ctx.primaryName(r.pp.viewNo);
    let votes = 0;
    for (const [from, p] of r.prepares) if (from !== primary && ctx.isValidator(from) && prepareMatches(p, r.pp)) votes++;
    if (votes < ctx.quorums.prepare) return;
    r.prepared = true;
    const times = this.stageTimes.get(r.ppSeqNo);
    if (times !== undefined) times.preparedAt = ctx.now();
    this.prepared.push(batchIdOf(r.pp));
    if (!ctx.participating) {
      // an observer orders on the validators' COMMITs and signs nothing
      this.tryOrder();
      return;
    }
    const blsSigs: Record<string, string> = {};
    for (const l of r.applied.signedLedgers) {
      blsSigs[String(l.ledgerId)] = ctx.modules.crypto.blsSign(multiSigValue(l, r.pp.poolStateRootHash, r.pp.ppTime));
    }
    const commit: Commit = { op: 'COMMIT', instId: 0, viewNo: r.pp.viewNo, ppSeqNo: r.ppSeqNo, blsSigs };
    r.ownCommit = commit;
    r.commits.set(ctx.name, commit);
    r.verifiedCommitters.add(ctx.name);
    r.shareChecked.add(ctx.name);
    ctx.broadcast(commit);
    this.tryOrder();
  }

  // ---- COMMIT and ordering ----------------------------------------------------------------------

  onCommit(from: string, c: Commit): void {
    if (!this.admit(from, c)) return;
    const r = this.record(c.ppSeqNo);
    if (r.commits.has(from)) return;
    r.commits.set(from, c);
    if (r.prepared) this.tryOrder();
  }

  /** Orders every batch whose order condition holds, in sequence. */
  tryOrder(): void {
    for (;;) {
      const r = this.log.get(this.ctx.lastOrdered.ppSeqNo + 1);
      // a pool of one (PREPARE quorum n-f-1 = 0): the primary's own batch is prepared as it is
      // sent, since no PREPARE will ever come for it (checkPrepared orders it)
      if (r !== undefined && !r.prepared && this.ctx.quorums.prepare === 0) {
        this.checkPrepared(r);
        if (r.ordered) continue;
      }
      if (r === undefined || r.ordered || !r.prepared || r.pp === undefined || r.applied === undefined) return;
      const multiSigs = this.collectMultiSigs(r, r.pp, r.applied);
      if (multiSigs === undefined) return;
      this.order(r, r.pp, r.applied, multiSigs);
    }
  }

  /** n-f COMMITs whose shares verify (aggregate first, one by one on failure) -> multi-sigs of batch `r` (`pp` applied as `applied`). */
  private collectMultiSigs(r: BatchRecord, pp: PrePrepare, applied: AppliedBatch): MultiSignature[] | undefined {
    const ctx = this.ctx;
    const ledgers = applied.signedLedgers;
    const expected = ledgers
      .map((l) => String(l.ledgerId))
      .sort()
      .join(',');
    const candidates: string[] = [];
    for (const [from, c] of r.commits) {
      if (!ctx.isValidator(from)) continue;
      if (Object.keys(c.blsSigs).sort().join(',') !== expected) {
        r.commits.delete(from);
        ctx.suspect(from, Suspicion.CM_BLS_SIG_WRONG);
        continue;
      }
      candidates.push(from);
    }
    if (candidates.length < ctx.quorums.commit) return undefined;
    candidates.sort();
    const crypto = ctx.modules.crypto;
    const values = ledgers.map((l) => multiSigValue(l, pp.poolStateRootHash, pp.ppTime));
    const aggregate = (who: string[]): (string | undefined)[] => values.map((v) => aggregateShares(crypto, r.commits, who, String(v.ledger_id)));
    const verifyAll = (who: string[], sigs: (string | undefined)[]): boolean =>
      values.every((v, i) => {
        const sig = sigs[i];
        return sig !== undefined && crypto.blsVerifyMulti(who, v, sig);
      });
    const adopted = this.adoptKnownValid(r, values, candidates);
    if (adopted !== undefined) return adopted;
    let sigs = aggregate(candidates);
    // one aggregate verification for the whole set; every share inside counts as verified
    const verifiedNow = candidates.some((c) => !r.verifiedCommitters.has(c)) && verifyAll(candidates, sigs);
    if (verifiedNow) for (const c of candidates) r.verifiedCommitters.add(c);
    // a set not verified as a whole is safe only if each share verified on its own (shares vouched
    // for by an earlier aggregate could cancel each other out in it)
    else if (candidates.some((c) => !r.shareChecked.has(c)) && !verifyAll(candidates, sigs)) {
      for (const c of candidates) {
        if (r.shareChecked.has(c)) continue;
        // every candidate's COMMIT is held (only this loop drops one, after checking it)
        const commit = r.commits.get(c);
        if (commit === undefined) continue;
        if (values.every((v) => crypto.blsVerifyShare(c, v, commit.blsSigs[String(v.ledger_id)]))) {
          r.shareChecked.add(c);
          r.verifiedCommitters.add(c);
        } else {
          // drop the bad COMMIT and wait for more
          r.commits.delete(c);
          r.verifiedCommitters.delete(c);
          ctx.suspect(c, Suspicion.CM_BLS_SIG_WRONG);
        }
      }
      const good = candidates.filter((c) => r.shareChecked.has(c));
      if (good.length < ctx.quorums.commit) return undefined;
      candidates.length = 0;
      candidates.push(...good);
      sigs = aggregate(candidates);
    }
    const out: MultiSignature[] = [];
    for (let i = 0; i < values.length; i++) {
      const signature = sigs[i];
      if (signature === undefined) return undefined;
      out.push({ signature, participants: [...candidates], value: values[i] });
    }
    return out;
  }

  /** Orders batch `r`: `pp`, applied here as `applied`, with the multi-signatures built from its COMMITs. */
  private order(r: BatchRecord, pp: PrePrepare, applied: AppliedBatch, multiSigs: MultiSignature[]): void {
    const ctx = this.ctx;
    // only verified multi-signatures are stored: the PRE-PREPARE's that check here, and this node's own
    const fromPP = this.storableMultiSigs(pp);
    const committed = ctx.modules.executor.commitBatch([...fromPP, ...multiSigs]);
    r.ordered = true;
    r.multiSigs = multiSigs;
    this.ordered.setLastOrdered({ viewNo: pp.viewNo, ppSeqNo: pp.ppSeqNo });
    ctx.lastOrderedAt = ctx.now();
    const discarded = decodeDiscarded(pp.discarded);
    const payloads = pp.reqIdr.map((d) => this.intake.entries.get(d)?.info.payloadDigest).filter((x): x is string => x !== undefined);
    const stages = this.stagesOf(pp);
    const conns = this.intake.markOrdered(pp.reqIdr, pp.ppSeqNo);
    ctx.orderedRequestsTotal += pp.reqIdr.length;
    this.intake.dropCommittedPayloads(payloads);
    ctx.emit({
      kind: 'ordered',
      viewNo: pp.viewNo,
      ppSeqNo: pp.ppSeqNo,
      ledgerId: pp.ledgerId,
      ppTime: pp.ppTime,
      digest: pp.digest,
      replies: committed.txns.map((t) => ({ digest: t.digest, seqNo: t.seqNo, connIds: conns.get(t.digest) ?? [] })),
      rejects: discarded.map((i, j) => ({ digest: pp.reqIdr[i], reason: applied.rejectReasons[j] ?? '', connIds: conns.get(pp.reqIdr[i]) ?? [] })),
      multiSigs,
      stages,
    });
    for (const ms of multiSigs) {
      this.noteKnownValid(ms, true);
      this.lastUpdate.set(ms.value.ledger_id, pp.ppTime);
      this.pendingMultiSigs = this.pendingMultiSigs.filter((m) => m.value.ledger_id !== ms.value.ledger_id);
      this.pendingMultiSigs.push(ms);
    }
    this.onRegistryCommitted(pp, committed);
    this.hooks.onOrdered(pp.ppSeqNo, applied);
  }

  /** The write-path times of batch `pp` at this node (before its requests are forgotten). */
  private stagesOf(pp: PrePrepare): BatchStages {
    const requests: BatchStages['requests'] = [];
    for (const d of pp.reqIdr) {
      const e = this.intake.entries.get(d);
      if (e !== undefined) requests.push({ receivedAt: e.receivedAt, finalisedAt: e.finalised ? e.finalisedAt : 0 });
    }
    const times = this.stageTimes.get(pp.ppSeqNo);
    this.stageTimes.delete(pp.ppSeqNo);
    return {
      requests,
      ...(times !== undefined ? { appliedAt: times.appliedAt, ...(times.preparedAt !== undefined ? { preparedAt: times.preparedAt } : {}) } : {}),
      orderedAt: this.ctx.now(),
    };
  }

  /**
   * Membership effects at ordering (consensus.md §1.3, §8): R_begin of the batch's original view,
   * R_committed with n, f and quorums for every later decision, and the votes 46 / 51 / 27. Every
   * honest node orders the same batches in the same sequence, so all switch at this ppSeqNo.
   */
  private onRegistryCommitted(pp: PrePrepare, committed: CommittedBatch): void {
    const ctx = this.ctx;
    const before = ctx.validators;
    ctx.noteViewStart(pp.originalViewNo ?? pp.viewNo, before);
    const primary = ctx.primaryName();
    if (committed.nodeReg.length > 0 && committed.nodeReg.join('\u0000') !== before.join('\u0000')) {
      ctx.setValidators(committed.nodeReg);
      ctx.modules.logger?.info({ validators: committed.nodeReg, ppSeqNo: pp.ppSeqNo }, 'validator registry changed');
      if (committed.nodeReg.length !== before.length) ctx.vote(Suspicion.NODE_COUNT_CHANGED, pp.viewNo + 1);
      if (!ctx.isValidator(primary)) ctx.vote(Suspicion.PRIMARY_DEMOTED);
    }
    if (committed.changedNodes?.includes(primary) === true && ctx.isValidator(primary)) ctx.vote(Suspicion.PRIMARY_ABOUT_TO_BE_DISCONNECTED);
  }

  // ---- revert and garbage collection -----------------------------------------------------------

  /** Reverts every applied, unordered batch, newest first (consensus.md §3.9). */
  revertUnordered(): void {
    const ctx = this.ctx;
    for (let k = ctx.lastPrePrepareSeqNo; k > ctx.lastOrdered.ppSeqNo; k--) {
      const r = this.log.get(k);
      ctx.modules.executor.revertLastBatch();
      if (r?.pp !== undefined) this.intake.requeueFront(r.pp.ledgerId, r.pp.reqIdr);
      this.log.delete(k);
      this.stageTimes.delete(k);
    }
    ctx.lastPrePrepareSeqNo = ctx.lastOrdered.ppSeqNo;
    ctx.lastAcceptedPPTime = ctx.modules.executor.lastAudit()?.ppTime ?? 0;
    this.uncommittedRegistry = undefined;
  }

  /** Drops every 3PC artefact with ppSeqNo <= upTo. */
  collectGarbage(upTo: number): void {
    for (const k of this.log.keys()) if (k <= upTo) this.log.delete(k);
    for (const k of this.stageTimes.keys()) if (k <= upTo) this.stageTimes.delete(k);
    for (const k of this.votedBefore.keys()) if (k <= upTo) this.votedBefore.delete(k);
    for (const k of this.held.keys()) if (k <= upTo) this.held.delete(k);
    this.preprepared = this.preprepared.filter((b) => b.pp_seq_no > upTo);
    this.prepared = this.prepared.filter((b) => b.pp_seq_no > upTo);
  }

  /** Clears the 3PC log of the view being left (after revertUnordered). */
  clearForViewChange(): void {
    this.log.clear();
    this.stageTimes.clear();
    this.held.clear();
    this.preprepared = [];
    this.prepared = [];
  }
}

/**
 * The aggregate of the COMMIT shares of `who` for ledger `ledger`; undefined when one of them holds no COMMIT or no share
 * for it (a COMMIT's ledgers are checked against the batch's before it becomes a candidate), or the shares do not aggregate.
 */
function aggregateShares(crypto: ConsensusCrypto, commits: ReadonlyMap<string, Commit>, who: readonly string[], ledger: string): string | undefined {
  const shares: string[] = [];
  for (const c of who) {
    const share = commits.get(c)?.blsSigs[ledger];
    if (share === undefined) return undefined;
    shares.push(share);
  }
  return crypto.blsAggregate(shares);
}

export function batchIdOf(pp: PrePrepare): BatchId {
  return { view_no: pp.viewNo, pp_view_no: pp.originalViewNo ?? pp.viewNo, pp_seq_no: pp.ppSeqNo, pp_digest: pp.digest };
}
