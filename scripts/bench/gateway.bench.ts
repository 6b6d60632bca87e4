// npm run bench -- gateway: verified GET /nym through the HTTP gateway (@quire/gateway, keep-alive, concurrent
// clients) against a 4-node pool on this machine (real quire-node processes on loopback, free ports, temp dir, the
// default configuration), and the same reads made directly with the SDK in the same run: requests/s, p50/p99 latency
// and the gateway's overhead as a ratio. GATEWAY_BENCH_SECONDS (default 10) per phase, GATEWAY_BENCH_CONCURRENCY (32).
import { Agent, request } from 'node:http';
import { DidKey, buildGetNymRequest, buildNymRequest, signRequest, type Pool } from '@quire/client';
import { Gateway } from '@quire/gateway';
import { TRUSTEE_SEED } from '../../devnet/lib/node-api.js';
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
}

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** `CONCURRENCY` loops calling `op` for `SECONDS` seconds (after a 2 s warm-up). */
async function run(op: () => Promise<void>): Promise<Phase> {
  const warmEnd = performance.now() + 2000;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < warmEnd) await op().catch(() => undefined);
  }));
  const lat: number[] = [];
  let errors = 0;
  const t0 = performance.now();
  const end = t0 + SECONDS * 1000;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < end) {
      const s = performance.now();
      try {
        await op();
        lat.push(performance.now() - s);
      } catch {
        errors++;
      }
    }
  }));
  const elapsed = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  return { rate: lat.length / elapsed, p50: pct(lat, 50), p99: pct(lat, 99), errors };
}

async function main(): Promise<void> {
  console.log(`gateway: ${CONCURRENCY} concurrent clients, ${SECONDS} s per phase; starting a 4-node pool (nodes from ${TestPool.binDescription()}) ...`);
  const pool = await TestPool.start({ name: 'bench-gateway', orderingTimeoutMs: 240_000 });
  let gw: Gateway | undefined;
  try {
    const client: Pool = await pool.client();
    const trustee = DidKey.fromSeed(TRUSTEE_SEED);
    const target = DidKey.random();
    await client.submitWrite(signRequest(buildNymRequest({ submitter: trustee.did, dest: target.did, verkey: target.verkey }), trustee));
    gw = await Gateway.create({ port: 0, rateLimit: { max: 0, windowMs: 60_000 } }, { pool: client });
    const url = new URL(await gw.listen());
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const path = `/nym/${target.did}`;
    const viaGateway = (): Promise<void> =>
      new Promise((resolve, reject) => {
        const req = request({ host: url.hostname, port: url.port, path, agent }, (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 && res.headers['x-quire-verified'] === 'proof' ? resolve() : reject(new Error(`status ${res.statusCode}`))));
        });
        req.on('error', reject);
        req.end();
      });
    const direct = async (): Promise<void> => {
      const out = await client.submitRead(buildGetNymRequest({ dest: target.did }));
      if (!out.verified) throw new Error('not verified');
    };
    const g = await run(viaGateway);
    const d = await run(direct);
    agent.destroy();
    record('gateway GET /nym (verified by proof, keep-alive)', g.rate, TARGET, 'req/s');
    record('gateway GET /nym p50', g.p50, undefined, 'ms');
    record('gateway GET /nym p99', g.p99, undefined, 'ms');
    record('SDK submitRead GET_NYM (same pool, same run)', d.rate, undefined, 'reads/s');
    record('SDK submitRead p50', d.p50, undefined, 'ms');
    record('SDK submitRead p99', d.p99, undefined, 'ms');
    record('gateway / SDK throughput ratio', g.rate / d.rate, undefined, 'x');
    if (g.errors + d.errors > 0) console.log(`errors: gateway ${g.errors}, SDK ${d.errors}`);
    console.log(`RESULT gateway_rps=${Math.round(g.rate)} p50_ms=${g.p50.toFixed(2)} p99_ms=${g.p99.toFixed(2)} sdk_rps=${Math.round(d.rate)} ratio=${(g.rate / d.rate).toFixed(2)}`);
  } finally {
    await gw?.close();
    await pool.close();
  }
}

await main();
process.exit(0);
