// View change (consensus.md §6): VIEW_CHANGE and
// VIEW_CHANGE_ACK, NEW_VIEW built by the new primary and recomputed by everyone else, re-ordering of
// prepared batches of earlier views, NEW_VIEW timeout escalation and lagging-view adoption.
import { BoundedFifo, BoundedFifoSet } from '@quire/common';
import type { Checkpoints } from './checkpoints.js';
import type { CoreContext, CoreStateWriters } from './context.js';
import { Suspicion } from './context.js';
import { batchDigest, multiSigValue } from './digest.js';
import type { AppliedBatch, ThreePcVoteJournal } from './interfaces.js';
import type { RequestIntake } from './intake.js';
import {
  encodedSize,
  type BatchId,
  type Checkpoint,
  type NewView,
  type OldViewPrePrepareRep,
  type OldViewPrePrepareReq,
  type PrePrepare,
  type ViewChange,
  type ViewChangeAck,
} from './messages.js';
import { calcBatches, calcCheckpoint, initialCheckpoint, sameBatchId, sameCheckpoint, viewChangeDigest } from './new-view-calc.js';
import type { Ordering } from './ordering.js';
import { InstanceChangeVoting } from './instance-change.js';
import { prepareOf } from './three-pc-log.js';

export interface ViewChangeHooks {
  /** the view was entered (NEW_VIEW accepted): re-process stashed messages, reset batching */
  onViewEntered(): void;
  /** a checkpoint of the NEW_VIEW is missing locally and this node is behind it */
  onCatchupNeeded(cp: Checkpoint): void;
}

interface SavedPrePrepare {
  pp: PrePrepare;
  applied?: AppliedBatch;
  ordered: boolean;
}

/** superseded VIEW_CHANGEs kept per author, and this node's own past ones, in the view being entered (the latest) */
const PAST_VIEW_CHANGES_KEPT = 4;

function ppKey(ppViewNo: number, ppSeqNo: number, digest: string): string {
  return `${ppViewNo}:${ppSeqNo}:${digest}`;
}

/** The last BatchId of a list of votes and its length, as journalChanged last saw them. */
class VoteListMark {
  length = -1;
  viewNo = -1;
  ppSeqNo = -1;
  digest = '';

  /** Whether `list` differs from the mark; the mark takes it. */
  take(list: readonly BatchId[]): boolean {
    const last = list.length === 0 ? undefined : list[list.length - 1];
    const viewNo = last?.view_no ?? -1;
    const ppSeqNo = last?.pp_seq_no ?? -1;
    const digest = last?.pp_digest ?? '';
    const changed = this.length !== list.length || this.viewNo !== viewNo || this.ppSeqNo !== ppSeqNo || this.digest !== digest;
    this.length = list.length;
    this.viewNo = viewNo;
    this.ppSeqNo = ppSeqNo;
    this.digest = digest;
    return changed;
  }
}

/**
 * What the 3PC vote journal was made of when it was last saved (ViewChanger.journalChanged): the stable checkpoint,
 * the counts of the votes of earlier views, and the length and last BatchId of this view's pre-prepared and prepared
 * lists. A new mark differs from every state.
 */
export class JournalMark {
  stable = -1;
  oldPrepared = -1;
  oldPreprepared = -1;
  readonly preprepared = new VoteListMark();
  readonly prepared = new VoteListMark();
}

export class ViewChanger {
  /** proposed view -> voter -> time of the vote */
  readonly voting: InstanceChangeVoting;
  private oldPrepared = new Map<number, BatchId>();
  private oldPreprepared = new Map<number, BatchId[]>();
  private readonly oldViewPPs = new Map<string, SavedPrePrepare>();
  /** VIEW_CHANGEs of the view being entered, by author */
  private readonly vcs = new Map<string, { vc: ViewChange; digest: string }>();
  /** VIEW_CHANGEs of later views, for the f+1 join rule */
  private readonly futureVcs = new Map<number, Map<string, ViewChange>>();
  /**
   * at the new primary: author -> acker -> the digest it acknowledged (#15, F5: validators only,
   * one entry per (acker, author), its latest; at most n² entries, each check over n)
   */
  private readonly acks = new Map<string, Map<string, string>>();
  /** VIEW_CHANGE_ACKs of views not started yet: view -> `${acker}|${author}` -> ACK */
  private readonly futureAcks = new Map<number, Map<string, ViewChangeAck>>();
  private newViewSent = false;
  /** authors caught sending different VIEW_CHANGEs for the view being entered */
  private readonly vcEquivocators = new Set<string>();
  private pendingNewView: NewView | undefined;
  /** the view whose NEW_VIEW named validators unknown here and made this node catch up (once per view) */
  private registryCatchupView: number | undefined;
  /** VIEW_CHANGEs relayed by MESSAGE_RESPONSE: author -> relayer -> digest (validators only, one per pair; #15, F5) */
  private readonly relayedVcs = new Map<string, Map<string, string>>();
  private missingOld: BatchId[] = [];
  /** validators whose copy of a NEW_VIEW batch failed its checks: ppKey -> relayers (#15 F7) */
  private readonly oldPpExcluded = new Map<string, Set<string>>();
  private oldPpRequestAt = Number.NEGATIVE_INFINITY;
  /** set when a NEW_VIEW contradicted a batch this node committed: the node orders nothing more */
  safetyViolation: Record<string, unknown> | undefined;
  private newViewDeadline = Number.POSITIVE_INFINITY;
  private readonly futureViewSenders = new Map<number, Set<string>>();
  /**
   * NEW_VIEWs in MESSAGE_RESPONSEs (answers to a NEW_VIEW request, or a peer's hint that this node
   * asked about an old view): responder -> its latest answer, body as JSON (#15, F5: validators
   * only, one body per responder, at most n bodies of MSG_LEN_LIMIT each; dropped for views left)
   */
  private readonly nvResponses = new Map<string, { viewNo: number; key: string }>();
  private lastNvRequestAt = Number.NEGATIVE_INFINITY;
  /** digests of VIEW_CHANGEs their author replaced by a newer one, in the view being entered: author -> digests */
  private readonly supersededVcs = new Map<string, BoundedFifoSet<string>>();
  /** VIEW_CHANGEs this node sent for the view being entered before a fresher one: digest -> VC */
  private readonly ownPastVcs = new BoundedFifo<string, ViewChange>(PAST_VIEW_CHANGES_KEPT);
  /** when this node last sent a fresher VIEW_CHANGE for the view being entered */
  private ownVcAt = Number.NEGATIVE_INFINITY;
  /** when this node, as the new primary, last started a catch-up to the checkpoint of its NEW_VIEW */
  private checkpointCatchupAt = Number.NEGATIVE_INFINITY;
  acceptedNewView: NewView | undefined;

