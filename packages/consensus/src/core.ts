// The consensus core: a deterministic state machine. `handle(event)` runs one event to completion
// and returns the effects (messages to send, timers, client answers, ordered batches) for the shell
// to carry out. No I/O, clock or randomness of its own (consensus.md §12.1).
import { Batching } from './batching.js';
import { Catchup } from './catchup.js';
import { Checkpoints } from './checkpoints.js';
import { CoreContext, type CoreStateWriters, NON_VALIDATOR_OPS, Suspicion } from './context.js';
import { batchDigest } from './digest.js';
import { ConsensusError } from './errors.js';
import type { ConsensusEffect, ConsensusEvent, ConsensusModules, JournaledBatch, ThreePcVoteJournal } from './interfaces.js';
import { RequestIntake, droppedRequestMemoryMs } from './intake.js';
import type { BatchId, ClientRequestBody, Commit, NodeMessage, Prepare, PrePrepare } from './messages.js';
import { type ConsensusOptions, resolveOptions } from './options.js';
import { Ordering } from './ordering.js';
import { parseNodeMessage } from './parse.js';
import { Repair } from './repair.js';
import { MessageStash } from './stash.js';
import { JournalMark, ViewChanger } from './view-change.js';

export const TICK_TIMER = 'tick';

/** R_begin entries read back from the audit ledger at restoration (§1.3: at least two views) */
const R_BEGIN_RESTORED = 4;

function isDataRequest(raw: unknown): boolean {
  return typeof raw === 'object' && raw !== null && NON_VALIDATOR_OPS.has((raw as { op?: unknown }).op as string);
}

export interface ConsensusStatus {
  name: string;
  viewNo: number;
  waitingForNewView: boolean;
  isPrimary: boolean;
  primary: string;
  validators: string[];
  lastOrdered: { viewNo: number; ppSeqNo: number };
  lastPrePrepareSeqNo: number;
  stableCheckpoint: number;
  watermarks: [number, number];
  pendingRequests: number;
  /** pending requests beyond which new writes are refused now (admission control) */
  admissionLimit: number;
  logSize: number;
  stashed: number;
  lagging: boolean;
  catchingUp: boolean;
  catchupRounds: number;
}

export class ConsensusCore {
  private readonly ctx: CoreContext;
  /** the view, last ordered batch, watermarks and catch-up flag: only the core and their owners write them */
  private readonly writers: CoreStateWriters;
  private readonly intake: RequestIntake;
  private readonly ordering: Ordering;
  private readonly batching: Batching;
  private readonly checkpoints: Checkpoints;
  private readonly repair: Repair;
  private readonly stash: MessageStash;
  private readonly viewChanger: ViewChanger;
  private readonly catchup: Catchup;
  private started = false;
  private lagging = false;
  /** the 3PC vote journal as last saved (or restored) */
  private readonly journalSaved = new JournalMark();

