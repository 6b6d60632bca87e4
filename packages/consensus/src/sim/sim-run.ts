// The shapes of a simulation run (options, result, node, modules) and the helpers around them.
import type { ConsensusCore } from '../core.js';
import type { StoredInstanceChangeVote } from '../interfaces.js';
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
  /** PRE-PREPAREs this node already relayed (gossip model) */
  relayed: Set<string>;
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