  constructor(
    private readonly ctx: CoreContext,
    private readonly intake: RequestIntake,
    private readonly ordering: Ordering,
    private readonly checkpoints: Checkpoints,
    private readonly view: CoreStateWriters['view'],
    private readonly hooks: ViewChangeHooks,
  ) {
    this.voting = new InstanceChangeVoting(ctx, intake, {
      startViewChange: (view) => this.startViewChange(view),
      viewChangeAuthors: (view) => this.futureVcs.get(view)?.keys() ?? [],
      ownViewChange: () => this.vcs.get(ctx.name)?.vc,
    });
  }

  /** Periodic: monitor, primary connection, NEW_VIEW timeout. */
  onTick(): void {
    const ctx = this.ctx;
    const now = ctx.now();
    if (ctx.waitingForNewView) {
      if (now >= this.newViewDeadline) {
        this.newViewDeadline = now + Math.min(ctx.opts.newViewTimeoutCapMs, ctx.opts.newViewTimeoutMs * this.voting.timeoutFactor() * 2);
        this.voting.vote(Suspicion.INSTANCE_CHANGE_TIMEOUT);
        ctx.broadcast({ op: 'MESSAGE_REQUEST', msg_type: 'NEW_VIEW', params: { instId: 0, viewNo: ctx.viewNo } });
        // retransmitted (PBFT): a node whose VIEW_CHANGE was lost on the way is alone in this view
        // and is not counted by peers that never got it (§6.2 counts it as a vote for the view)
        const own = this.vcs.get(ctx.name);
        if (own !== undefined) ctx.broadcast(own.vc);
      }
      if (this.pendingNewView !== undefined) this.tryValidateNewView();
      // a new primary that had to catch up to the checkpoint builds NEW_VIEW once it is done
      else this.maybeBuildNewView();
      return;
    }
    // PRE-PREPAREs of the NEW_VIEW still missing: ask again (a reply may have been lost)
    if (this.missingOld.length > 0 && now - this.oldPpRequestAt >= ctx.opts.messageRequestRetryMs) this.requestMissingOld();
    this.voting.onTick();
  }

  // ---- starting a view change -------------------------------------------------------------------

  startViewChange(view: number): void {
    const ctx = this.ctx;
    if (view <= ctx.viewNo) return;
    const oldPrimary = ctx.primaryName();
    this.leaveView(view);
    this.view.setWaitingForNewView(true);
    this.voting.escalation++;
    this.newViewDeadline = ctx.now() + Math.min(ctx.opts.newViewTimeoutCapMs, ctx.opts.newViewTimeoutMs * this.voting.timeoutFactor());
    const vc = this.ownViewChange(view);
    this.ownPastVcs.clear();
    this.ownVcAt = Number.NEGATIVE_INFINITY;
    this.vcs.set(ctx.name, { vc, digest: viewChangeDigest(vc) });
    ctx.broadcast(vc);
    ctx.modules.logger?.info({ view }, 'view change started');
    if (ctx.validators.length > 1) {
      if (!ctx.isValidator(ctx.primaryName())) this.voting.vote(Suspicion.PRIMARY_DEMOTED);
      else if (ctx.primaryName() === oldPrimary) this.voting.vote(Suspicion.INCORRECT_NEW_PRIMARY);
    }
    const future = this.futureVcs.get(view);
    this.futureVcs.delete(view);
    if (future !== undefined) for (const [from, v] of future) this.onViewChange(from, v);
    const acks = this.futureAcks.get(view);
    for (const v of [...this.futureAcks.keys()]) if (v <= view) this.futureAcks.delete(v);
    if (acks !== undefined) for (const [key, ack] of acks) this.onViewChangeAck(key.slice(0, key.indexOf('|')), ack);
    this.maybeBuildNewView();
  }

  /** This node's VIEW_CHANGE for `view` from its present state (consensus.md §6.3 step 3). */
  private ownViewChange(view: number): ViewChange {
    const ctx = this.ctx;
    const stable = this.checkpoints.stableCheckpoint;
    const checkpoints: Checkpoint[] = [];
    if (stable === 0) checkpoints.push(initialCheckpoint());
    for (const [seqNoEnd, digest] of [...this.checkpoints.own].sort((a, b) => a[0] - b[0])) {
      if (seqNoEnd >= stable) checkpoints.push({ op: 'CHECKPOINT', instId: 0, viewNo: ctx.viewNo, seqNoStart: 0, seqNoEnd, digest });
    }
    return {
      op: 'VIEW_CHANGE',
      viewNo: view,
      stableCheckpoint: stable,
      // view_no < view: a restored vote journal (#15 F8) may hold votes of a view this node has not re-entered
      prepared: [...this.oldPrepared.values()].filter((b) => b.pp_seq_no > stable && b.view_no < view).sort((a, b) => a.pp_seq_no - b.pp_seq_no),
      preprepared: [...this.oldPreprepared.values()]
        .flat()
        .filter((b) => b.pp_seq_no > stable && b.view_no < view)
        .sort((a, b) => a.pp_seq_no - b.pp_seq_no || a.view_no - b.view_no),
      checkpoints,
    };
  }

