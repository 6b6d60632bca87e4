// Deterministic discrete-event simulator of a Quire pool (consensus.md §12.2): consensus cores over
// a simulated network with seeded delays, drops, duplication, reordering, partitions, crashes and
// restarts, clock skew and Byzantine nodes. One seeded PRNG drives every choice, so a run is fully
// reproducible from (seed, nodes, faults). Simulated time only: no real sleeps.
import { ConsensusCore } from '../core.js';
import type { ConsensusEffect } from '../interfaces.js';
import type { ClientRequestBody, NodeMessage } from '../messages.js';
import { BACKUP_BEHAVIOURS, type ByzantineKind, byzantineTransform, PRIMARY_BEHAVIOURS } from './byzantine.js';
import { checkRun, type RunRecord } from './checks.js';
import { type MembershipContext, type MembershipPlan, membershipPlan, membershipRequest } from './membership.js';
import type { SimExecutor, SimPool, SimPoolFactory, SimReplica } from './backend.js';
import { type FaultMix, faultMix } from './faults.js';
import { EventQueue } from './event-queue.js';
import { Prng } from './prng.js';
import { standInPool } from './standin-backend.js';
import type { StandInExecutor } from './standin-executor.js';
import { type SimNode, type SimulationModules, type SimulationOptions, type SimulationResult, failedRun } from './sim-run.js';

export type { SimNode, SimulationModules, SimulationOptions, SimulationResult } from './sim-run.js';
export { replayCommand } from './sim-run.js';

const BASE_UTC = 1_700_000_000;

export class Simulation<E extends SimExecutor = StandInExecutor> {
  readonly rng: Prng;
  private readonly netRng: Prng;
  private readonly queue = new EventQueue();
  readonly nodes: SimNode<E>[] = [];
  /** every pool node alias: genesis validators, then a joiner */
  private readonly names: string[];
  private readonly genesisNames: string[];
  readonly pool: SimPool<E>;
  readonly membership: MembershipPlan | undefined;
  readonly mix: FaultMix;
  private readonly record: RunRecord;
  private partition: Set<string> | null = null;
  /** interval in which more than f nodes are down (fPlusOneDown): batches ordered inside it */
  private downWindow: [number, number] | undefined;
  orderedWhileDown = 0;
  /** node alias -> suspicion code -> times raised (honest nodes' view of their peers) */
  readonly suspicions = new Map<string, Map<number, number>>();
  private messages = 0;
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
    this.netRng = this.rng.fork();
    this.mix = faultMix(opts.faults);
    this.genesisNames = Array.from({ length: opts.nodes }, (_, i) => `Node${i + 1}`);
    this.membership = this.mix.membership ? membershipPlan(this.rng, opts.nodes) : undefined;
    this.names = this.membership !== undefined ? [...this.genesisNames, this.membership.joiner] : [...this.genesisNames];
    const factory = modules.pool ?? (standInPool as unknown as SimPoolFactory<E>);
    this.pool = factory({ seed: opts.seed, genesis: this.genesisNames, ...(this.membership !== undefined ? { joiner: this.membership.joiner } : {}) });
    this.healAtMs = this.mix.healAtMs;
    this.endAtMs = this.healAtMs + this.mix.livenessBoundMs;
    this.record = { names: this.names, byzantine: new Set(), submitted: [], orderedRequests: 0, orderedBatches: 0, alarms: [] };
    for (const name of this.names) this.nodes.push(this.createNode(name));
    if (this.membership !== undefined) this.nodes[this.nodes.length - 1]!.started = false;
    if (this.mix.twins) this.makeTwins();
    this.assignFaults();
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

  /**
   * Negative control (consensus.md §11 row 18): f+1 nodes (the view-0 primary and the last f
   * validators) get a twin; each incarnation talks to one side, and the honest nodes are split
   * between the sides so that each side holds n-f nodes and orders on its own.
   */
  private makeTwins(): void {
    const f = Math.floor((this.opts.nodes - 1) / 3);
    const twinned = [this.genesisNames[0]!, ...this.genesisNames.slice(this.opts.nodes - f)];
    const honest = this.genesisNames.filter((a) => !twinned.includes(a));
    const half = Math.ceil(honest.length / 2);
    for (const node of this.nodes) {
      if (twinned.includes(node.name)) {
        node.side = 'A';
        this.record.byzantine.add(node.name);
      } else node.side = honest.indexOf(node.name) < half ? 'A' : 'B';
    }
    for (const alias of twinned) {
      const twin = this.createNode(alias);
      twin.side = 'B';
      this.nodes.push(twin);
    }
  }

