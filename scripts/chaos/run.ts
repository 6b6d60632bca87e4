// One chaos run: the network (namespaces, or loopback), the pool, the workload child, the seeded
// schedule of perturbations (apply, hold, heal, wait for liveness and catch-up, quiet gap), then a
// final heal, the nodes stopped, the ledgers read and the invariants checked. Everything is torn
// down on the way out, also on failure and on SIGINT/SIGTERM (the caller's signal).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../devnet/lib/layout.js';
import { freePortRun } from '../../test/support/ports.js';
import { type LedgerCheck, type ReadCheck, checkLedgers, checkReads, percentile } from './check.js';
import { ChaosNetwork, cleanupStale } from './netns.js';
import { applyPerturbation, type Applied } from './perturb.js';
import { ChaosPool, type NodeExit } from './pool.js';
import { ALL_KINDS, PROCESS_KINDS, type PerturbationKind, planSchedule } from './schedule.js';
import type {
  AckRecord,
  FromHarness,
  NodeInfo,
  NodeTxnArgs,
  PoolRestartAnswers,
  PoolUpgradeArgs,
  ReadRecord,
  ToHarness,
  WorkloadOptions,
  WriteAnswer,
} from './workload.js';

/** Omit over each member of a union. */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export interface ChaosOptions {
  seed: number;
  minutes: number;
  nodes: number;
  clients: number;
  concurrency: number;
  loopback: boolean;
  kinds?: PerturbationKind[];
  /** liveness must return within this after each heal, ms */
  recoveryBoundMs: number;
  /** every node must have caught up within this after each heal, ms */
  catchupBoundMs: number;
  /** a node above this resident size is a failure, MiB */
  rssLimitMb: number;
  /** how long the pool gets to start and order the workload's setup writes, ms (default 600 s: a loaded machine starts slowly) */
  setupTimeoutMs?: number;
  keep: boolean;
  /** progress lines */
  log: (line: string) => void;
  /** aborts the run early (Ctrl-C); the run still heals, checks and reports */
  signal?: AbortSignal;
}

export interface PerturbationResult {
  index: number;
  kind: PerturbationKind;
  targets: string[];
  detail: string;
  startedAt: number;
  healedAt: number;
  /** heal -> first acknowledged write after it; null when none came within the bound */
  recoveryMs: number | null;
  /** heal -> every node's domain ledger at least as long as the longest at the heal */
  catchupMs: number | null;
  error?: string;
}