  /**
   * While waiting for NEW_VIEW: when this node's state advanced past the VIEW_CHANGE it sent (a
   * catch-up brought a higher stable checkpoint), send a fresher one (#15 F1), at most once per
   * MESSAGE_REQUEST_RETRY and not once a NEW_VIEW is pending. Peers keep one VIEW_CHANGE and one ACK
   * per author, the latest, so it replaces the old one everywhere; the old one stays available for
   * MESSAGE_REQUEST in case a NEW_VIEW was built on it meanwhile.
   */
  refreshOwnViewChange(): void {
    const ctx = this.ctx;
    if (!ctx.waitingForNewView || ctx.catchingUp || this.pendingNewView !== undefined || this.newViewSent) return;
    const now = ctx.now();
    if (now - this.ownVcAt < ctx.opts.messageRequestRetryMs) return;
    const held = this.vcs.get(ctx.name);
    if (held === undefined || this.checkpoints.stableCheckpoint <= held.vc.stableCheckpoint) return;
    const vc = this.ownViewChange(ctx.viewNo);
    const digest = viewChangeDigest(vc);
    if (digest === held.digest) return;
    this.ownVcAt = now;
    this.ownPastVcs.set(held.digest, held.vc);
    this.noteSuperseded(ctx.name, held.digest);
    this.vcs.set(ctx.name, { vc, digest });
    ctx.broadcast(vc);
    ctx.modules.logger?.info({ view: ctx.viewNo, stableCheckpoint: vc.stableCheckpoint }, 'fresher view change sent');
    this.maybeBuildNewView();
  }

  /**
   * `author` itself replaced its VIEW_CHANGE with digest `digest` by a newer one (a fresher
   * VIEW_CHANGE after a catch-up): ACKs still naming the old one are late, not evidence that it
   * sent different VIEW_CHANGEs to different nodes (those reach this node only through ACKs and
   * relays, never both from the author). At most 4 per author.
   */
  private noteSuperseded(author: string, digest: string | undefined): void {
    if (digest === undefined) return;
    let s = this.supersededVcs.get(author);
    if (s === undefined) {
      s = new BoundedFifoSet(PAST_VIEW_CHANGES_KEPT);
      this.supersededVcs.set(author, s);
    }
    s.add(digest);
  }

  /** Common to starting a view change and adopting a later view: save, revert and clear. */
  private leaveView(view: number): void {
    for (const r of this.ordering.log.values()) {
      if (r.pp === undefined) continue;
      const pv = r.pp.originalViewNo ?? r.pp.viewNo;
      this.oldViewPPs.set(ppKey(pv, r.ppSeqNo, r.pp.digest), { pp: r.pp, ...(r.applied !== undefined ? { applied: r.applied } : {}), ordered: r.ordered });
    }
    for (const b of this.ordering.prepared) this.oldPrepared.set(b.pp_seq_no, b);
    for (const b of this.ordering.preprepared) {
      const list = (this.oldPreprepared.get(b.pp_seq_no) ?? []).filter((e) => e.pp_digest !== b.pp_digest);
      list.push(b);
      this.oldPreprepared.set(b.pp_seq_no, list);
    }
    this.dropBelow(this.checkpoints.stableCheckpoint);
    this.view.setView(view);
    for (const k of [...this.vcs.keys()]) this.vcs.delete(k);
    this.supersededVcs.clear();
    this.acks.clear();
    this.vcEquivocators.clear();
    this.relayedVcs.clear();
    this.pruneViewStores(view);
    this.newViewSent = false;
    this.pendingNewView = undefined;
    this.ordering.revertUnordered();
    this.ordering.clearForViewChange();
    this.voting.primaryDownSince = undefined;
  }

  /**
   * Batches committed above the stable checkpoint that this node knows from its ledgers only
   * (restart, catch-up): they go into its VIEW_CHANGE as prepared and pre-prepared, as for a node
   * that ordered them through 3PC. Without them, a pool where too few nodes hold a batch in their
   * 3PC log could neither carry it into NEW_VIEW (f+1 pre-prepared witnesses) nor prove it null
   * (n-f without it): the view change would never complete, or, worse, could re-use its ppSeqNo.
   * view_no is the view it was first proposed in, the lowest it can have been prepared in, so it
   * never disqualifies another node's entry for the same batch.
   */
  noteCommitted(batches: readonly BatchId[]): void {
    for (const b of batches) {
      if (this.oldPrepared.get(b.pp_seq_no)?.pp_digest !== b.pp_digest) this.oldPrepared.set(b.pp_seq_no, b);
      const list = this.oldPreprepared.get(b.pp_seq_no) ?? [];
      if (!list.some((e) => e.pp_digest === b.pp_digest && e.pp_view_no === b.pp_view_no)) this.oldPreprepared.set(b.pp_seq_no, [...list, b]);
    }
  }

  /**
   * This node's 3PC votes above its stable checkpoint, of earlier views and of the current one: the
   * BatchIDs it pre-prepared (PREPARE sent) and prepared (COMMIT sent). Saved by the core before
   * the votes leave (#15 F8).
   */
  journal(): ThreePcVoteJournal {
    const stable = this.checkpoints.stableCheckpoint;
    return {
      preprepared: [...[...this.oldPreprepared.values()].flat(), ...this.ordering.preprepared].filter((b) => b.pp_seq_no > stable),
      prepared: [...this.oldPrepared.values(), ...this.ordering.prepared].filter((b) => b.pp_seq_no > stable),
    };
  }

  /**
   * Whether journal() may have changed since `mark` was last updated, and updates it. Compared after every event (a
   * PROPAGATE as much as a COMMIT), so it builds nothing: it compares the stable checkpoint, the counts of the
   * earlier views' votes and of this view's lists, and the last BatchId of each list.
   */
  journalChanged(mark: JournalMark): boolean {
    let old = 0;
    for (const l of this.oldPreprepared.values()) old += l.length;
    const stable = this.checkpoints.stableCheckpoint;
    // every part is compared and taken, none skipped once one differs
    const parts = Number(mark.stable !== stable) | Number(mark.oldPrepared !== this.oldPrepared.size) | Number(mark.oldPreprepared !== old);
    mark.stable = stable;
    mark.oldPrepared = this.oldPrepared.size;
    mark.oldPreprepared = old;
    const pp = mark.preprepared.take(this.ordering.preprepared);
    const p = mark.prepared.take(this.ordering.prepared);
    return parts !== 0 || pp || p;
  }

