// MESSAGE_REQUEST / MESSAGE_RESPONSE for 3PC messages and PROPAGATEs (consensus.md §7.7) and the
// stall probe that issues them when ordering stops while there is evidence of work to do.
import type { CoreContext } from './context.js';
import type { RequestIntake } from './intake.js';
import type { Checkpoint, MessageRequest, MessageResponse, PrePrepare } from './messages.js';
import type { Ordering } from './ordering.js';
import { prepareMatches } from './three-pc-log.js';

/** 3PC keys asked for in one probe */
const REPAIR_WINDOW = 10;

/** What the repair asks of the view change, the checkpoints and the catch-up (given by the core). */
export interface RepairLinks {
  /** view-change lookups */
  viewChanges: {
    newViewFor(viewNo: number): MessageResponse['msg'] | undefined;
    viewChangeOf(name: string, digest: string): MessageResponse['msg'] | undefined;
    onRequestedNewView(from: string, nv: Extract<MessageResponse['msg'], { op: 'NEW_VIEW' }>): void;
    onRequestedViewChange(from: string, params: { name: string; digest: string }, vc: Extract<MessageResponse['msg'], { op: 'VIEW_CHANGE' }>): void;
    /** while waiting for NEW_VIEW: re-send this node's VIEW_CHANGE if its state advanced since */
    refreshOwnViewChange(): void;
  };
  /** this node's stable checkpoint as a CHECKPOINT message */
  stableCheckpointMessage(): Checkpoint | undefined;
  /** stalled below a checkpoint the others made stable */
  behindStableCheckpoint(): boolean;
  onBehindCheckpoint(): void;
  /** catch-up lookups */
  consistencyProofs(ledgerId: number, seqNoStart: number, seqNoEnd: number): MessageResponse['msg'];
  onRequestedProof(from: string, p: Extract<MessageResponse['msg'], { op: 'CONSISTENCY_PROOF' }>): void;
}

