// State shared by the parts of the consensus core (intake, ordering, checkpoints, repair) and the
// effect sink they write to. One instance per core; handlers run to completion on it.
import type { ConsensusEffect, ConsensusModules } from './interfaces.js';
import type { NodeMessage } from './messages.js';
import { type ConsensusOptions, type Quorums, primaryOf, quorumsFor } from './options.js';

export interface ThreePcKey {
  viewNo: number;
  ppSeqNo: number;
}

/** Suspicion codes of consensus.md §6.1 used by the normal-case protocol. */
export const Suspicion = {
  DUPLICATE_PREPARE: 3,
  PREPARE_WRONG_DIGEST: 5,
  PP_FROM_NON_PRIMARY: 9,
  PREPARE_FROM_PRIMARY: 10,
  PPR_DIGEST_WRONG: 11,
  PPR_TIME_WRONG: 18,
  PPR_REJECT_WRONG: 20,
  PPR_STATE_WRONG: 21,
  PPR_TXN_WRONG: 22,
  PREPARE_WRONG_STATE: 23,
  PREPARE_WRONG_TXN: 24,
  PPR_BLS_MULTISIG_WRONG: 29,
  CM_BLS_SIG_WRONG: 31,
  PPR_POOL_STATE_ROOT_HASH_WRONG: 41,
  PPR_WITH_ORDERED_REQUEST: 42,
  PPR_AUDIT_TXN_ROOT_HASH_WRONG: 44,
  PREPARE_WRONG_AUDIT: 45,
  PPR_EQUIVOCATION: 60,
  PRIMARY_DEGRADED: 25,
  STATE_SIGS_ARE_NOT_UPDATED: 43,
  PRIMARY_DISCONNECTED: 26,
  INSTANCE_CHANGE_TIMEOUT: 28,
  NEW_VIEW_INVALID_CHECKPOINTS: 47,
  NEW_VIEW_INVALID_BATCHES: 48,
  INCORRECT_NEW_PRIMARY: 49,
  REQUEST_NOT_ORDERED: 61,
  NODE_COUNT_CHANGED: 46,
  PRIMARY_DEMOTED: 51,
  PRIMARY_ABOUT_TO_BE_DISCONNECTED: 27,
  /** not in §6.1: a node whose VIEW_CHANGE_ACKs show it sent different VIEW_CHANGEs */
  VIEW_CHANGE_EQUIVOCATION: 1004,
  /** not in §6.1: a VIEW_CHANGE with impossible BatchIDs */
  INVALID_VIEW_CHANGE: 1002,
  /** not in §6.1: a consistency proof or catch-up reply that does not verify */
  INVALID_CATCHUP_DATA: 1003,
  /** not in §6.1: a message that fails the shape checks or names an unknown request body */
  MALFORMED_MESSAGE: 1000,
  INVALID_PROPAGATED_REQUEST: 1001,
} as const;

/** views whose R_begin is kept (at least the last two that ordered a batch, §1.3) */
const R_BEGIN_KEPT = 4;

/** messages only validators send: everything else (requests for data, catch-up) any pool node may */
const VOTING_OPS: ReadonlySet<string> = new Set([
  'PROPAGATE',
  'PREPREPARE',
  'PREPARE',
  'COMMIT',
  'CHECKPOINT',
  'INSTANCE_CHANGE',
  'VIEW_CHANGE',
  'VIEW_CHANGE_ACK',
  'NEW_VIEW',
]);

/** Ops a pool node that is not a validator (observer, demoted, joining) may send to validators. */
export const NON_VALIDATOR_OPS: ReadonlySet<string> = new Set(['LEDGER_STATUS', 'CATCHUP_REQ', 'MESSAGE_REQUEST', 'OLD_VIEW_PREPREPARE_REQ']);

/** Where a suspicion that counts toward a view change goes (default proposed view: view + 1). */
export type SuspicionVote = (code: number, proposedView?: number) => void;

/**
 * The only ways to change the view, the last ordered batch, the watermarks and the catch-up flag.
 * `CoreContext.create` returns them once, to the core, which hands each to the one part that owns
 * that state; every other part reads it through the context's getters.
 */