  constructor(options: Partial<ConsensusOptions> & Pick<ConsensusOptions, 'name' | 'validators'>, modules: ConsensusModules) {
    const opts = resolveOptions(options);
    const { ctx, writers } = CoreContext.create(opts, modules, (code, proposed) => this.viewChanger.voting.vote(code, proposed));
    this.ctx = ctx;
    this.writers = writers;
    this.intake = new RequestIntake(this.ctx);
    this.ordering = new Ordering(this.ctx, this.intake, writers.ordered, {
      onOrdered: (k, applied) => {
        this.checkpoints.onOrdered(k, applied.auditRoot);
        this.viewChanger.onOrdered();
        if (k === this.ctx.prevViewPrepareCert + 1) this.unstash();
      },
      stash: (from, msg) => {
        const ctx = this.ctx;
        // bounds of consensus.md §4.3: drop what is too far ahead (MESSAGE_REQUEST recovers it)
        if (msg.ppSeqNo > ctx.H + ctx.opts.logSize || msg.viewNo > ctx.viewNo + 2) return;
        this.stash.add({ from, msg });
        if (msg.viewNo === ctx.viewNo && msg.ppSeqNo > this.repair.highestSeen) this.repair.highestSeen = msg.ppSeqNo;
        if (msg.viewNo > ctx.viewNo) this.viewChanger.noteFutureView(from, msg.viewNo);
      },
      onFetchedRejected: (ppSeqNo, relayer) => this.viewChanger.onFetchedRejected(ppSeqNo, relayer),
      onCommitAbove: (from, ppSeqNo) => this.repair.noteCommitAbove(from, ppSeqNo),
    });
    this.batching = new Batching(this.ctx, this.intake, this.ordering);
    this.checkpoints = new Checkpoints(this.ctx, writers.watermarks, {
      onStable: (c) => {
        this.ordering.collectGarbage(c);
        this.intake.collectOrderedBodies(c);
        this.viewChanger.dropBelow(c);
        this.repair.clear(c);
        this.stash.prune((s) => s.msg.ppSeqNo <= c);
        this.unstash();
      },
      onLagging: () => {
        this.lagging = true;
        // also while waiting for NEW_VIEW: a node two checkpoints behind cannot help build or
        // re-order the next view from its 3PC log, and a new primary must hold the checkpoint
        this.catchup.start();
      },
    });
    this.stash = new MessageStash(opts.replicaStashLimit);
    this.viewChanger = new ViewChanger(this.ctx, this.intake, this.ordering, this.checkpoints, writers.view, {
      onViewEntered: () => {
        this.batching.blockedSinceRestart = false;
        this.repair.clear();
        this.repair.highestSeen = 0;
        this.batching.reset();
        this.batching.viewStartPending = this.ctx.isPrimary();
        this.stash.prune((s) => s.msg.viewNo < this.ctx.viewNo);
        this.unstash();
      },
      onCatchupNeeded: () => {
        this.catchup.start();
      },
    });
    this.catchup = new Catchup(this.ctx, {
      onStart: () => {
        this.writers.catchup.setCatchingUp(true);
        this.ordering.revertUnordered();
        this.ctx.modules.logger?.info({ lastOrdered: this.ctx.lastOrdered.ppSeqNo }, 'catch-up started');
      },
      onDone: () => {
        this.writers.catchup.setCatchingUp(false);
        this.lagging = false;
        this.restore();
        this.intake.dropCaughtUp();
        this.ctx.lastOrderedAt = this.ctx.now();
        this.ordering.collectGarbage(this.ctx.lastOrdered.ppSeqNo);
        this.repair.highestSeen = Math.max(this.repair.highestSeen, this.ctx.lastOrdered.ppSeqNo);
        this.repair.startFollowUp();
        this.ctx.modules.logger?.info({ lastOrdered: this.ctx.lastOrdered.ppSeqNo }, 'caught up');
        // a catch-up can bring a restarted node into a view it is the primary of
        this.voteIfBlockedPrimary();
        this.unstash();
      },
    });
    this.repair = new Repair(this.ctx, this.intake, this.ordering, {
      viewChanges: this.viewChanger,
      consistencyProofs: (l, a, b) => this.catchup.proofForRequest(l, a, b),
      onRequestedProof: (from, p) => this.catchup.onConsistencyProof(from, p),
      behindStableCheckpoint: () => this.checkpoints.stableAmongOthersAbove().length > 0,
      onBehindCheckpoint: () => this.catchup.start(),
      stableCheckpointMessage: () => {
        const c = this.checkpoints.stableCheckpoint;
        const digest = this.checkpoints.own.get(c);
        return c === 0 || digest === undefined ? undefined : { op: 'CHECKPOINT', instId: 0, viewNo: this.ctx.viewNo, seqNoStart: 0, seqNoEnd: c, digest };
      },
    });
    // R_begin of view 0 is the genesis registry (replaced by the audit ledger's when there is history)
    this.ctx.noteViewStart(0, opts.validators);
    this.restore();
    this.restoreVoteJournal();
    // restarted with history: PRE-PREPAREs sent in this view before the crash are unknown here
    // (a pool of one has no peer that could hold them: nothing to block)
    if (modules.executor.lastAudit() !== undefined && this.ctx.validators.length > 1) this.batching.blockedSinceRestart = true;
  }