  private assignFaults(): void {
    const f = Math.floor((this.opts.nodes - 1) / 3);
    // crashes may hit any node (the primary included: view change); Byzantine roles are assigned below
    const genesis = this.nodes.slice(0, this.opts.nodes);
    const backups = this.rng.shuffle(this.mix.crashes ? genesis.slice() : genesis.slice(1));
    let budget = Math.min(f, this.mix.faultyNodes === 'f' ? f : this.mix.faultyNodes);
    if (this.mix.fPlusOneDown) {
      const at = this.rng.int(300, 1000);
      const back = this.rng.int(3000, 4500);
      for (const node of backups.filter((n) => n !== this.nodes[0]).slice(0, f + 1)) {
        this.queue.schedule(at, () => this.crash(node));
        this.queue.schedule(back, () => this.restart(node));
      }
      this.downWindow = [at + 500, back];
    }
    if (this.mix.crashPrimary && budget > 0) {
      const p = this.nodes[0]!;
      const at = this.rng.int(300, 1500);
      this.queue.schedule(at, () => this.crash(p));
      this.queue.schedule(at + this.rng.int(4000, 7000), () => this.restart(p));
      budget--;
    }
    if (this.mix.byzantinePrimary && budget > 0) {
      const p = this.nodes[0]!;
      p.byzantine = this.rng.pick(PRIMARY_BEHAVIOURS);
      this.record.byzantine.add(p.name);
      budget--;
    }
    for (const node of backups) {
      if (budget <= 0) break;
      budget--;
      if (this.mix.byzantineBackups && node !== this.nodes[0] && (!this.mix.crashes || this.rng.chance(0.5))) {
        node.byzantine = this.rng.pick((this.mix.backupBehaviours ?? BACKUP_BEHAVIOURS) as readonly ByzantineKind[]);
        this.record.byzantine.add(node.name);
      } else if (this.mix.crashes) {
        const at = this.rng.int(200, Math.max(300, this.healAtMs - 3000));
        const downFor = this.rng.int(300, Math.max(400, this.healAtMs - at - 500));
        this.queue.schedule(at, () => this.crash(node));
        this.queue.schedule(at + downFor, () => this.restart(node));
      }
    }
    for (const node of this.nodes) {
      if (this.mix.skewSec > 0) node.skewSec = this.rng.int(-this.mix.skewSec, this.mix.skewSec);
    }
    if (this.mix.partitions) {
      const at = this.rng.int(100, this.healAtMs / 2);
      // an isolated primary stays cut off long enough for the monitor to replace it
      const dur = this.mix.isolatePrimary ? this.healAtMs - at - 100 : this.rng.int(200, this.healAtMs - at - 100);
      const side = this.mix.isolatePrimary
        ? new Set([this.genesisNames[0]!])
        : new Set(this.rng.shuffle([...this.genesisNames]).slice(0, this.rng.int(1, Math.floor(this.opts.nodes / 2))));
      this.queue.schedule(at, () => (this.partition = side));
      this.queue.schedule(at + dur, () => (this.partition = null));
    }
    if (this.mix.lyingSeeder) {
      // an honest backup misses most of the load and catches up from seeders that include the liar
      const leecher = this.rng.pick(genesis.slice(1).filter((n) => n.byzantine === undefined));
      const at = this.rng.int(200, 800);
      this.queue.schedule(at, () => this.crash(leecher));
      this.queue.schedule(this.rng.int(2500, this.healAtMs - 200), () => this.restart(leecher));
    }
    if (this.mix.clockJump) {
      // one node's wall clock jumps (within or beyond ACCEPTABLE_DEVIATION_PREPREPARE_SECS), and may jump back
      const node = this.rng.pick(genesis);
      const jump = this.rng.int(30, 150) * (this.rng.chance(0.5) ? 1 : -1);
      const at = this.rng.int(200, this.healAtMs / 2);
      this.queue.schedule(at, () => (node.skewSec += jump));
      if (this.rng.chance(0.5)) this.queue.schedule(this.rng.int(at + 200, this.healAtMs), () => (node.skewSec -= jump));
    }
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
    this.scheduleWorkload();
    if (this.membership !== undefined) this.scheduleMembership(this.membership);
  }