export interface CoreStateWriters {
  /** the view changer's (and the core's, restoring from the audit ledger) */
  view: {
    setView(viewNo: number): void;
    setWaitingForNewView(waiting: boolean): void;
  };
  /** ordering's (and the core's, restoring from the audit ledger) */
  ordered: { setLastOrdered(key: ThreePcKey): void };
  /** the checkpoints': h = the stable checkpoint, H = h + logSize */
  watermarks: { setLow(h: number): void };
  /** the core's, from catch-up's start and end */
  catchup: { setCatchingUp(active: boolean): void };
}

export class CoreContext {
  readonly opts: ConsensusOptions;
  readonly modules: ConsensusModules;
  private out: ConsensusEffect[] = [];
  private readonly armedTimers = new Set<string>();

  validators: string[];
  private validatorSet: Set<string>;
  quorums: Quorums;
  #viewNo = 0;
  /** applied batches (last pre-prepared ppSeqNo) */
  lastPrePrepareSeqNo = 0;
  #lastOrdered: ThreePcKey = { viewNo: 0, ppSeqNo: 0 };
  lastAcceptedPPTime = 0;
  #h = 0;
  #H: number;
  #waitingForNewView = false;
  #catchingUp = false;
  /** time of the last ordering (monotonic ms), for stall detection */
  lastOrderedAt = 0;
  /** when the primary of this view last proposed a new batch here (sent, or a new PRE-PREPARE received) */
  lastProposalAt = 0;
  /**
   * lastUpdate[L] (consensus.md §5): ppTime of the last ordered batch of each ledger with state,
   * restored from the audit ledger. Batching sends freshness batches from it; every validator's
   * monitor votes 43 when it gets too old.
   */
  readonly lastUpdate = new Map<number, number>();
  /** requests finalised / ordered since start (monitor M3) */
  finalisedTotal = 0;
  orderedRequestsTotal = 0;
  /** last ppSeqNo re-ordered from the previous views by the accepted NEW_VIEW */
  prevViewPrepareCert = 0;
  /**
   * R_begin (consensus.md §1.3): view -> R_committed immediately before the first batch with that
   * originalViewNo was committed. Primary rotation reads it (§1.4).
   */
  private readonly rBegin = new Map<number, string[]>();
  private readonly primaryCache = new Map<number, string>();

  private constructor(
    opts: ConsensusOptions,
    modules: ConsensusModules,
    private readonly voteFor: SuspicionVote,
  ) {
    this.opts = opts;
    this.modules = modules;
    this.validators = [...opts.validators];
    this.validatorSet = new Set(this.validators);
    this.quorums = quorumsFor(this.validators.length);
    this.#H = opts.logSize;
  }

  /**
   * A context and the writers of its view, last ordered batch, watermarks and catch-up flag; `vote` receives the
   * suspicions that count toward a view change (the view changer's voting).
   */
  static create(opts: ConsensusOptions, modules: ConsensusModules, vote: SuspicionVote): { ctx: CoreContext; writers: CoreStateWriters } {
    const ctx = new CoreContext(opts, modules, vote);
    const writers: CoreStateWriters = {
      view: {
        setView: (viewNo) => {
          ctx.#viewNo = viewNo;
        },
        setWaitingForNewView: (waiting) => {
          ctx.#waitingForNewView = waiting;
        },
      },
      ordered: {
        setLastOrdered: (key) => {
          ctx.#lastOrdered = key;
        },
      },
      watermarks: {
        setLow: (h) => {
          ctx.#h = h;
          ctx.#H = h + opts.logSize;
        },
      },
      catchup: {
        setCatchingUp: (active) => {
          ctx.#catchingUp = active;
        },
      },
    };
    return { ctx, writers };
  }

  get viewNo(): number {
    return this.#viewNo;
  }

  get lastOrdered(): ThreePcKey {
    return this.#lastOrdered;
  }

  /** low watermark: the stable checkpoint */
  get h(): number {
    return this.#h;
  }

  /** high watermark: h + logSize */
  get H(): number {
    return this.#H;
  }

  /** a view change is in progress: no 3PC until NEW_VIEW is accepted */
  get waitingForNewView(): boolean {
    return this.#waitingForNewView;
  }

  /** catch-up in progress: 3PC is stashed, nothing is proposed or voted */
  get catchingUp(): boolean {
    return this.#catchingUp;
  }

