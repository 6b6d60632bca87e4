// Peer-protocol fuzzer against real node processes: the fuzzer holds a validator's key (Node4 of
// a 4-node pool whose Node1..3 run as real processes), so its connections pass the node host's gate
// and its messages reach the consensus layer. It records the real consensus traffic the honest
// nodes send it (PROPAGATE, PREPREPARE, PREPARE, COMMIT, CHECKPOINT, LEDGER_STATUS...) and sends
// back structure-aware mutations of those messages and of hand-made ones (fast-check values: wrong
// types, huge and negative numbers, long strings, deep nesting; fields deleted and added), msgpack
// bytes truncated, bit-flipped or random, oversized frames, verbatim replays and floods. The three
// honest nodes are n-f: they must keep ordering writes throughout, none may exit, and their memory
// must stay bounded.
//
//   npm run fuzz:peer -- [--messages N] [--seed S] [--json FILE]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { decodeMsgpack, encodeMsgpack } from '@quire/common';
import { NodeHost } from '@quire/network';
import { freePortRun } from '../../test/support/ports.js';
import { nodeSeed } from '../../devnet/lib/node-api.js';
import { poolOrders } from './fuzz-client.js';
import { ChaosPool } from './pool.js';
import { Rng } from './schedule.js';

type Obj = Record<string, unknown>;

const B58_32 = '11111111111111111111111111111111';
const HEX64 = 'ab'.repeat(32);

/** Hand-made consensus messages of every kind (plausible shapes, not valid signatures). */
export function handMade(viewNo: number, ppSeqNo: number): Obj[] {
  const roots = { stateRootHash: B58_32, txnRootHash: B58_32, auditTxnRootHash: B58_32, poolStateRootHash: B58_32 };
  return [
    {
      op: 'PROPAGATE',
      request: {
        identifier: 'V4SGRU86Z58d6TV7PBUe6f',
        reqId: ppSeqNo,
        protocolVersion: 2,
        operation: { type: '1', dest: 'V4SGRU86Z58d6TV7PBUe6f' },
        signature: '1',
      },
      senderClient: 'x',
    },
    {
      op: 'PREPREPARE',
      instId: 0,
      viewNo,
      ppSeqNo,
      ppTime: Math.floor(Date.now() / 1000),
      reqIdr: [HEX64],
      discarded: '[]',
      digest: HEX64,
      ledgerId: 1,
      ...roots,
      sub_seq_no: 0,
      final: true,
    },
    {
      op: 'PREPARE',
      instId: 0,
      viewNo,
      ppSeqNo,
      ppTime: Math.floor(Date.now() / 1000),
      digest: HEX64,
      stateRootHash: B58_32,
      txnRootHash: B58_32,
      auditTxnRootHash: B58_32,
    },
    { op: 'COMMIT', instId: 0, viewNo, ppSeqNo, blsSigs: { '1': B58_32 } },
    { op: 'CHECKPOINT', instId: 0, viewNo, seqNoStart: 0, seqNoEnd: ppSeqNo, digest: B58_32 },
    { op: 'INSTANCE_CHANGE', viewNo: viewNo + 1, reason: 25 },
    { op: 'VIEW_CHANGE', viewNo: viewNo + 1, stableCheckpoint: 0, prepared: [], preprepared: [], checkpoints: [] },
    { op: 'VIEW_CHANGE_ACK', viewNo: viewNo + 1, name: 'Node1', digest: HEX64 },
    { op: 'LEDGER_STATUS', ledgerId: 1, txnSeqNo: 1, viewNo, ppSeqNo, merkleRoot: B58_32, protocolVersion: 2 },
    { op: 'CATCHUP_REQ', ledgerId: 1, seqNoStart: 1, seqNoEnd: 5, catchupTill: 5 },
    { op: 'MESSAGE_REQUEST', msg_type: 'PREPREPARE', params: { instId: 0, viewNo, ppSeqNo } },
  ];
}

const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(2 ** 53, -(2 ** 63), 1e308, -1, 0.5, 2n ** 64n, -(2n ** 70n), 4294967296, null, true, new Uint8Array(3)) },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.integer({ min: 1_000, max: 140_000 }).map((n) => 'z'.repeat(n)),
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 10, max: 3_000 }).map((d) => deepNest(d)) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 20_000 }).map((n) => Array.from({ length: n }, (_, i) => i)) },
);

function deepNest(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { a: v };
  return v;
}

function paths(v: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = [], depth = 0): (string | number)[][] {
  if (depth > 6 || v === null || typeof v !== 'object' || v instanceof Uint8Array) return out;
  for (const [k, child] of Object.entries(v)) {
    const p = [...prefix, Array.isArray(v) ? Number(k) : k];
    out.push(p);
    paths(child, p, out, depth + 1);
  }
  return out;
}

