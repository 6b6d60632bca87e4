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
  PRIMARY_DISCONNECTED: 26,
  INSTANCE_CHANGE_TIMEOUT: 28,
  NEW_VIEW_INVALID_CHECKPOINTS: 47,
  NEW_VIEW_INVALID_BATCHES: 48,
  INCORRECT_NEW_PRIMARY: 49,
  REQUEST_NOT_ORDERED: 61,
  /** not in §6.1: a VIEW_CHANGE with impossible BatchIDs */
  INVALID_VIEW_CHANGE: 1002,
  /** not in §6.1: a consistency proof or catch-up reply that does not verify */
  INVALID_CATCHUP_DATA: 1003,
  /** not in §6.1: a message that fails the shape checks or names an unknown request body */
  MALFORMED_MESSAGE: 1000,
  INVALID_PROPAGATED_REQUEST: 1001,
} as const;

export class CoreContext {
  readonly opts: ConsensusOptions;
  readonly modules: ConsensusModules;
  private out: ConsensusEffect[] = [];
  private readonly armedTimers = new Set<string>();

  validators: string[];
  private validatorSet: Set<string>;
  quorums: Quorums;
  viewNo = 0;
  /** applied batches (last pre-prepared ppSeqNo) */
  lastPrePrepareSeqNo = 0;
  lastOrdered: ThreePcKey = { viewNo: 0, ppSeqNo: 0 };
  lastAcceptedPPTime = 0;
  /** low / high watermarks */
  h = 0;
  H: number;
  /** time of the last ordering (monotonic ms), for stall detection */
  lastOrderedAt = 0;
  /** a view change is in progress: no 3PC until NEW_VIEW is accepted */
  waitingForNewView = false;
  /** catch-up in progress: 3PC is stashed, nothing is proposed or voted */
  catchingUp = false;
  /** last ppSeqNo re-ordered from the previous views by the accepted NEW_VIEW */
  prevViewPrepareCert = 0;
  /** set by the view changer: a suspicion that counts toward a view change */
  onVote?: (code: number) => void;

  constructor(opts: ConsensusOptions, modules: ConsensusModules) {
    this.opts = opts;
    this.modules = modules;
    this.validators = [...opts.validators];
    this.validatorSet = new Set(this.validators);
    this.quorums = quorumsFor(this.validators.length);
    this.H = opts.logSize;
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
  }

  isValidator(alias: string): boolean {
    return this.validatorSet.has(alias);
  }

  primaryName(viewNo = this.viewNo): string {
    return primaryOf(viewNo, this.validators);
  }

  isPrimary(): boolean {
    return this.primaryName() === this.name;
  }

  emit(effect: ConsensusEffect): void {
    this.out.push(effect);
  }

  broadcast(msg: NodeMessage): void {
    this.out.push({ kind: 'broadcast', msg });
  }

  send(to: string, msg: NodeMessage): void {
    this.out.push({ kind: 'send', to, msg });
  }

  suspect(peer: string, code: number, vote = false): void {
    this.out.push({ kind: 'suspicion', peer, code, vote });
    this.modules.logger?.debug({ peer, code, vote }, 'suspicion');
    if (vote) this.onVote?.(code);
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
