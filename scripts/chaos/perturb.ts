// One perturbation of a chaos run: applied to the live pool and network, held, then healed. Each
// returns what it did (targets, amounts) for the report; targets are chosen by the perturbation's
// own random stream, the primary as the nodes report it when the perturbation starts.
import type { ChaosNetwork } from './netns.js';
import type { ChaosNode, ChaosPool } from './pool.js';
import type { PlannedPerturbation } from './schedule.js';

export interface PerturbContext {
  pool: ChaosPool;
  net: ChaosNetwork | undefined;
  /** the primary as most nodes report it, undefined when unknown */
  primary(): Promise<string | undefined>;
  /** the trustee's POOL_RESTART sent to every node: node -> 'REPLY' or why not */
  poolRestart(): Promise<Record<string, string>>;
  /** resolves after `ms`, or earlier when the run is being stopped */
  sleep(ms: number): Promise<void>;
  stopped(): boolean;
  /** counts a kill -9 (the acceptance asks for 100 of them) */
  onKill(node: string): void;
}

export interface Applied {
  targets: string[];
  detail: string;
  /** undoes the fault (idempotent) */
  heal(): Promise<void>;
  /** runs during the hold (flapping, repeated kills); resolves when the hold is over */
  during?(holdMs: number): Promise<void>;
}

/** Time every node that acknowledged a POOL_RESTART gets to exit for it (its drain is up to 5 s). */
const POOL_RESTART_BOUND_MS = 15_000;

async function targetNode(ctx: PerturbContext, p: PlannedPerturbation, primary: boolean): Promise<ChaosNode> {
  const nodes = ctx.pool.nodes;
  if (primary) {
    const name = await ctx.primary();
    const n = nodes.find((x) => x.name === name);
    if (n !== undefined) return n;
  }
  return p.rng.pick(nodes);
}

function needNet(ctx: PerturbContext, kind: string): ChaosNetwork {
  if (ctx.net === undefined) throw new Error(`${kind} needs network namespaces`);
  return ctx.net;
}

async function startIfDown(n: ChaosNode): Promise<void> {
  if (!n.running) n.start();
}