  /**
   * After a restart: the journal's votes above the last ordered batch go back into the VIEW_CHANGE
   * lists, as if this node had left the view it voted in (its VIEW_CHANGE forgets no prepared
   * certificate), and each pre-prepared one guards against voting for another digest at that
   * (view, ppSeqNo) (Ordering.votedBefore) (#15 F8).
   */
  restoreJournal(j: ThreePcVoteJournal, lastOrdered: number): void {
    for (const b of j.prepared) {
      if (b.pp_seq_no <= lastOrdered) continue;
      const held = this.oldPrepared.get(b.pp_seq_no);
      if (held === undefined || held.view_no <= b.view_no) this.oldPrepared.set(b.pp_seq_no, b);
    }
    for (const b of j.preprepared) {
      if (b.pp_seq_no <= lastOrdered) continue;
      const list = (this.oldPreprepared.get(b.pp_seq_no) ?? []).filter((e) => e.pp_digest !== b.pp_digest || e.view_no > b.view_no);
      if (!list.some((e) => e.pp_digest === b.pp_digest)) list.push(b);
      this.oldPreprepared.set(b.pp_seq_no, list);
      const voted = this.ordering.votedBefore.get(b.pp_seq_no);
      if (voted === undefined || voted.viewNo <= b.view_no) this.ordering.votedBefore.set(b.pp_seq_no, { viewNo: b.view_no, digest: b.pp_digest });
    }
  }

  /**
   * A PRE-PREPARE of the vote journal after a restart, its requests restored by the intake: served
   * to peers that fetch it and re-applied when a NEW_VIEW re-proposes it, as if this node had kept
   * it through a view change.
   */
  restorePrePrepare(pp: PrePrepare): void {
    const key = ppKey(pp.originalViewNo ?? pp.viewNo, pp.ppSeqNo, pp.digest);
    if (!this.oldViewPPs.has(key)) this.oldViewPPs.set(key, { pp, ordered: false });
  }

  /** The PRE-PREPARE this node holds for a BatchID: of the current view's log, or of an earlier view. */
  heldPrePrepare(b: BatchId): PrePrepare | undefined {
    const pp = this.ordering.log.get(b.pp_seq_no)?.pp;
    if (pp !== undefined && pp.digest === b.pp_digest && (pp.originalViewNo ?? pp.viewNo) === b.pp_view_no) return pp;
    return this.oldViewPPs.get(ppKey(b.pp_view_no, b.pp_seq_no, b.pp_digest))?.pp;
  }

  /**
   * A batch this node had ordered, re-proposed by the NEW_VIEW of the current view and vouched for
   * with PREPARE and COMMIT in it: like the nodes that re-order it, this node now holds it
   * pre-prepared and prepared in this view, and its next VIEW_CHANGE says so. Otherwise a node that
   * re-ordered the batch here lists it at this view while the others list an older one: its entry
   * disqualifies theirs as prepared witnesses (an older view_no) and lacks f+1 pre-prepared
   * witnesses of its own, so the next NEW_VIEW can neither carry the batch nor prove it null.
   */
  private notePreparedInView(b: BatchId): void {
    this.oldPrepared.set(b.pp_seq_no, b);
    const list = (this.oldPreprepared.get(b.pp_seq_no) ?? []).filter((e) => e.pp_digest !== b.pp_digest);
    list.push(b);
    this.oldPreprepared.set(b.pp_seq_no, list);
  }

  /** Garbage collection at a stable checkpoint. */
  dropBelow(c: number): void {
    for (const k of this.oldPrepared.keys()) if (k <= c) this.oldPrepared.delete(k);
    for (const k of this.oldPreprepared.keys()) if (k <= c) this.oldPreprepared.delete(k);
    for (const [k, s] of this.oldViewPPs) if (s.pp.ppSeqNo <= c) this.oldViewPPs.delete(k);
  }

  // ---- VIEW_CHANGE / ACK --------------------------------------------------------------------------

  onViewChange(from: string, vc: ViewChange): void {
    const ctx = this.ctx;
    if (vc.viewNo < ctx.viewNo || (vc.viewNo === ctx.viewNo && !ctx.waitingForNewView)) return;
    const bad = [...vc.prepared, ...vc.preprepared].some((b) => b.view_no >= vc.viewNo || b.pp_view_no > b.view_no);
    if (bad) {
      ctx.suspect(from, Suspicion.INVALID_VIEW_CHANGE);
      return;
    }
    if (vc.viewNo > ctx.viewNo) {
      const near = ctx.viewNo + 2 + this.voting.escalation;
      if (vc.viewNo > near) {
        // A view further ahead is kept one per validator (its highest), so a node that came back
        // while the others escalated view after view still learns where f+1 of them are.
        if (!ctx.isValidator(from)) return;
        for (const [v, m] of this.futureVcs) {
          if (v <= near || !m.has(from)) continue;
          if (v >= vc.viewNo) return;
          m.delete(from);
          if (m.size === 0) this.futureVcs.delete(v);
        }
      }
      let m = this.futureVcs.get(vc.viewNo);
      if (m === undefined) {
        m = new Map();
        this.futureVcs.set(vc.viewNo, m);
      }
      m.set(from, vc);
      // PBFT join rule: f+1 validators already moved to later views; join the lowest view that
      // f+1 of them reached (the (f+1)-th highest of their views), at least one of them honest
      const highest = new Map<string, number>();
      for (const [v, byAuthor] of this.futureVcs) {
        if (v <= ctx.viewNo) continue;
        for (const a of byAuthor.keys()) if (ctx.isValidator(a) && v > (highest.get(a) ?? 0)) highest.set(a, v);
      }
      if (highest.size >= ctx.quorums.weak) {
        const target = [...highest.values()].sort((a, b) => b - a)[ctx.quorums.weak - 1];
        this.startViewChange(target);
      }
      // the author waits in that view: its VIEW_CHANGE is its vote, and this node's own standing vote
      // for the view is sent again, as the votes that took the author there may have been lost
      if (vc.viewNo > ctx.viewNo) this.voting.onFutureViewChange(vc.viewNo);
      return;
    }
    const digest = viewChangeDigest(vc);
    if (this.vcs.get(from)?.digest === digest) return;
    this.noteSuperseded(from, this.vcs.get(from)?.digest);
    this.vcs.set(from, { vc, digest });
    const primary = ctx.primaryName();
    if (primary === ctx.name) this.addAck(from, digest, ctx.name);
    else ctx.send(primary, { op: 'VIEW_CHANGE_ACK', viewNo: vc.viewNo, name: from, digest });
    this.maybeBuildNewView();
    if (this.pendingNewView !== undefined) this.tryValidateNewView();
  }

