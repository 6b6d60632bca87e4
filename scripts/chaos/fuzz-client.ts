// Client-protocol fuzzer against real node processes: structure-aware mutations (fast-check) of
// valid client messages (signed writes, reads, catch-up messages), sent over the client protocol
// as a client does (a raw session per node, `NodeConnection`): values replaced by wrong types,
// huge and negative numbers, long strings, deep nesting; fields deleted and added; the JSON text
// truncated, bit-flipped or replaced by random bytes; frames above the size limit; replays of one
// signed write; floods. Every message must get an answer: REPLY, REQACK, or a refusal (REQNACK /
// REJECT / the client host's coded ERROR); the nodes must not exit, must still order a write at the
// end, and their memory must stay bounded.
//
//   npm run fuzz:client -- [--messages N] [--seed S] [--json FILE]
import { writeFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { parseJson, signatureInput, stringifyJson } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { DidKey, NodeConnection, Pool, buildNymRequest, signRequest } from '@quire/client';
import { freePortRun } from '../../test/support/ports.js';
import { ChaosPool } from './pool.js';
import { Rng } from './schedule.js';

export const TRUSTEE_SEED = '000000000000000000000000Trustee1';
const enc = new TextEncoder();
const dec = new TextDecoder();

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Valid client messages of every family, freshly signed where they need a signature. */
export function seedMessages(reqId: number): Record<string, unknown>[] {
  const trustee = Ed25519Signer.fromSeed(TRUSTEE_SEED);
  const target = Ed25519Signer.fromSeed(new Uint8Array(32).fill(reqId % 251));
  const signed = (operation: Record<string, unknown>, id: number): Record<string, unknown> => {
    const r: Record<string, unknown> = { identifier: trustee.did, reqId: id, protocolVersion: 2, operation };
    r.signature = trustee.signBase58(signatureInput(r as never));
    return r;
  };
  return [
    signed({ type: '1', dest: target.did, verkey: target.verkey }, reqId),
    signed({ type: '100', dest: trustee.did, raw: '{"endpoint":{"ha":"127.0.0.1:1"}}' }, reqId + 1),
    signed({ type: '101', data: { name: 'fuzz', version: `1.${reqId}`, attr_names: ['a', 'b'] } }, reqId + 2),
    { identifier: trustee.did, reqId: reqId + 3, protocolVersion: 2, operation: { type: '105', dest: trustee.did } },
    { identifier: trustee.did, reqId: reqId + 4, protocolVersion: 2, operation: { type: '3', ledgerId: 1, data: 1 } },
    { identifier: trustee.did, reqId: reqId + 5, protocolVersion: 2, operation: { type: '104', dest: trustee.did, raw: 'endpoint' } },
    signed({ type: '119' }, reqId + 6),
    { op: 'LEDGER_STATUS', ledgerId: 0, txnSeqNo: 1, viewNo: null, ppSeqNo: null, merkleRoot: '11111111111111111111111111111111', protocolVersion: 2 },
    { op: 'CATCHUP_REQ', ledgerId: 0, seqNoStart: 1, seqNoEnd: 2, catchupTill: 4 },
  ];
}

const hugeNumbers = fc.constantFrom<Json>(2 ** 53, 2 ** 53 + 2, -(2 ** 63), 1e308, -1e308, 0.5, -1, 0, Number.MAX_SAFE_INTEGER, 4294967296);
const weirdStrings = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('', ' ', '\u0000', '\ud800', '💥', 'null', '[]', '{}', '1e999', '-0'),
  fc.integer({ min: 1_000, max: 140_000 }).map((n) => 'x'.repeat(n)),
);
/** A replacement value of any type, sometimes huge or deep. */
const anyValue: fc.Arbitrary<Json> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json> },
  { weight: 2, arbitrary: hugeNumbers },
  { weight: 2, arbitrary: weirdStrings as fc.Arbitrary<Json> },
  { weight: 1, arbitrary: fc.integer({ min: 10, max: 5_000 }).map((d) => deepNest(d)) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 20_000 }).map((n) => Array.from({ length: n }, (_, i) => i) as Json) },
);

function deepNest(depth: number): Json {
  let v: Json = 1;
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { a: v };
  return v;
}

/** Every path to a value inside `v` (objects and arrays). */
function paths(v: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = [], depth = 0): (string | number)[][] {
  if (depth > 6 || v === null || typeof v !== 'object') return out;
  for (const [k, child] of Object.entries(v)) {
    const p = [...prefix, Array.isArray(v) ? Number(k) : k];
    out.push(p);
    paths(child, p, out, depth + 1);
  }
  return out;
}

