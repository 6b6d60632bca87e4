// The faults of one run, drawn from its PRNG when the run is built (consensus.md §11, §12.2):
// crashes and restarts (the primary's included), Byzantine roles, f+1 nodes down together, clock
// skew and jumps, partitions, a leecher that must catch up from lying seeders, and the twins of
// the negative control. Every fault mix keeps at most f nodes faulty, except the two negative
// controls (fPlusOneDown, twins).
import type { SimExecutor } from './backend.js';
import { BACKUP_BEHAVIOURS, type ByzantineKind, PRIMARY_BEHAVIOURS } from './byzantine.js';
import { floodBurst } from './floods.js';
import type { EventQueue } from './event-queue.js';
import type { FaultMix } from './faults.js';
import type { Prng } from './prng.js';
import type { AdversaryStats, SimNode } from './sim-run.js';

/** What the fault plan needs from the simulation it schedules faults in. */
export interface FaultPlanContext<E extends SimExecutor> {
  readonly nodeCount: number;
  readonly mix: FaultMix;
  readonly rng: Prng;
  readonly queue: EventQueue;
  /** every incarnation built so far: the genesis validators first */
  readonly nodes: SimNode<E>[];
  readonly genesisNames: readonly string[];
  readonly healAtMs: number;
  /** aliases of the faulty-by-design nodes (the checkers ignore their state) */
  readonly byzantine: Set<string>;
  /** a second incarnation of `alias` over its own storage (twins) */
  createNode(alias: string): SimNode<E>;
  crash(node: SimNode<E>): void;
  restart(node: SimNode<E>): void;
  cut(side: Set<string>): void;
  heal(): void;
  /** the interval in which more than f nodes are down */
  downWindow(from: number, to: number): void;
  /** the node stops for good (liveness is checked without it) */
  stop(node: SimNode<E>): void;
  /** the node crashes after `writes` more batch writes (in the middle of an event's writes, or right after the last with `afterLast`); false when its world cannot */
  tear(node: SimNode<E>, writes: number, afterLast: boolean, downForMs: number, atFlush?: boolean): boolean;
  /** deliveries and timers of the node wait `ms` (a stopped process resumed) */
  pause(node: SimNode<E>, ms: number): void;
  /** `from` puts `msg` on the wire to `to` (a flood) */
  inject(from: SimNode<E>, to: string, msg: unknown): void;
  /** a second incarnation of `alias` whose core believes it is the primary of view 0 */
  createUsurper(alias: string): SimNode<E>;
  readonly stats: AdversaryStats;
}

const faultsTolerated = (n: number): number => Math.floor((n - 1) / 3);

/**
 * Negative control (consensus.md §11 row 18): f+1 nodes (the view-0 primary and the last f
 * validators) get a twin; each incarnation talks to one side, and the honest nodes are split
 * between the sides so that each side holds n-f nodes and orders on its own.
 */
export function makeTwins<E extends SimExecutor>(ctx: FaultPlanContext<E>): void {
  const n = ctx.nodeCount;
  const f = faultsTolerated(n);
  const twinned = [ctx.genesisNames[0], ...ctx.genesisNames.slice(n - f)];
  const honest = ctx.genesisNames.filter((a) => !twinned.includes(a));
  const half = Math.ceil(honest.length / 2);
  for (const node of ctx.nodes) {
    if (twinned.includes(node.name)) {
      node.side = 'A';
      ctx.byzantine.add(node.name);
    } else node.side = honest.indexOf(node.name) < half ? 'A' : 'B';
  }
  for (const alias of twinned) {
    const twin = ctx.createNode(alias);
    twin.side = 'B';
    ctx.nodes.push(twin);
  }
}

/**
 * Real equivocation within the fault model: the primary of view 0 (and at n=7 one colluding
 * backup) run as twins, each incarnation talking to its own half of the honest nodes; the honest
 * nodes talk to each other freely. Each twin executes its own batches, so both PRE-PREPAREs of a
 * key are valid, with matching COMMIT shares; the second twin's clock jumps 1-3 s ahead so that
 * their batches differ in ppTime (hence digest) even when they hold the same requests; they part at a
 * random time, so that the equivocation meets batches in flight.
 */