  onViewChangeAck(from: string, ack: ViewChangeAck): void {
    const ctx = this.ctx;
    if (ack.viewNo > ctx.viewNo) {
      this.keepFutureAck(from, ack);
      return;
    }
    if (ack.viewNo !== ctx.viewNo || !ctx.waitingForNewView || ctx.primaryName() !== ctx.name) return;
    this.addAck(ack.name, ack.digest, from);
    this.maybeBuildNewView();
  }

  /**
   * A VIEW_CHANGE_ACK for a view this node has not started yet: its sender started the view change
   * first (the INSTANCE_CHANGE quorum is reached at different moments on different nodes). Kept
   * until this node starts that view, else the VIEW_CHANGE it acknowledges may never be confirmed:
   * with exactly n-f validators up, the new primary needs every ACK (#15, the membership loop).
   * Bounded: views up to current + 2, validators only, one ACK per (view, acker, author).
   */
  private keepFutureAck(from: string, ack: ViewChangeAck): void {
    const ctx = this.ctx;
    if (ack.viewNo > ctx.viewNo + 2 || !ctx.isValidator(from) || !ctx.isValidator(ack.name)) return;
    let m = this.futureAcks.get(ack.viewNo);
    if (m === undefined) {
      m = new Map();
      this.futureAcks.set(ack.viewNo, m);
    }
    m.set(`${from}|${ack.name}`, ack);
  }

  /** Records that `acker` acknowledged `author`'s VIEW_CHANGE with `digest` (validators only; its latest ACK counts). */
  private addAck(author: string, digest: string, acker: string): void {
    const ctx = this.ctx;
    if (!ctx.isValidator(author) || !ctx.isValidator(acker)) return;
    let m = this.acks.get(author);
    if (m === undefined) {
      m = new Map();
      this.acks.set(author, m);
    }
    m.set(acker, digest);
  }

  /**
   * ACKs from f+1 validators for a digest other than the VIEW_CHANGE held from `author` prove that
   * it sent different VIEW_CHANGEs (consensus.md §6.4): its VIEW_CHANGE is not used.
   */
  private equivocatedVc(author: string, heldDigest: string): boolean {
    const ctx = this.ctx;
    const counts = new Map<string, number>();
    for (const [acker, digest] of this.acks.get(author) ?? []) {
      if (digest === heldDigest || acker === author || !ctx.isValidator(acker) || this.supersededVcs.get(author)?.has(digest) === true) continue;
      const n = (counts.get(digest) ?? 0) + 1;
      counts.set(digest, n);
      if (n >= ctx.quorums.weak) {
        if (!this.vcEquivocators.has(author)) {
          this.vcEquivocators.add(author);
          ctx.suspect(author, Suspicion.VIEW_CHANGE_EQUIVOCATION);
        }
        return true;
      }
    }
    return false;
  }

  private confirmed(): { author: string; vc: ViewChange; digest: string }[] {
    const ctx = this.ctx;
    const out: { author: string; vc: ViewChange; digest: string }[] = [];
    for (const [author, { vc, digest }] of this.vcs) {
      if (!ctx.isValidator(author)) continue;
      if (this.equivocatedVc(author, digest)) continue;
      let ackers = 0;
      for (const [acker, d] of this.acks.get(author) ?? []) if (d === digest && acker !== author && ctx.isValidator(acker)) ackers++;
      if (ackers >= ctx.quorums.prepare) out.push({ author, vc, digest });
    }
    return out.sort((a, b) => (a.author < b.author ? -1 : a.author > b.author ? 1 : 0));
  }

  private maybeBuildNewView(): void {
    const ctx = this.ctx;
    if (!ctx.waitingForNewView || this.newViewSent || ctx.primaryName() !== ctx.name) return;
    const conf = this.confirmed();
    if (conf.length < ctx.quorums.strong) return;
    const vcs = conf.map((c) => c.vc);
    const cp = calcCheckpoint(vcs, ctx.quorums.strong, ctx.quorums.weak);
    if (cp === undefined) return;
    if (!this.hasCheckpoint(cp)) {
      // f+1 VIEW_CHANGEs hold a checkpoint this new primary lacks: catch up to it, then build
      // (retried on every tick while waiting)
      const now = ctx.now();
      if (ctx.lastOrdered.ppSeqNo < cp.seqNoEnd && !ctx.catchingUp && now - this.checkpointCatchupAt >= ctx.opts.messageRequestRetryMs) {
        this.checkpointCatchupAt = now;
        this.hooks.onCatchupNeeded(cp);
      }
      return;
    }
    const batches = calcBatches(cp, vcs, ctx.opts.logSize, ctx.quorums.strong, ctx.quorums.weak);
    if (batches === undefined) return;
    const nv: NewView = { op: 'NEW_VIEW', viewNo: ctx.viewNo, viewChanges: conf.map((c) => [c.author, c.digest]), checkpoint: cp, batches };
    this.newViewSent = true;
    ctx.broadcast(nv);
    this.acceptNewView(nv);
  }

