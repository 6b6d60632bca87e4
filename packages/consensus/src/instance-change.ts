// INSTANCE_CHANGE voting and the monitor (consensus.md §5, §6.1, §6.2): suspicions that count, the
// monitors M1 stall and M3 throughput (vote 25) and M2 request latency (vote 61), the freshness of
// the state signatures (vote 43), primary disconnection, vote expiry and the n-f quorum that starts
// a view change; monitor timeouts double with every view change that did not order (§6.1, §6.8).
import { STATE_LEDGERS } from './batching.js';
import type { CoreContext } from './context.js';
import { Suspicion } from './context.js';
import type { RequestIntake } from './intake.js';
import type { InstanceChange, ViewChange } from './messages.js';

/** one monitor sample for M3 */
interface ThroughputSample {
  at: number;
  finalised: number;
  ordered: number;
  backlog: boolean;
}

/**
 * Highest view a peer's INSTANCE_CHANGE may propose, relative to the current view (the Byzantine
 * bound of #15, F4): an honest validator proposes its own view + 1, and one that is further ahead
 * is joined by the f+1 VIEW_CHANGE rule (§6.2) or lagging-view detection (§6.9) instead, so votes
 * for views above `viewNo + INSTANCE_CHANGE_VIEW_WINDOW` are dropped.
 */
export const INSTANCE_CHANGE_VIEW_WINDOW = 2;

/** one validator's INSTANCE_CHANGE vote */
interface Vote {
  /** proposed view */
  view: number;
  /** when it was received or cast (monotonic ms); a repeated vote refreshes it */
  at: number;
  /** the suspicion code it gave (unknown for a vote read back from the store) */
  reason?: number;
}

/** Codes of the monitor (M1-M3): evidence of the moment, voted again every ViewChangeWindowSize while it holds. */
const MONITOR_CODES: ReadonlySet<number> = new Set([Suspicion.PRIMARY_DEGRADED, Suspicion.REQUEST_NOT_ORDERED]);

/** ViewChangeWindowSize periods a monitor vote counts without being repeated (#16). */
export const MONITOR_VOTE_WINDOWS = 5;

/** What the voting needs of the view changer. */
export interface VotingHooks {
  /** starts a view change to `view` */
  startViewChange(view: number): void;
  /** validators whose VIEW_CHANGE for `view` (a view above the current one) this node holds */
  viewChangeAuthors(view: number): Iterable<string>;
  /** the VIEW_CHANGE this node sent for the view it is entering, while it waits for NEW_VIEW */
  ownViewChange(): ViewChange | undefined;
}

export class InstanceChangeVoting {
  /**
   * voter -> its latest vote (#15, F4): one entry per voter whatever it sends, so the set, each
   * quorum count and each persisted copy hold at most one vote per validator (and per former
   * validator until its vote expires).
   */
  private readonly votes = new Map<string, Vote>();
  /** proposed view -> when this node last broadcast a vote for it (pruned when a view is entered) */
  private readonly sentAt = new Map<number, number>();
  /** proposed view -> the code of this node's last vote for it (pruned with sentAt) */
  private readonly ownReasons = new Map<number, number>();
  /** view changes since a view last ordered a batch (timeout doubling) */
  escalation = 0;
  primaryDownSince: number | undefined;
  private lastMonitorAt = 0;
  /** the monitor (M1-M3) judges nothing before this time: this node's own event loop stalled (pauseMonitor) */
  private monitorPausedUntil = Number.NEGATIVE_INFINITY;
  private viewStartedAt = 0;
  /**
   * Start of the current freshness period (§5: checked every STATE_FRESHNESS_UPDATE_INTERVAL);
   * set at the first tick after start and when a view is entered, so that neither a fresh start on a
   * restored lastUpdate nor a new view is judged before its primary had one interval to refresh.
   */
  private freshnessPeriodStart: number | undefined;
  private samples: ThroughputSample[] = [];
  /** what the monitor saw when it last reported (for the vote's log line) */
  private monitorDetail: Record<string, unknown> = {};

  constructor(
    private readonly ctx: CoreContext,
    private readonly intake: RequestIntake,
    private readonly hooks: VotingHooks,
  ) {
    this.loadVotes();
  }

  /** Number of votes held (one per voter at most). */
  get voteCount(): number {
    return this.votes.size;
  }

  // ---- persistence (consensus.md §6.2: a restart must not reset the votes) ---------------------

