// INSTANCE_CHANGE voting and the monitor (consensus.md §6.1, §6.2): suspicions that count, the
// M1/M2 stall and latency monitor, primary disconnection, vote expiry and the n-f quorum that
// starts a view change; timeouts double with every view change that did not order (§6.1, §6.8).
import type { CoreContext } from './context.js';
import { Suspicion } from './context.js';
import type { RequestIntake } from './intake.js';
import type { InstanceChange } from './messages.js';

export class InstanceChangeVoting {
  /** proposed view -> voter -> time of the vote */
  private readonly votes = new Map<number, Map<string, number>>();
  private readonly sentAt = new Map<number, number>();
  /** view changes since a view last ordered a batch (timeout doubling) */
  escalation = 0;
  primaryDownSince: number | undefined;
  private lastMonitorAt = 0;
  private viewStartedAt = 0;

  constructor(
    private readonly ctx: CoreContext,
    private readonly intake: RequestIntake,
    private readonly startViewChange: (view: number) => void,
  ) {
    ctx.onVote = (code) => this.vote(code);
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

  /** M1/M2: requests wait and nothing gets ordered. */
  private monitorDegraded(): boolean {
    const ctx = this.ctx;
    if (ctx.waitingForNewView || ctx.catchingUp) return false;
    const oldest = this.intake.oldestFinalisedAt();
    if (oldest === undefined) return false;
    const now = ctx.now();
    const f = this.timeoutFactor();
    const since = Math.max(ctx.lastOrderedAt, oldest, this.viewStartedAt);
    return now - since >= ctx.opts.progressTimeoutMs * f || now - Math.max(oldest, this.viewStartedAt) >= ctx.opts.requestOrderingTimeoutMs * f;
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
    if (this.monitorDegraded()) this.vote(Suspicion.PRIMARY_DEGRADED);
    if (this.primaryDownSince !== undefined && now - this.primaryDownSince >= ctx.opts.toleratePrimaryDisconnectionMs) this.vote(Suspicion.PRIMARY_DISCONNECTED);
    for (const [view, m] of this.votes) {
      for (const [voter, t] of m) if (now - t >= ctx.opts.outdatedInstanceChangesMs) m.delete(voter);
      if (m.size === 0 || view <= ctx.viewNo) this.votes.delete(view);
    }
  }

  /** A NEW_VIEW was accepted: votes up to it are spent, request ages restart. */
  onViewEntered(viewNo: number): void {
    this.viewStartedAt = this.ctx.now();
    for (const v of [...this.votes.keys()]) if (v <= viewNo) this.votes.delete(v);
  }
}