  /** `cp` is one of this node's checkpoints, or matches its audit ledger (a catch-up may have passed it). */
  private hasCheckpoint(cp: Checkpoint): boolean {
    if (cp.seqNoEnd === 0) return cp.digest === null;
    if (this.checkpoints.own.get(cp.seqNoEnd) === cp.digest) return true;
    return cp.seqNoEnd <= this.ctx.lastOrdered.ppSeqNo && this.ctx.modules.executor.auditRootAt(cp.seqNoEnd) === cp.digest;
  }

  // ---- NEW_VIEW ----------------------------------------------------------------------------------

  onNewView(from: string, nv: NewView): void {
    const ctx = this.ctx;
    if (nv.viewNo !== ctx.viewNo || !ctx.waitingForNewView || from !== ctx.primaryName()) return;
    this.pendingNewView = nv;
    this.tryValidateNewView();
  }

  private tryValidateNewView(): void {
    const ctx = this.ctx;
    const nv = this.pendingNewView;
    if (nv === undefined || ctx.catchingUp) return;
    const authors = new Set(nv.viewChanges.map(([a]) => a).filter((a) => ctx.isValidator(a)));
    if (authors.size !== nv.viewChanges.length && this.registryCatchupView !== nv.viewNo) {
      // VIEW_CHANGEs of validators this node does not know: its registry may be behind (a NODE txn
      // the others ordered and it did not). Once per view, catch up first and validate again after
      // (the NEW_VIEW stays pending); no suspicion, as the primary may be right.
      this.registryCatchupView = nv.viewNo;
      this.hooks.onCatchupNeeded(nv.checkpoint);
      return;
    }
    if (authors.size < ctx.quorums.strong || authors.size !== nv.viewChanges.length) {
      this.pendingNewView = undefined;
      ctx.suspect(ctx.primaryName(), Suspicion.NEW_VIEW_INVALID_BATCHES, true);
      return;
    }
    const vcs: ViewChange[] = [];
    for (const [author, digest] of [...nv.viewChanges].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
      const held = this.vcs.get(author);
      if (held === undefined || held.digest !== digest) {
        ctx.broadcast({ op: 'MESSAGE_REQUEST', msg_type: 'VIEW_CHANGE', params: { instId: 0, name: author, digest } });
        return;
      }
      vcs.push(held.vc);
    }
    const cp = calcCheckpoint(vcs, ctx.quorums.strong, ctx.quorums.weak);
    if (cp === undefined || !sameCheckpoint(cp, nv.checkpoint)) {
      this.pendingNewView = undefined;
      ctx.suspect(ctx.primaryName(), Suspicion.NEW_VIEW_INVALID_CHECKPOINTS, true);
      return;
    }
    const batches = calcBatches(cp, vcs, ctx.opts.logSize, ctx.quorums.strong, ctx.quorums.weak);
    if (batches === undefined || batches.length !== nv.batches.length || batches.some((b, i) => !sameBatchId(b, nv.batches[i]))) {
      this.pendingNewView = undefined;
      ctx.suspect(ctx.primaryName(), Suspicion.NEW_VIEW_INVALID_BATCHES, true);
      return;
    }
    this.acceptNewView(nv);
  }

  /** A VIEW_CHANGE obtained by MESSAGE_REQUEST: from its author, or f+1 identical copies. */
  onRequestedViewChange(from: string, params: { name: string; digest: string }, vc: ViewChange): void {
    const ctx = this.ctx;
    if (vc.viewNo !== ctx.viewNo || !ctx.isValidator(params.name) || !ctx.isValidator(from) || viewChangeDigest(vc) !== params.digest) return;
    let relays = this.relayedVcs.get(params.name);
    if (relays === undefined) {
      relays = new Map();
      this.relayedVcs.set(params.name, relays);
    }
    relays.set(from, params.digest);
    let copies = 0;
    for (const d of relays.values()) if (d === params.digest) copies++;
    if (from !== params.name && copies < ctx.quorums.weak) return;
    if (this.vcs.get(params.name)?.digest !== params.digest) this.vcs.set(params.name, { vc, digest: params.digest });
    if (this.pendingNewView !== undefined) this.tryValidateNewView();
  }

  private acceptNewView(nv: NewView): void {
    const ctx = this.ctx;
    this.view.setWaitingForNewView(false);
    this.pendingNewView = undefined;
    this.acceptedNewView = nv;
    this.pruneViewStores(nv.viewNo, true);
    ctx.prevViewPrepareCert = nv.batches.length > 0 ? nv.batches[nv.batches.length - 1].pp_seq_no : nv.checkpoint.seqNoEnd;
    this.newViewDeadline = Number.POSITIVE_INFINITY;
    this.voting.onViewEntered(nv.viewNo);
    this.intake.restartAges(ctx.now());
    const cp = nv.checkpoint;
    if (cp.seqNoEnd > this.checkpoints.stableCheckpoint) {
      if (this.hasCheckpoint(cp)) this.checkpoints.markStable(cp.seqNoEnd);
      else if (ctx.lastOrdered.ppSeqNo < cp.seqNoEnd) this.hooks.onCatchupNeeded(cp);
    }
    ctx.modules.logger?.info({ view: nv.viewNo, batches: nv.batches.length }, 'new view accepted');
    this.reorder(nv.batches);
    this.hooks.onViewEntered();
  }