  private loadVotes(): void {
    const store = this.ctx.modules.voteStore;
    if (store === undefined) return;
    const now = this.ctx.now();
    const utc = this.ctx.modules.clock.utcSeconds();
    for (const v of store.load()) {
      const age = Math.max(0, (utc - v.utc) * 1000);
      if (age >= this.ctx.opts.outdatedInstanceChangesMs || v.viewNo <= this.ctx.viewNo) continue;
      // a store written before votes were kept one per voter may hold several: the latest counts
      const held = this.votes.get(v.voter);
      const at = now - age;
      if (held === undefined || at > held.at || (at === held.at && v.viewNo > held.view)) this.votes.set(v.voter, { view: v.viewNo, at });
    }
  }

  /**
   * Hands the live votes to the store. Called only when a voter's proposed view changes or votes
   * are dropped, never for a repeated vote (whose refreshed time stays in memory: after a restart
   * such a vote may expire earlier, which only delays a view change); the node's store coalesces
   * the writes (one in flight, the latest set pending).
   */
  private saveVotes(): void {
    const store = this.ctx.modules.voteStore;
    if (store === undefined) return;
    const now = this.ctx.now();
    const utc = this.ctx.modules.clock.utcSeconds();
    const out: { viewNo: number; voter: string; utc: number }[] = [];
    for (const [voter, v] of this.votes) out.push({ viewNo: v.view, voter, utc: utc - Math.round((now - v.at) / 1000) });
    store.save(out);
  }

  timeoutFactor(): number {
    return Math.min(8, 2 ** Math.max(0, this.escalation - 1));
  }

  // ---- INSTANCE_CHANGE voting -------------------------------------------------------------------

  /** Votes `code` for `proposed`; `detail` (which monitor reported, and its figures) goes to the log line only. */
  vote(code: number, proposed = this.ctx.viewNo + 1, detail?: Record<string, unknown>): void {
    const ctx = this.ctx;
    const now = ctx.now();
    const last = this.sentAt.get(proposed);
    if (last !== undefined && now - last < ctx.opts.viewChangeWindowMs) return;
    this.sentAt.set(proposed, now);
    this.ownReasons.set(proposed, code);
    ctx.modules.logger?.info({ view: proposed, code, ...detail }, 'instance change voted');
    ctx.broadcast({ op: 'INSTANCE_CHANGE', viewNo: proposed, reason: code });
    if (proposed > ctx.viewNo) this.recordVote(ctx.name, proposed, code);
  }

  /** Records `from`'s vote for `view` (> current view), replacing its earlier vote. */
  private recordVote(from: string, view: number, reason?: number): void {
    const held = this.votes.get(from);
    const now = this.ctx.now();
    if (held !== undefined && held.view === view) {
      held.at = now;
      if (reason === undefined) delete held.reason;
      else held.reason = reason;
    } else {
      this.votes.set(from, { view, at: now, ...(reason !== undefined ? { reason } : {}) });
      this.saveVotes();
    }
    this.checkVoteQuorum(view);
  }

  /**
   * How long a vote counts (consensus.md §6.2: OUTDATED_INSTANCE_CHANGES_CHECK_INTERVAL). A monitor vote
   * (25, 61) only for MONITOR_VOTE_WINDOWS × ViewChangeWindowSize (#16): its voter votes again every
   * window while its monitor reports, so a quorum of them is n-f validators that suspect the primary
   * at the same time, not votes of moments minutes apart while the pool went on ordering (a busy
   * pool's monitors report one after the other; an honest, loaded primary is not faulty).
   */
  private lifetime(v: Vote): number {
    const full = this.ctx.opts.outdatedInstanceChangesMs;
    return v.reason !== undefined && MONITOR_CODES.has(v.reason) ? Math.min(full, MONITOR_VOTE_WINDOWS * this.ctx.opts.viewChangeWindowMs) : full;
  }

  private live(v: Vote, now: number): boolean {
    return now - v.at < this.lifetime(v);
  }

  /** This node's vote, if it stands: cast for a view above the current one and not expired. */
  private standingOwnVote(): Vote | undefined {
    const ctx = this.ctx;
    const own = this.votes.get(ctx.name);
    return own !== undefined && own.view > ctx.viewNo && this.live(own, ctx.now()) ? own : undefined;
  }