export function makeEquivocators<E extends SimExecutor>(ctx: FaultPlanContext<E>): void {
  const n = ctx.nodeCount;
  const f = faultsTolerated(n);
  const twinned = [ctx.genesisNames[0], ...ctx.rng.shuffle(ctx.genesisNames.slice(1)).slice(0, f - 1)];
  const honest = ctx.genesisNames.filter((a) => !twinned.includes(a));
  const half = ctx.rng.int(1, honest.length - 1);
  const sides = ctx.rng.shuffle(honest.slice());
  for (const node of ctx.nodes) {
    if (twinned.includes(node.name)) {
      node.side = 'A';
      node.twin = true;
      ctx.byzantine.add(node.name);
    } else if (honest.includes(node.name)) node.side = sides.indexOf(node.name) < half ? 'A' : 'B';
  }
  for (const alias of twinned) {
    const twin = ctx.createNode(alias);
    twin.side = 'B';
    twin.twin = true;
    // identical twins until their clocks part: from then on each PRE-PREPARE exists in two valid versions
    const jump = ctx.rng.int(1, 3);
    ctx.queue.schedule(ctx.rng.int(100, Math.max(200, ctx.healAtMs - 1000)), () => (twin.skewSec += jump));
    ctx.nodes.push(twin);
  }
}

