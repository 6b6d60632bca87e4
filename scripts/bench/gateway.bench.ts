// npm run bench -- gateway: verified GET /nym through the HTTP gateway (keep-alive, concurrent clients) against a
// 4-node pool on this machine (real quire-node processes on loopback, free ports, temp dir, the default
// configuration), and the same reads made directly with the SDK in the same run: requests/s, p50/p99 latency, the
// gateway's overhead as a ratio, and CPU per request of each process. The gateway runs as users run it: its own
// `quire-gateway` process (built bin when dist is fresh, else the sources through tsx) with its defaults, except
// `--rate-limit 0` (every request of the benchmark comes from one address). GATEWAY_BENCH_SECONDS (default 10) per
// phase, GATEWAY_BENCH_CONCURRENCY (32), GATEWAY_BENCH_CPU_PROF (a directory: a CPU profile of the gateway process).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';
import { DidKey, buildGetNymRequest, buildNymRequest, signRequest, type Pool } from '@quire/client';
import { TRUSTEE_SEED } from '../../devnet/lib/node-api.js';
import { cliArgv } from '../../test/support/build.js';
import { TestPool } from '../../test/support/test-pool.js';
import { record } from './lib.js';

const SECONDS = Number(process.env.GATEWAY_BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.GATEWAY_BENCH_CONCURRENCY ?? 32);
const TARGET = 2000;

interface Phase {
  rate: number;
  p50: number;
  p99: number;
  errors: number;
  seconds: number;
}

/** User + system CPU seconds of a process (Linux /proc; 0 where it cannot be read). */
function cpuSecondsOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return 0;
  }
}

/** Starts `quire-gateway` on the pool's genesis file and resolves with its URL (its `--json` startup line). */
async function startGateway(genesisFile: string): Promise<{ child: ChildProcess; url: URL }> {
  const argv = cliArgv({ dist: 'packages/gateway/dist/cli.js', built: 'packages/gateway/bin/quire-gateway.js', source: 'test/support/bin/quire-gateway.ts' });
  const prof = process.env.GATEWAY_BENCH_CPU_PROF; // a directory: profile the gateway process (node --cpu-prof)
  const flags = prof === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', prof];
  const child = spawn(
    argv[0]!,
    [...flags, ...argv.slice(1), '--genesis', genesisFile, '--host', '127.0.0.1', '--port', '0', '--rate-limit', '0', '--log-level', 'warn', '--json'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<URL>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('quire-gateway printed no startup line in 60 s')), 60_000);
    child.once('exit', (code) => reject(new Error(`quire-gateway exited with ${code} before listening`)));
    lines.once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve(new URL((JSON.parse(line) as { url: string }).url));
      } catch {
        reject(new Error(`quire-gateway's startup line is not JSON: ${line}`));
      }
    });
  }).catch((e: unknown) => {
    child.kill('SIGKILL');
    throw e;
  });
  return { child, url };
}

async function stopGateway(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** `CONCURRENCY` loops calling `op` for `SECONDS` seconds (after a 2 s warm-up). */
async function run(op: () => Promise<void>): Promise<Phase> {
  const warmEnd = performance.now() + 2000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < warmEnd) await op().catch(() => undefined);
    }),
  );
  const lat: number[] = [];
  let errors = 0;
  const t0 = performance.now();
  const end = t0 + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const s = performance.now();
        try {
          await op();
          lat.push(performance.now() - s);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  return { rate: lat.length / elapsed, p50: pct(lat, 50), p99: pct(lat, 99), errors, seconds: elapsed };
}

async function main(): Promise<void> {
  console.log(`gateway: ${CONCURRENCY} concurrent clients, ${SECONDS} s per phase; starting a 4-node pool (nodes from ${TestPool.binDescription()}) ...`);
  const pool = await TestPool.start({ name: 'bench-gateway', orderingTimeoutMs: 240_000 });
  let gw: ChildProcess | undefined;
  try {
    const client: Pool = await pool.client();
    const trustee = DidKey.fromSeed(TRUSTEE_SEED);
    const target = DidKey.random();
    await client.submitWrite(signRequest(buildNymRequest({ submitter: trustee.did, dest: target.did, verkey: target.verkey }), trustee));
    const started = await startGateway(pool.genesisFile);
    gw = started.child;
    const url = started.url;
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const path = `/nym/${target.did}`;
    const viaGateway = (): Promise<void> =>
      new Promise((resolve, reject) => {
        const req = request({ host: url.hostname, port: url.port, path, agent }, (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 && res.headers['x-quire-verified'] === 'proof' ? resolve() : reject(new Error(`status ${res.statusCode}`)),
          );
        });
        req.on('error', reject);
        req.end();
      });
    const direct = async (): Promise<void> => {
      const out = await client.submitRead(buildGetNymRequest({ dest: target.did }));
      if (!out.verified) throw new Error('not verified');
    };
    const nodesCpu = (): number => pool.nodes.reduce((sum, n) => sum + cpuSecondsOf(n.pid), 0);
    const measured = async (op: () => Promise<void>): Promise<Phase & { gatewayMs: number; nodesMs: number; benchMs: number }> => {
      const g0 = cpuSecondsOf(gw?.pid);
      const n0 = nodesCpu();
      const b0 = process.cpuUsage();
      const out = await run(op);
      const b = process.cpuUsage(b0);
      const total = out.rate * (out.seconds + 2); // the warm-up's requests are counted in the CPU too
      return {
        ...out,
        gatewayMs: ((cpuSecondsOf(gw?.pid) - g0) * 1000) / total,
        nodesMs: ((nodesCpu() - n0) * 1000) / total,
        benchMs: (b.user + b.system) / 1000 / total,
      };
    };
    const g = await measured(viaGateway);
    const d = await measured(direct);
    agent.destroy();
    record('gateway GET /nym (verified by proof, keep-alive)', g.rate, TARGET, 'req/s');
    record('gateway GET /nym p50', g.p50, undefined, 'ms');
    record('gateway GET /nym p99', g.p99, undefined, 'ms');
    record('SDK submitRead GET_NYM (same pool, same run)', d.rate, undefined, 'reads/s');
    record('SDK submitRead p50', d.p50, undefined, 'ms');
    record('SDK submitRead p99', d.p99, undefined, 'ms');
    record('gateway / SDK throughput ratio', g.rate / d.rate, undefined, 'x');
    console.log(
      `CPU per request (approximate: the 2 s warm-up counted at the measured rate): gateway phase: quire-gateway ${g.gatewayMs.toFixed(3)} ms, 4 nodes ${g.nodesMs.toFixed(3)} ms, HTTP load generator ${g.benchMs.toFixed(3)} ms; SDK phase: 4 nodes ${d.nodesMs.toFixed(3)} ms, SDK (verifying) ${d.benchMs.toFixed(3)} ms`,
    );
    if (g.errors + d.errors > 0) console.log(`errors: gateway ${g.errors}, SDK ${d.errors}`);
    console.log(
      `RESULT gateway_rps=${Math.round(g.rate)} p50_ms=${g.p50.toFixed(2)} p99_ms=${g.p99.toFixed(2)} sdk_rps=${Math.round(d.rate)} ratio=${(g.rate / d.rate).toFixed(2)}`,
    );
  } finally {
    if (gw !== undefined) await stopGateway(gw);
    await pool.close();
  }
}

await main();
process.exit(0);