/** Sets (or deletes) the value at `path`; a path through a value that holds no fields is left as it is. */
function setAt(root: unknown, path: (string | number)[], value: unknown, del: boolean): void {
  let cur: unknown = root;
  for (let i = 0; i < path.length - 1 && cur !== null && typeof cur === 'object'; i++) cur = (cur as Record<string, unknown>)[path[i] as string];
  if (cur === null || typeof cur !== 'object') return;
  const last = path[path.length - 1] as string;
  if (del) delete (cur as Record<string, unknown>)[last];
  else (cur as Record<string, unknown>)[last] = value;
}

/**
 * A mutated message as JSON bytes. Nesting deeper than the canonical writer allows (a mutation may
 * nest that deep on purpose) is written by JSON.stringify, or by hand past the stack: the node must refuse it too.
 */
function jsonBytes(msg: unknown): Uint8Array {
  try {
    return enc.encode(stringifyJson(msg));
  } catch {
    try {
      return enc.encode(JSON.stringify(msg, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
    } catch {
      // deeper than the stack allows JSON.stringify either: the same nesting written out by hand
      return enc.encode(`{"deep":${'['.repeat(20_000)}${']'.repeat(20_000)}}`);
    }
  }
}

export type MutationKind = 'replace' | 'delete' | 'add' | 'truncate' | 'bitflip' | 'random-bytes' | 'oversize' | 'replay' | 'valid' | 'top-level';

/** One mutated message (bytes) and what was done to it. */
export function mutate(base: Record<string, unknown>, rng: Rng, seed: number): { kind: MutationKind; bytes: Uint8Array } {
  const sample = <T>(a: fc.Arbitrary<T>): T => fc.sample(a, { seed: seed, numRuns: 1 })[0]!;
  const r = rng.next();
  const msg = structuredClone(base);
  if (r < 0.05) return { kind: 'valid', bytes: jsonBytes(msg) };
  if (r < 0.45) {
    const ps = paths(msg);
    const p = rng.pick(ps);
    setAt(msg, p, sample(anyValue), false);
    return { kind: 'replace', bytes: jsonBytes(msg) };
  }
  if (r < 0.55) {
    setAt(msg, rng.pick(paths(msg)), undefined, true);
    return { kind: 'delete', bytes: jsonBytes(msg) };
  }
  if (r < 0.62) {
    const ps = paths(msg).filter((p) => p.length > 0);
    const parent = rng.chance(0.5) ? [] : rng.pick(ps);
    setAt(msg, [...parent, sample(fc.string({ minLength: 1, maxLength: 12 }))], sample(anyValue), false);
    return { kind: 'add', bytes: jsonBytes(msg) };
  }
  const text = jsonBytes(msg);
  if (r < 0.72) return { kind: 'truncate', bytes: text.slice(0, rng.int(0, Math.max(0, text.length - 1))) };
  if (r < 0.82) {
    const b = new Uint8Array(text);
    for (let i = rng.int(1, 8); i > 0; i--) b[rng.int(0, b.length - 1)]! ^= 1 << rng.int(0, 7);
    return { kind: 'bitflip', bytes: b };
  }
  if (r < 0.88) return { kind: 'random-bytes', bytes: new Uint8Array(sample(fc.uint8Array({ maxLength: 600 }))) };
  if (r < 0.9) return { kind: 'oversize', bytes: jsonBytes({ ...msg, pad: 'y'.repeat(rng.int(129 * 1024, 400 * 1024)) }) };
  if (r < 0.95) return { kind: 'top-level', bytes: jsonBytes(sample(anyValue)) };
  return { kind: 'replay', bytes: text };
}

export type Outcome = 'reply' | 'reqack' | 'reqnack' | 'reject' | 'refused' | 'uncoded-refusal' | 'no-answer' | 'session-closed' | 'other';

export interface FuzzStats {
  messages: number;
  byKind: Record<string, number>;
  byOutcome: Record<string, number>;
  /** examples of answers that are not a REPLY / REQACK / coded refusal */
  examples: { kind: string; outcome: string; sent: string; got: string }[];
  reconnects: number;
}

function classify(payload: Uint8Array): { outcome: Outcome; text: string } {
  const text = dec.decode(payload);
  let m: Record<string, unknown>;
  try {
    m = parseJson(text) as Record<string, unknown>;
  } catch {
    return { outcome: 'other', text };
  }
  switch (m.op) {
    case 'REPLY':
      return { outcome: 'reply', text };
    case 'REQACK':
      return { outcome: 'reqack', text };
    case 'REQNACK':
      return { outcome: typeof m.reason === 'string' && m.reason.length > 0 ? 'reqnack' : 'uncoded-refusal', text };
    case 'REJECT':
      return { outcome: typeof m.reason === 'string' && m.reason.length > 0 ? 'reject' : 'uncoded-refusal', text };
    case 'LEDGER_STATUS':
    case 'CONSISTENCY_PROOF':
    case 'CATCHUP_REP':
      return { outcome: 'reply', text };
    default:
      return { outcome: 'other', text };
  }
}

/** A session to the target; a slow handshake (a loaded machine) is tried again, up to 10 times. */
async function connectRetrying(t: FuzzTarget): Promise<NodeConnection> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await NodeConnection.connect({ host: t.host, port: t.port, dest: t.dest, timeoutMs: 30_000 });
    } catch (e) {
      if (attempt >= 10) throw e;
      await new Promise((r) => setTimeout(r, 1_000 * attempt));
    }
  }
}