export interface ChaosReport {
  seed: number;
  command: string;
  mode: 'netns' | 'loopback';
  nodes: number;
  clients: number;
  startedAt: string;
  durationS: number;
  perturbations: PerturbationResult[];
  byKind: Record<string, number>;
  kills9: number;
  writes: { acks: number; failed: number; failedByCode: Record<string, number> };
  reads: Omit<ReadCheck, 'stale' | 'unverified' | 'wrongValue'> & { stale: number; unverified: number; wrongValue: number; examples: ReadRecord[] };
  ledgers: Omit<LedgerCheck, 'lost'> & { lost: number; lostExamples: LedgerCheck['lost'] };
  recovery: { boundMs: number; p50: number | null; p90: number | null; max: number | null; overBound: number };
  catchup: { boundMs: number; p50: number | null; p90: number | null; max: number | null; overBound: number };
  rss: Record<string, { maxMb: number; lastMb: number | null; samples: number }>;
  unexpectedExits: NodeExit[];
  restartRequests: number;
  failures: string[];
  ok: boolean;
  dataDir: string | null;
}

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'quire-chaos-'));
  const mode = o.loopback ? 'loopback' : 'netns';
  const kinds = o.kinds ?? (o.loopback ? [...PROCESS_KINDS] : [...ALL_KINDS]);
  const unexpected: NodeExit[] = [];
  const acks: AckRecord[] = [];
  const reads: ReadRecord[] = [];
  const failedByCode: Record<string, number> = {};
  let writeFailures = 0;
  let kills9 = 0;
  const results: PerturbationResult[] = [];
  const failures: string[] = [];
  let net: ChaosNetwork | undefined;
  let pool: ChaosPool | undefined;
  let workload: ChildProcess | undefined;
  let rssTimer: NodeJS.Timeout | undefined;
  let stopping = false;
  const stopped = (): boolean => stopping || o.signal?.aborted === true;
  const sleep = (ms: number): Promise<void> =>
    new Promise((res) => {
      if (stopped()) return res();
      const t = setTimeout(done, ms);
      function done(): void {
        clearTimeout(t);
        o.signal?.removeEventListener('abort', done);
        res();
      }
      o.signal?.addEventListener('abort', done, { once: true });
    });
  let lastAckAt = 0;
  let highestAck = 0;
  const ackWaiters: { after: number; resolve: (t: number) => void }[] = [];
  let askId = 0;
  const answers = new Map<number, (v: unknown) => void>();

  /** A question to the workload process (it holds the SDK pool): `fallback` when it cannot answer within `timeoutMs`. */
  const askWorkload = <T>(q: DistributiveOmit<Extract<FromHarness, { type: 'ask' }>, 'id'>, fallback: T, timeoutMs = 15_000): Promise<T> =>
    new Promise((resolve) => {
      if (workload === undefined || !workload.connected) return resolve(fallback);
      const id = ++askId;
      const t = setTimeout(() => {
        answers.delete(id);
        resolve(fallback);
      }, timeoutMs);
      answers.set(id, (v) => {
        clearTimeout(t);
        resolve(v as T);
      });
      workload.send({ ...q, id } as FromHarness);
    });
  const ask = (): Promise<NodeInfo[]> => askWorkload<NodeInfo[]>({ type: 'ask', what: 'info' }, []);
  const poolRestart = (): Promise<PoolRestartAnswers> =>
    askWorkload<PoolRestartAnswers>({ type: 'ask', what: 'pool-restart' }, { '*': 'no answer from the workload within 15 s' });
  // writes: the SDK's write timeout (30 s) for each of up to two writes, and the pool refreshes
  const poolUpgrade = (args: PoolUpgradeArgs): Promise<WriteAnswer> =>
    askWorkload<WriteAnswer>({ type: 'ask', what: 'pool-upgrade', args }, { result: 'no answer from the workload within 90 s' }, 90_000);
  const nodeTxn = (args: NodeTxnArgs): Promise<WriteAnswer> =>
    askWorkload<WriteAnswer>({ type: 'ask', what: 'node-txn', args }, { result: 'no answer from the workload within 90 s' }, 90_000);

  const primary = async (): Promise<string | undefined> => {
    const infos = await ask();
    const votes = new Map<string, number>();
    for (const i of infos) if (typeof i.primary === 'string') votes.set(i.primary, (votes.get(i.primary) ?? 0) + 1);
    return [...votes].sort((a, b) => b[1] - a[1])[0]?.[0];
  };

  /** Resolves with the time of the first ack after `after`, or null after `boundMs`. */
  const firstAckAfter = (after: number, boundMs: number): Promise<number | null> =>
    new Promise((resolve) => {
      if (lastAckAt >= after) return resolve(lastAckAt);
      const w = { after, resolve: (t: number) => resolve(t) };
      ackWaiters.push(w);
      setTimeout(() => {
        const i = ackWaiters.indexOf(w);
        if (i >= 0) {
          ackWaiters.splice(i, 1);
          resolve(null);
        }
      }, boundMs);
    });

  /** Waits until every node's domain ledger reaches `target` (VALIDATOR_INFO); ms taken or null. */
  const waitCaughtUp = async (from: number, target: number, boundMs: number): Promise<number | null> => {
    while (Date.now() - from < boundMs) {
      const infos = await ask();
      const sizes = infos.filter((i) => typeof i.domainSize === 'number');
      if (sizes.length === pool!.nodes.length && sizes.every((i) => i.domainSize! >= target)) return Date.now() - from;
      if (o.signal?.aborted === true && Date.now() - from > 10_000) return null;
      await new Promise((r) => setTimeout(r, 1000));
    }
    return null;
  };

  const maxDomainSize = async (): Promise<number> => Math.max(0, ...(await ask()).map((i) => i.domainSize ?? 0));

  try {
    if (!o.loopback) {
      const stale = cleanupStale();
      if (stale.length > 0) o.log(`removed ${stale.length} namespaces left by an earlier run: ${stale.join(' ')}`);
      net = ChaosNetwork.create([...Array.from({ length: o.nodes }, (_, k) => `Node${k + 1}`), 'client']);
      o.log(`network: ${net.hosts.size} namespaces on ${net.subnet}.0/24, bridge in ${net.bridgeNs}`);
    }
    pool = await ChaosPool.create({
      dir,
      nodes: o.nodes,
      net,
      // the validators and a spare node (node-add-demote)
      basePort: o.loopback ? await freePortRun(2 * (o.nodes + 1)) : 0,
      configOverride: { limits: { clientRate: 500, clientBurst: 1000 } },
      onUnexpectedExit: (n, e) => {
        unexpected.push(e);
        o.log(`!! ${n.name} exited on its own (code ${e.code}, signal ${e.signal}); log ${n.layout.logFile}`);
      },
    });
    o.log(`pool: ${o.nodes} nodes (f = ${pool.f}) in ${dir}: ${pool.nodes.map((n) => `${n.name}@${n.ip}`).join(' ')}`);
    pool.startAll();
    rssTimer = setInterval(() => pool?.sampleRss(), 2_000);

    const wo: WorkloadOptions = {
      clients: o.clients,
      concurrency: o.concurrency,
      seed: o.seed,
      runTag: `${o.seed}-${process.pid}`,
      writeTimeoutMs: 30_000,
      readTimeoutMs: 20_000,
    };
    const argv = [
      ...(net?.execPrefix('client') ?? []),
      process.execPath,
      '--conditions=quire-source',
      '--import',
      'tsx',
      '--import',
      '@quire/common/polyfill',
      join(REPO_ROOT, 'scripts', 'chaos', 'workload.ts'),
      pool.genesisFile,
      JSON.stringify(wo),
    ];
    const wl = spawn(argv[0]!, argv.slice(1), { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    workload = wl;
    const ready = new Promise<number>((resolve, reject) => {
      wl.once('exit', (code) => reject(new Error(`the workload exited (code ${code}) before it was ready`)));
      wl.on('message', (m: ToHarness) => {
        switch (m.type) {
          case 'ready':
            resolve(m.setupMs);
            break;
          case 'ack':
            acks.push(m.rec);
            lastAckAt = Math.max(lastAckAt, m.rec.ackAt);
            if (Number.isSafeInteger(m.rec.seqNo)) highestAck = Math.max(highestAck, m.rec.seqNo);
            for (const w of [...ackWaiters]) {
              if (m.rec.ackAt >= w.after) {
                ackWaiters.splice(ackWaiters.indexOf(w), 1);
                w.resolve(m.rec.ackAt);
              }
            }
            break;
          case 'read':
            reads.push(m.rec);
            if (m.rec.verdict !== 'ok' && m.rec.verdict !== 'failed') o.log(`!! read ${m.rec.verdict}: ${JSON.stringify(m.rec)}`);
            break;
          case 'write-failed':
            writeFailures++;
            failedByCode[m.code] = (failedByCode[m.code] ?? 0) + 1;
            break;
          case 'answer':
            answers.get(m.id)?.(m.value);
            answers.delete(m.id);
            break;
          case 'stopped':
            break;
        }
      });
    });
    let setupTimer: NodeJS.Timeout | undefined;
    const setupMs = await Promise.race([
      ready,
      new Promise<never>((_, rej) => {
        const ms = o.setupTimeoutMs ?? 600_000;
        setupTimer = setTimeout(() => rej(new Error(`the pool did not order the setup writes within ${ms / 1000} s`)), ms);
        o.signal?.addEventListener('abort', () => rej(new Error('stopped before the pool had ordered the setup writes')), { once: true });
      }),
    ]).finally(() => clearTimeout(setupTimer));
    o.log(`workload: ${o.clients} clients x ${o.concurrency} writes in flight, ready after ${(setupMs / 1000).toFixed(1)} s`);

    // the perturbing time starts once the workload runs (pool start and setup are not counted)
    const deadline = Date.now() + o.minutes * 60_000;
    const schedule = planSchedule(o.seed, kinds, Math.max(30_000, deadline - Date.now()));
    for (const p of schedule) {
      if (stopped() || Date.now() + p.holdMs > deadline) break;
      const startedAt = Date.now();
      let applied: Applied | undefined;
      let error: string | undefined;
      try {
        applied = await applyPerturbation({ pool, net, primary, poolRestart, poolUpgrade, nodeTxn, info: ask, sleep, stopped, onKill: () => kills9++ }, p);
        o.log(`#${p.index} ${p.kind} ${applied.targets.join(',')}: ${applied.detail} (hold ${(p.holdMs / 1000).toFixed(1)} s)`);
        if (applied.during !== undefined) {
          try {
            await applied.during(p.holdMs);
          } finally {
            // what happened during the hold (kills, flaps, upgrades) is known only now
            o.log(`#${p.index} ${p.kind} ${applied.targets.join(',')}: ${applied.detail}`);
          }
        } else await sleep(p.holdMs);
      } catch (e) {
        error = (e as Error).message;
        o.log(`#${p.index} ${p.kind} failed: ${error}`);
      }
      // the longest domain ledger at the heal, at least the highest acknowledged seqNo (when every
      // node is restarting, as after a pool-restart or pool-upgrade, none answers VALIDATOR_INFO)
      const target = Math.max(await maxDomainSize(), highestAck);
      try {
        await applied?.heal();
        net?.heal();
      } catch (e) {
        error = `${error ?? ''} heal: ${(e as Error).message}`;
      }
      const healedAt = Date.now();
      const ackAt = await firstAckAfter(healedAt, o.recoveryBoundMs);
      const recoveryMs = ackAt === null ? null : Math.max(0, ackAt - healedAt);
      const catchupMs = await waitCaughtUp(healedAt, target, o.catchupBoundMs);
      if (error !== undefined) o.log(`!! #${p.index} ${p.kind}: ${error}`);
      const r: PerturbationResult = {
        index: p.index,
        kind: p.kind,
        targets: applied?.targets ?? [],
        detail: applied?.detail ?? '',
        startedAt,
        healedAt,
        recoveryMs,
        catchupMs,
        ...(error !== undefined ? { error } : {}),
      };
      results.push(r);
      o.log(
        `   healed: first ack after ${recoveryMs === null ? `NONE within ${o.recoveryBoundMs / 1000} s` : `${(recoveryMs / 1000).toFixed(1)} s`}, ` +
          `all caught up (domain >= ${target}) after ${catchupMs === null ? `NOT within ${o.catchupBoundMs / 1000} s` : `${(catchupMs / 1000).toFixed(1)} s`}; ` +
          `acks ${acks.length}, failed writes ${writeFailures}, reads ${reads.length}`,
      );
      await sleep(p.gapMs);
    }

    // the end: everything healed, the workload stopped (in-flight writes answered), the pool settled
    o.log('stopping the workload; waiting for every node to catch up');
    stopping = true;
    net?.heal();
    for (const n of pool.nodes) {
      if (n.paused) n.cont();
      if (!n.running) n.start();
    }
    if (wl.connected) wl.send({ type: 'stop' } satisfies FromHarness);
    await new Promise<void>((res) => {
      const t = setTimeout(() => {
        wl.kill('SIGKILL');
        res();
      }, 45_000);
      wl.once('message', function onStop(m: ToHarness) {
        if (m.type !== 'stopped') return void wl.once('message', onStop);
        clearTimeout(t);
        res();
      });
      wl.once('exit', () => {
        clearTimeout(t);
        res();
      });
    });
    // the workload still answers questions (VALIDATOR_INFO) until it is told to exit
    const target = Math.max(0, ...acks.map((a) => a.seqNo));
    const settle = await waitCaughtUp(Date.now(), target, 120_000);
    if (settle === null) failures.push(`not every node caught up to domain seqNo ${target} within 120 s after the last heal`);
    else o.log(`every node caught up to domain seqNo ${target} after ${(settle / 1000).toFixed(1)} s`);
    if (wl.connected) wl.send({ type: 'exit' } satisfies FromHarness);
    await new Promise<void>((res) => {
      if (wl.exitCode !== null) return res();
      const t = setTimeout(() => {
        wl.kill('SIGKILL');
        res();
      }, 15_000);
      wl.once('exit', () => {
        clearTimeout(t);
        res();
      });
    });
  } catch (e) {
    failures.push(`run aborted: ${(e as Error).message}`);
    o.log(`!! ${(e as Error).stack ?? (e as Error).message}`);
  } finally {
    stopping = true;
    if (rssTimer !== undefined) clearInterval(rssTimer);
    if (workload !== undefined && workload.exitCode === null) workload.kill('SIGKILL');
    await pool?.close();
  }

  // the invariants, on the stopped nodes' ledgers
  let ledgers: LedgerCheck = { sizes: {}, forks: [], lost: [], onAll: 0, acks: acks.length };
  if (pool !== undefined) {
    try {
      ledgers = await checkLedgers(
        pool.nodes.map((n) => ({ name: n.name, dataDir: n.layout.dataDir })),
        acks,
        pool.f,
        // a spare that was a validator for a while: its ledgers must agree with the others as far as they go
        pool.spares.filter((n) => n.starts > 0).map((n) => ({ name: n.name, dataDir: n.layout.dataDir })),
      );
    } catch (e) {
      failures.push(`ledgers could not be read: ${(e as Error).message}`);
    }
  }
  net?.close();
  const rc = checkReads(reads);
  const rec = results.map((r) => r.recoveryMs).filter((x): x is number => x !== null);
  const cat = results.map((r) => r.catchupMs).filter((x): x is number => x !== null);
  const byKind: Record<string, number> = {};
  for (const r of results) byKind[r.kind] = (byKind[r.kind] ?? 0) + 1;
  const rss = Object.fromEntries(
    [...(pool?.nodes ?? []), ...(pool?.spares ?? [])].map((n) => [
      n.name,
      {
        maxMb: Math.round(n.maxRssMb),
        lastMb: n.rssSamplesMb.length > 0 ? Math.round(n.rssSamplesMb[n.rssSamplesMb.length - 1]!) : null,
        samples: n.rssSamplesMb.length,
      },
    ]),
  );
  if (ledgers.lost.length > 0) failures.push(`${ledgers.lost.length} acknowledged writes lost (on fewer than n-f ledgers)`);
  if (ledgers.forks.length > 0) failures.push(`${ledgers.forks.length} seqNos differ between nodes (fork)`);
  if (rc.stale.length > 0) failures.push(`${rc.stale.length} stale reads accepted`);
  if (rc.unverified.length > 0) failures.push(`${rc.unverified.length} reads accepted without proof`);
  if (rc.wrongValue.length > 0) failures.push(`${rc.wrongValue.length} reads with no value for an acknowledged write`);
  const overRecovery = results.filter((r) => r.recoveryMs === null).length;
  if (overRecovery > 0) failures.push(`${overRecovery} heals without an acknowledged write within ${o.recoveryBoundMs / 1000} s`);
  const overCatchup = results.filter((r) => r.catchupMs === null).length;
  if (overCatchup > 0) failures.push(`${overCatchup} heals after which not every node caught up within ${o.catchupBoundMs / 1000} s`);
  for (const [name, r] of Object.entries(rss)) if (r.maxMb > o.rssLimitMb) failures.push(`${name} reached ${r.maxMb} MiB resident (limit ${o.rssLimitMb})`);
  if (unexpected.length > 0) failures.push(`${unexpected.length} node exits the harness did not cause`);
  const broken = results.filter((r) => r.error !== undefined);
  if (broken.length > 0) failures.push(`${broken.length} perturbations failed: ${broken.map((r) => `#${r.index} ${r.kind}: ${r.error!.trim()}`).join('; ')}`);
  if (acks.length === 0) failures.push('no write was acknowledged');
  const ok = failures.length === 0;
  const keepDir = o.keep || !ok;
  if (!keepDir) rmSync(dir, { recursive: true, force: true });
  return {
    seed: o.seed,
    command: `npm run chaos -- --seed ${o.seed} --minutes ${o.minutes} --nodes ${o.nodes} --clients ${o.clients}${o.loopback ? ' --loopback' : ''}${o.kinds !== undefined ? ` --kinds ${o.kinds.join(',')}` : ''}`,
    mode,
    nodes: o.nodes,
    clients: o.clients,
    startedAt: new Date(started).toISOString(),
    durationS: Math.round((Date.now() - started) / 1000),
    perturbations: results,
    byKind,
    kills9,
    writes: { acks: acks.length, failed: writeFailures, failedByCode },
    reads: {
      total: rc.total,
      ok: rc.ok,
      failed: rc.failed,
      stale: rc.stale.length,
      unverified: rc.unverified.length,
      wrongValue: rc.wrongValue.length,
      examples: [...rc.stale, ...rc.unverified, ...rc.wrongValue].slice(0, 10),
    },
    ledgers: {
      sizes: ledgers.sizes,
      forks: ledgers.forks,
      onAll: ledgers.onAll,
      acks: ledgers.acks,
      lost: ledgers.lost.length,
      lostExamples: ledgers.lost.slice(0, 10),
    },
    recovery: {
      boundMs: o.recoveryBoundMs,
      p50: percentile(rec, 50),
      p90: percentile(rec, 90),
      max: rec.length > 0 ? Math.max(...rec) : null,
      overBound: overRecovery,
    },
    catchup: {
      boundMs: o.catchupBoundMs,
      p50: percentile(cat, 50),
      p90: percentile(cat, 90),
      max: cat.length > 0 ? Math.max(...cat) : null,
      overBound: overCatchup,
    },
    rss,
    unexpectedExits: unexpected,
    restartRequests: pool?.restartRequests ?? 0,
    failures,
    ok,
    dataDir: keepDir ? dir : null,
  };
}
