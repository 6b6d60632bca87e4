// INSTANCE_CHANGE voting and the monitor (consensus.md §6.1, §6.2): suspicions that count, the
// M1/M2 stall and latency monitor, primary disconnection, vote expiry and the n-f quorum that
// starts a view change; timeouts double with every view change that did not order (§6.1, §6.8).
import type { CoreContext } from './context.js';
import { Suspicion } from './context.js';
import type { RequestIntake } from './intake.js';
import type { InstanceChange } from './messages.js';

/** one monitor sample for M3 */
interface ThroughputSample {
  at: number;
  finalised: number;
  ordered: number;
  backlog: boolean;
}

export class InstanceChangeVoting {
  /** proposed view -> voter -> time of the vote */
  private readonly votes = new Map<number, Map<string, number>>();
  private readonly sentAt = new Map<number, number>();
  /** view changes since a view last ordered a batch (timeout doubling) */
  escalation = 0;
  primaryDownSince: number | undefined;
  private lastMonitorAt = 0;
  private viewStartedAt = 0;
  private samples: ThroughputSample[] = [];

  constructor(
    private readonly ctx: CoreContext,
    private readonly intake: RequestIntake,
    private readonly startViewChange: (view: number) => void,
  ) {
    ctx.onVote = (code, proposed) => this.vote(code, proposed);
    this.loadVotes();
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
      let m = this.votes.get(v.viewNo);
      if (m === undefined) {
        m = new Map();
        this.votes.set(v.viewNo, m);
      }
      m.set(v.voter, now - age);
    }
  }

  private saveVotes(): void {
    const store = this.ctx.modules.voteStore;
    if (store === undefined) return;
    const now = this.ctx.now();
    const utc = this.ctx.modules.clock.utcSeconds();
    const out: { viewNo: number; voter: string; utc: number }[] = [];
    for (const [viewNo, m] of this.votes) for (const [voter, t] of m) out.push({ viewNo, voter, utc: utc - Math.round((now - t) / 1000) });
    store.save(out);
  }

  timeoutFactor(): number {
    return Math.min(8, 2 ** Math.max(0, this.escalation - 1));
  }

  // ---- INSTANCE_CHANGE voting -------------------------------------------------------------------

  vote(code: number, proposed = this.ctx.viewNo + 1): void {
    const ctx = this.ctx;
    const now = ctx.now();
    const last = this.sentAt.get(proposed);
    if (last !== undefined && now - last < ctx.opts.viewChangeWindowMs) return;
    this.sentAt.set(proposed, now);
    ctx.broadcast({ op: 'INSTANCE_CHANGE', viewNo: proposed, reason: code });
    this.recordVote(ctx.name, proposed);
  }

  private recordVote(from: string, view: number): void {
    let m = this.votes.get(view);
    if (m === undefined) {
      m = new Map();
      this.votes.set(view, m);
    }
    m.set(from, this.ctx.now());
    this.saveVotes();
    this.checkVoteQuorum(view);
  }

  onInstanceChange(from: string, ic: InstanceChange): void {
    if (ic.viewNo <= this.ctx.viewNo) return;
    this.recordVote(from, ic.viewNo);
    if (this.monitorDegraded() && !this.votes.get(ic.viewNo)?.has(this.ctx.name)) this.vote(Suspicion.PRIMARY_DEGRADED, ic.viewNo);
  }

  private checkVoteQuorum(view: number): void {
    const ctx = this.ctx;
    if (view <= ctx.viewNo) return;
    const m = this.votes.get(view);
    if (m === undefined) return;
    const now = ctx.now();
    let n = 0;
    for (const [voter, t] of m) if (ctx.isValidator(voter) && now - t < ctx.opts.outdatedInstanceChangesMs) n++;
    if (n >= ctx.quorums.strong) this.startViewChange(view);
  }

  /** M1/M2/M3: requests wait and nothing (or too little) gets ordered. */
  private monitorDegraded(): boolean {
    const ctx = this.ctx;
    if (ctx.waitingForNewView || ctx.catchingUp) return false;
    if (this.throughputDegraded()) return true;
    const oldest = this.intake.oldestFinalisedAt();
    if (oldest === undefined) return false;
    const now = ctx.now();
    const f = this.timeoutFactor();
    const since = Math.max(ctx.lastOrderedAt, oldest, this.viewStartedAt);
    return now - since >= ctx.opts.progressTimeoutMs * f || now - Math.max(oldest, this.viewStartedAt) >= ctx.opts.requestOrderingTimeoutMs * f;
  }

  /**
   * M3: over the last THROUGHPUT_WINDOW the backlog never emptied and fewer than DELTA times the
   * requests finalised in it got ordered (sampled at every monitor evaluation).
   */
  private throughputDegraded(): boolean {
    const s = this.samples;
    if (s.length < 2) return false;
    const first = s[0]!;
    const last = s[s.length - 1]!;
    if (last.at - first.at < this.ctx.opts.throughputWindowMs || s.some((x) => !x.backlog)) return false;
    const finalised = last.finalised - first.finalised;
    return finalised > 0 && last.ordered - first.ordered < this.ctx.opts.throughputDelta * finalised;
  }

  private sampleThroughput(now: number): void {
    const ctx = this.ctx;
    this.samples.push({ at: now, finalised: ctx.finalisedTotal, ordered: ctx.orderedRequestsTotal, backlog: this.intake.hasFinalisedPending() });
    // keep exactly one sample at or before the window start
    while (this.samples.length > 2 && now - this.samples[1]!.at >= ctx.opts.throughputWindowMs) this.samples.shift();
  }

  onPeerConnection(alias: string, connected: boolean): void {
    if (alias !== this.ctx.primaryName()) return;
    this.primaryDownSince = connected ? undefined : (this.primaryDownSince ?? this.ctx.now());
  }

  /** Periodic monitor: stall, primary disconnection, vote expiry. */
  onTick(): void {
    const ctx = this.ctx;
    const now = ctx.now();
    if (now - this.lastMonitorAt < ctx.opts.perfCheckFreqMs) return;
    this.lastMonitorAt = now;
    this.sampleThroughput(now);
    if (this.monitorDegraded()) this.vote(Suspicion.PRIMARY_DEGRADED);
    if (this.primaryDownSince !== undefined && now - this.primaryDownSince >= ctx.opts.toleratePrimaryDisconnectionMs) this.vote(Suspicion.PRIMARY_DISCONNECTED);
    let expired = false;
    for (const [view, m] of this.votes) {
      for (const [voter, t] of m) {
        if (now - t >= ctx.opts.outdatedInstanceChangesMs) {
          m.delete(voter);
          expired = true;
        }
      }
      if (m.size === 0 || view <= ctx.viewNo) {
        this.votes.delete(view);
        expired = true;
      }
    }
    if (expired) this.saveVotes();
  }

  /** A NEW_VIEW was accepted: votes up to it are spent, request ages restart. */
  onViewEntered(viewNo: number): void {
    this.viewStartedAt = this.ctx.now();
    this.samples = [];
    for (const v of [...this.votes.keys()]) if (v <= viewNo) this.votes.delete(v);
    this.saveVotes();
  }
}
