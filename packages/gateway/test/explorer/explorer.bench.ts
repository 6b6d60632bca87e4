// Server time of the explorer's pages (Fastify inject: from the request to the last byte of the page, no socket).
//
//   node --conditions=quire-source --import tsx --import @quire/common/polyfill packages/gateway/test/explorer/explorer.bench.ts [--pool [--txns N]]
//
// Default: a domain ledger of 100,000 txns behind an in-process pool caller that answers at once, which measures what
// the explorer itself costs (paging, rendering, caching) on a large ledger. --pool: the same pages against a real
// 4-node pool on loopback (test/support/test-pool.ts) through the SDK, where each page's verified reads (state proofs,
// audit paths, BLS multi-signatures) dominate; a GET_TXN's cost grows with log2 of the ledger size only (its audit path).
// Each figure: median and 95th percentile of the runs, cold (first view) apart; the load average when taken.
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import Fastify, { type FastifyInstance } from 'fastify';
import { DidKey, buildNymRequest, signRequest, type ReadOutcome } from '@quire/client';
import type { Request } from '@quire/common';
import { registerExplorer } from '../../src/explorer/index.js';
import { Gateway } from '../../src/index.js';
import type { GatewayPool, PoolCaller } from '../../src/pool-call.js';
import type { RouteContext } from '../../src/vdr-routes.js';

const SIZE = 100_000;
const RUNS = 30;
const H = { accept: 'text/html' };

async function time(app: FastifyInstance, url: string, runs = RUNS): Promise<{ cold: number; p50: number; p95: number }> {
  const once = async (): Promise<number> => {
    const t0 = performance.now();
    const r = await app.inject({ url, headers: H });
    const ms = performance.now() - t0;
    if (r.statusCode !== 200) throw new Error(`${url}: ${r.statusCode} ${r.body.slice(0, 300)}`);
    return ms;
  };
  const cold = await once();
  const xs: number[] = [];
  for (let i = 0; i < runs; i++) xs.push(await once());
  xs.sort((a, b) => a - b);
  return { cold, p50: xs[Math.floor(xs.length / 2)]!, p95: xs[Math.floor(xs.length * 0.95)]! };
}

function print(name: string, r: { cold: number; p50: number; p95: number }): void {
  console.log(`| ${name} | ${r.cold.toFixed(1)} ms | ${r.p50.toFixed(1)} ms | ${r.p95.toFixed(1)} ms | ${loadavg()[0]!.toFixed(1)} |`);
}

const TRUSTEE = 'V4SGRU86Z58d6TV7PBUe6f';
const VERKEY = '~CoRER63DVYnWZtK8uAzNbx';

/** Answers GET_TXN of a SIZE-txn domain ledger (a NYM, then SCHEMA every 50th), GET_NYM, GET_ATTR and VALIDATOR_INFO at once. */
function instantCaller(): PoolCaller {
  const ms = {
    participants: ['Node1', 'Node2', 'Node3'],
    signature: 'sig',
    value: { timestamp: Math.floor(Date.now() / 1000), ledger_id: 1, state_root_hash: 'root', txn_root_hash: 'troot' },
  };
  const out = (result: Record<string, unknown>): ReadOutcome => ({
    result: { ...result, state_proof: { multi_signature: ms } },
    verified: true,
    nodes: ['Node1'],
    rejected: [],
  });
  return {
    read: async (req: Request): Promise<ReadOutcome> => {
      const op = req.operation as Record<string, unknown>;
      if (op.type === '3') {
        const s = op.data as number;
        if (s < 1 || s > SIZE) return out({ data: null });
        const schema = s % 50 === 0;
        const txn = schema
          ? {
              type: '101',
              data: { data: { name: `schema-${s}`, version: '1.0', attr_names: ['a', 'b', 'c'] } },
              metadata: { from: TRUSTEE, reqId: s, digest: 'd'.repeat(64) },
              protocolVersion: 2,
            }
          : {
              type: '1',
              data: { dest: `Did${String(s).padStart(19, '0')}`.slice(0, 22), verkey: VERKEY, alias: `user-${s}` },
              metadata: { from: TRUSTEE, reqId: s, digest: 'd'.repeat(64) },
              protocolVersion: 2,
            };
        return out({
          seqNo: s,
          data: {
            txn,
            txnMetadata: { seqNo: s, txnTime: 1_700_000_000 + s, txnId: `id-${s}` },
            reqSignature: { type: 'ED25519', values: [{ from: TRUSTEE, value: 'sig' }] },
            ver: '1',
            rootHash: 'root',
            auditPath: new Array(17).fill('h'),
            ledgerSize: SIZE,
          },
        });
      }
      if (op.type === '105') {
        const at = op.timestamp as number | undefined;
        if (at !== undefined && at < 1_700_000_500) return out({ data: null });
        const t = at === undefined ? 1_700_090_000 : 1_700_000_600;
        return out({
          seqNo: t - 1_700_000_000,
          txnTime: t,
          data: JSON.stringify({ dest: op.dest, identifier: TRUSTEE, role: '101', seqNo: t - 1_700_000_000, txnTime: t, verkey: VERKEY }),
        });
      }
      return out({ data: null });
    },
    action: async () =>
      Object.fromEntries(
        ['Node1', 'Node2', 'Node3', 'Node4'].map((a) => [
          a,
          {
            op: 'REPLY',
            result: {
              data: {
                node: {
                  alias: a,
                  primary: 'Node1',
                  mode: 'participating',
                  uptimeSec: 100,
                  view: { viewNo: 0 },
                  lastOrdered: { viewNo: 0, ppSeqNo: 9 },
                  ledgers: { domain: { size: SIZE } },
                },
                pool: { n: 4, f: 1, reachable: { count: 4 } },
                software: { version: '0.1.0' },
              },
            },
          },
        ]),
      ),
    write: async () => ({ result: {}, nodes: [] }),
  } as unknown as PoolCaller;
}