export class Repair {
  private lastProbeAt = Number.NEGATIVE_INFINITY;
  private orderedAtProbe = 0;
  private followUp = false;
  private probing = false;
  /** PRE-PREPAREs relayed by non-primaries, waiting for PREPAREs that vouch for them */
  private readonly relayed = new Map<number, PrePrepare>();
  /** when a peer asking about an older view was last told the current NEW_VIEW */
  private readonly viewHintAt = new Map<string, number>();
  /** highest ppSeqNo of the current view any peer's 3PC message named */
  highestSeen = 0;
  /**
   * Per validator, the highest batch above this node's last ordered one it COMMITted, in this view
   * or an earlier one (one entry per validator), and when this node last caught up for it.
   */
  private readonly committedWithout = new Map<string, number>();
  private leftBehindCatchupAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly ctx: CoreContext,
    private readonly intake: RequestIntake,
    private readonly ordering: Ordering,
    private readonly links: RepairLinks,
  ) {}

  onMessageRequest(from: string, req: MessageRequest): void {
    const ctx = this.ctx;
    let msg: MessageResponse['msg'] = null;
    if (req.msg_type === 'NEW_VIEW') {
      msg = this.links.viewChanges.newViewFor(req.params.viewNo as number) ?? null;
    } else if (req.msg_type === 'CONSISTENCY_PROOF') {
      msg = this.links.consistencyProofs(req.params.ledgerId as number, req.params.seqNoStart as number, req.params.seqNoEnd as number);
    } else if (req.msg_type === 'VIEW_CHANGE') {
      msg = this.links.viewChanges.viewChangeOf(req.params.name as string, req.params.digest as string) ?? null;
    } else if (req.msg_type === 'PROPAGATE') {
      msg = this.intake.ownPropagate(req.params.digest as string);
    } else {
      const viewNo = req.params.viewNo as number;
      // already collected below the stable checkpoint: tell the asker where the pool is instead,
      // so that it sees the stable checkpoint and catches up
      if ((req.params.ppSeqNo as number) <= ctx.h) {
        const cp = this.links.stableCheckpointMessage();
        if (cp !== undefined) ctx.send(from, cp);
        return;
      }
      // asked about an older view: the asker missed a view change; tell it which view the pool is in
      if (viewNo < ctx.viewNo && !ctx.waitingForNewView) {
        const nv = this.links.viewChanges.newViewFor(ctx.viewNo);
        const now = ctx.now();
        // once per asker and retry interval (a probe names many keys)
        if (nv !== undefined && now - (this.viewHintAt.get(from) ?? Number.NEGATIVE_INFINITY) >= ctx.opts.messageRequestRetryMs) {
          this.viewHintAt.set(from, now);
          ctx.send(from, { op: 'MESSAGE_RESPONSE', msg_type: 'NEW_VIEW', params: { instId: 0, viewNo: ctx.viewNo }, msg: nv });
        }
        return;
      }
      const r = viewNo === ctx.viewNo ? this.ordering.log.get(req.params.ppSeqNo as number) : undefined;
      if (r !== undefined) {
        if (req.msg_type === 'PREPREPARE') msg = r.pp ?? null;
        else if (req.msg_type === 'PREPARE') msg = r.ownPrepare ?? null;
        else msg = r.ownCommit ?? null;
      }
    }
    if (msg === null) return;
    ctx.send(from, { op: 'MESSAGE_RESPONSE', msg_type: req.msg_type, params: req.params, msg });
  }

  onMessageResponse(from: string, res: MessageResponse): void {
    const ctx = this.ctx;
    const msg = res.msg;
    if (msg === null) return;
    switch (msg.op) {
      case 'PROPAGATE': {
        const check = ctx.modules.requests.analyze(msg.request);
        if (check.ok && check.info.digest === res.params.digest) this.intake.onPropagate(from, msg);
        return;
      }
      case 'PREPREPARE': {
        if (msg.viewNo !== res.params.viewNo || msg.ppSeqNo !== res.params.ppSeqNo || msg.viewNo !== ctx.viewNo) return;
        const primary = ctx.primaryName(msg.viewNo);
        if (from === primary) {
          this.ordering.onPrePrepare(primary, msg);
          return;
        }
        // relayed copy: accepted once n-f-1 PREPAREs vouch for its digest and roots
        if (msg.ppSeqNo > ctx.lastOrdered.ppSeqNo && msg.ppSeqNo <= ctx.H) {
          this.relayed.set(msg.ppSeqNo, msg);
          this.checkRelayed(msg.ppSeqNo);
        }
        return;
      }
      case 'PREPARE':
        if (msg.viewNo === res.params.viewNo && msg.ppSeqNo === res.params.ppSeqNo) {
          this.ordering.onPrepare(from, msg);
          this.checkRelayed(msg.ppSeqNo);
        }
        return;
      case 'COMMIT':
        if (msg.viewNo === res.params.viewNo && msg.ppSeqNo === res.params.ppSeqNo) this.ordering.onCommit(from, msg);
        return;
      case 'NEW_VIEW':
        if (msg.viewNo === res.params.viewNo) this.links.viewChanges.onRequestedNewView(from, msg);
        return;
      case 'CONSISTENCY_PROOF':
        if (msg.seqNoStart === res.params.seqNoStart && msg.seqNoEnd === res.params.seqNoEnd) this.links.onRequestedProof(from, msg);
        return;
      case 'VIEW_CHANGE':
        this.links.viewChanges.onRequestedViewChange(from, res.params as { name: string; digest: string }, msg);
        return;
    }
  }

  /** Re-checks a relayed PRE-PREPARE against the PREPAREs held for its key. */
  checkRelayed(ppSeqNo: number): void {
    const ctx = this.ctx;
    const pp = this.relayed.get(ppSeqNo);
    if (pp === undefined) return;
    if (pp.viewNo !== ctx.viewNo || ppSeqNo <= ctx.lastOrdered.ppSeqNo) {
      this.relayed.delete(ppSeqNo);
      return;
    }
    const r = this.ordering.log.get(ppSeqNo);
    if (r?.pp !== undefined) {
      this.relayed.delete(ppSeqNo);
      return;
    }
    if (r === undefined) return;
    const primary = ctx.primaryName(pp.viewNo);
    let matching = 0;
    for (const [sender, p] of r.prepares) if (sender !== primary && sender !== ctx.name && prepareMatches(p, pp)) matching++;
    if (matching < ctx.quorums.prepare) return;
    this.relayed.delete(ppSeqNo);
    this.ordering.onPrePrepare(primary, pp);
  }

  /** Forget relayed candidates (view change, garbage collection). */
  clear(upTo = Number.POSITIVE_INFINITY): void {
    for (const k of this.relayed.keys()) if (k <= upTo) this.relayed.delete(k);
  }

  /**
   * Periodic: if ordering stalls or lags while work is known to exist, ask the peers for the next
   * REPAIR_WINDOW keys; while the answers get ordered, keep asking at once.
   */
  onTick(): void {
    const ctx = this.ctx;
    const now = ctx.now();
    const retry = ctx.opts.messageRequestRetryMs;
    for (const k of [...this.relayed.keys()]) this.checkRelayed(k);
    // a node that caught up while waiting for NEW_VIEW tells the new primary its fresher state (#15 F1)
    if (ctx.waitingForNewView && !ctx.catchingUp) this.links.viewChanges.refreshOwnViewChange();
    if (!ctx.catchingUp) this.catchUpIfLeftBehind(now);
    if (ctx.waitingForNewView || ctx.catchingUp) return;
    const k = ctx.lastOrdered.ppSeqNo + 1;
    const helped = this.probing && ctx.lastOrdered.ppSeqNo > this.orderedAtProbe;
    if (!helped) {
      if (now - this.lastProbeAt < retry) return;
      if (this.probing) {
        // the last probe brought nothing within the retry interval
        this.probing = false;
        this.followUp = false;
      }
      const lagging = this.highestSeen - ctx.lastOrdered.ppSeqNo > ctx.opts.max3pcBatchesInFlight;
      if (!lagging && !this.followUp && now - ctx.lastOrderedAt < retry) return;
      // a checkpoint stable among the others above lastOrdered is evidence on its own: a node that
      // missed the last batches before the pool went idle has nothing else telling it (no pending
      // requests, no later 3PC traffic), and the peers answer its probes with that checkpoint
      const behind = this.links.behindStableCheckpoint();
      const evidence =
        behind ||
        this.followUp ||
        this.highestSeen >= k ||
        ctx.lastPrePrepareSeqNo >= k ||
        this.ordering.held.size > 0 ||
        this.intake.hasFinalisedPending() ||
        this.intake.hasStalePending(now, 2 * retry);
      if (!evidence) return;
      // peers have collected the 3PC messages below their stable checkpoint: only catch-up helps
      if (behind && now - ctx.lastOrderedAt >= 2 * retry) {
        this.lastProbeAt = now;
        this.links.onBehindCheckpoint();
        return;
      }
    }
    // a full window: its last checkpoint is not stable here (the peers' CHECKPOINTs were lost, or
    // f of them withheld), so nothing above it is accepted; a probe of the checkpoint's batch is
    // answered by peers past it with their stable CHECKPOINT (onMessageRequest), which makes it stable
    if (k > ctx.H) this.probeCheckpoint(now);
    else this.probe(k, Math.min(k + REPAIR_WINDOW - 1, ctx.H), now);
  }

  /** Asks the peers about the batch at the top of the window: those past it answer with their stable CHECKPOINT. */
  private probeCheckpoint(now: number): void {
    const ctx = this.ctx;
    this.lastProbeAt = now;
    this.probing = true;
    this.orderedAtProbe = ctx.lastOrdered.ppSeqNo;
    ctx.broadcast({ op: 'MESSAGE_REQUEST', msg_type: 'COMMIT', params: { instId: 0, viewNo: ctx.viewNo, ppSeqNo: ctx.H } });
  }

  /** A validator COMMITted batch `ppSeqNo`, above this node's last ordered one. */
  noteCommitAbove(from: string, ppSeqNo: number): void {
    if (!this.ctx.isValidator(from) || from === this.ctx.name) return;
    if ((this.committedWithout.get(from) ?? 0) < ppSeqNo) this.committedWithout.set(from, ppSeqNo);
  }

  /**
   * The last resort of a node the pool orders without: Byzantine validators can push one honest
   * node into a view change the others never start (their INSTANCE_CHANGE votes and VIEW_CHANGEs
   * reach it and nobody else), so that it waits for a NEW_VIEW that never comes or enters a view
   * nobody else is in; and an equivocating primary can give one honest node its own version of a
   * batch, which the others never PREPARE, while they order the other version in the same view. No
   * 3PC repair helps either node (it cannot go back to a view its VIEW_CHANGE left, nor vote for a
   * second version of a batch), and before the next checkpoint nothing else brings it along. Once it
   * has ordered nothing for the NEW_VIEW timeout and f+1 validators COMMITted batches more than the
   * batches in flight above its own (or, while it waits for a NEW_VIEW, n-f validators COMMITted any
   * batch above its own), it catches up (verified ledger catch-up, no vote: safe in any view), at
   * most once per NEW_VIEW timeout. A node ordering normally never meets the condition.
   */
  private catchUpIfLeftBehind(now: number): void {
    const ctx = this.ctx;
    const wait = ctx.opts.newViewTimeoutMs;
    if (now - ctx.lastOrderedAt < wait || now - this.leftBehindCatchupAt < wait) return;
    let ahead = 0;
    let committedAbove = 0;
    // beyond the batches a primary may have in flight: COMMITs for the next few batches are only
    // votes (the pool may be stuck on them too, and a node catching up then would stall it further);
    // a COMMIT further ahead means the pool ordered on without this node
    const last = ctx.lastOrdered.ppSeqNo;
    const beyond = last + ctx.opts.max3pcBatchesInFlight;
    for (const [from, k] of this.committedWithout) {
      if (!ctx.isValidator(from)) continue;
      if (k > beyond) ahead++;
      if (k > last) committedAbove++;
    }
    // a node waiting for a NEW_VIEW takes no part in ordering, so it stalls nothing by catching up;
    // n-f COMMITs above its last batch are a commit quorum it saw without ordering (the pool went on
    // without it, perhaps by a single batch: a NODE txn it missed, whose votes 46 were a quorum only
    // for the registry it still had, took it alone into a view change)
    const orderedWithout = ctx.waitingForNewView && committedAbove >= ctx.quorums.strong;
    if (ahead < ctx.quorums.weak && !orderedWithout) return;
    this.leftBehindCatchupAt = now;
    this.committedWithout.clear();
    this.links.onBehindCheckpoint();
  }

  /** Starts the post-catch-up probing: the pool may have moved on by batches nobody announces again. */
  startFollowUp(): void {
    this.followUp = true;
    this.probing = false;
    this.lastProbeAt = Number.NEGATIVE_INFINITY;
  }

  private probe(k: number, last: number, now: number): void {
    const ctx = this.ctx;
    this.lastProbeAt = now;
    this.probing = true;
    this.orderedAtProbe = ctx.lastOrdered.ppSeqNo;
    for (let s = k; s <= last; s++) {
      const params = { instId: 0, viewNo: ctx.viewNo, ppSeqNo: s };
      const r = this.ordering.log.get(s);
      if (r?.pp === undefined && !this.ordering.held.has(s)) ctx.broadcast({ op: 'MESSAGE_REQUEST', msg_type: 'PREPREPARE', params });
      if (r === undefined || !r.prepared) ctx.broadcast({ op: 'MESSAGE_REQUEST', msg_type: 'PREPARE', params });
      if (r === undefined || !r.ordered) ctx.broadcast({ op: 'MESSAGE_REQUEST', msg_type: 'COMMIT', params });
    }
  }
}
