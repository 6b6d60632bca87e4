// The shapes of a simulation run (options, result, node, modules) and the helpers around them.
import type { ConsensusCore } from '../core.js';
import type { StoredInstanceChangeVote, ThreePcVoteJournal } from '../interfaces.js';
import type { NodeMessage } from '../messages.js';
import type { ConsensusOptions } from '../options.js';
import type { SimExecutor, SimPoolFactory, SimReplica } from './backend.js';
import type { ByzantineKind } from './byzantine.js';
import type { StandInExecutor } from './standin-executor.js';

export interface SimulationOptions {
  seed: number;
  nodes: number;
  /** name of a fault mix (see FAULT_MIXES) */
  faults: string;
  /** client requests submitted during the load phase */
  requests?: number;
  /** consensus option overrides for every node */
  consensus?: Partial<ConsensusOptions>;
  /** without the nodes' 3PC vote journal (#15 F8), to show what it prevents */
  noVoteJournal?: boolean;
  /** events after which the run stops and fails as a runaway (default 2,000,000; normal runs take well under 200,000) */
  maxEvents?: number;
}

export interface SimulationResult {
  seed: number;
  nodes: number;
  faults: string;
  ok: boolean;
  violations: string[];
  /** simulated milliseconds until the run ended */
  simulatedMs: number;
  orderedBatches: number;
  orderedRequests: number;
  messages: number;
  livenessChecked: boolean;
  /** highest view reached by an honest node */
  maxView: number;
  /** CPU time of the run in its process, milliseconds (not part of the outcome: it varies between machines) */
  cpuMs?: number;
  /** what the adversary did in this run (absent in results of older runners) */
  adversary?: AdversaryStats;
}

/** Counts of the adversary's actions in one run (summed by `npm run sim`). */
export interface AdversaryStats {
  /** nodes stopped for the rest of the run */
  crashStops: number;
  /** crashes in the middle of a node's writes (the writes after the crash point lost) */
  tornWrites: number;
  /** crash-restarts of every kind (torn writes included) */
  restarts: number;
  /** messages that contradict another one of the same sender for the same key (twin PRE-PREPAREs,
   *  forged NEW_VIEW, VIEW_CHANGE, OLD_VIEW_PREPREPARE replies, multi-signatures, consistency proofs) */
  equivocations: number;
  /** PRE-PREPAREs sent by a node that is not the primary of their view */
  usurpedPrePrepares: number;
  /** messages of flooding nodes */
  floodMessages: number;
  /** pauses of a node (deliveries and timers held, then resumed) */
  pauses: number;
  /** highest core footprint (entries of its maps, sets and arrays) of an honest node */
  maxFootprint: number;
}

export function emptyAdversaryStats(): AdversaryStats {
  return { crashStops: 0, tornWrites: 0, restarts: 0, equivocations: 0, usurpedPrePrepares: 0, floodMessages: 0, pauses: 0, maxFootprint: 0 };
}

/** The world a simulation runs in (default: the in-memory stand-in of this package). */
export interface SimulationModules<E extends SimExecutor = StandInExecutor> {
  pool?: SimPoolFactory<E>;
}

export interface SimNode<E extends SimExecutor = StandInExecutor> {
  /** alias (twins share one) */
  name: string;
  /** executor of the running incarnation (set once the replica exists) */
  executor: E;
  replica: SimReplica<E>;
  core: ConsensusCore;
  alive: boolean;
  /** a joining node's process has not started yet */
  started: boolean;
  /** bumps on crash so that timers and deliveries of the old incarnation are dropped */
  epoch: number;
  skewSec: number;
  byzantine?: ByzantineKind;
  /** twins: the side of the pool this incarnation talks to */
  side?: 'A' | 'B';
  history: NodeMessage[];
  /** durable INSTANCE_CHANGE votes (survive crashes) */
  votes: StoredInstanceChangeVote[];
  /** durable journal of its PRE-PREPARE / PREPARE / COMMIT votes (survives crashes; #15 F8) */
  threePc?: ThreePcVoteJournal;
  /** durable refusal mark of admission control (survives crashes; intake.ts (3)) */
  refusalMark?: number;
  /** PRE-PREPAREs this node already relayed (gossip model) */
  relayed: Set<string>;
  /** crash-stopped: down for the rest of the run (liveness is checked without it) */
  stopped?: boolean;
  /** an incarnation of a twinned alias (equivocation: each talks to its side of the pool only) */
  twin?: boolean;
  /** a second incarnation whose core believes it is the primary: only its PRE-PREPAREs reach the wire */
  usurper?: boolean;
  /** deliveries and timers of a paused node wait until this simulated time */
  pausedUntil?: number;
  /** a slow primary: its PRE-PREPAREs take this much longer */
  slowMs?: number;
  /** a forging primary behaves until this simulated time (so that it has shares to forge with) */
  forgeFromMs?: number;
  /** a forging primary: COMMIT shares it heard (for short aggregates) */
  heardCommits?: { from: string; blsSigs: Record<string, string> }[];
  /** a censoring primary: these requests (by reference, as the simulated network passes them) never reach it */
  censored?: WeakSet<object>;
}

export function failedRun(opts: SimulationOptions, e: unknown): SimulationResult {
  return {
    seed: opts.seed,
    nodes: opts.nodes,
    faults: opts.faults,
    ok: false,
    violations: [`exception: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`],
    simulatedMs: 0,
    orderedBatches: 0,
    orderedRequests: 0,
    messages: 0,
    livenessChecked: false,
    maxView: 0,
  };
}

export function replayCommand(r: Pick<SimulationResult, 'seed' | 'nodes' | 'faults'>): string {
  return `npm run sim -- --seed ${r.seed} --nodes ${r.nodes} --faults ${r.faults}`;
}