const fakePool = {
  status: () => ({
    ledgerSize: 4,
    root: 'r',
    n: 4,
    f: 1,
    validators: ['Node1', 'Node2', 'Node3', 'Node4'].map((alias) => ({ alias, dest: 'd', client: '127.0.0.1:9702', bls: true, connected: true })),
    demoted: [],
  }),
  f: 1,
  n: 4,
} as unknown as GatewayPool;

async function inProcess(): Promise<void> {
  const app = Fastify();
  const ctx: RouteContext = { pool: fakePool, caller: instantCaller(), namespace: 'quire:bench', now: () => 0, lastRefresh: () => undefined };
  registerExplorer(app, ctx, { signerSeed: '000000000000000000000000Trustee1' });
  await app.ready();
  console.log(`explorer pages, domain ledger of ${SIZE.toLocaleString('en')} txns, in-process pool caller (no verification cost), ${RUNS} runs each`);
  console.log('| page | cold | p50 | p95 | load |\n|---|---|---|---|---|');
  print('pool page `/pool`', await time(app, '/pool'));
  print('domain ledger, newest 20 `/ledger/domain`', await time(app, '/ledger/domain'));
  print('domain ledger from seqNo 50,000 `?from=50000`', await time(app, '/ledger/domain?from=50000'));
  print('domain ledger, 100 per page `?from=70000&count=100`', await time(app, '/ledger/domain?from=70000&count=100'));
  print('type filter SCHEMA (scans 500) `?from=30000&type=SCHEMA`', await time(app, '/ledger/domain?from=30000&type=SCHEMA'));
  print('one txn `/ledger/domain/12345`', await time(app, '/ledger/domain/12345'));
  print(`DID page \`/dids/${TRUSTEE}\``, await time(app, `/dids/${TRUSTEE}`));
  await app.close();
}

async function realPool(): Promise<void> {
  const { TestPool } = await import('../../../../test/support/test-pool.js');
  const { TRUSTEE_SEED } = await import('../../../../devnet/lib/node-api.js');
  const pool = await TestPool.start({ name: 'explorer-bench', orderingTimeoutMs: 240_000 });
  let gw: Gateway | undefined;
  try {
    const client = await pool.client();
    const trustee = DidKey.fromSeed(TRUSTEE_SEED);
    const alice = DidKey.random();
    await client.submitWrite(signRequest(buildNymRequest({ submitter: trustee.did, dest: alice.did, verkey: alice.verkey }), trustee));
    // --txns N: the domain ledger first grows by N NYMs (512 in flight), so the pages read a ledger of that size
    const at = process.argv.indexOf('--txns');
    const txns = at < 0 ? 0 : Number(process.argv[at + 1]);
    if (!Number.isSafeInteger(txns) || txns < 0) throw new Error('--txns: a number of NYMs expected');
    if (txns > 0) {
      const t0 = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: 512 }, async () => {
          while (next < txns) {
            next++;
            const d = DidKey.random();
            await client.submitWrite(signRequest(buildNymRequest({ submitter: trustee.did, dest: d.did, verkey: d.verkey }), trustee)).catch(() => undefined);
          }
        }),
      );
      console.log(`wrote ${txns.toLocaleString('en')} NYMs in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    }
    gw = await Gateway.create({ port: 0, rateLimit: { max: 0, windowMs: 60_000 }, explorer: { signerSeed: TRUSTEE_SEED } }, { pool: client });
    const size = (await gw.app.inject({ url: '/', headers: { accept: 'application/json' } })).json<{ pool_mt_size: number }>().pool_mt_size;
    console.log(
      `explorer pages against a real 4-node pool on loopback (pool ledger ${size} txns, ${txns.toLocaleString('en')} NYMs written first), verified reads through the SDK, ${RUNS} runs each`,
    );
    console.log('| page | cold | p50 | p95 | load |\n|---|---|---|---|---|');
    print('pool page `/pool` (VALIDATOR_INFO of 4 nodes, reused 3 s)', await time(gw.app, '/pool'));
    print('domain ledger, newest 20 `/ledger/domain`', await time(gw.app, '/ledger/domain'));
    print('one txn `/ledger/domain/3`', await time(gw.app, '/ledger/domain/3'));
    if (txns > 0) {
      const mid = Math.floor(txns / 2);
      print(`domain ledger from seqNo ${mid} \`/ledger/domain?from=${mid}\``, await time(gw.app, `/ledger/domain?from=${mid}`));
      print(`one txn \`/ledger/domain/${mid}\``, await time(gw.app, `/ledger/domain/${mid}`));
    }
    print(`DID page \`/dids/${alice.did}\` (GET_NYM versions, resolution, ATTRIB: 4 verified reads)`, await time(gw.app, `/dids/${alice.did}`));
  } finally {
    await gw?.close();
    await pool.close();
  }
}

await (process.argv.includes('--pool') ? realPool() : inProcess());
