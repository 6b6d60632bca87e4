// One perturbation of a chaos run: applied to the live pool and network, held, then healed. Each
// returns what it did (targets, amounts) for the report; targets are chosen by the perturbation's
// own random stream, the primary as the nodes report it when the perturbation starts.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodePackageVersion, readInstalledVersion } from '@quire/node';
import { compareNodeVersions } from '@quire/requests';
import { POOL_GENESIS_FILE, deriveNodeKeys, nodeSeed } from '../../devnet/lib/node-api.js';
import { readLedgerLines } from './check.js';
import type { ChaosNetwork } from './netns.js';
import type { ChaosNode, ChaosPool } from './pool.js';
import type { PlannedPerturbation } from './schedule.js';
import type { NodeInfo, NodeTxnArgs, PoolUpgradeArgs, WriteAnswer } from './workload.js';

export interface PerturbContext {
  pool: ChaosPool;
  net: ChaosNetwork | undefined;
  /** the primary as most nodes report it, undefined when unknown */
  primary(): Promise<string | undefined>;
  /** the trustee's POOL_RESTART sent to every node: node -> 'REPLY' or why not */
  poolRestart(): Promise<Record<string, string>>;
  /** the trustee's forced POOL_UPGRADE, through the workload's SDK pool */
  poolUpgrade(args: PoolUpgradeArgs): Promise<WriteAnswer>;
  /** a steward's NODE txn, through the workload's SDK pool (every pool handle refreshed after it) */
  nodeTxn(args: NodeTxnArgs): Promise<WriteAnswer>;
  /** VALIDATOR_INFO of every node the workload's pool knows */
  info(): Promise<NodeInfo[]>;
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

/**
 * Time a forced POOL_UPGRADE gets until every scheduled node has upgraded and started again: the
 * last node's turn (up to 21 s), its NODE_UPGRADE in_progress ordered (the node waits up to 60 s),
 * the action, the drain before the exit (up to 5 s), and a start from the sources on a loaded machine.
 */
const POOL_UPGRADE_BOUND_MS = 180_000;

/** Time an added node gets to catch up and order as a validator (a fresh node catches up every ledger). */
const NODE_ADD_BOUND_MS = 150_000;

/** The version a node runs: `installed_version` in its data directory, else @quire/node's package version (as the node reads it). */
export function runningVersion(n: ChaosNode): string {
  return readInstalledVersion(n.layout.dataDir, nodePackageVersion());
}

/** The next patch release: `0.1.0` -> `0.1.1`. */
export function nextPatch(v: string): string {
  const p = v.split('.').map(Number);
  while (p.length < 3) p.push(0);
  p[p.length - 1]! += 1;
  return p.join('.');
}

/** The events of a node's upgrade_log (TAB-separated: written, event, scheduled, version, upgrade_id, package). */
function upgradeEvents(n: ChaosNode): { event: string; version: string }[] {
  const f = join(n.layout.dataDir, 'upgrade_log');
  if (!existsSync(f)) return [];
  return readFileSync(f, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const c = l.split('\t');
      return { event: c[1] ?? '', version: c[3] ?? '' };
    });
}