  /**
   * A validator (re)connected (consensus.md §6.2, votes lost with a link): what it may have missed
   * of this node's wish to change view is sent to it again, the VIEW_CHANGE this node waits with
   * (which counts as its vote for that view) and its standing INSTANCE_CHANGE vote. A vote is
   * never re-cast here, only the one already cast is repeated; a peer keeps one of each per sender.
   */
  private resendTo(alias: string): void {
    const ctx = this.ctx;
    if (alias === ctx.name || !ctx.isValidator(alias) || !ctx.participating) return;
    const vc = ctx.waitingForNewView ? this.hooks.ownViewChange() : undefined;
    if (vc !== undefined) {
      ctx.send(alias, vc);
      ctx.send(alias, { op: 'INSTANCE_CHANGE', viewNo: ctx.viewNo, reason: this.ownReasons.get(ctx.viewNo) ?? Suspicion.PRIMARY_DEGRADED });
      return;
    }
    const own = this.standingOwnVote();
    if (own !== undefined) ctx.send(alias, { op: 'INSTANCE_CHANGE', viewNo: own.view, reason: own.reason ?? Suspicion.PRIMARY_DEGRADED });
  }

  /**
   * A validator's VIEW_CHANGE for `view`, above the current view, arrived: it waits in `view`. If
   * this node's own vote for that view still stands, it broadcasts it again (at most once per
   * ViewChangeWindowSize): the votes that made the sender start its view change may never have
   * reached the others, and without them the pool would order on without it for good.
   */
  onFutureViewChange(view: number): void {
    const ctx = this.ctx;
    const own = this.standingOwnVote();
    if (own !== undefined && own.view === view && ctx.participating) {
      const now = ctx.now();
      const last = this.sentAt.get(view);
      if (last === undefined || now - last >= ctx.opts.viewChangeWindowMs) {
        this.sentAt.set(view, now);
        own.at = now;
        ctx.broadcast({ op: 'INSTANCE_CHANGE', viewNo: view, reason: own.reason ?? Suspicion.PRIMARY_DEGRADED });
      }
    }
    this.checkVoteQuorum(view);
  }

  /**
   * INSTANCE_CHANGE from a validator (§6.2): dropped unless it proposes a view in
   * (viewNo, viewNo + INSTANCE_CHANGE_VIEW_WINDOW]; it replaces the sender's earlier vote.
   */
  onInstanceChange(from: string, ic: InstanceChange): void {
    const ctx = this.ctx;
    if (ic.viewNo <= ctx.viewNo || ic.viewNo > ctx.viewNo + INSTANCE_CHANGE_VIEW_WINDOW || !ctx.isValidator(from)) return;
    this.recordVote(from, ic.viewNo, ic.reason);
    // Indy rule: a node whose own monitor (M1-M3) reports degradation joins the proposed view
    const code = this.monitorSuspicion();
    if (code !== undefined && this.votes.get(ctx.name)?.view !== ic.viewNo) this.vote(code, ic.viewNo, { ...this.monitorDetail, adoptedFrom: from });
  }

  /** This node itself suspects the primary now: its monitor (M1-M3) reports, or the primary is disconnected too long. */
  private suspectsPrimaryNow(): boolean {
    const ctx = this.ctx;
    if (this.primaryDownSince !== undefined && ctx.now() - this.primaryDownSince >= ctx.opts.toleratePrimaryDisconnectionMs) return true;
    return this.monitorSuspicion() !== undefined;
  }

  /**
   * n-f distinct validators want `view`: those whose INSTANCE_CHANGE vote for it is held and, while
   * this node itself suspects the primary (suspectsPrimaryNow), those whose VIEW_CHANGE for it is held (the Indy
   * rule of §6.2 for a validator waiting in that view: its INSTANCE_CHANGE vote that took it there
   * may have been lost, or replaced by its vote 28 for the next view). A node outside the registry
   * it knows (a joining node not caught up yet) starts nothing on votes: its quorum would be
   * counted over a registry the others left (Indy stashes INSTANCE_CHANGE until the node
   * participates); the tick counts again once it participates.
   */
  private checkVoteQuorum(view: number): void {
    const ctx = this.ctx;
    if (view <= ctx.viewNo || !ctx.participating) return;
    const now = ctx.now();
    const voters = new Set<string>();
    for (const [voter, v] of this.votes) if (v.view === view && ctx.isValidator(voter) && this.live(v, now)) voters.add(voter);
    if (voters.size < ctx.quorums.strong && this.suspectsPrimaryNow()) {
      for (const author of this.hooks.viewChangeAuthors(view)) if (ctx.isValidator(author)) voters.add(author);
    }
    if (voters.size >= ctx.quorums.strong) this.hooks.startViewChange(view);
  }

