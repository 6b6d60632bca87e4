// @quire/storage ledger: append + commit of ordered batches on classic-level (the write path of
// every ordered batch), proof generation from the persisted hash store (write replies, GET_TXN,
// catch-up), client-side verification, and a full verification of the hash store at open.
//
// Every figure is given three ways, because the machine is shared: the wall-clock rate; the rate per
// CPU-second of the whole process (every thread: LevelDB's compaction and write threads and V8's
// garbage-collector helpers included); and, on Linux, the rate per CPU-second of the main JS thread
// alone, which bounds the wall-clock rate on an idle machine where the background threads run on
// another core. The load average at the time follows each figure. The txns are built before timing
// starts (the executor makes them in a running node): the figures are those of the ledger.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseJson, requestToTxn, type Request, type Txn } from '@quire/common';
import { Ledger, merkleLeafHash, openLevelKvStore, verifyConsistency, verifyInclusion } from '@quire/storage';

// ---- measurement: wall clock, CPU of the process, CPU of the main thread, load average ----

/** CPU time (ms) of the calling thread, from /proc (Linux); undefined elsewhere. */
function mainThreadCpuMs(): number | undefined {
  try {
    const st = readFileSync('/proc/thread-self/stat', 'utf8');
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime in clock ticks (USER_HZ = 100)
  } catch {
    return undefined;
  }
}

interface Sample {
  wallMs: number;
  cpuUs: number;
  mainMs: number | undefined;
}

