// The simulated network of a run (consensus.md §12.2): per-message latency, drops, duplicates and
// slow tails while the faults last, partitions, Byzantine rewriting of a sender's messages, twins
// that talk to one side of the pool, and the gossip relays of PRE-PREPAREs. Every choice comes from
// the run's network PRNG, in event order, so a run stays reproducible from its seed.
import type { MultiSigTuple, MultiSignatureValue, NodeMessage, PrePrepare } from '../messages.js';
import type { SimExecutor } from './backend.js';
import { byzantineTransform, isEquivocation } from './byzantine.js';
import type { EventQueue } from './event-queue.js';
import type { FaultMix } from './faults.js';
import type { Prng } from './prng.js';
import type { AdversaryStats, SimNode } from './sim-run.js';

/** What the network needs from the simulation around it. */
export interface SimNetworkContext<E extends SimExecutor> {
  readonly queue: EventQueue;
  /** the network's own PRNG (forked from the run's) */
  readonly rng: Prng;
  readonly mix: FaultMix;
  /** every pool node alias */
  readonly names: readonly string[];
  /** every incarnation (twins share an alias) */
  readonly nodes: readonly SimNode<E>[];
  /** drops, partitions, duplicates and slow tails end at this simulated time */
  readonly healAtMs: number;
  /** hands a delivered message to the target's core */
  deliver(target: SimNode<E>, origin: string, msg: unknown): void;
  /** every message a node puts on the wire, after its Byzantine rewriting (the simulator's oracles) */
  onWire?(msg: unknown): void;
  readonly stats: AdversaryStats;
}

/** PRE-PREPAREs a node relays are remembered up to this many, then forgotten at once */
const RELAY_MEMORY = 4096;

export class SimNetwork<E extends SimExecutor> {
  private partition: Set<string> | null = null;
  /** deliveries attempted (dropped ones included) */
  messages = 0;

  constructor(private readonly ctx: SimNetworkContext<E>) {}

  /** Cuts the nodes of `side` off from the others (until `heal`). */
  cut(side: Set<string>): void {
    this.partition = side;
  }

  heal(): void {
    this.partition = null;
  }

  /** A message of `from` to every other pool node (gossip: receivers relay PRE-PREPAREs). */
  broadcast(from: SimNode<E>, msg: NodeMessage): void {
    if (msg.op === 'PREPREPARE') {
      if (from.usurper === true) this.ctx.stats.usurpedPrePrepares++;
      else if (from.twin === true && from.side === 'B') this.ctx.stats.equivocations++;
    }
    for (const to of this.ctx.names) if (to !== from.name) this.send(from, to, msg, true);
  }

  /** `from` puts a message of its own making on the wire to `to` (floods): no rewriting, no gossip. */
  inject(from: SimNode<E>, to: string, msg: unknown): void {
    this.ctx.stats.floodMessages++;
    for (const target of this.incarnations(to, from)) this.transmit(from, from.name, target, msg, false);
  }

  /** PRE-PREPAREs of a forging primary -> their version with a short aggregate (one per message, for every recipient) */
  private readonly shortened = new WeakMap<object, PrePrepare | null>();