  /**
   * The code the monitor votes now (consensus.md §6.1): 25 PRIMARY_DEGRADED when M1 (stall) or M3
   * (throughput) reports, else 61 REQUEST_NOT_ORDERED when M2 (oldest finalised request) reports;
   * undefined when none does, while the monitor is off (view change, catch-up, a stall of this
   * node's own event loop) and at the primary of a pool with f >= 1.
   */
  private monitorSuspicion(): number | undefined {
    const ctx = this.ctx;
    if (ctx.waitingForNewView || ctx.catchingUp || ctx.now() < this.monitorPausedUntil) return undefined;
    if (this.primaryAbstains()) return undefined;
    if (this.throughputDegraded()) {
      const [first, last] = [this.samples[0], this.samples[this.samples.length - 1]];
      this.monitorDetail = {
        monitor: 'M3',
        finalised: (last?.finalised ?? 0) - (first?.finalised ?? 0),
        ordered: (last?.ordered ?? 0) - (first?.ordered ?? 0),
      };
      return Suspicion.PRIMARY_DEGRADED;
    }
    const oldest = this.intake.oldestFinalisedAt();
    if (oldest === undefined) return undefined;
    const now = ctx.now();
    const f = this.timeoutFactor();
    // M1: finalised requests are pending and for PROGRESS_TIMEOUT no batch was ordered and the primary
    // proposed none: a primary that keeps proposing while a loaded pool orders slowly is busy, not
    // faulty (M2 and M3 still judge what its proposals achieve)
    const progress = Math.max(ctx.lastOrderedAt, ctx.lastProposalAt, oldest, this.viewStartedAt);
    if (now - progress >= ctx.opts.progressTimeoutMs * f) {
      this.monitorDetail = { monitor: 'M1', sinceOrderedMs: now - ctx.lastOrderedAt, sinceProposalMs: now - ctx.lastProposalAt };
      return Suspicion.PRIMARY_DEGRADED;
    }
    // M2: the oldest finalised pending request waits longer than REQUEST_ORDERING_TIMEOUT
    if (now - Math.max(oldest, this.viewStartedAt) >= ctx.opts.requestOrderingTimeoutMs * f) {
      this.monitorDetail = { monitor: 'M2', oldestMs: now - oldest };
      return Suspicion.REQUEST_NOT_ORDERED;
    }
    return undefined;
  }

  /**
   * The primary does not judge itself (#16): it knows whether it proposes; when an honest primary's
   * batches are ordered slowly the pool is busy, and its own vote made up the n-f against it (its M3
   * under overload). The n-1 backups are at least n-f, so a faulty primary is still voted out. It
   * judges again when a validator waits in a later view (its VIEW_CHANGE is held): the view may then
   * lack the quorum to order, and moving to that view needs every vote, the primary's too. With f = 0
   * (a development pool) every vote is always needed.
   */
  private primaryAbstains(): boolean {
    const ctx = this.ctx;
    if (!ctx.isPrimary() || ctx.quorums.weak <= 1) return false;
    for (let v = ctx.viewNo + 1; v <= ctx.viewNo + INSTANCE_CHANGE_VIEW_WINDOW; v++) {
      for (const author of this.hooks.viewChangeAuthors(v)) if (ctx.isValidator(author)) return false;
    }
    return true;
  }

  /**
   * M3: over the last THROUGHPUT_WINDOW the backlog never emptied and fewer than DELTA times the
   * requests finalised in it got ordered (sampled at every monitor evaluation).
   */
  private throughputDegraded(): boolean {
    const s = this.samples;
    if (s.length < 2) return false;
    const first = s[0];
    const last = s[s.length - 1];
    if (last.at - first.at < this.ctx.opts.throughputWindowMs || s.some((x) => !x.backlog)) return false;
    const finalised = last.finalised - first.finalised;
    return finalised > 0 && last.ordered - first.ordered < this.ctx.opts.throughputDelta * finalised;
  }

  private sampleThroughput(now: number): void {
    const ctx = this.ctx;
    this.samples.push({ at: now, finalised: ctx.finalisedTotal, ordered: ctx.orderedRequestsTotal, backlog: this.intake.hasFinalisedPending() });
    // keep exactly one sample at or before the window start
    while (this.samples.length > 2 && now - this.samples[1].at >= ctx.opts.throughputWindowMs) this.samples.shift();
  }