  /** Re-applies the prepared batches of earlier views in the new view (consensus.md §6.7). */
  private reorder(batches: readonly BatchId[]): void {
    const ctx = this.ctx;
    const primary = ctx.primaryName();
    this.missingOld = [];
    this.oldPpExcluded.clear();
    for (const b of batches) {
      const saved = this.oldViewPPs.get(ppKey(b.pp_view_no, b.pp_seq_no, b.pp_digest));
      if (b.pp_seq_no <= ctx.lastOrdered.ppSeqNo) {
        // already committed here: NEW_VIEW must name the batch this node committed (consensus.md §6.7);
        // anything else means more than f faulty nodes: raise the alarm and order nothing more
        const committed = ctx.modules.executor.committedBatch(b.pp_seq_no);
        if (committed !== undefined && committed.digest !== b.pp_digest) {
          this.haltOnSafetyViolation(b, committed.digest);
          return;
        }
        if (saved?.applied !== undefined) {
          this.vouchForOrdered(saved.pp, saved.applied, primary);
          this.notePreparedInView({ ...b, view_no: ctx.viewNo });
        }
        continue;
      }
      if (saved === undefined) {
        this.missingOld.push(b);
        continue;
      }
      const held: PrePrepare = { ...saved.pp, viewNo: ctx.viewNo, originalViewNo: b.pp_view_no };
      // this copy came from the primary of its view, not from the new primary: roots its digest does
      // not bind that fail here (an equivocating primary's two versions of an empty batch share the
      // digest, not the audit root) are blamed on that primary, and the batch is fetched from the
      // others (sim seed 186, n=4, equivocation, stand-in: the honest new primary got vote 44)
      const from = ctx.primaryName(b.pp_view_no);
      if (from !== ctx.name) this.ordering.fetched.set(held, from);
      this.ordering.held.set(b.pp_seq_no, held);
    }
    this.requestMissingOld();
    this.ordering.processHeld();
  }

  /**
   * The NEW_VIEW names, at a ppSeqNo this node committed, a batch other than the one it committed:
   * two prepared certificates for one ppSeqNo, impossible with at most f faulty validators. The
   * node stops ordering (it sends no PREPARE, COMMIT or PRE-PREPARE any more) and raises the alarm
   * for an operator (consensus.md §6.7; #15 F7).
   */
  private haltOnSafetyViolation(b: BatchId, committedDigest: string): void {
    const ctx = this.ctx;
    const data = { viewNo: ctx.viewNo, ppSeqNo: b.pp_seq_no, committedDigest, newViewDigest: b.pp_digest, primary: ctx.primaryName() };
    this.safetyViolation = data;
    ctx.emit({ kind: 'alarm', reason: 'NEW_VIEW re-proposes a committed ppSeqNo with another digest: ordering halted', data });
    ctx.modules.logger?.warn(data, 'safety violation: NEW_VIEW contradicts a committed batch; ordering halted');
  }

  /** Asks the validators not caught relaying a bad copy for the PRE-PREPAREs of the NEW_VIEW this node lacks. */
  private requestMissingOld(): void {
    const ctx = this.ctx;
    // batches ordered meanwhile (a catch-up) are no longer missing
    this.missingOld = this.missingOld.filter((b) => b.pp_seq_no > ctx.lastOrdered.ppSeqNo);
    if (this.missingOld.length === 0) return;
    this.oldPpRequestAt = ctx.now();
    for (const peer of ctx.validators) {
      if (peer === ctx.name) continue;
      const wanted = this.missingOld.filter((b) => !(this.oldPpExcluded.get(ppKey(b.pp_view_no, b.pp_seq_no, b.pp_digest))?.has(peer) ?? false));
      if (wanted.length > 0) ctx.send(peer, { op: 'OLD_VIEW_PREPREPARE_REQ', instId: 0, batch_ids: wanted });
    }
  }

  /**
   * A fetched PRE-PREPARE of the NEW_VIEW failed the checks its digest does not cover (roots,
   * discarded list, multi-signatures): the relayer lied. Forget its copy and ask the others (#15 F7).
   */
  onFetchedRejected(ppSeqNo: number, relayer: string): void {
    const b = this.acceptedNewView?.batches.find((x) => x.pp_seq_no === ppSeqNo);
    if (b === undefined || this.ctx.waitingForNewView) return;
    const key = ppKey(b.pp_view_no, b.pp_seq_no, b.pp_digest);
    this.oldViewPPs.delete(key);
    let excluded = this.oldPpExcluded.get(key);
    if (excluded === undefined) {
      excluded = new Set();
      this.oldPpExcluded.set(key, excluded);
    }
    excluded.add(relayer);
    if (!this.missingOld.some((x) => sameBatchId(x, b))) this.missingOld.push(b);
    this.requestMissingOld();
  }

  /** An already ordered batch re-proposed: PREPARE and COMMIT for it so that peers can complete. */
  private vouchForOrdered(old: PrePrepare, applied: AppliedBatch, primary: string): void {
    const ctx = this.ctx;
    const pp: PrePrepare = { ...old, viewNo: ctx.viewNo, originalViewNo: old.originalViewNo ?? old.viewNo };
    const r = this.ordering.record(pp.ppSeqNo);
    r.pp = pp;
    r.applied = applied;
    r.ordered = true;
    r.prepared = true;
    if (!ctx.participating) return;
    if (primary !== ctx.name) {
      r.ownPrepare = prepareOf(pp);
      ctx.broadcast(r.ownPrepare);
    }
    const blsSigs: Record<string, string> = {};
    for (const l of applied.signedLedgers) blsSigs[String(l.ledgerId)] = ctx.modules.crypto.blsSign(multiSigValue(l, pp.poolStateRootHash, pp.ppTime));
    r.ownCommit = { op: 'COMMIT', instId: 0, viewNo: pp.viewNo, ppSeqNo: pp.ppSeqNo, blsSigs };
    ctx.broadcast(r.ownCommit);
  }