export interface FuzzTarget {
  name: string;
  host: string;
  port: number;
  dest: string;
}

/**
 * Sends `count` mutated messages to the targets (round robin, `inFlight` at a time per target) and
 * classifies every answer. Sessions the node closes are opened again (and counted).
 */
export async function fuzzClients(
  targets: readonly FuzzTarget[],
  count: number,
  seed: number,
  opts: { inFlight?: number; log?: (s: string) => void } = {},
): Promise<FuzzStats> {
  const rng = new Rng(seed);
  const stats: FuzzStats = { messages: 0, byKind: {}, byOutcome: {}, examples: [], reconnects: 0 };
  const inFlight = opts.inFlight ?? 32;
  let next = 0;
  let reqId = 1_000_000 + seed * 1000;
  let replayBytes: Uint8Array | undefined;
  const note = (kind: string, outcome: Outcome, sent: Uint8Array, got: string): void => {
    stats.byOutcome[outcome] = (stats.byOutcome[outcome] ?? 0) + 1;
    if (outcome !== 'reply' && outcome !== 'reqack' && outcome !== 'reqnack' && outcome !== 'reject' && outcome !== 'refused' && stats.examples.length < 30) {
      stats.examples.push({ kind, outcome, sent: dec.decode(sent.slice(0, 300)), got: got.slice(0, 300) });
    }
  };
  const worker = async (t: FuzzTarget): Promise<void> => {
    let c: NodeConnection | undefined;
    const wr = rng.fork();
    while (next < count) {
      const i = next++;
      if (c === undefined || !c.connected) {
        if (c !== undefined) stats.reconnects++;
        await c?.close();
        c = await connectRetrying(t);
      }
      const bases = seedMessages((reqId += 10));
      const m = mutate(wr.pick(bases), wr, seed * 1_000_003 + i);
      let bytes = m.bytes;
      if (m.kind === 'replay') bytes = replayBytes ??= m.bytes;
      stats.byKind[m.kind] = (stats.byKind[m.kind] ?? 0) + 1;
      stats.messages++;
      try {
        const answer = await c.request(bytes, { timeoutMs: 30_000 });
        const r = classify(answer);
        note(m.kind, r.outcome, bytes, r.text);
      } catch (e) {
        const code = (e as { code?: unknown }).code;
        if ((e as Error).name === 'ClientRequestError' || (e as { constructor: { name: string } }).constructor.name === 'ClientRequestError')
          note(m.kind, typeof code === 'string' && code.length > 0 ? 'refused' : 'uncoded-refusal', bytes, String(code));
        else if (code === 'REQUEST_TIMEOUT') note(m.kind, 'no-answer', bytes, String(code));
        else note(m.kind, 'session-closed', bytes, `${String(code)} ${(e as Error).message}`);
      }
      if (stats.messages % 5_000 === 0) opts.log?.(`${stats.messages} messages: ${JSON.stringify(stats.byOutcome)}`);
    }
    await c?.close();
  };
  await Promise.all(targets.flatMap((t) => Array.from({ length: inFlight }, () => worker(t))));
  return stats;
}

