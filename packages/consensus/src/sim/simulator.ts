// Deterministic discrete-event simulator of a Quire pool (consensus.md §12.2): consensus cores over
// a simulated network with seeded delays, drops, duplication, reordering, partitions, crashes and
// restarts, clock skew and Byzantine nodes. One seeded PRNG drives every choice, so a run is fully
// reproducible from (seed, nodes, faults). Simulated time only: no real sleeps.
import { ConsensusCore } from '../core.js';
import type { ConsensusEffect } from '../interfaces.js';
import type { ClientRequestBody } from '../messages.js';
import type { SimExecutor, SimPool, SimPoolFactory, SimReplica } from './backend.js';
import { checkRun, type RunRecord } from './checks.js';
import { type ClientLoadContext, scheduleClientLoad, scheduleMembershipLoad } from './client-load.js';
import { EventQueue } from './event-queue.js';
import { type FaultPlanContext, makeTwins, scheduleFaults } from './fault-plan.js';
import { type FaultMix, faultMix } from './faults.js';
import { type MembershipPlan, membershipPlan } from './membership.js';
import { Prng } from './prng.js';
import { SimNetwork } from './sim-network.js';
import { standInPool } from './standin-backend.js';
import type { StandInExecutor } from './standin-executor.js';
import { type SimNode, type SimulationModules, type SimulationOptions, type SimulationResult, failedRun } from './sim-run.js';

export type { SimNode, SimulationModules, SimulationOptions, SimulationResult } from './sim-run.js';
export { replayCommand } from './sim-run.js';

const BASE_UTC = 1_700_000_000;
/** default events after which a run is stopped as a runaway (message storm): a failed run, not a hung sweep */
const MAX_EVENTS = 2_000_000;

export class Simulation<E extends SimExecutor = StandInExecutor> {
  readonly rng: Prng;
  private readonly queue = new EventQueue();
  readonly nodes: SimNode<E>[] = [];
  /** every pool node alias: genesis validators, then a joiner */
  private readonly names: string[];
  private readonly genesisNames: string[];
  readonly pool: SimPool<E>;
  readonly membership: MembershipPlan | undefined;
  readonly mix: FaultMix;
  private readonly record: RunRecord;
  private readonly network: SimNetwork<E>;
  /** interval in which more than f nodes are down (fPlusOneDown): batches ordered inside it */
  private downWindow: [number, number] | undefined;
  orderedWhileDown = 0;
  /** node alias -> suspicion code -> times raised (honest nodes' view of their peers) */
  readonly suspicions = new Map<string, Map<number, number>>();
  readonly healAtMs: number;
  private readonly endAtMs: number;
  /** asynchronous work of the world (replica creation, restarts) the next event must wait for */
  private pending: Promise<void>[] = [];
  /** nodes that handled something during the current event (their writes settle before the next) */
  private readonly touched = new Set<SimNode<E>>();

  constructor(
    readonly opts: SimulationOptions,
    modules: SimulationModules<E> = {},
  ) {
    this.rng = new Prng(opts.seed);
    const netRng = this.rng.fork();
    this.mix = faultMix(opts.faults);
    this.genesisNames = Array.from({ length: opts.nodes }, (_, i) => `Node${i + 1}`);
    this.membership = this.mix.membership ? membershipPlan(this.rng, opts.nodes) : undefined;
    this.names = this.membership !== undefined ? [...this.genesisNames, this.membership.joiner] : [...this.genesisNames];
    const factory = modules.pool ?? (standInPool as unknown as SimPoolFactory<E>);
    this.pool = factory({ seed: opts.seed, genesis: this.genesisNames, ...(this.membership !== undefined ? { joiner: this.membership.joiner } : {}) });
    this.healAtMs = this.mix.healAtMs;
    this.endAtMs = this.healAtMs + this.mix.livenessBoundMs;
    this.record = { names: this.names, byzantine: new Set(), submitted: [], orderedRequests: 0, orderedBatches: 0, alarms: [] };
    this.network = new SimNetwork({
      queue: this.queue,
      rng: netRng,
      mix: this.mix,
      names: this.names,
      nodes: this.nodes,
      healAtMs: this.healAtMs,
      deliver: (target, from, msg) => this.apply(target, target.core.handle({ kind: 'nodeMessage', from, msg })),
    });
    for (const name of this.names) this.nodes.push(this.createNode(name));
    if (this.membership !== undefined) this.nodes[this.nodes.length - 1]!.started = false;
    const faults: FaultPlanContext<E> = {
      nodeCount: opts.nodes,
      mix: this.mix,
      rng: this.rng,
      queue: this.queue,
      nodes: this.nodes,
      genesisNames: this.genesisNames,
      healAtMs: this.healAtMs,
      byzantine: this.record.byzantine,
      createNode: (alias) => this.createNode(alias),
      crash: (node) => this.crash(node),
      restart: (node) => this.restart(node),
      cut: (side) => this.network.cut(side),
      heal: () => this.network.heal(),
      downWindow: (from, to) => (this.downWindow = [from, to]),
    };
    if (this.mix.twins) makeTwins(faults);
    scheduleFaults(faults);
  }