  /**
   * This node's own event loop stalled (overload, a long task): what it did not see while stalled
   * (PRE-PREPAREs and COMMITs waiting in its sockets) is no evidence against the primary, so the
   * monitor judges nothing until `until`, by when the node has handled what arrived meanwhile.
   */
  pauseMonitor(until: number): void {
    this.monitorPausedUntil = Math.max(this.monitorPausedUntil, until);
  }

  onPeerConnection(alias: string, connected: boolean): void {
    if (connected) this.resendTo(alias);
    if (alias !== this.ctx.primaryName()) return;
    this.primaryDownSince = connected ? undefined : (this.primaryDownSince ?? this.ctx.now());
  }

  /** Periodic monitor: freshness, stall, latency, throughput, primary disconnection, vote expiry. */
  onTick(): void {
    const ctx = this.ctx;
    const now = ctx.now();
    this.checkFreshness(now);
    if (now - this.lastMonitorAt < ctx.opts.perfCheckFreqMs) return;
    this.lastMonitorAt = now;
    this.sampleThroughput(now);
    const code = this.monitorSuspicion();
    if (code !== undefined) this.vote(code, undefined, this.monitorDetail);
    if (this.primaryDownSince !== undefined && now - this.primaryDownSince >= ctx.opts.toleratePrimaryDisconnectionMs)
      this.vote(Suspicion.PRIMARY_DISCONNECTED);
    let expired = false;
    for (const [voter, v] of this.votes) {
      if (!this.live(v, now) || v.view <= ctx.viewNo) {
        this.votes.delete(voter);
        expired = true;
      }
    }
    if (expired) this.saveVotes();
    // quorums not acted on when they formed (this node did not participate yet)
    const views = new Set<number>();
    for (const v of this.votes.values()) views.add(v.view);
    for (const v of [...views].sort((a, b) => a - b)) {
      if (ctx.waitingForNewView) break;
      this.checkVoteQuorum(v);
    }
  }

  /**
   * Silent-primary detector (consensus.md §5): every STATE_FRESHNESS_UPDATE_INTERVAL, unless catching
   * up or waiting for a NEW_VIEW, vote 43 when the oldest lastUpdate of the ledgers with state is
   * ACCEPTABLE_FRESHNESS_INTERVALS_COUNT intervals old. The first check comes one interval after start
   * or after entering a view (the primary sends a freshness batch as soon as a ledger is stale).
   */
  private checkFreshness(now: number): void {
    const ctx = this.ctx;
    if (this.freshnessPeriodStart === undefined) this.freshnessPeriodStart = now;
    if (now - this.freshnessPeriodStart < ctx.opts.stateFreshnessUpdateIntervalSec * 1000) return;
    this.freshnessPeriodStart = now;
    if (ctx.waitingForNewView || ctx.catchingUp || !ctx.participating) return;
    if (this.stateSignaturesOutdated()) this.vote(Suspicion.STATE_SIGS_ARE_NOT_UPDATED);
  }

  /** utcNow − min_L lastUpdate[L] ≥ count × interval; a ledger never updated counts as outdated. */
  private stateSignaturesOutdated(): boolean {
    const ctx = this.ctx;
    let oldest = Number.POSITIVE_INFINITY;
    for (const lid of STATE_LEDGERS) oldest = Math.min(oldest, ctx.lastUpdate.get(lid) ?? Number.NEGATIVE_INFINITY);
    return ctx.modules.clock.utcSeconds() - oldest >= ctx.opts.acceptableFreshnessIntervalsCount * ctx.opts.stateFreshnessUpdateIntervalSec;
  }

  /** A NEW_VIEW was accepted: votes up to it are spent, request ages and the freshness period restart. */
  onViewEntered(viewNo: number): void {
    this.viewStartedAt = this.ctx.now();
    this.freshnessPeriodStart = this.viewStartedAt;
    this.samples = [];
    let dropped = false;
    for (const [voter, v] of this.votes) {
      if (v.view <= viewNo) {
        this.votes.delete(voter);
        dropped = true;
      }
    }
    for (const v of this.sentAt.keys()) if (v <= viewNo) this.sentAt.delete(v);
    for (const v of this.ownReasons.keys()) if (v <= viewNo) this.ownReasons.delete(v);
    if (dropped) this.saveVotes();
  }
}