  /** Restores view, last ordered batch, ppTime, checkpoint and freshness from the audit ledger. */
  private restore(): void {
    const ctx = this.ctx;
    const audit = ctx.modules.executor.lastAudit();
    if (audit === undefined) return;
    if (!ctx.waitingForNewView) this.writers.view.setView(Math.max(ctx.viewNo, audit.viewNo));
    this.writers.ordered.setLastOrdered({ viewNo: audit.viewNo, ppSeqNo: audit.ppSeqNo });
    ctx.lastPrePrepareSeqNo = audit.ppSeqNo;
    ctx.lastAcceptedPPTime = audit.ppTime;
    if (audit.nodeReg.length > 0) ctx.setValidators(audit.nodeReg);
    const starts = ctx.modules.executor.viewStartRegistries(R_BEGIN_RESTORED);
    if (starts.size > 0) ctx.restoreViewStarts(starts);
    else ctx.noteViewStart(audit.viewNo, audit.nodeReg);
    for (const [lid, t] of Object.entries(audit.lastUpdate)) this.ordering.lastUpdate.set(Number(lid), t);
    this.checkpoints.restore(audit.ppSeqNo, (size) => ctx.modules.executor.auditRootAt(size));
    this.restoreCommittedBatches(audit.ppSeqNo);
  }

  /** The 3PC votes this node cast before a restart (#15 F8). */
  private restoreVoteJournal(): void {
    const j = this.ctx.modules.threePcStore?.load();
    if (j === undefined) return;
    this.viewChanger.restoreJournal(j, this.ctx.lastOrdered.ppSeqNo);
    for (const b of Array.isArray(j.batches) ? j.batches : []) this.restoreJournaledBatch(b, j);
    this.viewChanger.journalChanged(this.journalSaved);
  }

  /**
   * A PRE-PREPARE of the journal with its requests, read back from disk: parsed and checked as a
   * peer's would be (its digest recomputed, its requests analysed), kept only when the journal's
   * votes name it and it is above the last ordered batch. A record that fails is reported and skipped.
   */
  private restoreJournaledBatch(raw: unknown, j: ThreePcVoteJournal): void {
    const ctx = this.ctx;
    const rec = raw as { pp?: unknown; requests?: unknown } | null;
    let pp: NodeMessage;
    try {
      pp = parseNodeMessage(rec?.pp, ctx.opts.pluginLedgers);
    } catch (e) {
      if (!(e instanceof ConsensusError)) throw e;
      ctx.modules.logger?.warn({ reason: e.message }, '3PC vote journal: a PRE-PREPARE that does not parse is skipped');
      return;
    }
    if (pp.op !== 'PREPREPARE' || pp.ppSeqNo <= ctx.lastOrdered.ppSeqNo) return;
    const pv = pp.originalViewNo ?? pp.viewNo;
    const named = j.preprepared.some((b) => b.pp_view_no === pv && b.pp_seq_no === pp.ppSeqNo && b.pp_digest === pp.digest);
    if (!named || batchDigest(pv, pp.ppTime, pp.reqIdr, pp.ledgerId) !== pp.digest) return;
    const requests = Array.isArray(rec?.requests) ? (rec.requests as unknown[]) : [];
    const kept = this.intake.restoreBodies(pp.reqIdr, requests, pp.ppSeqNo);
    if (kept < pp.reqIdr.length)
      ctx.modules.logger?.warn({ ppSeqNo: pp.ppSeqNo, requests: pp.reqIdr.length, kept }, '3PC vote journal: requests of a PRE-PREPARE missing');
    this.viewChanger.restorePrePrepare(pp);
    ctx.modules.logger?.info({ viewNo: pv, ppSeqNo: pp.ppSeqNo, requests: kept }, '3PC vote journal: PRE-PREPARE restored');
  }