  /** Runs `then` after `work` (at once when it is synchronous; before the next event otherwise). */
  private after(work: void | Promise<void>, then: () => void): void {
    if (work instanceof Promise) this.pending.push(work.then(then));
    else then();
  }

  private createNode(name: string): SimNode<E> {
    const node: SimNode<E> = {
      name,
      executor: undefined as unknown as E,
      replica: undefined as unknown as SimReplica<E>,
      core: undefined as unknown as ConsensusCore,
      alive: true,
      started: true,
      epoch: 0,
      skewSec: 0,
      history: [],
      votes: [],
      relayed: new Set(),
    };
    const replica = this.pool.replica(name);
    const attach = (r: SimReplica<E>): void => {
      node.replica = r;
      node.executor = r.executor;
      node.core = this.createCore(node);
    };
    if (replica instanceof Promise) this.pending.push(replica.then(attach));
    else attach(replica);
    return node;
  }

  private createCore(node: SimNode<E>): ConsensusCore {
    const r = node.replica;
    return new ConsensusCore(
      { name: node.name, validators: r.validators?.() ?? this.genesisNames, ...this.mix.consensus, ...this.opts.consensus },
      {
        executor: r.executor,
        crypto: r.crypto,
        requests: r.requests,
        clock: { now: () => this.queue.now, utcSeconds: () => Math.floor(BASE_UTC + this.queue.now / 1000 + node.skewSec) },
        voteStore: { load: () => node.votes, save: (votes) => (node.votes = votes) },
      },
    );
  }

  private crash(node: SimNode<E>): void {
    if (!node.alive) return;
    node.alive = false;
    node.epoch++;
    this.after(node.replica.crash(), () => undefined);
    this.announce(node.name, false);
  }

  /** connection events to the other live nodes */
  private announce(alias: string, connected: boolean): void {
    for (const other of this.nodes) {
      if (other.name === alias || !other.alive) continue;
      this.apply(other, other.core.handle({ kind: connected ? 'peerConnected' : 'peerDisconnected', alias }));
    }
  }

  private restart(node: SimNode<E>): void {
    if (node.alive) return;
    node.alive = true;
    node.epoch++;
    node.relayed.clear();
    this.after(node.replica.restart(), () => {
      node.executor = node.replica.executor;
      node.core = this.createCore(node);
      this.apply(node, node.core.start());
      this.announce(node.name, true);
    });
  }

  /** Runs to completion and checks the invariants (a world whose replicas work synchronously only). */
  run(): SimulationResult {
    this.expectNoPending();
    this.begin();
    while (this.step()) this.expectNoPending();
    return this.finish();
  }

  /** Runs to completion and checks the invariants, waiting for the world's asynchronous work between events. */
  async runAsync(): Promise<SimulationResult> {
    try {
      await this.settle();
      this.begin();
      await this.settle();
      while (this.step()) await this.settle();
      return this.finish();
    } finally {
      await this.pool.close?.();
    }
  }

  /** One simulation in a world with asynchronous replicas; an exception is a failed run. */
  static async simulate<X extends SimExecutor>(opts: SimulationOptions, modules: SimulationModules<X>): Promise<SimulationResult> {
    const cpu = process.cpuUsage();
    let r: SimulationResult;
    try {
      r = await new Simulation(opts, modules).runAsync();
    } catch (e) {
      r = failedRun(opts, e);
    }
    return { ...r, cpuMs: cpuMsSince(cpu) };
  }

  private expectNoPending(): void {
    this.touched.clear();
    if (this.pending.length > 0) throw new Error('this simulation world works asynchronously: use runAsync()');
  }

  /** Waits for the asynchronous work started by the last event and for the writes of the nodes it touched. */
  private async settle(): Promise<void> {
    for (const node of this.touched) {
      const w = node.replica.settle?.();
      if (w !== undefined) this.pending.push(w);
    }
    this.touched.clear();
    while (this.pending.length > 0) {
      const work = this.pending;
      this.pending = [];
      await Promise.all(work);
    }
  }

  private begin(): void {
    for (const node of this.nodes) if (node.started) this.apply(node, node.core.start());
    const load: ClientLoadContext = {
      rng: this.rng,
      queue: this.queue,
      workload: this.pool.workload,
      submitted: this.record.submitted,
      submit: (connId, request, side) => this.submit(connId, request, side),
    };
    scheduleClientLoad(load, this.opts.requests ?? this.mix.requests, Math.max(100, this.healAtMs - 500), this.mix.twins);
    if (this.membership !== undefined) this.scheduleMembership(this.membership, load);
  }

