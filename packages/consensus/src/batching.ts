// Batch creation by the primary (consensus.md §3.2, §3.3) and freshness batches (§5).
import type { CoreContext } from './context.js';
import { batchDigest, encodeDiscarded } from './digest.js';
import type { RequestIntake } from './intake.js';
import type { PrePrepare } from './messages.js';
import { multiSigToTuple } from './messages.js';
import type { Ordering } from './ordering.js';

/** ledgers with a state trie, in batching order */
export const STATE_LEDGERS = [0, 1, 2] as const;

export class Batching {
  /** a view was just entered: the first batch records the new primaries even if empty */
  viewStartPending = false;
  /**
   * Set at a restart: the node cannot know which PRE-PREPAREs it sent before the crash, nor in which
   * view (its ledgers may end a view or more before it: the last writes may be torn, and a catch-up
   * can bring it into a later view where it was the primary). Proposing again would equivocate, so
   * it proposes only in a view it entered through a NEW_VIEW after the restart; meanwhile the pool
   * moves to the next view.
   */
  blockedSinceRestart = false;
  /** set by ConsensusCore.quiesce(): the node is about to exit, it proposes nothing more */
  quiesced = false;
  /**
   * The highest ppSeqNo this node proposed in its current view. A catch-up reverts the batches it
   * proposed and the pool has not ordered here yet; their ppSeqNos are taken in this view and are
   * never proposed again with other content (that is equivocation: peers that ordered the first
   * batch refuse everything built on the second). Proposing resumes above them once this node has
   * them again (repair or catch-up); if the pool never orders them, it changes view.
   */
  private proposed = { viewNo: -1, ppSeqNo: 0 };
  /** ppTime of the last batch this primary applied per ledger (freshness, before ordering) */
  private readonly lastSent = new Map<number, number>();

  constructor(
    private readonly ctx: CoreContext,
    private readonly intake: RequestIntake,
    private readonly ordering: Ordering,
  ) {}

  /** Forget per-view primary state (new view, restart). */
  reset(): void {
    this.lastSent.clear();
  }

  private canSend(): boolean {
    const ctx = this.ctx;
    const cert = ctx.prevViewPrepareCert;
    return (
      ctx.isPrimary() &&
      !this.blockedSinceRestart &&
      !this.quiesced &&
      (this.proposed.viewNo !== ctx.viewNo || ctx.lastPrePrepareSeqNo >= this.proposed.ppSeqNo) &&
      !ctx.waitingForNewView &&
      !ctx.catchingUp &&
      ctx.lastPrePrepareSeqNo >= cert &&
      (ctx.lastPrePrepareSeqNo === cert || ctx.lastOrdered.ppSeqNo > cert) &&
      ctx.lastPrePrepareSeqNo - ctx.lastOrdered.ppSeqNo < ctx.opts.max3pcBatchesInFlight &&
      ctx.lastPrePrepareSeqNo + 1 <= ctx.H
    );
  }

  trySendBatches(): void {
    const ctx = this.ctx;
    if (!this.canSend()) return;
    const now = ctx.now();
    const sentFor = new Set<number>();
    // freshness first: under a sustained load on one ledger every freed slot would otherwise go to
    // that ledger's next full batch, the other ledgers' multi-signatures would age past the
    // validators' vote-43 threshold, and the pool would change view for nothing (a due ledger's
    // batch takes its queued requests, if any)
    const utc = ctx.modules.clock.utcSeconds();
    // ledgers 0-2 and the plugin ledgers (every ledger with a state gets fresh multi-signatures)
    const ledgers = ctx.opts.pluginLedgers === undefined ? STATE_LEDGERS : [...STATE_LEDGERS, ...ctx.opts.pluginLedgers];
    for (const lid of ledgers) {
      if (!this.canSend()) break;
      const last = Math.max(this.ordering.lastUpdate.get(lid) ?? 0, this.lastSent.get(lid) ?? 0);
      if (utc - last >= ctx.opts.stateFreshnessUpdateIntervalSec) {
        if (this.sendBatch(lid, true)) sentFor.add(lid);
      }
    }
    // adaptive batching: a ledger's batch is cut when it is full, when nothing is in flight (the
    // previous batches are ordered: an idle pool orders a lone request at once, a busy one fills its
    // batches while the previous one is being ordered), or when its oldest queued request has waited
    // Max3PCBatchWait (pipelining: the next batch goes out while earlier ones are in flight)
    const idle = ctx.lastPrePrepareSeqNo === ctx.lastOrdered.ppSeqNo;
    for (const lid of ledgers) {
      if (sentFor.has(lid)) continue;
      let first = true;
      while (this.canSend() && this.batchDue(lid, now, idle && first)) {
        first = false;
        if (!this.sendBatch(lid, false)) break;
        sentFor.add(lid);
      }
    }
    if (this.viewStartPending && sentFor.size === 0 && this.canSend()) {
      if (this.sendBatch(1, true)) sentFor.add(1);
    }
    if (sentFor.size > 0) this.viewStartPending = false;
  }