function setAt(root: unknown, path: (string | number)[], value: unknown, del: boolean): void {
  let cur = root as Obj;
  for (let i = 0; i < path.length - 1; i++) cur = cur[path[i] as string] as Obj;
  const last = path[path.length - 1] as string;
  if (del) delete cur[last];
  else cur[last] = value;
}

function encode(v: unknown): Uint8Array {
  try {
    return encodeMsgpack(v);
  } catch {
    return encodeMsgpack({ op: 'PREPARE', bad: describe(v).slice(0, 100) });
  }
}

/** Text of a value msgpack cannot encode; String() itself throws for an object whose toString is no function. */
function describe(v: unknown): string {
  try {
    return JSON.stringify(v) ?? typeof v;
  } catch {
    return Object.prototype.toString.call(v);
  }
}

export type PeerMutation = 'replay' | 'replace' | 'delete' | 'add' | 'truncate' | 'bitflip' | 'random-bytes' | 'oversize' | 'top-level' | 'flood';

export function mutatePeer(base: Obj, rng: Rng, seed: number): { kind: PeerMutation; bytes: Uint8Array } {
  const sample = <T>(a: fc.Arbitrary<T>): T => fc.sample(a, { seed, numRuns: 1 })[0]!;
  const r = rng.next();
  if (r < 0.1) return { kind: 'replay', bytes: encode(base) };
  const msg = structuredClone(base);
  const ps = paths(msg);
  if (r < 0.45 && ps.length > 0) {
    setAt(msg, rng.pick(ps), sample(anyValue), false);
    return { kind: 'replace', bytes: encode(msg) };
  }
  if (r < 0.55 && ps.length > 0) {
    setAt(msg, rng.pick(ps), undefined, true);
    return { kind: 'delete', bytes: encode(msg) };
  }
  if (r < 0.62) {
    (msg as Obj)[sample(fc.string({ minLength: 1, maxLength: 10 }))] = sample(anyValue);
    return { kind: 'add', bytes: encode(msg) };
  }
  const bytes = encode(msg);
  if (r < 0.72) return { kind: 'truncate', bytes: bytes.slice(0, rng.int(0, Math.max(0, bytes.length - 1))) };
  if (r < 0.82) {
    const b = new Uint8Array(bytes);
    for (let i = rng.int(1, 8); i > 0; i--) b[rng.int(0, b.length - 1)]! ^= 1 << rng.int(0, 7);
    return { kind: 'bitflip', bytes: b };
  }
  if (r < 0.88) return { kind: 'random-bytes', bytes: new Uint8Array(sample(fc.uint8Array({ maxLength: 600 }))) };
  if (r < 0.9) return { kind: 'oversize', bytes: encode({ ...msg, pad: 'p'.repeat(rng.int(129 * 1024, 300 * 1024)) }) };
  if (r < 0.95) return { kind: 'top-level', bytes: encode(sample(anyValue)) };
  return { kind: 'flood', bytes: encode(base) };
}

export interface PeerFuzzReport {
  seed: number;
  messages: number;
  sent: number;
  refusedBySender: number;
  byKind: Record<string, number>;
  observedFromPool: Record<string, number>;
  writesDuring: { ok: number; failed: number };
  poolOrdersAfter: boolean;
  exits: string[];
  rssMbMax: Record<string, number>;
  seconds: number;
  ok: boolean;
}