function start(): Sample {
  const c = process.cpuUsage();
  return { wallMs: performance.now(), cpuUs: c.user + c.system, mainMs: mainThreadCpuMs() };
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

/** Prints one measurement: `ops` operations done since `s`. */
function report(name: string, ops: number, s: Sample, unit: string, target?: number, wallRate?: number): void {
  const e = start();
  const wall = wallRate ?? (ops * 1000) / (e.wallMs - s.wallMs);
  const cpu = (ops * 1e6) / (e.cpuUs - s.cpuUs);
  const main = s.mainMs !== undefined && e.mainMs !== undefined && e.mainMs > s.mainMs ? (ops * 1000) / (e.mainMs - s.mainMs) : undefined;
  const verdict = target === undefined ? '' : `  target >= ${fmt(target)}: ${wall >= target ? 'met' : 'not met'} (wall), ${cpu >= target ? 'met' : 'not met'} (CPU)`;
  console.log(
    `${name.padEnd(52)} wall ${fmt(wall).padStart(9)}  CPU ${fmt(cpu).padStart(9)}  main thread ${(main === undefined ? 'n/a' : fmt(main)).padStart(9)} ${unit}  load ${loadavg()[0]!.toFixed(1)}${verdict}`,
  );
}

/**
 * Runs `fn` (doing `opsPerCall` operations) for a warm-up and then `rounds` rounds of `roundMs`;
 * reports the median wall-clock rate of the rounds and the CPU rates over all rounds.
 */
async function bench(name: string, fn: () => unknown, opts: { opsPerCall?: number; rounds?: number; roundMs?: number; target?: number; unit: string }): Promise<void> {
  const per = opts.opsPerCall ?? 1;
  const warmEnd = performance.now() + 300;
  while (performance.now() < warmEnd) await fn();
  const rates: number[] = [];
  let ops = 0;
  const s = start();
  for (let r = 0; r < (opts.rounds ?? 5); r++) {
    let calls = 0;
    const t0 = performance.now();
    let now = t0;
    while (now - t0 < (opts.roundMs ?? 400)) {
      await fn();
      calls++;
      now = performance.now();
    }
    rates.push((calls * per * 1000) / (now - t0));
    ops += calls * per;
  }
  rates.sort((a, b) => a - b);
  report(name, ops, s, opts.unit, opts.target, rates[Math.floor(rates.length / 2)]);
}

const requestText =
  '{"identifier":"V4SGRU86Z58d6TV7PBUe6f","operation":{"dest":"VsKV7grR1BUE29mG2Fm2kX","type":"1","verkey":"~CoRER63DVYnWZtK8uAzNbx","role":"101","alias":"agent-42"},' +
  '"protocolVersion":2,"reqId":1585221529670242337,"signature":"4X3skpoEK2DRgZxQ9PwuEvCJpL8JHdQ8X4HDDFyztgqE15DM2ZnkvrAh9bQY16egVinZTzwHqznmnkaFM4jjyDgd"}';
const template = requestToTxn(parseJson(requestText) as Request);
const BATCH = 100;
let reqId = 0;
/** Batches of distinct txns (by reqId), built once and reused: each use gives them fresh txnMetadata. */
const ring: Txn[][] = Array.from({ length: 64 }, () =>
  Array.from({ length: BATCH }, () => ({ ...template, txn: { ...template.txn, metadata: { ...template.txn.metadata, reqId: ++reqId } } }) as Txn),
);
let nextBatch = 0;
const makeBatch = (): Txn[] => {
  const batch = ring[nextBatch++ % ring.length]!;
  for (const t of batch) (t as { txnMetadata: Txn['txnMetadata'] }).txnMetadata = { txnTime: 1_700_000_000 };
  return batch;
};

console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} at start`);
const dir = mkdtempSync(join(tmpdir(), 'quire-bench-ledger-'));
try {
  const kv = await openLevelKvStore(dir);
  const ledger = await Ledger.open(kv, 1);

  await bench(`ledger append + commit, batches of ${BATCH}, awaited`, async () => {
    ledger.append(makeBatch());
    await ledger.commit();
  }, { opsPerCall: BATCH, target: 50_000, unit: 'txns/s' });

  // consensus keeps batches in flight: the next batch is appended and committed while the
  // previous batch's write is still running in LevelDB's thread
  let inFlight: Promise<void> = Promise.resolve();
  await bench(`ledger append + commit, batches of ${BATCH}, pipelined`, async () => {
    ledger.append(makeBatch());
    const previous = inFlight;
    inFlight = ledger.commit();
    await previous;
  }, { opsPerCall: BATCH, target: 50_000, unit: 'txns/s' });
  await inFlight;

  await bench(`ledger append + commit, shared batch, sync write`, async () => {
    ledger.append(makeBatch());
    const batch = kv.batch();
    ledger.commit(undefined, batch);
    await batch.write({ sync: true });
  }, { opsPerCall: BATCH, unit: 'txns/s' });

  const n = ledger.size;
  console.log(`ledger holds ${n.toLocaleString('en-US')} txns`);
  let x = 12345;
  const rnd = (k: number): number => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x % k;
  };
  const root = ledger.root;

  await bench('inclusion proof, random seqNo, committed size', async () => {
    await ledger.inclusionProof(1 + rnd(n));
  }, { unit: 'proofs/s' });
  await bench('consistency proof, random old -> committed size', async () => {
    await ledger.consistencyProof(1 + rnd(n), n);
  }, { unit: 'proofs/s' });
  await bench('rootAt(random size)', async () => {
    await ledger.rootAt(1 + rnd(n));
  }, { unit: 'roots/s' });

  const seqNo = 1 + rnd(n);
  const leaf = merkleLeafHash((await ledger.getEncoded(seqNo))!);
  const path = await ledger.inclusionProof(seqNo);
  await bench(`verifyInclusion (${path.length} hashes)`, () => verifyInclusion(leaf, seqNo - 1, n, path, root), { unit: 'verifies/s' });
  const old = Math.floor(n / 3);
  const oldRoot = await ledger.rootAt(old);
  const proof = await ledger.consistencyProof(old, n);
  await bench(`verifyConsistency (${proof.length} hashes)`, () => verifyConsistency(old, n, oldRoot, root, proof), { unit: 'verifies/s' });

  await kv.close();
  const kv2 = await openLevelKvStore(dir);
  const t0 = start();
  const reopened = await Ledger.open(kv2, 1);
  report('Ledger.open, intact hash store', 1, t0, 'opens/s');
  const t1 = start();
  await Ledger.open(kv2, 1, { verify: true });
  report('Ledger.open with verify: txns re-hashed, checked', reopened.size, t1, 'txns/s');
  await kv2.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