export async function applyPerturbation(ctx: PerturbContext, p: PlannedPerturbation): Promise<Applied> {
  const rng = p.rng;
  switch (p.kind) {
    case 'pool-restart': {
      // every node answers, then exits with the restart code; its supervisor starts it again at once
      const before = ctx.pool.restartRequests;
      const answers = await ctx.poolRestart();
      const replied = Object.keys(answers).filter((k) => answers[k] === 'REPLY');
      const others = Object.entries(answers).filter(([, v]) => v !== 'REPLY');
      return {
        targets: replied,
        detail: `POOL_RESTART by the trustee: REPLY from ${replied.length} of ${ctx.pool.nodes.length}${others.length > 0 ? ` (${others.map(([k, v]) => `${k}: ${v}`).join(', ')})` : ''}`,
        heal: async () => undefined,
        during: async (holdMs) => {
          // a node first orders the batches in flight (up to 5 s), then exits: give it that and its exit
          const until = Date.now() + Math.max(holdMs, POOL_RESTART_BOUND_MS);
          await ctx.sleep(holdMs);
          while (ctx.pool.restartRequests - before < replied.length && Date.now() < until && !ctx.stopped()) await ctx.sleep(250);
          const restarted = ctx.pool.restartRequests - before;
          if (restarted < replied.length) throw new Error(`${replied.length} nodes acknowledged POOL_RESTART, ${restarted} restarted within ${POOL_RESTART_BOUND_MS / 1000} s`);
        },
      };
    }
    case 'kill9':
    case 'kill9-primary': {
      const n = await targetNode(ctx, p, p.kind === 'kill9-primary');
      await n.kill9();
      ctx.onKill(n.name);
      return { targets: [n.name], detail: 'kill -9, started again at the heal', heal: () => startIfDown(n) };
    }
    case 'kill9-repeat': {
      // the same node killed again and again at random instants: while it starts, recovers its
      // ledgers, catches up, and orders
      const n = await targetNode(ctx, p, false);
      let kills = 0;
      return {
        targets: [n.name],
        get detail() {
          return `kill -9 ${kills} times at random instants, each followed by a start`;
        },
        during: async (holdMs) => {
          const until = Date.now() + holdMs;
          while (Date.now() < until && !ctx.stopped()) {
            await ctx.sleep(rng.int(300, 4_000));
            if (ctx.stopped()) break;
            await n.kill9();
            ctx.onKill(n.name);
            kills++;
            await ctx.sleep(rng.int(100, 1_500));
            n.start();
          }
        },
        heal: () => startIfDown(n),
      };
    }
    case 'pause':
    case 'pause-primary': {
      const n = await targetNode(ctx, p, p.kind === 'pause-primary');
      n.pause();
      return {
        targets: [n.name],
        detail: 'SIGSTOP, SIGCONT at the heal',
        heal: async () => {
          n.cont();
        },
      };
    }
    case 'restart': {
      const n = await targetNode(ctx, p, rng.chance(0.5));
      await n.stop();
      n.start();
      return { targets: [n.name], detail: 'graceful stop (SIGTERM) and start', heal: async () => startIfDown(n) };
    }
    case 'wipe-restart': {
      const n = await targetNode(ctx, p, false);
      await n.kill9();
      ctx.onKill(n.name);
      n.wipeData();
      n.start();
      return { targets: [n.name], detail: 'kill -9, database deleted, started empty (catches up from the pool)', heal: () => startIfDown(n) };
    }
    case 'clock-skew': {
      const n = await targetNode(ctx, p, rng.chance(0.5));
      const offset = (rng.chance(0.5) ? 1 : -1) * rng.int(20, 200) * 1000;
      await n.stop();
      n.clockOffsetMs = offset;
      n.start();
      return {
        targets: [n.name],
        detail: `restarted with its clock ${offset > 0 ? '+' : ''}${offset / 1000} s off, restarted with the true clock at the heal`,
        heal: async () => {
          if (n.clockOffsetMs === 0) return;
          await n.stop();
          n.clockOffsetMs = 0;
          n.start();
        },
      };
    }
    case 'isolate':
    case 'isolate-primary': {
      const net = needNet(ctx, p.kind);
      const n = await targetNode(ctx, p, p.kind === 'isolate-primary');
      net.setLink(n.name, false);
      return { targets: [n.name], detail: 'link down at the bridge (cut from peers and clients)', heal: async () => net.setLink(n.name, true) };
    }
    case 'partition-minority': {
      const net = needNet(ctx, p.kind);
      const names = ctx.pool.nodes.map((x) => x.name);
      const minority = rng.sample(names, Math.max(1, ctx.pool.f));
      const majority = names.filter((x) => !minority.includes(x));
      net.partition(minority, majority);
      return { targets: minority, detail: `{${minority.join(',')}} | {${majority.join(',')}} (clients reach both sides)`, heal: async () => net.heal() };
    }
    case 'partition-bridge': {
      const net = needNet(ctx, p.kind);
      const names = rng.sample(
        ctx.pool.nodes.map((x) => x.name),
        ctx.pool.nodes.length,
      );
      const bridge = names[0]!;
      const rest = names.slice(1);
      const cut = rng.int(1, Math.max(1, rest.length - 1));
      const a = rest.slice(0, cut);
      const b = rest.slice(cut);
      net.partition(a, b);
      return { targets: [bridge], detail: `{${a.join(',')}} | {${b.join(',')}}, ${bridge} sees both sides`, heal: async () => net.heal() };
    }
    case 'flap': {
      const net = needNet(ctx, p.kind);
      const n = await targetNode(ctx, p, rng.chance(0.5));
      let flaps = 0;
      return {
        targets: [n.name],
        get detail() {
          return `link down/up ${flaps} times`;
        },
        during: async (holdMs) => {
          const until = Date.now() + holdMs;
          while (Date.now() < until && !ctx.stopped()) {
            net.setLink(n.name, false);
            flaps++;
            await ctx.sleep(rng.int(200, 2_000));
            net.setLink(n.name, true);
            await ctx.sleep(rng.int(200, 2_000));
          }
        },
        heal: async () => net.setLink(n.name, true),
      };
    }
    case 'loss': {
      const net = needNet(ctx, p.kind);
      const percent = rng.int(3, 20);
      const targets = rng.chance(0.5) ? ctx.pool.nodes.map((x) => x.name) : [rng.pick(ctx.pool.nodes).name];
      for (const t of targets) net.setLoss(t, percent);
      return { targets, detail: `${percent} % of TCP packets dropped in and out`, heal: async () => net.heal() };
    }
    case 'dup': {
      const net = needNet(ctx, p.kind);
      const percent = rng.int(3, 20);
      const targets = ctx.pool.nodes.map((x) => x.name);
      for (const t of targets) net.setDup(t, percent);
      return { targets, detail: `about ${percent} % of sent packets duplicated`, heal: async () => net.heal() };
    }
    case 'slow-link': {
      const net = needNet(ctx, p.kind);
      const n = await targetNode(ctx, p, rng.chance(0.5));
      const kbit = rng.pick([64, 128, 256, 512]);
      net.setRate(n.name, kbit);
      return { targets: [n.name], detail: `sends capped at ${kbit} kbit/s (tbf: packets queue up to 2 s)`, heal: async () => net.heal() };
    }
  }
}