  /**
   * Whether ledger `lid` should get a batch now (consensus.md §3.2 step 1, adaptive): its queue holds
   * a full batch; or it is non-empty and either the pool has nothing in flight (`idle`) or its oldest
   * request has waited `max3pcBatchWaitMs`.
   */
  private batchDue(lid: number, now: number, idle: boolean): boolean {
    const o = this.ctx.opts;
    const len = this.intake.queueLength(lid);
    if (len === 0) return false;
    if (len >= o.max3pcBatchSize || idle) return true;
    const oldest = this.intake.oldestQueuedAt(lid);
    return oldest !== undefined && now - oldest >= o.max3pcBatchWaitMs;
  }

  /** Cuts, applies and broadcasts one batch of ledger `lid`; false if nothing was sent. */
  private sendBatch(lid: number, allowEmpty: boolean): boolean {
    const ctx = this.ctx;
    const ex = ctx.modules.executor;
    const k = ctx.lastPrePrepareSeqNo + 1;
    const poolStateRootHash = ex.uncommittedPoolStateRoot();
    const ppTime = Math.max(Math.floor(ctx.modules.clock.utcSeconds()), ctx.lastAcceptedPPTime);
    const entries = this.intake.takeForBatch(lid, ctx.opts.max3pcBatchSize);
    // every queued request may have been dropped as a payload duplicate
    if (entries.length === 0 && !allowEmpty) return false;
    const reqIdr = entries.map((e) => e.info.digest);
    const digest = batchDigest(ctx.viewNo, ppTime, reqIdr, lid);
    const applied = ex.applyBatch({
      ledgerId: lid,
      requests: entries.map((e) => e.request),
      digests: reqIdr,
      ppTime,
      ppSeqNo: k,
      originalViewNo: ctx.viewNo,
      primaries: [ctx.name],
      digest,
    });
    const pp: PrePrepare = {
      op: 'PREPREPARE',
      instId: 0,
      viewNo: ctx.viewNo,
      ppSeqNo: k,
      ppTime,
      reqIdr,
      discarded: encodeDiscarded(applied.discarded),
      digest,
      ledgerId: lid,
      stateRootHash: applied.stateRoot,
      txnRootHash: applied.txnRoot,
      sub_seq_no: 0,
      final: true,
      poolStateRootHash,
      auditTxnRootHash: applied.auditRoot,
    };
    if (this.ordering.pendingMultiSigs.length > 0) {
      pp.blsMultiSigs = this.ordering.pendingMultiSigs.map(multiSigToTuple);
      this.ordering.pendingMultiSigs = [];
    }
    this.ordering.recordApplied(pp, applied);
    this.lastSent.set(lid, ppTime);
    this.proposed = { viewNo: ctx.viewNo, ppSeqNo: k };
    ctx.lastProposalAt = ctx.now();
    ctx.broadcast(pp);
    ctx.modules.logger?.debug({ ppSeqNo: k, ledgerId: lid, size: reqIdr.length }, 'batch sent');
    return true;
  }
}