  private lastCheck = 0;

  /** Runs the next event; false when the run is over. */
  private step(): boolean {
    if (this.queue.size === 0 || this.queue.nextTime() > this.endAtMs) return false;
    this.queue.runNext();
    const now = this.queue.now;
    if (now > this.healAtMs && now - this.lastCheck >= 250) {
      this.lastCheck = now;
      if (this.mix.checkLiveness && this.settled()) return false;
    }
    return true;
  }

  private finish(): SimulationResult {
    const violations = checkRun(this.record, this.nodes, {
      checkLiveness: this.mix.checkLiveness,
      verifyMulti: (node, p, value, sig) => (node as SimNode<E>).replica.crypto.blsVerifyMulti(p, value, sig),
    });
    return {
      seed: this.opts.seed,
      nodes: this.opts.nodes,
      faults: this.opts.faults,
      // the negative control passes when the checkers caught the violation it provokes
      ok: this.mix.twins ? violations.some((v) => v.startsWith('safety:')) : violations.length === 0,
      violations,
      simulatedMs: this.queue.now,
      orderedBatches: this.record.orderedBatches,
      orderedRequests: this.record.orderedRequests,
      messages: this.messages,
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

  private scheduleWorkload(): void {
    const total = this.opts.requests ?? this.mix.requests;
    const workload = this.pool.workload;
    const loadMs = Math.max(100, this.healAtMs - 500);
    const issued: ClientRequestBody[] = [];
    // bursty load: most requests arrive in a few bursts (batches of several requests), some alone
    const bursts = Array.from({ length: Math.max(1, Math.ceil(total / 8)) }, () => this.rng.int(10, loadMs));
    for (let i = 0; i < total; i++) {
      const at = this.rng.chance(0.8) ? this.rng.pick(bursts) + this.rng.int(0, 15) : this.rng.int(10, loadMs);
      const roll = this.rng.next();
      let req: ClientRequestBody;
      let mustOrder = true;
      if (roll < 0.05) {
        req = workload.write(i, true);
        mustOrder = false;
      } else if (roll < 0.1 && issued.length > 0) {
        // replay of an earlier request, or the same payload under another digest
        const prev = this.rng.pick(issued);
        req = this.rng.chance(0.5) ? prev : workload.variant(prev);
        mustOrder = false;
      } else {
        req = workload.write(i, false);
      }
      issued.push(req);
      const info = workload.info(req);
      this.record.submitted.push({ digest: info.digest, payloadDigest: info.payloadDigest, mustOrder, invalid: roll < 0.05 });
      const connId = `client-${i}`;
      // twins: each side of the split pool gets its own requests, so the two sides diverge
      const side = this.mix.twins ? (i % 2 === 0 ? 'A' : 'B') : undefined;
      this.queue.schedule(at, () => this.submit(connId, req, side));
    }
  }

  /** A client sends a request to every running node (of one side, for twins). */
  private submit(connId: string, request: ClientRequestBody, side?: 'A' | 'B'): void {
    for (const node of this.nodes) {
      if (!node.alive || !node.started || (side !== undefined && node.side !== side)) continue;
      this.apply(node, node.core.handle({ kind: 'clientRequest', connId, request }));
    }
  }

  /** NODE txns of the membership mix, submitted like any client write; the joiner starts on its own schedule. */
  private scheduleMembership(plan: MembershipPlan): void {
    const reference = (): SimNode<E> => this.nodes.find((n) => n.alive && n.started && n.core.status().validators.includes(n.name))!;
    const ctx: MembershipContext = {
      workload: this.pool.workload,
      rng: this.rng,
      validators: () => reference().core.status().validators,
      primary: () => reference().core.status().primary,
    };
    const joiner = this.nodes.find((n) => n.name === plan.joiner)!;
    this.queue.schedule(plan.joinerStartsAt, () => {
      joiner.started = true;
      this.apply(joiner, joiner.core.start());
      this.announce(joiner.name, true);
    });
    plan.steps.forEach((step, i) => {
      this.queue.schedule(step.at, () => {
        const req = membershipRequest(step, plan, ctx);
        if (req === undefined) return;
        const info = this.pool.workload.info(req);
        this.record.submitted.push({ digest: info.digest, payloadDigest: info.payloadDigest, mustOrder: true, invalid: false });
        this.submit(`steward-${i}`, req);
      });
    });
  }

  private apply(node: SimNode<E>, effects: ConsensusEffect[]): void {
    const epoch = node.epoch;
    this.touched.add(node);
    for (const e of effects) {
      switch (e.kind) {
        case 'broadcast':
          for (const to of this.names) if (to !== node.name) this.send(node, to, e.msg, true);
          break;
        case 'send':
          this.send(node, e.to, e.msg, false);
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

  private send(from: SimNode<E>, to: string, msg: NodeMessage, gossip: boolean): void {
    const outgoing: unknown[] =
      from.byzantine === undefined ? [msg] : byzantineTransform(from.byzantine, msg, to, this.names, this.netRng, from.history);
    if (from.byzantine !== undefined && msg.op !== 'MESSAGE_RESPONSE') {
      from.history.push(msg);
      if (from.history.length > 200) from.history.shift();
    }
    for (const m of outgoing) for (const target of this.incarnations(to, from)) this.transmit(from, from.name, target, m, gossip);
  }

  /** The running incarnations of `alias` that `from` can reach (twins talk to their own side only). */
  private incarnations(alias: string, from: SimNode<E>): SimNode<E>[] {
    return this.nodes.filter((n) => n.name === alias && n.started && (from.side === undefined || n.side === undefined || n.side === from.side));
  }

  /**
   * One delivery over a link. `origin` is the consensus sender (the gossip originator); `via` the
   * node whose link carries it (the originator, or a relaying peer).
   */
  private transmit(via: SimNode<E>, origin: string, target: SimNode<E>, msg: unknown, gossip: boolean): void {
    const rng = this.netRng;
    const now = this.queue.now;
    const chaos = now < this.healAtMs;
    this.messages++;
    if (chaos) {
      if (this.partition !== null && this.partition.has(via.name) !== this.partition.has(target.name)) return;
      if (rng.chance(this.mix.drop)) return;
    }
    const [lo, hi] = chaos ? this.mix.latencyMs : [1, 4];
    const copies = chaos && rng.chance(this.mix.duplicate) ? 2 : 1;
    for (let c = 0; c < copies; c++) {
      const delay = rng.int(lo, hi) + (chaos && rng.chance(this.mix.slowTail) ? rng.int(hi, hi * 20) : 0);
      const epoch = target.epoch;
      this.queue.schedule(now + delay, () => {
        if (!target.alive || target.epoch !== epoch) return;
        this.apply(target, target.core.handle({ kind: 'nodeMessage', from: origin, msg }));
        if (gossip) this.relay(target, origin, msg);
      });
    }
  }

  /**
   * Gossip relays (consensus.md §9.2): every receiver forwards a new message, signed by its
   * originator, to its peers, so that conflicting PRE-PREPAREs of one primary reach every node
   * and each honest node can vote 60. Modelled for PRE-PREPAREs only, the one message whose
   * conflicting copies are evidence; the loss of other messages is left to MESSAGE_REQUEST repair.
   */
  private relay(node: SimNode<E>, origin: string, msg: unknown): void {
    if (node.byzantine !== undefined || typeof msg !== 'object' || msg === null || (msg as { op?: unknown }).op !== 'PREPREPARE') return;
    const pp = msg as { viewNo: number; ppSeqNo: number; digest: string; stateRootHash: string; auditTxnRootHash: string };
    const key = `${origin}|${pp.viewNo}|${pp.ppSeqNo}|${pp.digest}|${pp.stateRootHash}|${pp.auditTxnRootHash}`;
    if (node.relayed.has(key)) return;
    node.relayed.add(key);
    if (node.relayed.size > 4096) node.relayed.clear();
    for (const alias of this.names) {
      if (alias === node.name || alias === origin) continue;
      for (const target of this.incarnations(alias, node)) this.transmit(node, origin, target, msg, false);
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