/** A write through the SDK within `timeoutMs` (the same request sent again until then): the pool orders. */
export async function poolOrders(genesisFile: string, timeoutMs = 60_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  const trustee = DidKey.fromSeed(TRUSTEE_SEED);
  const d = DidKey.random();
  const request = signRequest(buildNymRequest({ submitter: trustee.did, dest: d.did, verkey: d.verkey }), trustee);
  const pool = await Pool.open(genesisFile, { writeTimeoutMs: Math.min(timeoutMs, 30_000) });
  try {
    for (;;) {
      try {
        await pool.submitWrite(request);
        return true;
      } catch {
        if (Date.now() > until) return false;
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  } finally {
    await pool.close();
  }
}

async function main(): Promise<void> {
  const a = parseArgs({
    options: { messages: { type: 'string' }, seed: { type: 'string' }, json: { type: 'string' }, nodes: { type: 'string' }, 'in-flight': { type: 'string' } },
  }).values;
  const seed = a.seed !== undefined ? Number(a.seed) : Math.floor(Math.random() * 1e9);
  const count = a.messages !== undefined ? Number(a.messages) : 100_000;
  console.log(`fuzz:client seed ${seed}, ${count} messages (replay: npm run fuzz:client -- --seed ${seed} --messages ${count})`);
  const dir = mkdtempSync(join(tmpdir(), 'quire-fuzz-client-'));
  const exits: string[] = [];
  const pool = await ChaosPool.create({
    dir,
    nodes: 4,
    net: undefined,
    basePort: await freePortRun(8),
    configOverride: { limits: { clientRate: 100_000, clientBurst: 100_000, clientMaxPending: 4096 } },
    onUnexpectedExit: (n, e) => exits.push(`${n.name} code ${e.code} signal ${e.signal}`),
  });
  // kept (with the node logs) unless the run ends clean
  let failed = true;
  const onSig = (): void => {
    void pool.close().then(() => process.exit(130));
  };
  process.on('SIGINT', onSig);
  try {
    pool.startAll();
    const t0 = Date.now();
    if (!(await poolOrders(pool.genesisFile, 600_000))) throw new Error('the pool did not order a write within 600 s of starting');
    console.log(`pool ordering after ${((Date.now() - t0) / 1000).toFixed(0)} s; fuzzing Node1 and Node2`);
    pool.sampleRss();
    const before = Object.fromEntries(pool.nodes.map((n) => [n.name, Math.round(n.maxRssMb)]));
    const targets = pool.nodes.slice(0, 2).map((n) => ({ name: n.name, host: '127.0.0.1', port: n.layout.clientPort, dest: n.dest }));
    const rss = setInterval(() => pool.sampleRss(), 2000);
    const f0 = Date.now();
    const stats = await fuzzClients(targets, count, seed, {
      inFlight: a['in-flight'] !== undefined ? Number(a['in-flight']) : 16,
      log: (s) => console.log(`  ${s}`),
    });
    clearInterval(rss);
    const secs = (Date.now() - f0) / 1000;
    const orders = await poolOrders(pool.genesisFile);
    pool.sampleRss();
    const after = Object.fromEntries(pool.nodes.map((n) => [n.name, Math.round(n.maxRssMb)]));
    const bad = (stats.byOutcome['no-answer'] ?? 0) + (stats.byOutcome['uncoded-refusal'] ?? 0) + (stats.byOutcome.other ?? 0);
    failed = exits.length > 0 || !orders || bad > 0;
    const report = {
      seed,
      messages: stats.messages,
      seconds: Math.round(secs),
      perSecond: Math.round(stats.messages / secs),
      byKind: stats.byKind,
      byOutcome: stats.byOutcome,
      reconnects: stats.reconnects,
      examples: stats.examples,
      exits,
      poolOrdersAfter: orders,
      rssMbBefore: before,
      rssMbMax: after,
      ok: !failed,
    };
    console.log(JSON.stringify(report, null, 2));
    if (a.json !== undefined) writeFileSync(a.json, JSON.stringify(report, null, 2) + '\n');
  } finally {
    await pool.close();
    if (!failed) rmSync(dir, { recursive: true, force: true });
    else console.log(`node logs kept in ${dir}`);
  }
  process.exit(failed ? 1 : 0);
}

if (process.argv[1] !== undefined && /fuzz-client\.ts$/.test(process.argv[1])) {
  main().catch((e: unknown) => {
    console.error(`fuzz:client: ${(e as Error).stack ?? String(e)}`);
    process.exit(1);
  });
}