const iso = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', '+00:00');

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
    case 'pool-upgrade': {
      // a forced POOL_UPGRADE to the highest running version again (reinstall) or to the next patch
      // release, the nodes scheduled one after the other a few seconds apart; each acts on it at
      // receipt: NODE_UPGRADE in_progress, the devnet's upgrade action, exit 75, started again by its
      // supervisor, NODE_UPGRADE complete ('succeeded' in its upgrade_log)
      const nodes = ctx.pool.nodes;
      const top = nodes.map(runningVersion).reduce((a, b) => (compareNodeVersions(a, b) >= 0 ? a : b));
      const reinstall = rng.chance(0.5);
      const version = reinstall ? top : nextPatch(top);
      const order = rng.sample(nodes, nodes.length);
      const spacingMs = rng.int(2, 6) * 1000;
      const t0 = Date.now() + 3_000;
      const schedule = Object.fromEntries(order.map((n, k) => [n.dest, iso(t0 + k * spacingMs)]));
      const logged = new Map(nodes.map((n) => [n.name, upgradeEvents(n).length]));
      const before = ctx.pool.restartRequests;
      const answer = await ctx.poolUpgrade({ name: `chaos-${p.index}-${Date.now()}`, version, reinstall, schedule });
      const succeeded = (n: ChaosNode): boolean =>
        upgradeEvents(n)
          .slice(logged.get(n.name))
          .some((e) => e.event === 'succeeded' && e.version === version);
      return {
        targets: order.map((n) => n.name),
        detail: `forced POOL_UPGRADE to ${version}${reinstall ? ' (reinstall of the running version)' : ''}, nodes ${spacingMs / 1000} s apart: ${answer.result}${answer.seqNo !== undefined ? ` (config seqNo ${answer.seqNo})` : ''}`,
        heal: async () => undefined,
        during: async (holdMs) => {
          const until = Date.now() + Math.max(holdMs, POOL_UPGRADE_BOUND_MS);
          await ctx.sleep(holdMs);
          while (!nodes.every(succeeded) && Date.now() < until && !ctx.stopped()) await ctx.sleep(500);
          const done = nodes.filter(succeeded).map((n) => n.name);
          const restarted = ctx.pool.restartRequests - before;
          if (done.length < nodes.length && !ctx.stopped()) {
            throw new Error(
              `POOL_UPGRADE to ${version} (${answer.result}): ${done.length} of ${nodes.length} nodes upgraded within ${POOL_UPGRADE_BOUND_MS / 1000} s (${done.join(',') || 'none'}), ${restarted} restarts`,
            );
          }
        },
      };
    }
    case 'node-add-demote': {
      // a validator more, with its own keys and host: added by its steward's NODE txn (promoted
      // again on later turns), started, caught up and ordering; demoted at the heal (NODE with
      // services []) and stopped
      const spare = await ctx.pool.spare();
      const keys = deriveNodeKeys(spare.name, Buffer.from(nodeSeed(spare.name), 'utf8'));
      const data: NodeTxnArgs['data'] = spare.registered
        ? { alias: spare.name, services: ['VALIDATOR'] }
        : {
            alias: spare.name,
            client_ip: spare.ip,
            client_port: spare.layout.clientPort,
            node_ip: spare.ip,
            node_port: spare.layout.nodePort,
            services: ['VALIDATOR'],
            blskey: keys.blskey,
            blskey_pop: keys.blskey_pop,
          };
      const stewardIndex = ctx.pool.nodes.length + 1;
      const added = await ctx.nodeTxn({ stewardIndex, dest: keys.dest, data });
      if (added.seqNo === undefined) throw new Error(`NODE txn adding ${spare.name} not acknowledged: ${added.result}`);
      spare.registered = true;
      const genesis = join(spare.layout.dataDir, POOL_GENESIS_FILE);
      if (!existsSync(join(spare.layout.dataDir, 'db'))) {
        // the operator's way: a validator's pool ledger (with the NODE txn) is the new node's pool genesis
        let lines: string[] = [];
        const until = Date.now() + 30_000;
        while (lines.length < added.seqNo && Date.now() < until) {
          for (const n of ctx.pool.nodes) {
            const l = await readLedgerLines(n.layout.dataDir, 'pool').catch(() => [] as string[]);
            if (l.length > lines.length) lines = l;
          }
          if (lines.length < added.seqNo) await ctx.sleep(500);
        }
        if (lines.length < added.seqNo) throw new Error(`no validator's pool ledger holds ${spare.name}'s NODE txn (seqNo ${added.seqNo}) within 30 s`);
        writeFileSync(genesis, lines.join('\n') + '\n');
      }
      spare.start();
      let caughtUpMs: number | null = null;
      const started = Date.now();
      return {
        targets: [spare.name],
        get detail() {
          return `${data.node_ip !== undefined ? 'added' : 'promoted again'} by a NODE txn (pool seqNo ${added.seqNo}${added.result !== 'REPLY' ? `; ${added.result}` : ''}), started, ${caughtUpMs === null ? 'not yet caught up' : `caught up and ordering after ${(caughtUpMs / 1000).toFixed(1)} s`}; demoted (services []) and stopped at the heal`;
        },
        during: async (holdMs) => {
          const until = started + Math.max(holdMs, NODE_ADD_BOUND_MS);
          const validators = ctx.pool.nodes.map((n) => n.name);
          let target = -1;
          let orderedFrom: number | undefined;
          let last = '';
          while (Date.now() < until && !ctx.stopped()) {
            const infos = await ctx.info();
            const mine = infos.find((i) => i.node === spare.name);
            const others = infos.filter((i) => validators.includes(i.node) && typeof i.domainSize === 'number');
            if (target < 0 && others.length > 0) target = Math.max(...others.map((i) => i.domainSize!));
            const everyoneKnows = others.length === validators.length && others.every((i) => i.validators?.includes(spare.name) === true);
            last = `${spare.name}: ${mine === undefined ? 'no answer' : `${mine.error ?? mine.mode}, domain ${mine.domainSize}, last ordered ${mine.lastOrdered?.ppSeqNo}`}; the pool's domain at its start ${target}; validators listing it ${others.filter((i) => i.validators?.includes(spare.name) === true).length} of ${validators.length}`;
            if (
              mine?.mode === 'participating' &&
              mine.domainSize !== undefined &&
              target >= 0 &&
              mine.domainSize >= target &&
              mine.lastOrdered !== undefined &&
              everyoneKnows
            ) {
              // caught up; ordering once its last ordered batch moves on while it participates
              if (orderedFrom === undefined) orderedFrom = mine.lastOrdered.ppSeqNo;
              else if (mine.lastOrdered.ppSeqNo > orderedFrom) {
                caughtUpMs = Date.now() - started;
                break;
              }
            }
            await ctx.sleep(1_000);
          }
          if (caughtUpMs === null && !ctx.stopped()) throw new Error(`${spare.name} not caught up and ordering within ${NODE_ADD_BOUND_MS / 1000} s (${last})`);
          const rest = started + holdMs - Date.now();
          if (rest > 0) await ctx.sleep(rest);
        },
        heal: async () => {
          const demoted = await ctx.nodeTxn({ stewardIndex, dest: keys.dest, data: { alias: spare.name, services: [] } });
          await spare.stop();
          if (demoted.seqNo === undefined) throw new Error(`NODE txn demoting ${spare.name} not acknowledged: ${demoted.result}`);
        },
      };
    }
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
          if (restarted < replied.length)
            throw new Error(`${replied.length} nodes acknowledged POOL_RESTART, ${restarted} restarted within ${POOL_RESTART_BOUND_MS / 1000} s`);
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
      let kills: number | undefined;
      return {
        targets: [n.name],
        get detail() {
          return `kill -9 ${kills === undefined ? 'again and again' : `${kills} times`} at random instants, each followed by a start`;
        },
        during: async (holdMs) => {
          const until = Date.now() + holdMs;
          kills = 0;
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
      let flaps: number | undefined;
      return {
        targets: [n.name],
        get detail() {
          return `link down/up ${flaps === undefined ? 'every 0.2-2 s for the hold' : `${flaps} times`}`;
        },
        during: async (holdMs) => {
          const until = Date.now() + holdMs;
          flaps = 0;
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
