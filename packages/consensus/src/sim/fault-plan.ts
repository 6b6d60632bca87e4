// The faults of one run, drawn from its PRNG when the run is built (consensus.md §11, §12.2):
// crashes and restarts (the primary's included), Byzantine roles, f+1 nodes down together, clock
// skew and jumps, partitions, a leecher that must catch up from lying seeders, and the twins of
// the negative control. Every fault mix keeps at most f nodes faulty, except the two negative
// controls (fPlusOneDown, twins).
import type { SimExecutor } from './backend.js';
import { BACKUP_BEHAVIOURS, type ByzantineKind, PRIMARY_BEHAVIOURS } from './byzantine.js';
import type { EventQueue } from './event-queue.js';
import type { FaultMix } from './faults.js';
import type { Prng } from './prng.js';
import type { SimNode } from './sim-run.js';

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
  const twinned = [ctx.genesisNames[0]!, ...ctx.genesisNames.slice(n - f)];
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

/** Draws the run's faults and schedules them on the event queue. */
export function scheduleFaults<E extends SimExecutor>(ctx: FaultPlanContext<E>): void {
  const { mix, rng, queue, healAtMs } = ctx;
  const f = faultsTolerated(ctx.nodeCount);
  const at = (time: number, fn: () => void): void => queue.schedule(time, fn);
  const primary = ctx.nodes[0]!;
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
  if (mix.byzantinePrimary && budget > 0) {
    primary.byzantine = rng.pick(PRIMARY_BEHAVIOURS);
    ctx.byzantine.add(primary.name);
    budget--;
  }
  for (const node of backups) {
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
  if (mix.partitions) {
    const from = rng.int(100, healAtMs / 2);
    // an isolated primary stays cut off long enough for the monitor to replace it
    const dur = mix.isolatePrimary ? healAtMs - from - 100 : rng.int(200, healAtMs - from - 100);
    const side = mix.isolatePrimary
      ? new Set([ctx.genesisNames[0]!])
      : new Set(rng.shuffle([...ctx.genesisNames]).slice(0, rng.int(1, Math.floor(ctx.nodeCount / 2))));
    at(from, () => ctx.cut(side));
    at(from + dur, () => ctx.heal());
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