  /**
   * The PRE-PREPAREs of the journal's pre-prepared batches above the last ordered one, each with
   * the requests it names (a batch whose requests this node no longer holds all is left out).
   */
  private journalBatches(j: ThreePcVoteJournal): JournaledBatch[] {
    const out: JournaledBatch[] = [];
    const seen = new Set<string>();
    for (const b of j.preprepared) {
      if (b.pp_seq_no <= this.ctx.lastOrdered.ppSeqNo) continue;
      const key = `${b.pp_view_no}:${b.pp_seq_no}:${b.pp_digest}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const pp = this.viewChanger.heldPrePrepare(b);
      if (pp === undefined) continue;
      const requests: ClientRequestBody[] = [];
      for (const d of pp.reqIdr) {
        const body = this.intake.knownBody(d);
        if (body === undefined) break;
        requests.push(body);
      }
      if (requests.length === pp.reqIdr.length) out.push({ pp, requests });
    }
    return out;
  }

  /**
   * Saves the 3PC vote journal if this event changed it: synchronously, before the effects that
   * carry the PREPAREs and COMMITs are returned to the shell (#15 F8).
   */
  private saveVoteJournal(): void {
    const store = this.ctx.modules.threePcStore;
    if (store === undefined) return;
    if (!this.viewChanger.journalChanged(this.journalSaved)) return;
    const j = this.viewChanger.journal();
    store.save({ ...j, batches: this.journalBatches(j) });
  }

  /** The committed batches above the stable checkpoint, for the VIEW_CHANGE (see ViewChanger.noteCommitted). */
  private restoreCommittedBatches(lastOrdered: number): void {
    const ex = this.ctx.modules.executor;
    const out: BatchId[] = [];
    for (let s = this.checkpoints.stableCheckpoint + 1; s <= lastOrdered; s++) {
      const b = ex.committedBatch(s);
      if (b !== undefined) out.push({ view_no: b.viewNo, pp_view_no: b.viewNo, pp_seq_no: s, pp_digest: b.digest });
    }
    this.viewChanger.noteCommitted(out);
  }

  /** A primary that may not propose (restarted, no NEW_VIEW since) asks the pool to move on. */
  private voteIfBlockedPrimary(): void {
    if (this.ctx.isPrimary() && this.batching.blockedSinceRestart && this.ctx.validators.length > 1 && !this.ctx.waitingForNewView) {
      this.viewChanger.voting.vote(Suspicion.PRIMARY_DISCONNECTED);
    }
  }

  /** Starts the housekeeping timer and the initial catch-up; returns its effects. Idempotent. */
  start(): ConsensusEffect[] {
    if (!this.started) {
      this.started = true;
      this.ctx.lastOrderedAt = this.ctx.now();
      this.armTick();
      if (this.ctx.validators.length > 1) this.catchup.start();
      this.voteIfBlockedPrimary();
      this.batching.trySendBatches();
      if (this.ctx.quorums.prepare === 0) this.ordering.tryOrder();
    }
    this.saveVoteJournal();
    return this.ctx.drain();
  }

  handle(event: ConsensusEvent): ConsensusEffect[] {
    switch (event.kind) {
      case 'nodeMessage':
        this.onNodeMessage(event.from, event.msg);
        break;
      case 'clientRequest':
        this.intake.onClientRequest(event.connId, event.request);
        break;
      case 'timer':
        this.onTimer(event.id);
        break;
      case 'peerConnected':
      case 'peerDisconnected':
        this.viewChanger.voting.onPeerConnection(event.alias, event.kind === 'peerConnected');
        if (event.kind === 'peerConnected') this.catchup.onPeerConnected(event.alias);
        break;
    }
    if (event.kind !== 'timer') this.afterEvent();
    this.saveVoteJournal();
    return this.ctx.drain();
  }

  /**
   * The node is about to exit (a POOL_RESTART, an upgrade): as the primary it proposes no more
   * batches, and it goes on voting so that the batches already in flight get ordered before it
   * exits. Were every node to exit with a batch prepared and not ordered, their vote journals would
   * name that batch in the next NEW_VIEW while no node holds its PRE-PREPARE or requests any more.
   * Returns whether a batch this node pre-prepared is still unordered.
   */
  quiesce(): boolean {
    this.batching.quiesced = true;
    return this.ctx.lastPrePrepareSeqNo > this.ctx.lastOrdered.ppSeqNo;
  }

  /**
   * Admission control at the door (intake.ts): false when this node refuses the client write
   * `request` as overloaded, decided before it is verified and queued behind other events. Only
   * records the refusal; the caller answers REQNACK "pool overloaded". `inProgress`: the writes
   * the caller admitted that have not reached the core yet (they count toward the limit).
   */
  admitAtDoor(request: ClientRequestBody, inProgress = 0): boolean {
    // A node fetching ledgers it is behind on cannot order: a write it took in now would cost it the signature check,
    // the intake and a PROPAGATE of its own, for a request that reaches it in the catch-up anyway once the pool has
    // ordered it. It refuses every write it does not hold, ordered or propagated already, as a full node does (no
    // admission limit is below any count): the refusal is remembered, so it never propagates the request and takes it
    // in from PROPAGATEs only once n-f other validators did (intake.ts, admission control). Its REQNACK is the
    // overloaded one, so that a client counts it with another node's refusal of the same write toward the f+1 that
    // decide. Not in the status round: there every node of a pool that starts together is catching up, none behind.
    if (this.catchup.transferring) return this.intake.admitAtDoor(request, Number.POSITIVE_INFINITY);
    return this.intake.admitAtDoor(request, inProgress);
  }

  /**
   * Whether this node holds the client write of `digest` to order it: taken in and not ordered yet (pending,
   * queued, or in a batch not yet ordered). The node keeps the reply targets of a write while it does.
   */
  holdsRequest(digest: string): boolean {
    return this.intake.entries.has(digest);
  }

  /**
   * How long, at most, after this node dropped a write it took in unordered (a full node's stale sweep, the request
   * expiry of intake.ts) the write may still be ordered here with its clients answered, ms: a dropped write it had
   * propagated is remembered with its clients as long as a refusal is (twice PROPAGATES_PHASE_REQ_TIMEOUT, in whole
   * seconds, forgotten at the next expiry check after that), and n-f PROPAGATEs in that time bring it back.
   */
  get droppedRequestMemoryMs(): number {
    return droppedRequestMemoryMs(this.ctx.opts);
  }

  private afterEvent(): void {
    if (this.viewChanger.safetyViolation !== undefined) return;
    this.ordering.processHeld();
    this.ordering.tryOrder();
    this.batching.trySendBatches();
    // a pool of one orders the batches it has just sent without waiting for another event
    if (this.ctx.quorums.prepare === 0) this.ordering.tryOrder();
  }

  /** when the housekeeping timer was last armed (the core's clock) */
  private tickArmedAt = 0;

  private armTick(): void {
    this.tickArmedAt = this.ctx.now();
    this.ctx.setTimer(TICK_TIMER, this.ctx.opts.tickMs);
  }

  private onTimer(id: string): void {
    if (!this.ctx.timerFired(id)) return;
    if (id === TICK_TIMER) {
      // a tick this late means this node's event loop stalled: the monitor does not blame the
      // primary for what this node could not see meanwhile (an honest, loaded pool is not faulty)
      const now = this.ctx.now();
      const late = now - this.tickArmedAt - this.ctx.opts.tickMs;
      if (late >= this.ctx.opts.progressTimeoutMs / 4) this.viewChanger.voting.pauseMonitor(now + this.ctx.opts.progressTimeoutMs);
      this.intake.onTick();
      this.catchup.onTick();
      this.repair.onTick();
      this.viewChanger.onTick();
      this.afterEvent();
      this.armTick();
    }
  }

  private onNodeMessage(from: string, raw: unknown): void {
    const ctx = this.ctx;
    if (from === ctx.name) return;
    // pool nodes outside R (observers, demoted or joining nodes) may only ask for data
    const validator = ctx.isValidator(from);
    if (!validator && !isDataRequest(raw)) return;
    let msg: NodeMessage;
    try {
      msg = parseNodeMessage(raw, ctx.opts.pluginLedgers);
    } catch (e) {
      if (!(e instanceof ConsensusError)) throw e;
      if (validator) ctx.suspect(from, Suspicion.MALFORMED_MESSAGE);
      return;
    }
    this.dispatch(from, msg);
  }

  private dispatch(from: string, msg: NodeMessage): void {
    switch (msg.op) {
      case 'PROPAGATE':
        this.intake.onPropagate(from, msg);
        return;
      case 'PREPREPARE':
      case 'PREPARE':
      case 'COMMIT':
        // a NEW_VIEW contradicted a committed batch (more than f faulty): take no part in ordering
        if (this.viewChanger.safetyViolation !== undefined) return;
        this.noteSeen(msg);
        if (msg.op === 'PREPREPARE') this.ordering.onPrePrepare(from, msg);
        else if (msg.op === 'PREPARE') this.ordering.onPrepare(from, msg);
        else this.ordering.onCommit(from, msg);
        return;
      case 'CHECKPOINT':
        this.checkpoints.onCheckpoint(from, msg);
        return;
      case 'INSTANCE_CHANGE':
        this.viewChanger.voting.onInstanceChange(from, msg);
        return;
      case 'VIEW_CHANGE':
        this.viewChanger.onViewChange(from, msg);
        return;
      case 'VIEW_CHANGE_ACK':
        this.viewChanger.onViewChangeAck(from, msg);
        return;
      case 'NEW_VIEW':
        this.viewChanger.onNewView(from, msg);
        return;
      case 'OLD_VIEW_PREPREPARE_REQ':
        this.viewChanger.onOldViewPrePrepareReq(from, msg);
        return;
      case 'OLD_VIEW_PREPREPARE_REP':
        this.viewChanger.onOldViewPrePrepareRep(from, msg);
        return;
      case 'LEDGER_STATUS':
        this.catchup.onLedgerStatus(from, msg);
        return;
      case 'CONSISTENCY_PROOF':
        this.catchup.onConsistencyProof(from, msg);
        return;
      case 'CATCHUP_REQ':
        this.catchup.onCatchupReq(from, msg);
        return;
      case 'CATCHUP_REP':
        this.catchup.onCatchupRep(from, msg);
        return;
      case 'MESSAGE_REQUEST':
        this.repair.onMessageRequest(from, msg);
        return;
      case 'MESSAGE_RESPONSE':
        this.repair.onMessageResponse(from, msg);
        return;
    }
  }

  private noteSeen(msg: PrePrepare | Prepare | Commit): void {
    if (msg.viewNo === this.ctx.viewNo && msg.ppSeqNo > this.repair.highestSeen && msg.ppSeqNo <= this.ctx.H) this.repair.highestSeen = msg.ppSeqNo;
  }

  private unstash(): void {
    const ctx = this.ctx;
    if (ctx.waitingForNewView || ctx.catchingUp) return;
    const ready = this.stash.take((s) => s.msg.viewNo === ctx.viewNo && ctx.inWindow(s.msg.ppSeqNo));
    for (const s of ready) this.dispatch(s.from, s.msg);
  }

  status(): ConsensusStatus {
    const ctx = this.ctx;
    return {
      name: ctx.name,
      viewNo: ctx.viewNo,
      waitingForNewView: ctx.waitingForNewView,
      isPrimary: ctx.isPrimary(),
      primary: ctx.primaryName(),
      validators: [...ctx.validators],
      lastOrdered: { ...ctx.lastOrdered },
      lastPrePrepareSeqNo: ctx.lastPrePrepareSeqNo,
      stableCheckpoint: this.checkpoints.stableCheckpoint,
      watermarks: [ctx.h, ctx.H],
      pendingRequests: this.intake.pendingCount,
      admissionLimit: this.intake.admissionLimit,
      logSize: this.ordering.log.size,
      stashed: this.stash.size,
      lagging: this.lagging,
      catchingUp: ctx.catchingUp,
      catchupRounds: this.catchup.rounds,
    };
  }
}
