// Deterministic discrete-event simulator of a Quire pool (consensus.md §12.2): consensus cores over
// a simulated network with seeded delays, drops, duplication, reordering, partitions, crashes and
// restarts, clock skew and Byzantine nodes. One seeded PRNG drives every choice, so a run is fully
// reproducible from (seed, nodes, faults). Simulated time only: no real sleeps.
import { Suspicion } from '../context.js';
import { ConsensusCore } from '../core.js';
import type { ApplyBatchInput, ConsensusEffect, ThreePcVoteJournal } from '../interfaces.js';
import type { ClientRequestBody, NodeMessage, ViewChange } from '../messages.js';
import { NACK_OVERLOADED } from '../intake.js';
import { viewChangeDigest } from '../new-view-calc.js';
import { defaultConsensusOptions } from '../options.js';
import type { SimExecutor, SimPool, SimPoolFactory, SimReplica } from './backend.js';
import { forgedDigest } from './byzantine.js';
import { type AckedReply, checkRun, coreFootprint, footprintBound, type RunRecord } from './checks.js';
import { type ClientLoadContext, scheduleClientLoad, scheduleMembershipLoad } from './client-load.js';
import { EventQueue } from './event-queue.js';
import { type FaultPlanContext, makeEquivocators, makeTwins, scheduleFaults } from './fault-plan.js';
import { type FaultMix, faultMix } from './faults.js';
import { type MembershipPlan, membershipPlan } from './membership.js';
import { newViewProblem } from './new-view-oracle.js';
import { Prng } from './prng.js';
import { SimNetwork } from './sim-network.js';
import { standInPool } from './standin-backend.js';
import type { StandInExecutor } from './standin-executor.js';
import {
  type AdversaryStats,
  type SimNode,
  type SimulationModules,
  type SimulationOptions,
  type SimulationResult,
  emptyAdversaryStats,
  failedRun,
} from './sim-run.js';
import { ConsensusError, ConsensusErrorCode } from '../errors.js';

export type { AdversaryStats, SimNode, SimulationModules, SimulationOptions, SimulationResult } from './sim-run.js';
export { replayCommand } from './sim-run.js';

const BASE_UTC = 1_700_000_000;
/**
 * Suspicion codes that say the accused sent something wrong (consensus.md §6.1): an honest node
 * never has a reason to raise one against another honest node. Not 47/48 (invalid NEW_VIEW): a node
 * behind on the registry may find an honest NEW_VIEW invalid until it catches up (seed 482486250,
 * n=4, membership).
 */
const EVIDENCE: ReadonlySet<number> = new Set([
  Suspicion.PPR_DIGEST_WRONG,
  Suspicion.PPR_REJECT_WRONG,
  Suspicion.PPR_STATE_WRONG,
  Suspicion.PPR_TXN_WRONG,
  Suspicion.PPR_BLS_MULTISIG_WRONG,
  Suspicion.CM_BLS_SIG_WRONG,
  Suspicion.PPR_POOL_STATE_ROOT_HASH_WRONG,
  Suspicion.PPR_AUDIT_TXN_ROOT_HASH_WRONG,
  Suspicion.PPR_EQUIVOCATION,
  Suspicion.VIEW_CHANGE_EQUIVOCATION,
  Suspicion.INVALID_VIEW_CHANGE,
  Suspicion.INVALID_CATCHUP_DATA,
]);
/**
 * An invalid NEW_VIEW (47, 48) is evidence too where no honest node can be behind on the registry
 * (no membership changes) and no Byzantine node relays NEW_VIEWs of its own making (a forging next
 * primary, floods of MESSAGE_RESPONSE{NEW_VIEW}): an honest node recomputes an honest NEW_VIEW from
 * the VIEW_CHANGEs it names (by digest) and finds the same.
 */