/** Draws the run's faults and schedules them on the event queue. */
export function scheduleFaults<E extends SimExecutor>(ctx: FaultPlanContext<E>): void {
  const { mix, rng, queue, healAtMs } = ctx;
  const f = faultsTolerated(ctx.nodeCount);
  const at = (time: number, fn: () => void): void => queue.schedule(time, fn);
  const primary = ctx.nodes[0];
  // crashes may hit any node (the primary included: view change); Byzantine roles are assigned below
  const genesis = ctx.nodes.slice(0, ctx.nodeCount);
  const backups = rng.shuffle(mix.crashes ? genesis.slice() : genesis.slice(1));
  let budget = Math.min(f, mix.faultyNodes === 'f' ? f : mix.faultyNodes);
  if (mix.fPlusOneDown) {
    const down = rng.int(300, 1000);
    const back = rng.int(3000, 4500);
    for (const node of backups.filter((n) => n !== primary).slice(0, f + 1)) {
      at(down, () => ctx.crash(node));
      at(back, () => ctx.restart(node));
    }
    ctx.downWindow(down + 500, back);
  }
  if (mix.crashPrimary && budget > 0) {
    const down = rng.int(300, 1500);
    at(down, () => ctx.crash(primary));
    at(down + rng.int(4000, 7000), () => ctx.restart(primary));
    budget--;
  }
  if (mix.equivocatingPrimary) budget = 0;
  // with one faulty node to spend, the usurper and the Byzantine primary take turns
  const skipPrimary = mix.usurper === true && mix.byzantinePrimary && budget < 2 && rng.chance(0.5);
  if (mix.byzantinePrimary && budget > 0 && !skipPrimary) {
    primary.byzantine = rng.pick((mix.primaryBehaviours ?? PRIMARY_BEHAVIOURS) as readonly ByzantineKind[]);
    // a forger orders honestly for a while first: it has real shares to aggregate short
    if (primary.byzantine === 'badMultiSig') primary.forgeFromMs = rng.int(300, 2500);
    ctx.byzantine.add(primary.name);
    budget--;
  }
  if (mix.byzantineNextPrimary && budget > 0) {
    const next = ctx.nodes[1];
    next.byzantine = 'badNewView';
    ctx.byzantine.add(next.name);
    budget--;
  }
  if (mix.usurper && budget > 0) {
    const alias = rng.pick(genesis.slice(1).filter((x) => x.byzantine === undefined)).name;
    const usurper = ctx.createUsurper(alias);
    ctx.nodes.push(usurper);
    // a primary slower than the usurper: the usurper's PRE-PREPARE for a key arrives first
    primary.slowMs = rng.int(30, 300);
    ctx.byzantine.add(alias);
    budget--;
  }
  if (mix.lazyPrimary && budget > 0) scheduleLazyPrimary(ctx, primary);
  if (mix.lazyPrimary) budget = 0;
  if (mix.flood) {
    for (const node of rng.shuffle(genesis.slice(1)).slice(0, budget)) scheduleFlood(ctx, node);
    budget = 0;
  }
  if (mix.crashStop) {
    const stopped = [primary, ...rng.shuffle(backups.filter((x) => x !== primary))].slice(0, rng.int(1, Math.max(1, budget)));
    for (const node of stopped) at(rng.int(200, healAtMs - 2000), () => ctx.stop(node));
    // another node lags behind: cut off for a few seconds, it must catch up (F1)
    const lagging = rng.pick(genesis.filter((x) => !stopped.includes(x)));
    const from = rng.int(100, healAtMs / 2);
    at(from, () => ctx.cut(new Set([lagging.name])));
    at(Math.min(healAtMs - 100, from + rng.int(1500, 4000)), () => ctx.heal());
    budget = 0;
  }
  if (mix.tornWrites) scheduleTears(ctx);
  if (mix.crashAtFlush === true) scheduleTears(ctx, true);
  // a VIEW_CHANGE forger is not the primary of view 1 (an honest primary must build the NEW_VIEW from its forgeries)
  // with a paused next primary, neither the primary of view 1 nor that of view 2 is Byzantine
  const spared = mix.pauseNextPrimary === true ? [ctx.nodes[1], ctx.nodes[2]] : mix.backupBehaviours?.includes('vcForge') === true ? [ctx.nodes[1]] : [];
  const byzantineOrder = spared.length > 0 ? [...backups.filter((x) => !spared.includes(x)), ...backups.filter((x) => spared.includes(x))] : backups;
  for (const node of byzantineOrder) {
    if (budget <= 0) break;
    budget--;
    if (mix.byzantineBackups && node !== primary && (!mix.crashes || rng.chance(0.5))) {
      node.byzantine = rng.pick((mix.backupBehaviours ?? BACKUP_BEHAVIOURS) as readonly ByzantineKind[]);
      ctx.byzantine.add(node.name);
    } else if (mix.crashes) {
      const down = rng.int(200, Math.max(300, healAtMs - 3000));
      const downFor = rng.int(300, Math.max(400, healAtMs - down - 500));
      at(down, () => ctx.crash(node));
      at(down + downFor, () => ctx.restart(node));
    }
  }
  for (const node of ctx.nodes) {
    if (mix.skewSec > 0) node.skewSec = rng.int(-mix.skewSec, mix.skewSec);
  }
  let cutAt = 0;
  if (mix.partitions) {
    // an isolated primary stays cut off until the heal, for at least 4.9 s: requests arrive while it
    // cannot propose, and the monitor (PROGRESS_TIMEOUT) has the time to replace it
    const from = mix.isolatePrimary ? rng.int(100, Math.max(100, healAtMs - 5000)) : rng.int(100, healAtMs / 2);
    const dur = mix.isolatePrimary ? healAtMs - from - 100 : rng.int(200, healAtMs - from - 100);
    const side = mix.isolatePrimary
      ? new Set([ctx.genesisNames[0]])
      : new Set(rng.shuffle([...ctx.genesisNames]).slice(0, rng.int(1, Math.floor(ctx.nodeCount / 2))));
    at(from, () => ctx.cut(side));
    at(from + dur, () => ctx.heal());
    cutAt = from;
  }
  if (mix.pauseNextPrimary === true) {
    // the primary of view 1 stops for 5-6 s once the pool is in view 1 (it then changes view again)
    const next = ctx.nodes[1];
    const ms = rng.int(5000, 6000);
    at(cutAt + rng.int(3000, 4000), () => ctx.pause(next, ms));
  }
  if (mix.lyingSeeder) {
    // an honest backup misses most of the load and catches up from seeders that include the liar
    const leecher = rng.pick(genesis.slice(1).filter((n) => n.byzantine === undefined));
    const down = rng.int(200, 800);
    at(down, () => ctx.crash(leecher));
    at(rng.int(2500, healAtMs - 200), () => ctx.restart(leecher));
  }
  if (mix.clockJump) {
    // one node's wall clock jumps (within or beyond ACCEPTABLE_DEVIATION_PREPREPARE_SECS), and may jump back
    const node = rng.pick(genesis);
    const jump = rng.int(30, 150) * (rng.chance(0.5) ? 1 : -1);
    const when = rng.int(200, healAtMs / 2);
    at(when, () => (node.skewSec += jump));
    if (rng.chance(0.5)) at(rng.int(when + 200, healAtMs), () => (node.skewSec -= jump));
  }
}