  /**
   * A forging primary's strongest forgery: a valid aggregate of n-f-1 real COMMIT shares it heard,
   * in place of the first multi-signature of its PRE-PREPARE (null when it cannot make one).
   */
  private shortAggregate(from: SimNode<E>, pp: PrePrepare): PrePrepare | null {
    const known = this.shortened.get(pp);
    if (known !== undefined) return known;
    let out: PrePrepare | null = null;
    const multiSigs = pp.blsMultiSigs;
    const tuple = multiSigs?.[0];
    if (multiSigs !== undefined && tuple !== undefined && this.ctx.rng.chance(0.7)) {
      const [, parts, [lid, sr, pr, tr, ts]] = tuple;
      const value: MultiSignatureValue = { ledger_id: lid, state_root_hash: sr, pool_state_root_hash: pr, txn_root_hash: tr, timestamp: ts };
      const shares = new Map<string, string>();
      for (const c of from.heardCommits ?? []) {
        const share = c.blsSigs[String(lid)];
        if (share === undefined || shares.has(c.from) || !parts.includes(c.from)) continue;
        if (from.replica.crypto.blsVerifyShare(c.from, value, share)) shares.set(c.from, share);
      }
      const picked = [...shares].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).slice(0, parts.length - 1);
      const chosen = picked.map(([a]) => a);
      const agg = chosen.length === parts.length - 1 && chosen.length > 0 ? from.replica.crypto.blsAggregate(picked.map(([, share]) => share)) : undefined;
      if (agg !== undefined) out = { ...pp, blsMultiSigs: [[agg, chosen, tuple[2]] as MultiSigTuple, ...multiSigs.slice(1)] };
    }
    this.shortened.set(pp, out);
    return out;
  }

  /** A message of `from` to `to`; a Byzantine sender's behaviour rewrites it first. */
  send(from: SimNode<E>, to: string, msg: NodeMessage, gossip = false): void {
    let kind = from.usurper === true ? 'usurper' : from.byzantine;
    if (kind === 'badMultiSig' && this.ctx.queue.now < (from.forgeFromMs ?? 0)) kind = undefined;
    const short = kind === 'badMultiSig' && msg.op === 'PREPREPARE' ? this.shortAggregate(from, msg) : null;
    if (short !== null) this.ctx.stats.equivocations++;
    const outgoing: unknown[] =
      short !== null ? [short] : kind === undefined ? [msg] : byzantineTransform(kind, msg, to, this.ctx.names, this.ctx.rng, from.history);
    if (kind !== undefined && isEquivocation(kind, msg, outgoing)) this.ctx.stats.equivocations++;
    if (from.byzantine !== undefined && msg.op !== 'MESSAGE_RESPONSE') {
      from.history.push(msg);
      if (from.history.length > 200) from.history.shift();
    }
    for (const m of outgoing) {
      this.ctx.onWire?.(m);
      for (const target of this.incarnations(to, from)) this.transmit(from, from.name, target, m, gossip);
    }
  }

  /** The running incarnations of `alias` that `from` can reach (twins talk to their own side only). */
  private incarnations(alias: string, from: SimNode<E>): SimNode<E>[] {
    return this.ctx.nodes.filter((n) => n.name === alias && n.started && this.linked(from, n));
  }

  /**
   * Twins of the negative control talk to their side only, and so do the honest nodes of each side.
   * An equivocating twin (`twin`) hears everyone but speaks to its side only; honest nodes talk to
   * each other freely.
   */
  private linked(from: SimNode<E>, to: SimNode<E>): boolean {
    if (from.side === undefined || to.side === undefined || from.side === to.side) return true;
    return this.ctx.mix.twins ? false : from.twin !== true;
  }

  /**
   * One delivery over a link. `origin` is the consensus sender (the gossip originator); `via` the
   * node whose link carries it (the originator, or a relaying peer).
   */
  private transmit(via: SimNode<E>, origin: string, target: SimNode<E>, msg: unknown, gossip: boolean): void {
    const { rng, queue, mix } = this.ctx;
    const now = queue.now;
    const chaos = now < this.ctx.healAtMs;
    this.messages++;
    if (chaos) {
      if (this.partition !== null && this.partition.has(via.name) !== this.partition.has(target.name)) return;
      if (rng.chance(mix.drop)) return;
    }
    const [lo, hi] = chaos ? mix.latencyMs : [1, 4];
    if (target.censored !== undefined && isCensored(target.censored, msg)) return;
    const copies = chaos && rng.chance(mix.duplicate) ? 2 : 1;
    const slow = via.slowMs !== undefined && origin === via.name && (msg as { op?: unknown } | null)?.op === 'PREPREPARE' ? via.slowMs : 0;
    for (let c = 0; c < copies; c++) {
      const delay = rng.int(lo, hi) + (chaos && rng.chance(mix.slowTail) ? rng.int(hi, hi * 20) : 0) + slow;
      const epoch = target.epoch;
      const arrive = (): void => {
        if (!target.alive || target.epoch !== epoch) return;
        // a paused process reads its socket when it resumes
        if (target.pausedUntil !== undefined && target.pausedUntil > queue.now) {
          queue.schedule(target.pausedUntil, arrive);
          return;
        }
        if (target.byzantine === 'badMultiSig') hearCommit(target, origin, msg);
        this.ctx.deliver(target, origin, msg);
        if (gossip) this.relay(target, origin, msg);
      };
      queue.schedule(now + delay, arrive);
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
    if (node.relayed.size > RELAY_MEMORY) node.relayed.clear();
    for (const alias of this.ctx.names) {
      if (alias === node.name || alias === origin) continue;
      for (const target of this.incarnations(alias, node)) this.transmit(node, origin, target, msg, false);
    }
  }
}

/** A PROPAGATE of a request the censoring target never lets in. */
function isCensored(censored: WeakSet<object>, msg: unknown): boolean {
  if (typeof msg !== 'object' || msg === null || (msg as { op?: unknown }).op !== 'PROPAGATE') return false;
  const request = (msg as { request?: unknown }).request;
  return typeof request === 'object' && request !== null && censored.has(request);
}

/** A forging primary keeps the COMMIT shares it hears (the last 200) to aggregate short multi-signatures. */
function hearCommit(node: { heardCommits?: { from: string; blsSigs: Record<string, string> }[] }, from: string, msg: unknown): void {
  if (typeof msg !== 'object' || msg === null || (msg as { op?: unknown }).op !== 'COMMIT') return;
  const blsSigs = (msg as { blsSigs?: unknown }).blsSigs;
  if (typeof blsSigs !== 'object' || blsSigs === null) return;
  node.heardCommits ??= [];
  node.heardCommits.push({ from, blsSigs: blsSigs as Record<string, string> });
  if (node.heardCommits.length > 200) node.heardCommits.shift();
}