  get name(): string {
    return this.opts.name;
  }

  now(): number {
    return this.modules.clock.now();
  }

  setValidators(validators: readonly string[]): void {
    this.validators = [...validators];
    this.validatorSet = new Set(this.validators);
    this.quorums = quorumsFor(this.validators.length);
    this.primaryCache.clear();
  }

  /** Records R_begin[view] unless known (first committed batch of that view), keeping the last few. */
  noteViewStart(viewNo: number, registry: readonly string[]): void {
    if (this.rBegin.has(viewNo) || registry.length === 0) return;
    this.rBegin.set(viewNo, [...registry]);
    const views = [...this.rBegin.keys()].sort((a, b) => a - b);
    for (const v of views.slice(0, Math.max(0, views.length - R_BEGIN_KEPT))) this.rBegin.delete(v);
    this.primaryCache.clear();
  }

  /** Replaces R_begin with what the audit ledger says (restart, catch-up). */
  restoreViewStarts(entries: ReadonlyMap<number, readonly string[]>): void {
    for (const [v, reg] of entries) if (reg.length > 0) this.rBegin.set(v, [...reg]);
    this.primaryCache.clear();
  }

  /** The registry primary(v) rotates over: R_begin[b], b = v-1 (v >= 2) or 0, or the nearest known view below. */
  rotationRegistry(viewNo: number): readonly string[] {
    const b = viewNo >= 2 ? viewNo - 1 : 0;
    let best: [number, string[]] | undefined;
    for (const e of this.rBegin) if (e[0] <= b && (best === undefined || e[0] > best[0])) best = e;
    if (best !== undefined) return best[1];
    // nothing ordered up to view b here: the earliest registry known, else the committed one
    let first: [number, string[]] | undefined;
    for (const e of this.rBegin) if (first === undefined || e[0] < first[0]) first = e;
    return first !== undefined ? first[1] : this.validators;
  }

  viewStarts(): ReadonlyMap<number, readonly string[]> {
    return this.rBegin;
  }

  isValidator(alias: string): boolean {
    return this.validatorSet.has(alias);
  }

  primaryName(viewNo = this.viewNo): string {
    let p = this.primaryCache.get(viewNo);
    if (p === undefined) {
      p = primaryOf(viewNo, this.rotationRegistry(viewNo));
      if (this.primaryCache.size > 64) this.primaryCache.clear();
      this.primaryCache.set(viewNo, p);
    }
    return p;
  }

  /** Primary of the current view and a validator (a demoted primary proposes nothing). */
  isPrimary(): boolean {
    return this.primaryName() === this.name && this.validatorSet.has(this.name);
  }

  /** This node is in R_committed: its votes, PREPAREs, COMMITs and checkpoints count. */
  get participating(): boolean {
    return this.validatorSet.has(this.name);
  }

  emit(effect: ConsensusEffect): void {
    this.out.push(effect);
  }

  broadcast(msg: NodeMessage): void {
    // an observer or demoted node follows the pool but sends nothing that would count as a vote
    if (!this.participating && VOTING_OPS.has(msg.op)) return;
    this.out.push({ kind: 'broadcast', msg });
  }

  send(to: string, msg: NodeMessage): void {
    if (!this.participating && VOTING_OPS.has(msg.op)) return;
    this.out.push({ kind: 'send', to, msg });
  }

  suspect(peer: string, code: number, vote = false): void {
    this.out.push({ kind: 'suspicion', peer, code, vote });
    this.modules.logger?.debug({ peer, code, vote }, 'suspicion');
    if (vote) this.vote(code);
  }

  /** A suspicion that counts toward a view change, for `proposedView` (default: view + 1). */
  vote(code: number, proposedView?: number): void {
    this.voteFor(code, proposedView);
  }

  setTimer(id: string, delayMs: number): void {
    this.armedTimers.add(id);
    this.out.push({ kind: 'setTimer', id, delayMs });
  }

  timerFired(id: string): boolean {
    return this.armedTimers.delete(id);
  }

  /** Takes the effects produced so far. */
  drain(): ConsensusEffect[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  inWindow(ppSeqNo: number): boolean {
    return ppSeqNo > this.h && ppSeqNo <= this.H;
  }
}