/** Runs the peer fuzzer on a fresh loopback pool (Node1..3 real, the fuzzer as Node4). */
export async function runPeerFuzz(count: number, seed: number, log: (s: string) => void = () => undefined, rssLimitMb = 1536): Promise<PeerFuzzReport> {
  const dir = mkdtempSync(join(tmpdir(), 'quire-fuzz-peer-'));
  const exits: string[] = [];
  const pool = await ChaosPool.create({
    dir,
    nodes: 4,
    net: undefined,
    basePort: await freePortRun(8),
    onUnexpectedExit: (n, e) => exits.push(`${n.name} code ${e.code} signal ${e.signal}`),
  });
  const honest = pool.nodes.slice(0, 3);
  const me = pool.nodes[3]!;
  const t0 = Date.now();
  let host: NodeHost | undefined;
  let ok = false;
  const observed: Record<string, number> = {};
  const captured: Obj[] = [];
  const byKind: Record<string, number> = {};
  let sent = 0;
  let refused = 0;
  const writes = { ok: 0, failed: 0 };
  try {
    for (const n of honest) n.start();
    host = await NodeHost.create({ name: me.name, seed: new Uint8Array(Buffer.from(nodeSeed(me.name), 'utf8')), host: '127.0.0.1', port: me.layout.nodePort });
    host.setValidators(pool.nodes.map((n) => ({ name: n.name, dest: n.dest, host: '127.0.0.1', port: n.layout.nodePort })));
    host.on('message', (_from, data) => {
      try {
        const m = decodeMsgpack(data) as Obj;
        const op = String(m.op);
        observed[op] = (observed[op] ?? 0) + 1;
        if (captured.length < 2_000) captured.push(m);
        else captured[Math.floor(Math.random() * captured.length)] = m;
      } catch {
        observed.undecodable = (observed.undecodable ?? 0) + 1;
      }
    });
    if (!(await poolOrders(pool.genesisFile, 600_000))) throw new Error('the pool (Node1..3) did not order a write before fuzzing');
    log(`pool ordering after ${((Date.now() - t0) / 1000).toFixed(0)} s; fuzzing as ${me.name}`);
    const rss = setInterval(() => pool.sampleRss(), 2_000);
    // a write every few seconds throughout: the honest n-f must keep ordering
    let fuzzing = true;
    const writer = (async () => {
      while (fuzzing) {
        if (await poolOrders(pool.genesisFile)) writes.ok++;
        else writes.failed++;
        await new Promise((r) => setTimeout(r, 3_000));
      }
    })();
    const rng = new Rng(seed);
    const targets = honest.map((n) => n.name);
    for (let i = 0; i < count; i++) {
      const base = captured.length > 0 && rng.chance(0.6) ? rng.pick(captured) : rng.pick(handMade(rng.int(0, 3), rng.int(1, 200)));
      const m = mutatePeer(base, rng, seed * 1_000_003 + i);
      byKind[m.kind] = (byKind[m.kind] ?? 0) + 1;
      const reps = m.kind === 'flood' ? 50 : 1;
      for (let k = 0; k < reps; k++) {
        // the host refuses to send what exceeds the message limit (MESSAGE_TOO_LARGE) or cannot be queued
        let ok = false;
        try {
          ok = host.send(rng.pick(targets), m.bytes);
        } catch {
          ok = false;
        }
        if (ok) sent++;
        else refused++;
      }
      // yield now and then so the sends drain (and the honest nodes' traffic is read)
      if (i % 200 === 199) await new Promise((r) => setTimeout(r, 20));
      if (i % 10_000 === 9_999) log(`${i + 1} messages, ${sent} sent, writes ok ${writes.ok} failed ${writes.failed}`);
    }
    await new Promise((r) => setTimeout(r, 5_000));
    fuzzing = false;
    await writer;
    clearInterval(rss);
    const after = await poolOrders(pool.genesisFile, 120_000);
    pool.sampleRss();
    const rssMbMax = Object.fromEntries(honest.map((n) => [n.name, Math.round(n.maxRssMb)]));
    ok = after && exits.length === 0 && Object.values(rssMbMax).every((v) => v <= rssLimitMb);
    return {
      seed,
      messages: count,
      sent,
      refusedBySender: refused,
      byKind,
      observedFromPool: observed,
      writesDuring: writes,
      poolOrdersAfter: after,
      exits,
      rssMbMax,
      seconds: Math.round((Date.now() - t0) / 1000),
      ok,
    };
  } finally {
    await host?.close();
    await pool.close();
    if (ok) rmSync(dir, { recursive: true, force: true });
    else log(`node logs kept in ${dir}`);
  }
}

async function main(): Promise<void> {
  const a = parseArgs({ options: { messages: { type: 'string' }, seed: { type: 'string' }, json: { type: 'string' } } }).values;
  const seed = a.seed !== undefined ? Number(a.seed) : Math.floor(Math.random() * 1e9);
  const count = a.messages !== undefined ? Number(a.messages) : 100_000;
  console.log(`fuzz:peer seed ${seed}, ${count} messages (replay: npm run fuzz:peer -- --seed ${seed} --messages ${count})`);
  const report = await runPeerFuzz(count, seed, (s) => console.log(`  ${s}`));
  console.log(JSON.stringify(report, null, 2));
  if (a.json !== undefined) writeFileSync(a.json, JSON.stringify(report, null, 2) + '\n');
  process.exit(report.ok ? 0 : 1);
}

if (process.argv[1] !== undefined && /fuzz-peer\.ts$/.test(process.argv[1])) {
  main().catch((e: unknown) => {
    console.error(`fuzz:peer: ${(e as Error).stack ?? String(e)}`);
    process.exit(1);
  });
}
