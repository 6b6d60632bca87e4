// Checkpoints, watermarks and garbage collection of the 3PC log (consensus.md §4), plus the lag
// detector that tells the node to catch up (§4.4 b).
import type { CoreContext, CoreStateWriters } from './context.js';
import type { Checkpoint } from './messages.js';

export interface CheckpointHooks {
  /** the window moved: drop old 3PC state and re-process stashed messages */
  onStable(seqNoEnd: number): void;
  /** this node lags at least two stable checkpoints behind the others */
  onLagging(target: { seqNoEnd: number; digest: string | null }): void;
}

export class Checkpoints {
  stableCheckpoint = 0;
  /** own checkpoints: seqNoEnd -> audit root at that size */
  readonly own = new Map<number, string>();
  /** received: seqNoEnd -> sender -> digest */
  private readonly received = new Map<number, Map<string, string | null>>();

  constructor(
    private readonly ctx: CoreContext,
    private readonly watermarks: CoreStateWriters['watermarks'],
    private readonly hooks: CheckpointHooks,
  ) {}

  /** After ordering batch k (audit root `auditRoot` at size k). */
  onOrdered(k: number, auditRoot: string): void {
    if (k % this.ctx.opts.chkFreq !== 0) return;
    this.own.set(k, auditRoot);
    this.ctx.broadcast({ op: 'CHECKPOINT', instId: 0, viewNo: this.ctx.viewNo, seqNoStart: 0, seqNoEnd: k, digest: auditRoot });
    this.tryStabilise(k);
  }

  onCheckpoint(from: string, cp: Checkpoint): void {
    if (cp.seqNoEnd <= this.stableCheckpoint || cp.seqNoEnd % this.ctx.opts.chkFreq !== 0) return;
    // a sender can hold one vote per seqNoEnd; bound the map to the window the lag detector needs
    if (cp.seqNoEnd > this.ctx.lastOrdered.ppSeqNo + 20 * this.ctx.opts.logSize) return;
    let votes = this.received.get(cp.seqNoEnd);
    if (votes === undefined) {
      votes = new Map();
      this.received.set(cp.seqNoEnd, votes);
    }
    if (votes.has(from)) return;
    votes.set(from, cp.digest);
    this.tryStabilise(cp.seqNoEnd);
    this.checkLag();
  }

  private matching(seqNoEnd: number, digest: string | null): number {
    let n = 0;
    const votes = this.received.get(seqNoEnd);
    if (votes === undefined) return 0;
    for (const [from, d] of votes) if (from !== this.ctx.name && d === digest && this.ctx.isValidator(from)) n++;
    return n;
  }

  private tryStabilise(seqNoEnd: number): void {
    const own = this.own.get(seqNoEnd);
    if (own === undefined || seqNoEnd <= this.stableCheckpoint) return;
    if (this.matching(seqNoEnd, own) < this.ctx.quorums.checkpoint) return;
    this.markStable(seqNoEnd);
  }

  /** Makes `seqNoEnd` the stable checkpoint: move the window, collect garbage. */
  markStable(seqNoEnd: number): void {
    this.stableCheckpoint = seqNoEnd;
    this.watermarks.setLow(seqNoEnd);
    for (const k of this.own.keys()) if (k < seqNoEnd) this.own.delete(k);
    for (const k of this.received.keys()) if (k <= seqNoEnd) this.received.delete(k);
    this.hooks.onStable(seqNoEnd);
  }

  /** More than one checkpoint above lastOrdered is stable among the others -> lagging. */
  private checkLag(): void {
    const stableAbove = this.stableAmongOthersAbove();
    if (stableAbove.length > 1) {
      stableAbove.sort((a, b) => b.seqNoEnd - a.seqNoEnd);
      this.hooks.onLagging(stableAbove[0]);
    }
  }

  /** Checkpoints above lastOrdered that n-f-1 others agree on and this node does not have. */
  stableAmongOthersAbove(): { seqNoEnd: number; digest: string | null }[] {
    const ctx = this.ctx;
    const stableAbove: { seqNoEnd: number; digest: string | null }[] = [];
    for (const [seqNoEnd, votes] of this.received) {
      if (seqNoEnd <= ctx.lastOrdered.ppSeqNo || this.own.has(seqNoEnd)) continue;
      const counts = new Map<string | null, number>();
      for (const [from, d] of votes) if (from !== ctx.name && ctx.isValidator(from)) counts.set(d, (counts.get(d) ?? 0) + 1);
      for (const [d, c] of counts) if (c >= ctx.quorums.checkpoint) stableAbove.push({ seqNoEnd, digest: d });
    }
    return stableAbove;
  }

  /** Restores the stable checkpoint after restart / catch-up (consensus.md §7.5). */
  restore(lastOrderedSeqNo: number, auditRootAt: (size: number) => string): void {
    const c = Math.floor(lastOrderedSeqNo / this.ctx.opts.chkFreq) * this.ctx.opts.chkFreq;
    this.own.clear();
    // votes above the restored point keep telling whether this node still lags
    for (const k of this.received.keys()) if (k <= c) this.received.delete(k);
    if (c > 0) this.own.set(c, auditRootAt(c));
    this.stableCheckpoint = c;
    this.watermarks.setLow(c);
  }
}