/**
 * Crashes in the middle of writes: every 300-900 ms until the heal, one live node (a catching-up
 * one half of the time when there is one) crashes after 0-2 more batch writes — between the
 * writes of one commit, between catch-up phases, or after the commit and before the reply (or
 * plainly, when it writes nothing for 1.5 s) — and restarts 150-800 ms later. One node down at a
 * time; several crashes per node per run.
 */
function scheduleTears<E extends SimExecutor>(ctx: FaultPlanContext<E>, atFlush = false): void {
  const { rng, queue, healAtMs } = ctx;
  const genesis = ctx.nodes.slice(0, ctx.nodeCount);
  let t = rng.int(300, 700);
  let downUntil = 0;
  while (t < healAtMs - 800) {
    const when = t;
    const writes = rng.int(0, 2);
    const afterLast = rng.chance(0.5);
    const pick = rng.next();
    const downFor = rng.int(150, 800);
    queue.schedule(when, () => {
      if (queue.now < downUntil) return;
      const live = genesis.filter((n) => n.alive && n.started && !n.stopped && n.byzantine === undefined);
      if (live.length === 0) return;
      const catching = live.filter((n) => n.core.status().catchingUp);
      const pool = catching.length > 0 && pick < 0.5 ? catching : live;
      const node = pool[Math.floor(pick * pool.length) % pool.length];
      if (!ctx.tear(node, writes, afterLast, downFor, atFlush)) return;
      downUntil = queue.now + downFor + 1800;
    });
    t += rng.int(300, 900);
  }
}

/** A primary faulty in time: paused and resumed, slow PRE-PREPAREs, one request in five censored. */
function scheduleLazyPrimary<E extends SimExecutor>(ctx: FaultPlanContext<E>, primary: SimNode<E>): void {
  const { rng, queue, healAtMs } = ctx;
  ctx.byzantine.add(primary.name);
  primary.censored = new WeakSet();
  if (rng.chance(0.6)) primary.slowMs = rng.int(100, 1500);
  let t = rng.int(200, 1500);
  while (t < healAtMs - 500) {
    const ms = rng.int(300, 6000);
    queue.schedule(t, () => ctx.pause(primary, ms));
    t += ms + rng.int(500, 3000);
  }
}

/** A flooding node: every 40 ms until the heal, a burst of hostile messages to every other node. */
function scheduleFlood<E extends SimExecutor>(ctx: FaultPlanContext<E>, node: SimNode<E>): void {
  const { rng, queue, healAtMs } = ctx;
  node.byzantine = 'flood';
  ctx.byzantine.add(node.name);
  const floodRng = rng.fork();
  const tick = (): void => {
    if (queue.now >= healAtMs) return;
    if (node.alive && node.core !== undefined) {
      const view = node.core.status().viewNo;
      for (const to of ctx.genesisNames) {
        if (to === node.name) continue;
        for (const m of floodBurst(floodRng, view, ctx.genesisNames, node.name)) ctx.inject(node, to, m);
      }
    }
    queue.schedule(queue.now + 40, tick);
  };
  queue.schedule(rng.int(200, 600), tick);
}
