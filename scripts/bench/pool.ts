// npm run bench:pool -- [--duration S] [--rate R] [--phases crypto,open,sustain,max,curve,reads,catchup,viewchange] ...
// How fast a 4-node Quire pool is on this machine, measured the way users measure it: a devnet on
// free ports in a temporary directory, the load generator of scripts/load driving it through
// @quire/client, the crypto floor of one write for comparison, catch-up of a node left behind and
// the time from a primary crash to the first batch ordered in the new view, and a load curve from
// light load to five times the pool's capacity (written as an SVG). The nodes run the default
// configuration unless --consensus asks for a tuned run (printed as such). Ends with a table and
//   RESULT writes_per_s=<n> p50_ms=<n> p99_ms=<n> reads_per_s=<n> lost=<n>
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Session } from 'node:inspector/promises';
import { Command, InvalidArgumentError } from 'commander';
import { isPlainObject, parseJson, stringifyJson } from '@quire/common';
import { NodeConnection, PoolLedger, buildGetTxnRequest } from '@quire/client';
import { LoopWaitMonitor, type LoopWaitSummary } from '@quire/node';
import { readPoolGenesis, waitForOrdering } from '../../devnet/lib/wait-ordering.js';
import { BenchPool, effectiveNodeConfig, findFreeBasePort, metricSum } from '../load/lib/bench-pool.js';
import { type CurvePoint, curveSvg } from '../load/lib/curve-plot.js';
import { summarizeProfiles } from '../load/lib/cpu-profile.js';
import { checkDataDirs, type LedgerCheck } from '../load/lib/ledger-check.js';
import { formatLedgerCheck, formatLoadReport } from '../load/lib/report.js';
import { LOAD_LEDGER, runLoad, type LoadReport, type UnackedWrite } from '../load/lib/run.js';
import { fmt } from '../load/lib/stats.js';
import { LoadTarget, type Ack } from '../load/lib/target.js';
import { cryptoCeiling, measureCryptoCosts, type CryptoCosts } from './crypto-floor.js';

/** the writes offered while a node catches up stop when it is caught up, at the latest after this */
const CATCHUP_WRITES_MAX_MS = 90_000;
/** GET_NYM reads prepared per second of the reads phase (a closed loop ends when they are used up) */
const READS_PRESIGNED_PER_S = 8_000;

const PHASES = ['crypto', 'open', 'sustain', 'max', 'curve', 'reads', 'catchup', 'viewchange'] as const;
type Phase = (typeof PHASES)[number];

interface Opts {
  duration: number;
  rate: number;
  sustainRate: number;
  concurrency: number;
  readConcurrency: number;
  connections: number;
  readConnections: number;
  catchupTxns: number;
  catchupRate: number;
  curveRates: number[];
  curveDuration: number;
  recoverySteps: number;
  plot: string;
  phases: Phase[];
  nodeBin: 'auto' | 'source' | 'build';
  cpuProf?: string;
  consensus: Record<string, number>;
  warmup: number;
  keep?: boolean;
  timeout: number;
}

function positive(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${name} must be a positive number`);
    return n;
  };
}

function nonNegative(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`${name} must be a number >= 0`);
    return n;
  };
}

/** `--consensus key=value`, repeatable: consensus options of every node's config (node config `consensus.*`). */
function consensusOption(v: string, acc: Record<string, number>): Record<string, number> {
  const m = /^([A-Za-z0-9]+)=(.+)$/.exec(v);
  const n = m === null ? Number.NaN : Number(m[2]);
  if (m === null || !Number.isFinite(n)) throw new InvalidArgumentError(`--consensus takes key=number (e.g. max3pcBatchWaitMs=20), got "${v}"`);
  return { ...acc, [m[1]!]: n };
}

function rateList(v: string): number[] {
  const list = v.split(',').map((x) => Number(x.trim()));
  if (list.length === 0 || list.some((n) => !Number.isFinite(n) || n <= 0))
    throw new InvalidArgumentError(`--curve-rates takes positive numbers separated by commas, got "${v}"`);
  return list;
}

function phaseList(v: string): Phase[] {
  const list = v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const p of list) if (!(PHASES as readonly string[]).includes(p)) throw new InvalidArgumentError(`unknown phase "${p}"; phases: ${PHASES.join(',')}`);
  return list as Phase[];
}

const opts = new Command('bench:pool')
  .description('Benchmark a 4-node devnet on this machine: write throughput and latency, verified reads, catch-up, view change, crypto floor.')
  .option('--duration <s>', 'seconds of each load phase', positive('--duration'), 60)
  .option('--rate <n>', 'open-loop phase: NYM writes per second offered', positive('--rate'), 300)
  .option('--sustain-rate <n>', 'sustain phase: NYM writes per second offered', positive('--sustain-rate'), 1000)
  // enough in flight to find the maximum: 256 bound the closed loop to 256 / round trip (about 800/s, in lock-step)
  .option('--concurrency <n>', 'closed-loop write phase: requests in flight', positive('--concurrency'), 1024)
  .option('--read-concurrency <n>', 'read phase: requests in flight', positive('--read-concurrency'), 512)
  // one connection per node by default, as one client application has: the many requests in flight on it leave in
  // few Noise frames (8 connections per node cost 2-3x the CPU per read); the node's default limits let one
  // connection carry the pool's whole rate. --connections spreads the writes as many clients would
  .option('--connections <n>', 'client connections to every node (write phases)', positive('--connections'), 1)
  .option('--read-connections <n>', 'client connections to every node in the reads phase', positive('--read-connections'), 1)
  .option('--catchup-txns <n>', 'catch-up phase: txns written while one node is down', positive('--catchup-txns'), 50_000)
  .option(
    '--catchup-rate <n>',
    'catch-up phase: NYM writes per second offered (open loop) while the node catches up (0: none)',
    nonNegative('--catchup-rate'),
    700,
  )
  .option('--curve-rates <list>', 'curve phase: NYM write rates offered, one step each', rateList, [100, 300, 600, 1000, 1500, 2500])
  .option('--curve-duration <s>', 'curve phase: seconds of each step', positive('--curve-duration'), 30)
  .option('--recovery-steps <n>', 'curve phase: 5 s steps at 300/s after the last rate, each timed on its own (0: none)', nonNegative('--recovery-steps'), 4)
  .option('--plot <file>', 'curve phase: the SVG plot written', 'bench-pool-curve.svg')
  .option('--phases <list>', `comma-separated subset of ${PHASES.join(',')}`, phaseList, [...PHASES])
  .option('--node-bin <mode>', 'auto | source | build (see docs/devnet.md)', 'auto')
  .option('--cpu-prof <dir>', 'profile every node process (node --cpu-prof) into this directory and summarize')
  .option(
    '--consensus <key=value>',
    'a consensus option of every node (node config consensus.*), repeatable: a tuned run, not the default',
    consensusOption,
    {},
  )
  .option(
    '--warmup <s>',
    'seconds of NYM writes at half the sustain rate before the measured phases (JIT, caches, connections; 0: none)',
    nonNegative('--warmup'),
    10,
  )
  .option('--keep', "keep the pool's data directory (printed) instead of deleting it")
  .option('--timeout <ms>', 'deadline of one request', positive('--timeout'), 30_000)
  .showHelpAfterError()
  .parse(process.argv)
  .opts<Opts>();

const say = (l: string): void => void process.stderr.write(`bench:pool: ${l}\n`);
// the SDK this process drives the pool with, as resolved (packages/client/dist or src: see pool-launch.ts)
say(`load generator SDK: ${relative(process.cwd(), fileURLToPath(import.meta.resolve('@quire/client')))}`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const has = (p: Phase): boolean => opts.phases.includes(p);
const rows: [string, string, string][] = [];
const row = (what: string, value: string, target = ''): void => void rows.push([what, value, target]);
const allAcks: Ack[] = [];
const allUnacked: UnackedWrite[] = [];
/** the BLS cost of each measured phase */
const blsLines: string[] = [];

// ---- crypto floor (no pool needed) -------------------------------------------------------------
let costs: CryptoCosts | undefined;
const cores = availableParallelism();
if (has('crypto')) {
  say(
    `crypto floor on ${cores} cores (load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')})`,
  );
  costs = await measureCryptoCosts(4);
  for (const b of [1, 10, 100, 500]) {
    const c = cryptoCeiling(costs, b, cores);
    row(`crypto ceiling, batches of ${b}`, `${fmt(c.writesPerSecond)} writes/s (${fmt(c.cpuPerWriteUs)} us CPU per write)`);
  }
}