  onOldViewPrePrepareReq(from: string, req: OldViewPrePrepareReq): void {
    const pps: PrePrepare[] = [];
    for (const b of req.batch_ids.slice(0, this.ctx.opts.logSize)) {
      const s = this.oldViewPPs.get(ppKey(b.pp_view_no, b.pp_seq_no, b.pp_digest));
      if (s !== undefined) pps.push(s.pp);
    }
    // in replies below MSG_LEN_LIMIT: full batches are large (500 request digests each) and a NEW_VIEW
    // after a busy view names dozens of them; one message carrying them all is refused by the transport
    // (each PRE-PREPARE's size is taken as that of a reply carrying it alone: an upper bound)
    let part: PrePrepare[] = [];
    let bytes = 0;
    for (const pp of pps) {
      const size = encodedSize({ op: 'OLD_VIEW_PREPREPARE_REP', instId: 0, preprepares: [pp] });
      if (part.length > 0 && bytes + size > this.ctx.opts.msgLenLimit) {
        this.ctx.send(from, { op: 'OLD_VIEW_PREPREPARE_REP', instId: 0, preprepares: part });
        part = [];
        bytes = 0;
      }
      part.push(pp);
      bytes += size;
    }
    if (part.length > 0) this.ctx.send(from, { op: 'OLD_VIEW_PREPREPARE_REP', instId: 0, preprepares: part });
  }

  /**
   * PRE-PREPAREs of earlier views a peer sent for the NEW_VIEW's batches: a copy is taken when its
   * recomputed digest and (pp_view_no, ppSeqNo) match a missing BatchID; the fields the digest does
   * not bind are checked when it is applied, where a failure is blamed on `from` (Ordering.fetched)
   * and the batch is fetched from another validator (consensus.md §6.7, #15 F7).
   */
  onOldViewPrePrepareRep(from: string, rep: OldViewPrePrepareRep): void {
    const ctx = this.ctx;
    if (!ctx.isValidator(from) || ctx.waitingForNewView) return;
    for (const pp of rep.preprepares) {
      const pv = pp.originalViewNo ?? pp.viewNo;
      const i = this.missingOld.findIndex((b) => b.pp_view_no === pv && b.pp_seq_no === pp.ppSeqNo && b.pp_digest === pp.digest);
      if (i < 0 || batchDigest(pv, pp.ppTime, pp.reqIdr, pp.ledgerId) !== pp.digest) continue;
      const key = ppKey(pv, pp.ppSeqNo, pp.digest);
      if (this.oldPpExcluded.get(key)?.has(from) === true) continue;
      this.missingOld.splice(i, 1);
      this.oldViewPPs.set(key, { pp, ordered: false });
      if (pp.ppSeqNo > ctx.lastOrdered.ppSeqNo) {
        const injected: PrePrepare = { ...pp, viewNo: ctx.viewNo, originalViewNo: pv };
        this.ordering.fetched.set(injected, from);
        this.ordering.held.set(pp.ppSeqNo, injected);
      }
    }
    this.ordering.processHeld();
  }

  /** A batch got ordered: the escalation of timeouts ends once the new view works. */
  onOrdered(): void {
    if (!this.ctx.waitingForNewView) this.voting.escalation = 0;
  }

  // ---- lagging view detection (§6.9) --------------------------------------------------------------

  /** A 3PC message for a later view arrived (and was stashed). */
  noteFutureView(from: string, viewNo: number): void {
    const ctx = this.ctx;
    if (ctx.waitingForNewView || viewNo <= ctx.viewNo || !ctx.isValidator(from)) return;
    let s = this.futureViewSenders.get(viewNo);
    if (s === undefined) {
      s = new Set();
      this.futureViewSenders.set(viewNo, s);
    }
    s.add(from);
    const now = ctx.now();
    if (s.size >= ctx.quorums.weak && now - this.lastNvRequestAt >= ctx.opts.messageRequestRetryMs) {
      this.lastNvRequestAt = now;
      ctx.broadcast({ op: 'MESSAGE_REQUEST', msg_type: 'NEW_VIEW', params: { instId: 0, viewNo } });
    }
  }

  /** NEW_VIEW obtained by MESSAGE_REQUEST: adopt a later view on f+1 identical answers. */
  onRequestedNewView(from: string, nv: NewView): void {
    const ctx = this.ctx;
    if (nv.viewNo < ctx.viewNo || (nv.viewNo === ctx.viewNo && !ctx.waitingForNewView)) return;
    if (!ctx.isValidator(from)) return;
    const { primary: _p, ...body } = nv;
    const key = JSON.stringify(body);
    // the responder's latest answer replaces its earlier one (#15, F5: every body was kept before)
    this.nvResponses.set(from, { viewNo: nv.viewNo, key });
    let same = 0;
    for (const r of this.nvResponses.values()) if (r.key === key) same++;
    if (same < ctx.quorums.weak) return;
    this.nvResponses.clear();
    if (nv.viewNo > ctx.viewNo) this.leaveView(nv.viewNo);
    this.futureViewSenders.clear();
    this.acceptNewView({ ...body, op: 'NEW_VIEW' });
  }

  /**
   * Drops what the view-change stores hold for views this node has left behind: VIEW_CHANGEs of
   * views below `view` (those of `view` itself are taken by startViewChange), 3PC senders up to it,
   * NEW_VIEW answers below it, or up to it once it is `entered`.
   */
  private pruneViewStores(view: number, entered = false): void {
    const below = entered ? view + 1 : view;
    for (const v of [...this.futureVcs.keys()]) if (v < below) this.futureVcs.delete(v);
    for (const v of [...this.futureViewSenders.keys()]) if (v <= view) this.futureViewSenders.delete(v);
    for (const [from, r] of this.nvResponses) if (r.viewNo < below) this.nvResponses.delete(from);
  }

  /** The NEW_VIEW this node accepted, for MESSAGE_REQUEST answers. */
  newViewFor(viewNo: number): NewView | undefined {
    const nv = this.acceptedNewView;
    return nv !== undefined && nv.viewNo === viewNo ? { ...nv, primary: this.ctx.primaryName(viewNo) } : undefined;
  }

  viewChangeOf(name: string, digest: string): ViewChange | undefined {
    const held = this.vcs.get(name);
    if (held?.digest === digest) return held.vc;
    return name === this.ctx.name ? this.ownPastVcs.get(digest) : undefined;
  }
}