  /** The joiner of the membership mix starts on its own schedule; the stewards' NODE txns follow theirs. */
  private scheduleMembership(plan: MembershipPlan, load: ClientLoadContext): void {
    const reference = (): SimNode<E> => this.nodes.find((n) => n.alive && n.started && n.core.status().validators.includes(n.name))!;
    const joiner = this.nodes.find((n) => n.name === plan.joiner)!;
    this.queue.schedule(plan.joinerStartsAt, () => {
      joiner.started = true;
      this.apply(joiner, joiner.core.start());
      this.announce(joiner.name, true);
    });
    scheduleMembershipLoad(load, plan, { validators: () => reference().core.status().validators, primary: () => reference().core.status().primary });
  }

  private lastCheck = 0;
  private events = 0;
  private runaway: string | undefined;

  /** Runs the next event; false when the run is over. */
  private step(): boolean {
    if (this.queue.size === 0 || this.queue.nextTime() > this.endAtMs) return false;
    this.queue.runNext();
    const now = this.queue.now;
    const maxEvents = this.opts.maxEvents ?? MAX_EVENTS;
    if (++this.events > maxEvents) {
      this.runaway = `runaway: more than ${maxEvents} events by ${now} simulated ms (${this.queue.size} pending)`;
      return false;
    }
    if (now > this.healAtMs && now - this.lastCheck >= 250) {
      this.lastCheck = now;
      if (this.mix.checkLiveness && this.settled()) return false;
    }
    return true;
  }

  private finish(): SimulationResult {
    const violations = this.runaway !== undefined ? [this.runaway] : [];
    violations.push(...checkRun(this.record, this.nodes, {
      checkLiveness: this.mix.checkLiveness,
      verifyMulti: (node, p, value, sig) => (node as SimNode<E>).replica.crypto.blsVerifyMulti(p, value, sig),
    }));
    return {
      seed: this.opts.seed,
      nodes: this.opts.nodes,
      faults: this.opts.faults,
      // the negative control passes when the checkers caught the violation it provokes
      ok: this.runaway === undefined && (this.mix.twins ? violations.some((v) => v.startsWith('safety:')) : violations.length === 0),
      violations,
      simulatedMs: this.queue.now,
      orderedBatches: this.record.orderedBatches,
      orderedRequests: this.record.orderedRequests,
      messages: this.network.messages,
      livenessChecked: this.mix.checkLiveness,
      maxView: Math.max(...this.nodes.filter((n) => !this.record.byzantine.has(n.name)).map((n) => n.core.status().viewNo)),
    };
  }

  /** every valid request committed everywhere and every honest node at the same audit size */
  private settled(): boolean {
    const honest = this.nodes.filter((n) => !this.record.byzantine.has(n.name));
    if (honest.some((n) => !n.alive || !n.started)) return false;
    const size = honest[0]!.executor.committedSize(3);
    if (honest.some((n) => n.executor.committedSize(3) !== size)) return false;
    return this.record.submitted.every((s) => !s.mustOrder || honest.every((n) => n.executor.isPayloadCommitted(s.payloadDigest)));
  }

  /** A client sends a request to every running node (of one side, for twins). */
  private submit(connId: string, request: ClientRequestBody, side?: 'A' | 'B'): void {
    for (const node of this.nodes) {
      if (!node.alive || !node.started || (side !== undefined && node.side !== side)) continue;
      this.apply(node, node.core.handle({ kind: 'clientRequest', connId, request }));
    }
  }

  private apply(node: SimNode<E>, effects: ConsensusEffect[]): void {
    const epoch = node.epoch;
    this.touched.add(node);
    for (const e of effects) {
      switch (e.kind) {
        case 'broadcast':
          this.network.broadcast(node, e.msg);
          break;
        case 'send':
          this.network.send(node, e.to, e.msg);
          break;
        case 'setTimer':
          this.queue.schedule(this.queue.now + e.delayMs, () => {
            if (node.alive && node.epoch === epoch) this.apply(node, node.core.handle({ kind: 'timer', id: e.id }));
          });
          break;
        case 'ordered':
          if (this.downWindow !== undefined && this.queue.now >= this.downWindow[0] && this.queue.now < this.downWindow[1]) this.orderedWhileDown++;
          if (!this.record.byzantine.has(node.name)) {
            this.record.orderedBatches++;
            this.record.orderedRequests += e.replies.length;
          }
          break;
        case 'alarm':
          this.record.alarms.push(`${node.name}: ${e.reason}`);
          break;
        case 'suspicion': {
          let m = this.suspicions.get(node.name);
          if (m === undefined) {
            m = new Map();
            this.suspicions.set(node.name, m);
          }
          m.set(e.code, (m.get(e.code) ?? 0) + 1);
          break;
        }
        default:
          break;
      }
    }
  }

}

/** Runs one simulation in the stand-in world; an exception inside a node is a failed run, not a crashed sweep. */
export function runSimulation(opts: SimulationOptions): SimulationResult {
  try {
    return new Simulation(opts).run();
  } catch (e) {
    return failedRun(opts, e);
  }
}

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return Math.round((d.user + d.system) / 1000);
}