const needPool = opts.phases.some((p) => p !== 'crypto');
let lost: number | undefined;
/** Something went wrong: the pool's directory (node logs, databases) is kept for inspection. */
let inspect = false;
const results: { writes?: number; p50?: number; p99?: number; reads?: number } = {};
/** the load generator's CPU profiles of the measured phases (--cpu-prof), by file name, written after the nodes' summary */
const generatorProfiles: { file: string; profile: string }[] = [];
if (needPool) {
  const dir = mkdtempSync(join(tmpdir(), 'quire-bench-pool-'));
  if (opts.cpuProf !== undefined) mkdirSync(resolve(opts.cpuProf), { recursive: true });
  const basePort = await findFreeBasePort(4);
  const tuned = Object.keys(opts.consensus).length > 0;
  const nodeCfg = effectiveNodeConfig(opts.consensus);
  say(`node configuration (${tuned ? 'TUNED, not the default' : 'the defaults'}): ${JSON.stringify(nodeCfg)}`);
  row('node configuration', tuned ? `TUNED: consensus ${JSON.stringify(opts.consensus)} over the defaults` : 'the defaults (no option changed)');
  row(
    '  consensus',
    Object.entries(nodeCfg.consensus)
      .filter(([k]) => /batch|RequestQueue|Timeout|tick/i.test(k))
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(' '),
  );
  row(
    '  limits',
    Object.entries(nodeCfg.limits)
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(' '),
  );
  const pool = await BenchPool.create({
    dataDir: dir,
    nodes: 4,
    basePort,
    nodeBin: opts.nodeBin,
    logLevel: 'info',
    consensus: opts.consensus,
    ...(opts.cpuProf !== undefined ? { cpuProfDir: resolve(opts.cpuProf) } : {}),
  });
  const genesisText = pool.genesisText();
  const validators = PoolLedger.fromGenesis(genesisText).validators();
  const onSignal = (): void => {
    say('interrupted: stopping the nodes');
    void pool.stopAll().then(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let target: LoadTarget | undefined;
  try {
    say(`starting 4 nodes in ${dir} (base port ${basePort})`);
    pool.startAll();
    const ordered = await waitForOrdering(readPoolGenesis(pool.genesisFile), { timeoutMs: 240_000 });
    say(`the pool orders (probe NYM at seqNo ${ordered.seqNo} after ${(ordered.elapsedMs / 1000).toFixed(1)} s)`);
    target = await LoadTarget.open(genesisText, opts.connections, { writeTimeoutMs: opts.timeout, readTimeoutMs: opts.timeout });
    // CPU seconds of every node process (prom-client's process_cpu_seconds_total) and of this process (the load
    // generator): per completed request they say how much work one request costs, whatever else loads the machine
    // and the writes the nodes refused with REQNACK (pool overloaded, in these runs): the client asks such a node
    // again when another node took the write in, so they show here and not as refused writes
    const nodeCpu = async (): Promise<
      | {
          cpu: number;
          batches: number;
          nacks: number;
          bls: Map<string, number>;
          blsSeconds: number;
          stages: Map<string, { sum: number; count: number }>;
          loopP99: number[];
          loopMax: number[];
          loopWait: Array<Map<string, number>>;
          refusedAt: Map<string, number>;
          expired: number;
          pushesDropped: number;
          sessionsClosed: Map<string, number>;
        }
      | undefined
    > => {
      const stages = new Map<string, { sum: number; count: number }>();
      const loopP99: number[] = [];
      const loopMax: number[] = [];
      // the wait of a frame arriving at a random instant for each node's event loop (quire_event_loop_wait_seconds)
      const loopWait: Array<Map<string, number>> = [];
      // the nodes' refusals as the frame was read and after the client host's inbox (quire_client_refusals_total)
      const refusedAt = new Map<string, number>();
      let cpu = 0;
      let batches = 0;
      let nacks = 0;
      let expired = 0;
      let pushesDropped = 0;
      const sessionsClosed = new Map<string, number>();
      let blsSeconds = 0;
      const bls = new Map<string, number>();
      for (const v of validators) {
        const m = await pool.metrics(v.alias);
        const s = metricSum(m, 'quire_process_cpu_seconds_total');
        if (s === undefined) return undefined;
        cpu += s;
        const wait = new Map<string, number>();
        loopWait.push(wait);
        batches = Math.max(batches, metricSum(m, 'quire_batches_ordered_total') ?? 0);
        for (const [k, n] of m ?? []) {
          if (k.startsWith('quire_client_requests_total{') && k.includes('kind="write"') && k.includes('outcome="nack"')) nacks += n;
          // reply targets released before their write was answered (the node's reply expiry), answers not sent
          if (k.startsWith('quire_client_requests_total{') && k.includes('kind="write"') && k.includes('outcome="expired"')) expired += n;
          if (k.startsWith('quire_client_pushes_dropped_total')) pushesDropped += n;
          const closed = /^quire_client_sessions_closed_total\{.*reason="([a-z-]+)"/.exec(k)?.[1];
          if (closed !== undefined) sessionsClosed.set(closed, (sessionsClosed.get(closed) ?? 0) + n);
          const op = /^quire_bls_operations_total\{.*op="([a-z_]+)"/.exec(k)?.[1];
          if (op !== undefined) bls.set(op, (bls.get(op) ?? 0) + n);
          const st = /^quire_write_stage_seconds_(sum|count)\{.*stage="([a-z]+)"/.exec(k);
          if (st !== null) {
            const e = stages.get(st[2]!) ?? { sum: 0, count: 0 };
            if (st[1] === 'sum') e.sum += n;
            else e.count += n;
            stages.set(st[2]!, e);
          }
          const lq = /^quire_event_loop_delay_seconds\{.*quantile="([0-9.]+)"/.exec(k)?.[1];
          if (lq === '0.99') loopP99.push(n);
          else if (lq === '1') loopMax.push(n);
          const lw = /^quire_event_loop_wait_seconds\{.*stat="([a-z0-9.]+)"/.exec(k)?.[1];
          if (lw !== undefined) wait.set(lw, n * 1000);
          if (k.startsWith('quire_event_loop_busy_ratio')) wait.set('busy', n);
          const where = /^quire_client_refusals_total\{.*where="([a-z]+)"/.exec(k)?.[1];
          if (where !== undefined) refusedAt.set(where, (refusedAt.get(where) ?? 0) + n);
        }
        blsSeconds += metricSum(m, 'quire_bls_seconds_total') ?? 0;
      }
      return { cpu, batches, nacks, bls, blsSeconds, stages, loopP99, loopMax, loopWait, refusedAt, expired, pushesDropped, sessionsClosed };
    };
    const load = async (name: string, o: Parameters<typeof runLoad>[1]): Promise<LoadReport & { nodeCpuPerOkMs?: number; batches?: number }> => {
      say(`== phase ${name}`);
      const cpu0 = await nodeCpu();
      // --cpu-prof: the load generator (the SDK's write and read paths) is profiled over each measured phase's loop
      const prof = opts.cpuProf === undefined || name.startsWith('warm-up') ? undefined : new Session();
      prof?.connect();
      // the load generator's own event loop, as a REQNACK arriving at a random instant finds it (see loopWaitLine)
      const generatorWait = new LoopWaitMonitor();
      generatorWait.start();
      const onStart = o.onStart;
      const r = await runLoad(target!, {
        ...o,
        log: (l) => say(`  ${l}`),
        ...(prof === undefined
          ? {}
          : {
              onStart: () => {
                onStart?.();
                void prof.post('Profiler.enable').then(() => prof.post('Profiler.start'));
              },
            }),
      });
      if (prof !== undefined) {
        const file = `${String(generatorProfiles.length + 1).padStart(2, '0')}-${name.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '')}.cpuprofile`;
        generatorProfiles.push({ file, profile: JSON.stringify((await prof.post('Profiler.stop')).profile) });
        prof.disconnect();
      }
      generatorWait.stop();
      const cpu1 = await nodeCpu();
      allAcks.push(...r.acks);
      allUnacked.push(...r.unacked);
      for (const l of formatLoadReport(r)) say(`  ${l}`);
      const done = r.kinds.reduce((a, k) => a + k.outcomes.counts.ok, 0);
      if (r.overloaded > 0)
        say(
          `  refused as overloaded: ${r.overloaded.toLocaleString('en-US')}, answered in p50 ${fmt(r.overloadedLatency?.p50)} ms, p99 ${fmt(r.overloadedLatency?.p99)} ms from the due time; p50 ${fmt(r.overloadedSinceSend?.p50)} ms, p99 ${fmt(r.overloadedSinceSend?.p99)} ms from the send`,
        );
      if (done > 0 && cpu0 !== undefined && cpu1 !== undefined) {
        const batches = cpu1.batches - cpu0.batches;
        say(
          `  CPU per completed request: ${fmt(((cpu1.cpu - cpu0.cpu) * 1000) / done, 3)} ms in the 4 nodes together, ${fmt(r.generatorCpuMs / done, 3)} ms in the load generator; ${batches} batches ordered, ${fmt(done / Math.max(1, batches))} requests per batch`,
        );
        if (cpu1.nacks > cpu0.nacks) say(`  REQNACKs sent by the nodes: ${(cpu1.nacks - cpu0.nacks).toLocaleString('en-US')}`);
        const atFrame = (cpu1.refusedAt.get('frame') ?? 0) - (cpu0.refusedAt.get('frame') ?? 0);
        const queued = (cpu1.refusedAt.get('queued') ?? 0) - (cpu0.refusedAt.get('queued') ?? 0);
        if (atFrame + queued > 0)
          say(
            `  writes refused as overloaded by the nodes: ${atFrame.toLocaleString('en-US')} as the frame was read, ${queued.toLocaleString('en-US')} after waiting in the client host's inbox (frames read in one go beyond the door's turn)`,
          );
        // why a client may wait in vain for a node's answer: its reply target released, its answer not sent, its session ended
        const closed = [...cpu1.sessionsClosed]
          .map(([reason, n]) => [reason, n - (cpu0.sessionsClosed.get(reason) ?? 0)] as const)
          .filter(([, n]) => n > 0)
          .map(([reason, n]) => `${reason} ${n}`);
        if (cpu1.expired > cpu0.expired || cpu1.pushesDropped > cpu0.pushesDropped || closed.length > 0)
          say(
            `  nodes' reply targets of writes released unanswered: ${(cpu1.expired - cpu0.expired).toLocaleString('en-US')}; REPLY/REJECT not sent: ${(cpu1.pushesDropped - cpu0.pushesDropped).toLocaleString('en-US')}; client sessions ended: ${closed.length > 0 ? closed.join(', ') : 'none'}`,
          );
        if (batches > 0) {
          // per node and ordered batch (4 nodes; every node orders every batch)
          const per = (op: string): string => fmt(((cpu1.bls.get(op) ?? 0) - (cpu0.bls.get(op) ?? 0)) / (validators.length * batches), 2);
          const share = (100 * (cpu1.blsSeconds - cpu0.blsSeconds)) / Math.max(1e-9, cpu1.cpu - cpu0.cpu);
          const line = `BLS per node and ordered batch: ${per('verify_multi')} aggregate verifications, ${per('verify_share')} share verifications, ${per('sign')} shares signed, ${per('aggregate')} aggregations; ${share.toFixed(1)} % of the nodes' CPU`;
          say(`  ${line}`);
          blsLines.push(`${name}: ${line}`);
        }
        // where a write's time went, mean per stage over the 4 nodes (quire_write_stage_seconds), and how late the nodes' event loops ran
        const stageLine = ['door', 'verify', 'queue', 'finalise', 'batch', 'prepare', 'commit', 'durable', 'reply']
          .map((st) => {
            const a = cpu1.stages.get(st);
            const b = cpu0.stages.get(st) ?? { sum: 0, count: 0 };
            return a === undefined || a.count <= b.count ? undefined : `${st} ${fmt(((a.sum - b.sum) * 1000) / (a.count - b.count), 1)}`;
          })
          .filter((x) => x !== undefined)
          .join(', ');
        if (stageLine !== '') say(`  write path at the nodes, mean ms per stage: ${stageLine}`);
        if (cpu1.loopP99.length > 0)
          say(
            `  node event-loop delay over the phase: p99 ${cpu1.loopP99.map((x) => fmt(x * 1000)).join(' / ')} ms, max ${cpu1.loopMax.map((x) => fmt(x * 1000)).join(' / ')} ms`,
          );
        for (const l of loopWaitLines(cpu1.loopWait, generatorWait.histogram.take(), r.overloaded > 0 ? r.overloadedSinceSend : undefined)) say(`  ${l}`);
        return { ...r, nodeCpuPerOkMs: ((cpu1.cpu - cpu0.cpu) * 1000) / done, batches };
      }
      return r;
    };
    const failures = (r: LoadReport): string => {
      const c = r.kinds.reduce(
        (a, k) => ({ rej: a.rej + k.outcomes.counts.rejected, to: a.to + k.outcomes.counts.timeout, err: a.err + k.outcomes.counts.error }),
        { rej: 0, to: 0, err: 0 },
      );
      return `rejected ${c.rej}, timeouts ${c.to}, errors ${c.err}`;
    };
    const D = opts.duration * 1000;
    if (opts.warmup > 0 && (has('open') || has('sustain') || has('max'))) {
      // not measured: a freshly started node runs its first thousands of requests through V8's interpreter and
      // baseline tiers, and its caches are empty (its acknowledged writes are checked with the others at the end)
      await load(`warm-up, ${opts.warmup} s at ${opts.sustainRate / 2}/s (not measured)`, {
        mix: 'nym',
        rate: opts.sustainRate / 2,
        durationMs: opts.warmup * 1000,
        requestTimeoutMs: opts.timeout,
      });
    }

    if (has('open')) {
      const r = await load(`open loop ${opts.rate}/s`, { mix: 'nym', rate: opts.rate, durationMs: D, requestTimeoutMs: opts.timeout });
      results.p50 = r.writeLatency?.p50;
      results.p99 = r.writeLatency?.p99;
      row(
        `NYM writes offered at ${opts.rate}/s`,
        `${fmt(r.writesPerSecond)}/s acked; p50 ${fmt(r.writeLatency?.p50)} ms, p95 ${fmt(r.writeLatency?.p95)} ms, p99 ${fmt(r.writeLatency?.p99)} ms; ${failures(r)}`,
        'p50 <= 150 ms, p99 <= 1,000 ms',
      );
    }
    if (has('sustain')) {
      const r = await load(`sustained open loop ${opts.sustainRate}/s`, { mix: 'nym', rate: opts.sustainRate, durationMs: D, requestTimeoutMs: opts.timeout });
      row(
        `NYM writes offered at ${opts.sustainRate}/s for ${opts.duration} s`,
        `${fmt(r.writesPerSecond)}/s acked; p50 ${fmt(r.writeLatency?.p50)} ms, p99 ${fmt(r.writeLatency?.p99)} ms; ${failures(r)}`,
        '>= 1,000/s for 60 s',
      );
      results.writes = Math.max(results.writes ?? 0, r.writesPerSecond);
    }
    if (has('max')) {
      const r = await load(`closed loop, ${opts.concurrency} in flight`, {
        mix: 'nym',
        concurrency: opts.concurrency,
        durationMs: D,
        requestTimeoutMs: opts.timeout,
      });
      row(
        `NYM writes, closed loop (${opts.concurrency} in flight)`,
        `${fmt(r.writesPerSecond)}/s; p50 ${fmt(r.writeLatency?.p50)} ms, p99 ${fmt(r.writeLatency?.p99)} ms; ${failures(r)}`,
        '>= 1,000/s',
      );
      results.writes = Math.max(results.writes ?? 0, r.writesPerSecond);
    }
    if (has('curve')) {
      const viewOf = async (): Promise<number> => {
        let v = 0;
        for (const x of validators) v = Math.max(v, metricSum(await pool.metrics(x.alias), 'quire_view_no') ?? 0);
        return v;
      };
      const view0 = await viewOf();
      const points: (CurvePoint & { sent: number; cpu?: number; refuseP50?: number; refuseP99?: number; refuseSentP50?: number; refuseSentP99?: number })[] =
        [];
      for (const rate of opts.curveRates) {
        const r = await load(`curve: ${rate}/s offered for ${opts.curveDuration} s`, {
          mix: 'nym',
          rate,
          durationMs: opts.curveDuration * 1000,
          requestTimeoutMs: opts.timeout,
        });
        const secs = r.schedule.windowMs / 1000;
        const failed = r.kinds.reduce((a, k) => a + k.outcomes.counts.timeout + k.outcomes.counts.error + k.outcomes.counts.rejected, 0) - r.overloaded;
        // the rate the generator actually sent: requests sent over its send window (a loaded machine may not keep up)
        const sent = (r.schedule.sent * 1000) / Math.max(1, r.schedule.sendWindowMs);
        say(
          `  offered ${rate}/s nominal, ${fmt(sent)}/s sent (${r.schedule.sent.toLocaleString('en-US')} in ${fmt(r.schedule.sendWindowMs / 1000, 1)} s)${sent < 0.95 * rate ? ': the generator could not send the nominal rate' : ''}`,
        );
        points.push({
          offered: rate,
          sent,
          acked: r.writesPerSecond,
          refused: r.overloaded / secs,
          failed: failed / secs,
          p50: r.writeLatency?.p50,
          p99: r.writeLatency?.p99,
          ...(r.nodeCpuPerOkMs !== undefined ? { cpu: r.nodeCpuPerOkMs } : {}),
          ...(r.overloadedLatency !== undefined ? { refuseP50: r.overloadedLatency.p50, refuseP99: r.overloadedLatency.p99 } : {}),
          ...(r.overloadedSinceSend !== undefined ? { refuseSentP50: r.overloadedSinceSend.p50, refuseSentP99: r.overloadedSinceSend.p99 } : {}),
        });
      }
      // the load drops back to 300/s: how soon do the writes' latencies come back (5 s steps, each timed alone)
      const recovery: string[] = [];
      for (let i = 0; i < opts.recoverySteps; i++) {
        const r = await load(`curve: recovery step ${i + 1}, 300/s for 5 s`, { mix: 'nym', rate: 300, durationMs: 5_000, requestTimeoutMs: opts.timeout });
        recovery.push(`${5 * i}-${5 * (i + 1)} s: ${fmt(r.writesPerSecond)}/s, p50 ${fmt(r.writeLatency?.p50)} / p99 ${fmt(r.writeLatency?.p99)} ms`);
      }
      const viewChanges = (await viewOf()) - view0;
      const peak = Math.max(...points.map((p) => p.acked));
      for (const p of points) {
        row(
          `curve: ${p.offered}/s offered (${fmt(p.sent)}/s sent)`,
          `${p.sent < 0.95 * p.offered ? 'the generator could not send the nominal rate; ' : ''}${fmt(p.acked)}/s acked (${((100 * p.acked) / peak).toFixed(0)} % of the peak), ${fmt(p.refused)}/s refused${p.refuseP99 !== undefined ? ` (p50 ${fmt(p.refuseP50)} / p99 ${fmt(p.refuseP99)} ms to the refusal from the due time, p50 ${fmt(p.refuseSentP50)} / p99 ${fmt(p.refuseSentP99)} ms from the send)` : ''}, ${fmt(p.failed)}/s timed out or failed; p50 ${fmt(p.p50)} ms, p99 ${fmt(p.p99)} ms; ${p.cpu !== undefined ? `${fmt(p.cpu, 3)} ms node CPU per acked write` : ''}`,
          p.acked < p.offered * 0.95 ? 'overload: >= 90 % of the peak, refusals <= 50 ms' : '',
        );
      }
      if (recovery.length > 0) row('curve: back to 300/s after the last step', recovery.join('; '), 'latency back within seconds');
      row('curve: view changes during the curve', String(viewChanges), '0');
      const title = `bench:pool load curve, ${opts.curveDuration} s per step, ${tuned ? 'TUNED configuration' : 'default configuration'}, ${cores} cores, node ${process.version}`;
      mkdirSync(dirname(resolve(opts.plot)), { recursive: true });
      writeFileSync(resolve(opts.plot), curveSvg(points, title));
      say(`curve plotted in ${resolve(opts.plot)}`);
    }
    if (results.writes !== undefined && costs !== undefined) {
      const c = cryptoCeiling(costs, 500, cores);
      row('write throughput / crypto ceiling (batches of 500)', `${((100 * results.writes) / c.writesPerSecond).toFixed(1)} %`);
    }
    if (has('reads')) {
      const writeTarget = target;
      if (opts.readConnections !== opts.connections)
        target = await LoadTarget.open(genesisText, opts.readConnections, { writeTimeoutMs: opts.timeout, readTimeoutMs: opts.timeout });
      let r: LoadReport;
      try {
        // enough reads for the whole phase: the closed loop's default of 2,000 per second of duration ran out after
        // about half of it at 4,000 reads/s
        r = await load(`verified reads, ${opts.readConcurrency} in flight, ${opts.readConnections} connection(s) per node`, {
          mix: 'read',
          concurrency: opts.readConcurrency,
          durationMs: D,
          presign: Math.ceil(opts.duration * READS_PRESIGNED_PER_S),
          requestTimeoutMs: opts.timeout,
        });
        if (r.schedule.sent >= Math.ceil(opts.duration * READS_PRESIGNED_PER_S))
          say(`  the ${r.schedule.sent.toLocaleString('en-US')} reads prepared were used up before the end of the phase`);
      } finally {
        if (target !== writeTarget) await target.close();
        target = writeTarget;
      }
      results.reads = r.readsPerSecond;
      row(
        `GET_NYM verified by state proof (${opts.readConcurrency} in flight)`,
        `${fmt(r.readsPerSecond)}/s; p50 ${fmt(r.readLatency?.p50)} ms, p99 ${fmt(r.readLatency?.p99)} ms; ${failures(r)}`,
        '>= 5,000/s',
      );
    }
    if (has('catchup')) {
      const victim = validators[validators.length - 1]!;
      const meanwhile = opts.catchupRate > 0 ? ` while ${opts.catchupRate} NYM writes/s are offered (open loop)` : '';
      say(`== phase catch-up: ${victim.alias} stopped, ${opts.catchupTxns} NYMs written, ${victim.alias} restarted${meanwhile}`);
      const before = await ledgerSize(victim);
      await pool.stop(victim.alias);
      await load('catch-up: the writes the stopped node misses (not measured)', {
        mix: 'nym',
        concurrency: opts.concurrency,
        presign: opts.catchupTxns,
        durationMs: 3_600_000,
        requestTimeoutMs: opts.timeout,
      });
      const goal = await ledgerSize(validators[0]!);
      const logOffset = fileSize(pool.node(victim.alias).layout.logFile);
      // the node restarts as the writes offered meanwhile begin; they stop when it holds the `goal` txns it was
      // behind (it is measured to that size: what it catches up of the writes made meanwhile is not counted)
      const stopWrites = new AbortController();
      let t0 = 0;
      let caught: { reached: boolean; last: number; wallMs: number; victimCpuS: number | undefined } | undefined;
      let catching: Promise<void> | undefined;
      const restart = (): void => {
        pool.start(victim.alias);
        t0 = performance.now();
        catching = waitForSize(victim, goal, 600_000).then(async (x) => {
          const wallMs = performance.now() - t0;
          caught = { ...x, wallMs, victimCpuS: metricSum(await pool.metrics(victim.alias), 'quire_process_cpu_seconds_total') };
          stopWrites.abort();
        });
      };
      let bg: LoadReport | undefined;
      if (opts.catchupRate > 0) {
        // at most --concurrency writes in flight: beyond them the generator sheds the offers it cannot send (counted)
        // instead of holding tens of thousands of requests and their timers when the pool falls behind
        bg = await load(`catch-up: ${opts.catchupRate}/s offered while ${victim.alias} catches up`, {
          mix: 'nym',
          rate: opts.catchupRate,
          concurrency: opts.concurrency,
          durationMs: CATCHUP_WRITES_MAX_MS,
          requestTimeoutMs: opts.timeout,
          signal: stopWrites.signal,
          onStart: restart,
        });
        allAcks.push(...bg.acks);
        allUnacked.push(...bg.unacked);
        if (catching === undefined) restart();
      } else restart();
      await catching;
      const { reached, last, wallMs, victimCpuS } = caught!;
      if (!reached) inspect = true;
      // the node may log "caught up" a moment after its domain ledger reached the size (the other ledgers, the log's
      // own buffering): give the line a few seconds to appear
      let fromLog = catchupWindow(pool.node(victim.alias).layout.logFile, logOffset);
      for (let i = 0; i < 50 && fromLog === undefined && reached; i++) {
        await new Promise((r) => setTimeout(r, 100));
        fromLog = catchupWindow(pool.node(victim.alias).layout.logFile, logOffset);
      }
      const behind = goal - before;
      const during =
        bg !== undefined
          ? `; meanwhile ${opts.catchupRate}/s offered: ${fmt(bg.writesPerSecond)}/s acknowledged (p50 ${fmt(bg.writeLatency?.p50)} ms, p99 ${fmt(bg.writeLatency?.p99)} ms; ${failures(bg)}${bg.schedule.shed > 0 ? `; ${bg.schedule.shed} not sent, ${opts.concurrency} in flight` : ''})`
          : '; no writes meanwhile';
      const cpu = reached && victimCpuS !== undefined ? `; ${fmt((victimCpuS * 1e6) / behind)} us of ${victim.alias}'s CPU per txn, its start included` : '';
      say(`  ${victim.alias}: ${reached ? `${behind} txns caught up in ${(wallMs / 1000).toFixed(1)} s` : `stalled at ${last} of ${goal}`}${cpu}${during}`);
      row(
        `catch-up of ${behind.toLocaleString('en-US')} txns${bg !== undefined ? ` while ${opts.catchupRate} writes/s are offered` : ''}`,
        reached
          ? `${fmt((behind * 1000) / wallMs)} txns/s from process start (${(wallMs / 1000).toFixed(1)} s)${fromLog !== undefined ? `; ${fmt((behind * 1000) / fromLog)} txns/s between the node's "catch-up started" and "caught up" (${(fromLog / 1000).toFixed(1)} s)` : ''}${cpu}${during}`
          : `NOT caught up: stalled at ${last} of ${goal} txns after ${(wallMs / 1000).toFixed(0)} s (see ${victim.alias}'s node.log)${during}`,
        '>= 5,000 txns/s',
      );
      if (reached && bg !== undefined) {
        // in step again before the next phase: the writes made meanwhile
        const final = await ledgerSize(validators[0]!);
        const back = await waitForSize(victim, final, 120_000);
        if (!back.reached) say(`  ${victim.alias} did not catch up the writes made meanwhile (at ${back.last} of ${final} txns)`);
      }
    }
    if (has('viewchange')) {
      say('== phase view change: the primary is killed under a light load');
      // a view change needs n-f live nodes in step: measure only from a pool whose nodes all hold the same ledger
      const sizes = await Promise.all(validators.map((v) => ledgerSize(v).catch(() => -1)));
      const behind = validators
        .map((v, i) => ({ alias: v.alias, size: sizes[i]! }))
        .filter((x) => x.size !== Math.max(...sizes))
        .map((x) => `${x.alias} at ${x.size}`);
      let view = 0;
      for (const v of validators) view = Math.max(view, metricSum(await pool.metrics(v.alias), 'quire_view_no') ?? 0);
      const primary = validators[view % validators.length]!.alias;
      const others = validators.filter((v) => v.alias !== primary).map((v) => v.alias);
      if (behind.length > 0) {
        inspect = true;
        row(
          'primary crash -> first batch ordered in the new view',
          `not measured: nodes not in step (${behind.join(', ')} of ${Math.max(...sizes)} txns)`,
          '<= 10 s',
        );
      } else {
        const bg = runLoad(target, { mix: 'nym', rate: 20, durationMs: 40_000, requestTimeoutMs: opts.timeout });
        await sleep(3000);
        const lastOld = new Map<string, number>();
        for (const o of others) lastOld.set(o, metricSum(await pool.metrics(o), 'quire_batches_ordered_total') ?? 0);
        say(`  killing ${primary} (primary of view ${view}) with SIGKILL`);
        const tKill = performance.now();
        await pool.stop(primary, 'SIGKILL');
        const firstNew = new Map<string, number>();
        while (firstNew.size < others.length && performance.now() - tKill < 60_000) {
          for (const o of others) {
            if (firstNew.has(o)) continue;
            const mm = await pool.metrics(o);
            const v = metricSum(mm, 'quire_view_no') ?? 0;
            const b = metricSum(mm, 'quire_batches_ordered_total') ?? 0;
            if (v <= view) lastOld.set(o, b);
            else if (b > lastOld.get(o)!) firstNew.set(o, performance.now() - tKill);
          }
          await sleep(100);
        }
        const times = [...firstNew.values()].sort((a, b) => a - b);
        const f = Math.floor((validators.length - 1) / 3);
        row(
          `primary crash -> first batch ordered in the new view`,
          times.length > 0
            ? `${(times[0]! / 1000).toFixed(2)} s first node; ${times.length > f ? `${(times[f]! / 1000).toFixed(2)} s on f+1 nodes` : 'fewer than f+1 nodes'} (${times.length}/${others.length} ordered within 60 s)`
            : 'no batch ordered in a new view within 60 s',
          '<= 10 s',
        );
        pool.start(primary);
        const r = await bg;
        allAcks.push(...r.acks);
        allUnacked.push(...r.unacked);
        say(`  background load during the view change: ${fmt(r.writesPerSecond)}/s acked, p99 ${fmt(r.writeLatency?.p99)} ms, ${failures(r)}`);
        const goal = await ledgerSize(validators.find((v) => v.alias !== primary)!);
        const back = await waitForSize(
          validators.find((v) => v.alias === primary)!,
          goal,
          120_000,
        );
        if (!back.reached) inspect = true;
        if (!back.reached) say(`  ${primary} did not catch up after its restart (at ${back.last} of ${goal} txns)`);
      }
    }
    // the nodes stopped while one of them is still ordering or catching up the last batches would count what it has
    // not written yet as missing there: each is given time to reach the longest ledger first (and said if it did not)
    if (allAcks.length > 0) {
      const sizes = await Promise.all(validators.map((v) => ledgerSize(v).catch(() => 0)));
      const goal = Math.max(...sizes);
      const settleStart = performance.now();
      const behind = validators.filter((_, i) => (sizes[i] ?? 0) < goal);
      const settled = await Promise.all(behind.map((v) => waitForSize(v, goal, 60_000, 20_000)));
      if (behind.length > 0)
        say(
          `  before the stop: ${behind.map((v, i) => `${v.alias} at ${sizes[validators.indexOf(v)]} of ${goal} txns, ${settled[i]?.reached === true ? 'reached it' : `still at ${settled[i]?.last}`}`).join('; ')} (${fmt(performance.now() - settleStart)} ms)`,
        );
    }
  } finally {
    await target?.close();
    say('stopping the nodes');
    await pool.stopAll();
  }
  // ---- every acknowledged write on every node's ledger, equal roots ----------------------------
  let check: LedgerCheck | undefined;
  if (allAcks.length > 0) {
    check = await checkDataDirs(
      pool.nodes.map((n) => ({ node: n.layout.name, dataDir: n.layout.dataDir })),
      allAcks,
      LOAD_LEDGER,
      allUnacked,
    );
    for (const l of formatLedgerCheck(check)) say(l);
    lost = check.lost;
    if (check.lost > 0 || !check.rootsEqual) inspect = true;
    const u = check.unackedCommitted;
    if (u !== undefined)
      row(
        'writes not acknowledged but committed',
        `${u.rejected} of the rejected (REQNACK by f+1), ${u.timeout} of the timed out, ${u.error} of the failed`,
        '0 rejected',
      );
    const rc = check.rejectedCommitted;
    if (rc !== undefined && rc.examples.length > 0) {
      const top = (m: Record<string, number>): string =>
        Object.entries(m)
          .sort((a, b) => b[1] - a[1])
          .slice(0, 4)
          .map(([k, n]) => `${n} ${k.slice(0, 60)}`)
          .join('; ');
      row('  rejected but committed, by reason', top(rc.byReason), '-');
      row('  rejected but committed, by refusing nodes', top(rc.byNodes), '-');
    }
    row(
      'acknowledged writes lost (all phases, all nodes)',
      `${check.lost} of ${check.acks.toLocaleString('en-US')} missing or different on some node; ${check.underReplicated} on fewer than n-f nodes; roots ${check.rootsEqual ? 'equal' : 'DIFFER'}`,
      '0',
    );
  }
  if (opts.cpuProf !== undefined) {
    const s = summarizeProfiles(resolve(opts.cpuProf));
    say(
      `CPU profiles of the nodes (${s.files} threads, SIGKILLed processes write none): ${(s.busyMs / 1000).toFixed(1)} s busy of ${(s.totalMs / 1000).toFixed(1)} s sampled; shares of busy time:`,
    );
    say('  by area (Node.js internals counted for the package that called them):');
    for (const p of s.byArea) say(`  ${(100 * p.share).toFixed(1).padStart(5)} %  ${p.name}`);
    say('  by package (self time):');
    for (const p of s.byPackage) say(`  ${(100 * p.share).toFixed(1).padStart(5)} %  ${p.name}`);
    say('  top functions (self time):');
    for (const p of s.byFunction) say(`  ${(100 * p.share).toFixed(1).padStart(5)} %  ${p.name}`);
    if (generatorProfiles.length > 0) {
      // a subdirectory as a node's, one file per measured phase: scripts/bench/profile-split.ts <dir> --node generator
      const gdir = join(resolve(opts.cpuProf), 'generator');
      mkdirSync(gdir, { recursive: true });
      for (const g of generatorProfiles) writeFileSync(join(gdir, g.file), g.profile);
      say(`CPU profiles of the load generator, one per measured phase: ${gdir} (${generatorProfiles.map((g) => g.file).join(', ')})`);
    }
  }
  if (opts.keep === true || inspect) say(`pool data kept in ${dir}${inspect ? ' (something failed: see the node logs there)' : ''}`);
  else rmSync(dir, { recursive: true, force: true });

  async function ledgerSize(v: { alias: string; dest: string; clientIp?: string; clientPort?: number }): Promise<number> {
    const d = await getTxnOnce(v, 1);
    return d === null ? 0 : Number(d.ledgerSize);
  }

  /**
   * Polls the node's domain ledger size until it holds `size` txns; gives up after `timeoutMs`, or when the size
   * has not grown for `stallMs`. Returns whether it got there and the last size seen.
   */
  async function waitForSize(
    v: { alias: string; dest: string; clientIp?: string; clientPort?: number },
    size: number,
    timeoutMs: number,
    stallMs = 60_000,
  ): Promise<{ reached: boolean; last: number }> {
    const end = performance.now() + timeoutMs;
    let last = -1;
    let grewAt = performance.now();
    while (performance.now() < end && performance.now() - grewAt < stallMs) {
      try {
        const now = await ledgerSize(v);
        if (now >= size) return { reached: true, last: now };
        if (now > last) {
          last = now;
          grewAt = performance.now();
        }
      } catch {
        // not up yet
      }
      await sleep(200);
    }
    return { reached: false, last };
  }
}

/**
 * Where a refusal's time goes, as the event loops show it: a frame arriving at a random instant waits for the node's
 * event loop to be free before the node reads it and refuses it at the door (the REQNACK is written in the same
 * task), and the REQNACK waits for the load generator's loop in turn. Each figure is the wait of an arrival at a
 * random instant (busy intervals weighted by their length, loop-wait.ts): mean / p50 / p90 / p99 ms, and the share of
 * the phase the loop was busy. The f+1 REQNACKs are the second fastest of the nodes' answers, so the refusal from the
 * send is about the nodes' wait (their second best) plus the generator's, plus the transport.
 */
function loopWaitLines(nodes: Array<Map<string, number>>, generator: LoopWaitSummary, refusals: { p50: number; p99: number } | undefined): string[] {
  const one = (w: { mean: number; p50: number; p90: number; p99: number; busy: number }): string =>
    `${fmt(w.mean)} / ${fmt(w.p50)} / ${fmt(w.p90)} / ${fmt(w.p99)} ms (busy ${(100 * w.busy).toFixed(0)} %)`;
  const perNode = nodes
    .filter((m) => m.has('mean'))
    .map((m) => one({ mean: m.get('mean') ?? 0, p50: m.get('0.5') ?? 0, p90: m.get('0.9') ?? 0, p99: m.get('0.99') ?? 0, busy: m.get('busy') ?? 0 }));
  const lines: string[] = [];
  if (perNode.length > 0) lines.push(`node event-loop wait of a random arrival, mean / p50 / p90 / p99: ${perNode.join('; ')}`);
  lines.push(`load generator event-loop wait of a random arrival, mean / p50 / p90 / p99: ${one(generator)}`);
  if (refusals !== undefined) lines.push(`  refusals from the send, to compare: p50 ${fmt(refusals.p50)} ms, p99 ${fmt(refusals.p99)} ms`);
  return lines;
}

async function getTxnOnce(v: { dest: string; clientIp?: string; clientPort?: number }, seqNo: number): Promise<Record<string, unknown> | null> {
  const c = await NodeConnection.connect({ host: v.clientIp!, port: v.clientPort!, dest: v.dest, timeoutMs: 3000 });
  try {
    const m = parseJson(await c.request(new TextEncoder().encode(stringifyJson(buildGetTxnRequest({ ledgerId: LOAD_LEDGER, seqNo }))))) as Record<
      string,
      unknown
    >;
    const res = m.result;
    return isPlainObject(res) && isPlainObject(res.data) ? res.data : null;
  } finally {
    await c.close();
  }
}

function fileSize(file: string): number {
  try {
    return readFileSync(file).length;
  } catch {
    return 0;
  }
}

/** ms between the node's first "catch-up started" and the following "caught up" log lines after `offset`. */
function catchupWindow(file: string, offset: number): number | undefined {
  let started: number | undefined;
  for (const line of readFileSync(file).subarray(offset).toString('utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    let e: { msg?: string; time?: string };
    try {
      e = JSON.parse(line) as { msg?: string; time?: string };
    } catch {
      continue;
    }
    if (e.msg === 'catch-up started' && started === undefined) started = Date.parse(e.time ?? '');
    else if (e.msg === 'caught up' && started !== undefined) return Date.parse(e.time ?? '') - started;
  }
  return undefined;
}

// ---- the table and the result line -----------------------------------------------------------------
console.log('');
console.log(
  `Quire pool benchmark: 4 nodes on one machine (${cores} cores, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}), node ${process.version}`,
);
const w0 = Math.max(...rows.map((r) => r[0].length), 10);
for (const [what, value, target] of rows) console.log(`${what.padEnd(w0)}  ${value}${target !== '' ? `   [target ${target}]` : ''}`);
for (const l of blsLines) console.log(l);
const n = (x: number | undefined): string => (x === undefined ? 'NA' : String(Math.round(x)));
console.log(`RESULT writes_per_s=${n(results.writes)} p50_ms=${n(results.p50)} p99_ms=${n(results.p99)} reads_per_s=${n(results.reads)} lost=${n(lost)}`);
process.exit(0);