const NEW_VIEW_EVIDENCE: ReadonlySet<number> = new Set([Suspicion.NEW_VIEW_INVALID_CHECKPOINTS, Suspicion.NEW_VIEW_INVALID_BATCHES]);
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
  /** the membership mix's plan and its joiner's node (created not started) */
  private readonly joining: { plan: MembershipPlan; joiner: SimNode<E> } | undefined;
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
  readonly stats: AdversaryStats = emptyAdversaryStats();
  /** replies of the current event, sent once its writes are durable (the node awaits them before answering) */
  private pendingReplies: { node: SimNode<E>; epoch: number; replies: AckedReply[] }[] = [];
  /** node alias -> highest audit seqNo it answered clients for (durability across restarts) */
  private readonly ackedAudit = new Map<string, number>();
  /** overload mix: client connection -> digest of the request it sent */
  private readonly connDigest = new Map<string, string>();
  /** overload mix: request digest -> honest nodes that refused it (REQNACK POOL_OVERLOADED) */
  private readonly refusals = new Map<string, Set<string>>();
  /** overload mix: requests f+1 honest nodes refused (digest -> those nodes): the client's answer is "refused", so none may be ordered */
  private readonly refusedByPool = new Map<string, Set<string>>();
  /** nodes with an armed crash in their writes -> how long they stay down */
  private readonly tearing = new Map<SimNode<E>, number>();

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
    this.record = {
      names: this.names,
      byzantine: new Set(),
      submitted: [],
      orderedRequests: 0,
      orderedBatches: 0,
      alarms: [],
      replies: [],
      durability: [],
      footprint: [],
      protocol: [],
    };
    this.network = new SimNetwork({
      queue: this.queue,
      rng: netRng,
      mix: this.mix,
      names: this.names,
      nodes: this.nodes,
      healAtMs: this.healAtMs,
      deliver: (target, from, msg) => {
        this.noteDeliveredCheckpoint(from, msg);
        this.apply(target, target.core.handle({ kind: 'nodeMessage', from, msg }));
      },
      onWire: (msg) => this.noteViewChange(msg),
      stats: this.stats,
    });
    for (const name of this.genesisNames) this.nodes.push(this.createNode(name));
    if (this.membership !== undefined) {
      const joiner = this.createNode(this.membership.joiner);
      joiner.started = false;
      this.nodes.push(joiner);
      this.joining = { plan: this.membership, joiner };
    }
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
      stop: (node) => this.stop(node),
      tear: (node, writes, afterLast, downForMs, atFlush) => this.tear(node, writes, afterLast, downForMs, atFlush),
      pause: (node, ms) => {
        node.pausedUntil = Math.max(node.pausedUntil ?? 0, this.queue.now + ms);
        this.stats.pauses++;
      },
      inject: (from, to, msg) => this.network.inject(from, to, msg),
      createUsurper: (alias) => this.createNode(alias, true),
      stats: this.stats,
    };
    if (this.mix.twins) makeTwins(faults);
    if (this.mix.equivocatingPrimary) makeEquivocators(faults);
    scheduleFaults(faults);
  }

  /** Runs `then` after `work` (at once when it is synchronous; before the next event otherwise). */
  private after(work: void | Promise<void>, then: () => void): void {
    if (work instanceof Promise) this.pending.push(work.then(then));
    else then();
  }

  private createNode(name: string, usurper = false): SimNode<E> {
    const node: SimNode<E> = {
      ...(usurper ? { usurper: true } : {}),
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
    let validators = r.validators?.() ?? [...this.genesisNames];
    // a usurper's registry is rotated so that it is the primary of view 0
    if (node.usurper === true) validators = [...validators.slice(validators.indexOf(node.name)), ...validators.slice(0, validators.indexOf(node.name))];
    // a wrongDigest primary executes its own batches under the digest it will put on the wire
    const forging = this.mix.primaryBehaviours?.includes('wrongDigest') === true;
    // overloadFirst: the nodes after the first f+1 have room for everything (they take in what those refuse)
    const i = this.genesisNames.indexOf(node.name);
    const roomy = this.mix.overloadFirst === true && (i < 0 || i > Math.floor((this.genesisNames.length - 1) / 3)) ? { maxRequestQueueSize: 100_000 } : {};
    return new ConsensusCore(
      { name: node.name, validators, ...this.mix.consensus, ...roomy, ...this.opts.consensus },
      {
        executor: forging ? digestForging(r.executor, () => node.byzantine === 'wrongDigest' && node.core?.status().primary === node.name) : r.executor,
        crypto: r.crypto,
        requests: r.requests,
        clock: { now: () => this.queue.now, utcSeconds: () => Math.floor(BASE_UTC + this.queue.now / 1000 + node.skewSec) },
        voteStore: { load: () => node.votes, save: (votes) => (node.votes = votes) },
        ...(this.opts.noVoteJournal === true ? {} : { threePcStore: { load: () => node.threePc, save: (j: ThreePcVoteJournal) => (node.threePc = j) } }),
        refusalMark: { load: () => node.refusalMark, save: (until: number) => (node.refusalMark = until) },
      },
    );
  }

  private crash(node: SimNode<E>): void {
    if (!node.alive) return;
    node.alive = false;
    node.epoch++;
    node.pausedUntil = undefined;
    this.tearing.delete(node);
    this.after(node.replica.crash(), () => undefined);
    this.announce(node.name, false);
  }

  /** Crash-stop: the node is down for the rest of the run. */
  private stop(node: SimNode<E>): void {
    if (node.stopped === true) return;
    node.stopped = true;
    this.stats.crashStops++;
    this.crash(node);
  }

  /**
   * Arms a crash after `writes` more batch writes of the node (without a write within 1.5 s, a
   * plain crash then); the node restarts `downForMs` after the crash.
   */
  private tear(node: SimNode<E>, writes: number, afterLast: boolean, downForMs: number, atFlush = false): boolean {
    if (!node.alive || node.stopped === true || node.replica.armTear === undefined) return false;
    if (atFlush) {
      // the crash comes the instant the node's next flush after a batch write resolves
      if (node.replica.armCrashAtFlush === undefined) return false;
      node.replica.armCrashAtFlush();
    } else node.replica.armTear(writes, afterLast);
    this.tearing.set(node, downForMs);
    const epoch = node.epoch;
    this.queue.schedule(this.queue.now + 1500, () => {
      if (node.epoch !== epoch || !this.tearing.has(node)) return;
      node.replica.armTear?.(undefined);
      this.crashFor(node, downForMs);
    });
    return true;
  }

  private crashFor(node: SimNode<E>, downForMs: number): void {
    this.crash(node);
    this.queue.schedule(this.queue.now + downForMs, () => this.restart(node));
  }

  /** connection events to the other live nodes */
  private announce(alias: string, connected: boolean): void {
    for (const other of this.nodes) {
      if (other.name === alias || !other.alive) continue;
      this.apply(other, other.core.handle({ kind: connected ? 'peerConnected' : 'peerDisconnected', alias }));
    }
  }

  private restart(node: SimNode<E>): void {
    if (node.alive || node.stopped === true) return;
    node.alive = true;
    node.epoch++;
    node.relayed.clear();
    this.stats.restarts++;
    this.after(node.replica.restart(), () => {
      node.executor = node.replica.executor;
      // monotonic state across restarts: nothing a client was answered for is lost
      const acked = this.ackedAudit.get(node.name) ?? 0;
      const size = node.executor.committedSize(3);
      if (size < acked) this.record.durability.push(`durability: ${node.name} restarted with ${size} audit txns but had answered clients for batch ${acked}`);
      node.core = this.createCore(node);
      this.apply(node, node.core.start());
      this.announce(node.name, true);
    });
  }

  /** Runs to completion and checks the invariants (a world whose replicas work synchronously only). */
  run(): SimulationResult {
    this.expectNoPending();
    this.begin();
    this.acknowledge();
    while (this.step()) {
      this.expectNoPending();
      this.acknowledge();
    }
    return this.finish();
  }

  /** Runs to completion and checks the invariants, waiting for the world's asynchronous work between events. */
  async runAsync(): Promise<SimulationResult> {
    try {
      await this.settle();
      this.begin();
      await this.settle();
      while (this.step()) await this.settle();
      // the state of one live honest node equals a replay of its ledgers from genesis
      const witness = this.nodes.find((n) => n.alive && n.started && !this.record.byzantine.has(n.name));
      if (witness !== undefined) {
        const problem = await witness.replica.replayProblem?.();
        if (problem !== undefined) this.record.protocol.push(`state: ${witness.name} ${problem}`);
      }
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
    if (this.pending.length > 0)
      throw new ConsensusError(ConsensusErrorCode.SIMULATION, { reason: 'this simulation world works asynchronously: use runAsync()' });
  }

  /** Waits for the asynchronous work started by the last event and for the writes of the nodes it touched. */
  private async settle(): Promise<void> {
    for (const node of this.touched) {
      const w = node.replica.settle?.();
      if (w !== undefined) this.pending.push(w);
    }
    this.touched.clear();
    await this.drain();
    // a node whose armed crash point was reached crashes now: the writes after it were lost
    for (const [node, downForMs] of [...this.tearing]) {
      if (node.replica.torn?.() !== true) continue;
      this.stats.tornWrites++;
      // a crash at the instant the flush resolved: the node answered its clients before it died
      if (node.replica.tornAtFlush?.() === true) this.acknowledge(node);
      this.crashFor(node, downForMs);
    }
    await this.drain();
    this.acknowledge();
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const work = this.pending;
      this.pending = [];
      await Promise.all(work);
    }
  }

  /** The replies of the last event go out (their writes are durable): the run record keeps them (of `only`, when given). */
  private acknowledge(only?: SimNode<E>): void {
    const rest: typeof this.pendingReplies = [];
    for (const p of this.pendingReplies) {
      if (only !== undefined && p.node !== only) {
        rest.push(p);
        continue;
      }
      if (!p.node.alive || p.node.epoch !== p.epoch) continue;
      for (const r of p.replies) {
        if (r.ledgerId >= 0) this.record.replies.push(r);
        if (r.auditSeqNo > (this.ackedAudit.get(r.node) ?? 0)) this.ackedAudit.set(r.node, r.auditSeqNo);
      }
    }
    this.pendingReplies = rest;
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
    if (this.joining !== undefined) this.scheduleMembership(this.joining.plan, this.joining.joiner, load);
  }

  /** The joiner of the membership mix starts on its own schedule; the stewards' NODE txns follow theirs. */
  private scheduleMembership(plan: MembershipPlan, joiner: SimNode<E>, load: ClientLoadContext): void {
    const reference = (): SimNode<E> => {
      const node = this.nodes.find((n) => n.alive && n.started && n.core.status().validators.includes(n.name));
      if (node === undefined) throw new ConsensusError(ConsensusErrorCode.SIMULATION, { reason: 'membership: no running validator to read the registry of' });
      return node;
    };
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
    if (now - this.lastFootprint >= 500) {
      this.lastFootprint = now;
      this.measureFootprints();
    }
    return true;
  }

  private lastFootprint = 0;

  /** `${ppSeqNo}|${digest}` of PRE-PREPAREs sent by a node as the primary of its view (usurpers excluded) */
  private readonly proposed = new Set<string>();
  /** digests of PRE-PREPAREs only a usurper sent */
  private readonly usurped = new Set<string>();
  /** `${seqNoEnd}|${digest}` of CHECKPOINTs honest nodes sent */
  private readonly honestCheckpoints = new Set<string>();
  /** `${ppSeqNo}|${digest}|${state root}|${txn root}|${audit root}` of PRE-PREPAREs a primary's core made */
  private readonly proposedRoots = new Set<string>();
  /** VIEW_CHANGE bodies put on the wire, by digest (a NEW_VIEW names them by digest) */
  private readonly viewChanges = new Map<string, ViewChange>();
  private readonly seenViewChanges = new WeakSet<object>();

  private noteViewChange(msg: unknown): void {
    if (typeof msg !== 'object' || msg === null || (msg as { op?: unknown }).op !== 'VIEW_CHANGE' || this.seenViewChanges.has(msg)) return;
    this.seenViewChanges.add(msg);
    try {
      this.viewChanges.set(viewChangeDigest(msg as ViewChange), msg as ViewChange);
    } catch {
      // a malformed body (garbage) names no VIEW_CHANGE
    }
  }

  /**
   * Protocol oracles on what nodes broadcast (consensus.md §3, §6.5): no honest node PREPAREs a
   * PRE-PREPARE that only a non-primary sent; the NEW_VIEW of an honest primary names a checkpoint
   * that honest nodes made and batches that a primary proposed.
   */
  private watch(node: SimNode<E>, msg: NodeMessage): void {
    const honest = !this.record.byzantine.has(node.name);
    const protocol = this.record.protocol;
    const note = (v: string): void => {
      if (protocol.length < 20 && !protocol.includes(v)) protocol.push(v);
    };
    switch (msg.op) {
      case 'PREPREPARE': {
        const k = `${msg.ppSeqNo}|${msg.digest}`;
        if (node.usurper === true) {
          if (!this.proposed.has(k)) this.usurped.add(msg.digest);
        } else if (node.core.status().primary === node.name) {
          this.proposed.add(k);
          this.proposedRoots.add(`${k}|${msg.stateRootHash}|${msg.txnRootHash}|${msg.auditTxnRootHash}`);
          this.usurped.delete(msg.digest);
        }
        break;
      }
      case 'PREPARE':
        if (!honest) break;
        if (this.usurped.has(msg.digest))
          note(`protocol: ${node.name} prepared batch ${msg.ppSeqNo} of view ${msg.viewNo}, proposed by a node that is not its primary`);
        else if (!this.proposedRoots.has(`${msg.ppSeqNo}|${msg.digest}|${msg.stateRootHash}|${msg.txnRootHash}|${msg.auditTxnRootHash}`)) {
          // a backup PREPAREs what it executed itself: a digest or root that no primary proposed was taken on trust
          note(`protocol: ${node.name} prepared batch ${msg.ppSeqNo} of view ${msg.viewNo} with a digest or roots that no primary proposed`);
        }
        break;
      case 'CHECKPOINT':
        if (honest) this.honestCheckpoints.add(`${msg.seqNoEnd}|${msg.digest}`);
        if (honest && node.usurper !== true) this.ownCheckpoints.set(`${node.name}|${msg.seqNoEnd}`, msg.digest);
        break;
      case 'NEW_VIEW':
        if (!honest) break;
        if (msg.checkpoint.seqNoEnd > 0 && !this.honestCheckpoints.has(`${msg.checkpoint.seqNoEnd}|${msg.checkpoint.digest}`)) {
          note(`protocol: ${node.name}'s NEW_VIEW(${msg.viewNo}) names checkpoint ${msg.checkpoint.seqNoEnd} that no honest node made`);
        }
        for (const b of msg.batches) {
          if (!this.proposed.has(`${b.pp_seq_no}|${b.pp_digest}`))
            note(`protocol: ${node.name}'s NEW_VIEW(${msg.viewNo}) names batch ${b.pp_seq_no} that no primary proposed`);
        }
        {
          // the selection of consensus.md §6.5, recomputed from the VIEW_CHANGEs it names
          const bodies = msg.viewChanges.map(([, digest]) => this.viewChanges.get(digest));
          if (bodies.every((b) => b !== undefined)) {
            const logSize = this.opts.consensus?.logSize ?? this.mix.consensus?.logSize ?? defaultConsensusOptions.logSize;
            const problem = newViewProblem(msg, bodies as ViewChange[], node.core.status().validators.length, logSize);
            if (problem !== undefined) note(`protocol: ${node.name}'s NEW_VIEW(${msg.viewNo}): ${problem}`);
          }
        }
        break;
      default:
        break;
    }
  }

  /** Resource bounds: every honest core's maps, sets and arrays stay under the run's footprint bound. */
  private measureFootprints(): void {
    const bound = footprintBound(this.names.length, this.opts.requests ?? this.mix.requests);
    for (const node of this.nodes) {
      if (!node.alive || !node.started || this.record.byzantine.has(node.name) || node.core === undefined) continue;
      const size = coreFootprint(node.core, [node.executor, node.replica.crypto, node.replica.requests]);
      if (size > this.stats.maxFootprint) this.stats.maxFootprint = size;
      if (size > bound && !this.record.footprint.some((v) => v.startsWith(`resources: ${node.name} `))) {
        this.record.footprint.push(`resources: ${node.name} holds ${size} entries in its consensus maps and queues at ${this.queue.now} ms (bound ${bound})`);
      }
    }
  }

  private finish(): SimulationResult {
    const violations = this.runaway !== undefined ? [this.runaway] : [];
    this.measureFootprints();
    violations.push(
      ...checkRun(this.record, this.nodes, {
        checkLiveness: this.mix.checkLiveness,
        verifyMulti: (node, p, value, sig) => (node as SimNode<E>).replica.crypto.blsVerifyMulti(p, value, sig),
      }),
    );
    if (this.mix.overload === true) violations.push(...this.overloadProblems());
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
      adversary: { ...this.stats },
    };
  }

  /**
   * A client takes f+1 refusals for a full queue as the pool's answer (#16): such a request need not
   * be ordered (liveness), and must not be (checked at the end).
   */
  private noteRefusal(alias: string, connId: string): void {
    const digest = this.connDigest.get(connId);
    if (digest === undefined) return;
    let by = this.refusals.get(digest);
    if (by === undefined) this.refusals.set(digest, (by = new Set()));
    by.add(alias);
    // with crashes, a write one node refused may wait for a node that is down, and be dropped meanwhile: undecided
    // (the client's deadline answers it), it need not be ordered, and must not be once f+1 refused it
    if (this.mix.crashes || this.mix.crashPrimary) for (const s of this.record.submitted) if (s.digest === digest) s.mustOrder = false;
    if (by.size < Math.floor((this.opts.nodes - 1) / 3) + 1 || this.refusedByPool.has(digest)) return;
    this.refusedByPool.set(digest, by);
    for (const s of this.record.submitted) if (s.digest === digest) s.mustOrder = false;
  }

  /** overload mix: what overload alone did wrong (a refused request ordered, a view change) */
  private overloadProblems(): string[] {
    const out: string[] = [];
    const seen = new Set<string>();
    for (const r of this.record.replies) {
      const by = this.refusedByPool.get(r.digest);
      if (by === undefined || seen.has(r.digest)) continue;
      seen.add(r.digest);
      out.push(
        `overload: ${r.node} ordered request ${r.digest.slice(0, 12)} that ${[...by].join(', ')} refused for a full queue (f+1 refusals are the pool's answer)`,
      );
    }
    const honest = this.nodes.filter((n) => !this.record.byzantine.has(n.name));
    const view = Math.max(...honest.map((n) => n.core.status().viewNo));
    if (view > 0 && !this.mix.crashes && !this.mix.crashPrimary) out.push(`overload: the view changed (to ${view}) with no fault but full request queues`);
    return out;
  }

  /** every valid request committed everywhere and every honest node at the same audit size */
  private settled(): boolean {
    const honest = this.nodes.filter((n) => !this.record.byzantine.has(n.name) && n.stopped !== true);
    if (honest.some((n) => !n.alive || !n.started)) return false;
    const size = honest[0].executor.committedSize(3);
    if (honest.some((n) => n.executor.committedSize(3) !== size)) return false;
    return this.record.submitted.every((s) => !s.mustOrder || honest.every((n) => n.executor.isPayloadCommitted(s.payloadDigest)));
  }

  /** A client sends a request to every running node (of one side, for twins). */
  private submit(connId: string, request: ClientRequestBody, side?: 'A' | 'B'): void {
    if (this.mix.overload === true) this.connDigest.set(connId, this.pool.workload.info(request).digest);
    // a censoring primary never lets one request in five in (neither from the client nor propagated)
    for (const node of this.nodes) if (node.censored !== undefined && this.rng.chance(0.2)) node.censored.add(request);
    for (const node of this.nodes) {
      if (!node.alive || !node.started || (side !== undefined && node.side !== side)) continue;
      if (node.censored?.has(request) === true) continue;
      this.apply(node, node.core.handle({ kind: 'clientRequest', connId, request }));
    }
  }

  private apply(node: SimNode<E>, effects: ConsensusEffect[]): void {
    const epoch = node.epoch;
    this.touched.add(node);
    for (const e of effects) {
      switch (e.kind) {
        case 'broadcast':
          this.watch(node, e.msg);
          this.network.broadcast(node, e.msg);
          break;
        case 'send':
          this.network.send(node, e.to, e.msg);
          break;
        case 'setTimer': {
          const fire = (): void => {
            if (!node.alive || node.epoch !== epoch) return;
            if (node.pausedUntil !== undefined && node.pausedUntil > this.queue.now) this.queue.schedule(node.pausedUntil, fire);
            else this.apply(node, node.core.handle({ kind: 'timer', id: e.id }));
          };
          this.queue.schedule(this.queue.now + e.delayMs, fire);
          break;
        }
        case 'ordered':
          if (!this.record.byzantine.has(node.name)) {
            const replies = e.replies.map((r) => ({ node: node.name, ledgerId: e.ledgerId, seqNo: r.seqNo, digest: r.digest, auditSeqNo: e.ppSeqNo }));
            // the batch itself is acknowledged too (its audit txn), replies or not
            replies.push({ node: node.name, ledgerId: -1, seqNo: 0, digest: '', auditSeqNo: e.ppSeqNo });
            this.pendingReplies.push({ node, epoch, replies });
          }
          if (this.downWindow !== undefined && this.queue.now >= this.downWindow[0] && this.queue.now < this.downWindow[1]) this.orderedWhileDown++;
          if (!this.record.byzantine.has(node.name)) {
            this.record.orderedBatches++;
            this.record.orderedRequests += e.replies.length;
          }
          break;
        case 'alarm':
          this.record.alarms.push(`${node.name}: ${e.reason}`);
          break;
        case 'clientNack':
          if (this.mix.overload === true && e.code === NACK_OVERLOADED && !this.record.byzantine.has(node.name)) this.noteRefusal(node.name, e.connId);
          break;
        case 'suspicion': {
          const evidence =
            EVIDENCE.has(e.code) ||
            (NEW_VIEW_EVIDENCE.has(e.code) && !this.mix.membership && this.mix.byzantineNextPrimary !== true && this.mix.flood !== true);
          if (evidence && !this.record.byzantine.has(node.name) && !this.record.byzantine.has(e.peer)) {
            const v = `protocol: ${node.name} accused ${e.peer}, an honest node, of misbehaviour ${e.code}`;
            if (this.record.protocol.length < 20 && !this.record.protocol.includes(v)) this.record.protocol.push(v);
          }
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
    this.observeStable(node);
  }

  /** `${seqNoEnd}|${digest}` -> senders of a CHECKPOINT delivered to some node */
  private readonly deliveredCheckpoints = new Map<string, Set<string>>();
  /** `${node}|${seqNoEnd}` -> digest of the node's own CHECKPOINT */
  private readonly ownCheckpoints = new Map<string, string | null>();
  /** what each core looked like after its last event: stable checkpoint, catching up, waiting for NEW_VIEW */
  private readonly stableSeen = new WeakMap<object, { stable: number; catchingUp: boolean; waiting: boolean }>();

  private noteDeliveredCheckpoint(from: string, msg: unknown): void {
    if (typeof msg !== 'object' || msg === null) return;
    const m = msg as { op?: unknown; seqNoEnd?: unknown; digest?: unknown };
    if (m.op !== 'CHECKPOINT' || typeof m.seqNoEnd !== 'number') return;
    const k = `${m.seqNoEnd}|${String(m.digest)}`;
    let by = this.deliveredCheckpoints.get(k);
    if (by === undefined) this.deliveredCheckpoints.set(k, (by = new Set()));
    by.add(from);
  }

  /**
   * The checkpoint oracle: an honest node makes a checkpoint stable only once n-f validators (itself
   * included) sent that CHECKPOINT, counted where it was delivered. Exempt, as the protocol makes
   * them stable without such a quorum: the checkpoint restored from the ledger at a restart or at the
   * end of a catch-up, and a NEW_VIEW's checkpoint (held by f+1) taken when the node enters the view.
   */
  private observeStable(node: SimNode<E>): void {
    if (node.usurper === true || this.record.byzantine.has(node.name) || node.core === undefined) return;
    const core = node.core as unknown as {
      checkpoints: { stableCheckpoint: number };
      ctx: { catchingUp: boolean; waitingForNewView: boolean; validators: readonly string[] };
    };
    const now = { stable: core.checkpoints.stableCheckpoint, catchingUp: core.ctx.catchingUp, waiting: core.ctx.waitingForNewView };
    const before = this.stableSeen.get(node.core);
    this.stableSeen.set(node.core, now);
    if (before === undefined || now.stable <= before.stable || before.catchingUp || now.catchingUp || before.waiting) return;
    const own = this.ownCheckpoints.get(`${node.name}|${now.stable}`);
    if (own === undefined) return;
    const validators = core.ctx.validators;
    const senders = new Set([node.name]);
    for (const a of this.deliveredCheckpoints.get(`${now.stable}|${String(own)}`) ?? []) if (validators.includes(a)) senders.add(a);
    const quorum = validators.length - Math.floor((validators.length - 1) / 3);
    if (senders.size >= quorum) return;
    const v = `protocol: ${node.name} made checkpoint ${now.stable} stable with ${senders.size} matching CHECKPOINTs sent (${[...senders].join(', ')}), n-f = ${quorum}`;
    const protocol = this.record.protocol;
    if (protocol.length < 20 && !protocol.includes(v)) protocol.push(v);
  }
}

/** The executor of a `wrongDigest` primary: while `active`, batches are applied under the forged digest. */
function digestForging<X extends object>(ex: X, active: () => boolean): X {
  return new Proxy(ex, {
    get(target, prop) {
      const v: unknown = Reflect.get(target, prop, target);
      if (typeof v !== 'function') return v;
      const fn = v as (...args: unknown[]) => unknown;
      if (prop === 'applyBatch') return (input: ApplyBatchInput) => fn.call(target, active() ? { ...input, digest: forgedDigest(input.digest) } : input);
      return fn.bind(target);
    },
  });
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
