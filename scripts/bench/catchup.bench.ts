// Catch-up of the domain ledger by a node 50,000 txns behind (consensus.md §7): a seeder node with
// 50,000 committed NYM txns serves CATCHUP_REP chunks of CATCHUP_MAX_TXNS_PER_REQ = 2,000 txns
// (txnRange + the consistency proof from each chunk's last seqNo to the target), and a fresh leecher
// node applies them with appendCaughtUp: proof check against the target root, state rebuilt through
// the request handlers, one atomic LevelDB write per chunk (durable, as a node writes by default).
// Both sides are the node's real ConsensusExecutor over LevelDB. Target: >= 5,000 txns/s.
//
// The seeder is built by ordering pre-signed NYM batches of 1,000 through the real executors
// (signature checks off: the requests are signed, but checking 50,000 signatures would only slow the
// set-up). The chunks the leecher applies went through msgpack as on the wire, before timing.
//
// "serve as a node" is the seeder's work for every CATCHUP_REQ since the pieces are cut from each txn's size
// (catchup.ts), with the stored txns sent as their bytes, and with them decoded and encoded again as before;
// "serve as framed" is the halving the cut replaced. "receive" is the leecher's decoding of those frames.
//
// The two apply figures: "2,000-txn chunks" is what a node does since the leecher applies the contiguous replies it
// holds together, up to CATCHUP_APPLY_MAX_TXNS = 2,000 txns in one write (catchup.ts); "128 KiB frames" is one write
// per frame, as a reply was applied before, and as it still is when the replies come one at a time.
//
// Every figure is given three ways, because the machine is shared (see trie.bench.ts): the wall-clock
// rate; the rate per CPU-second of the whole process (LevelDB's threads and V8's GC helpers
// included); and the rate per CPU-second of the main JS thread. The load average follows each figure.
//
// Profile: node --conditions=quire-source --import tsx --import @quire/common/polyfill \
//   --cpu-prof --cpu-prof-dir=/tmp/prof scripts/bench/catchup.bench.ts
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LedgerId, b58encode, decodeMsgpack, encodeMsgpack } from '@quire/common';
import { catchupEntrySize, catchupRepSize, cutPieces } from '@quire/consensus';
import { type ExecutorNode, openExecutorNode, trusteeNymRequests } from './executor-node.js';

/** Txns the leecher is behind (a multiple of BATCH); CATCHUP_BENCH_TXNS overrides it for quick profiles. */
const BEHIND = Number(process.env.CATCHUP_BENCH_TXNS ?? 50_000);
const BATCH = 1_000;
const CHUNK = 2_000; // CATCHUP_MAX_TXNS_PER_REQ
const TARGET = 5_000;
const MSG_LEN_LIMIT = 128 * 1024;
const DOMAIN = LedgerId.DOMAIN;

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

/** Prints one measurement: `ops` operations done since `s`; returns the wall-clock rate. */
function report(name: string, ops: number, s: Sample, unit: string, target?: number): number {
  const e = start();
  const wall = (ops * 1000) / (e.wallMs - s.wallMs);
  const cpu = (ops * 1e6) / (e.cpuUs - s.cpuUs);
  const main = s.mainMs !== undefined && e.mainMs !== undefined && e.mainMs > s.mainMs ? (ops * 1000) / (e.mainMs - s.mainMs) : undefined;
  const verdict =
    target === undefined ? '' : `  target >= ${fmt(target)}: ${wall >= target ? 'met' : 'not met'} (wall), ${cpu >= target ? 'met' : 'not met'} (CPU)`;
  console.log(
    `${name.padEnd(52)} wall ${fmt(wall).padStart(9)}  CPU ${fmt(cpu).padStart(9)}  main thread ${(main === undefined ? 'n/a' : fmt(main)).padStart(9)} ${unit}  load ${loadavg()[0]!.toFixed(1)}${verdict}`,
  );
  return wall;
}

// ---- nodes ----

/** A node over a LevelDB in `dir` holding the standard pool and domain genesis (signatures checked at receipt). */
function openNode(dir: string): Promise<ExecutorNode> {
  return openExecutorNode(dir, { verifySignatures: false });
}

/** NYM creations by the trustee, signed; dest and verkey derived from SHA-256 of the index. */
function nymRequests(count: number): Record<string, unknown>[] {
  return trusteeNymRequests('catchup bench user', 0, count);
}

// ---- the benchmark ----

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} at start; signing ${fmt(BEHIND)} NYM requests...`,
);
const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'quire-catchup-bench-'));
  dirs.push(d);
  return d;
};
try {
  const requests = nymRequests(BEHIND);
  const seeder = await openNode(tempDir());
  const base = seeder.executor.ledgerStatus(DOMAIN).size;
  let s = start();
  for (let b = 0; b < BEHIND / BATCH; b++) {
    const batch = requests.slice(b * BATCH, (b + 1) * BATCH);
    const ppTime = 1_700_000_000 + b;
    const digests = batch.map((_, i) => createHash('sha256').update(`${b}/${i}`).digest('hex'));
    const applied = seeder.executor.applyBatch({
      ledgerId: DOMAIN,
      requests: batch as never,
      digests,
      ppTime,
      ppSeqNo: b + 1,
      originalViewNo: 0,
      primaries: ['Node1'],
      digest: digests[0]!,
    });
    if (applied.discarded.length > 0) throw new Error(`seeder refused a request: ${applied.rejectReasons[0]}`);
    seeder.executor.commitBatch([]);
    if (b % 10 === 9) await seeder.executor.flush();
  }
  await seeder.executor.flush();
  report(`seeder built (ordered, ${BATCH}-request batches)`, BEHIND, s, 'txns/s');
  const target = seeder.executor.ledgerStatus(DOMAIN);
  console.log(`seeder domain ledger: ${fmt(target.size)} txns (${fmt(base)} genesis); leecher ${fmt(BEHIND)} behind, chunks of ${fmt(CHUNK)}`);

  // 1. serving: what the seeder's executor does for every CATCHUP_REQ of the catch-up
  const ranges: [number, number][] = [];
  for (let from = base + 1; from <= target.size; from += CHUNK) ranges.push([from, Math.min(target.size, from + CHUNK - 1)]);
  const serve = (): { txns: unknown[]; consProof: string[] }[] =>
    ranges.map(([from, to]) => ({
      txns: seeder.executor.txnRange(DOMAIN, from, to),
      consProof: to === target.size ? [] : seeder.executor.consistencyProof(DOMAIN, to, target.size),
    }));
  serve(); // warm-up
  s = start();
  const ROUNDS = 3;
  for (let r = 0; r < ROUNDS; r++) serve();
  report('serve: txnRange + consistency proof per chunk', ROUNDS * BEHIND, s, 'txns/s', TARGET);
  s = start();
  let wire: Uint8Array[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    wire = serve().map((c, i) => {
      const txns: Record<string, unknown> = {};
      c.txns.forEach((t, k) => (txns[String(ranges[i]![0] + k)] = t));
      return encodeMsgpack({ op: 'CATCHUP_REP', ledgerId: DOMAIN, txns, consProof: c.consProof });
    });
  }
  report('serve + msgpack encoding of each CATCHUP_REP', ROUNDS * BEHIND, s, 'txns/s');
  console.log(`CATCHUP_REP of ${fmt(CHUNK)} NYM txns: ${fmt(wire[0]!.length)} bytes before splitting to the frame limit`);

  // the frames the seeder sends: consensus.md §7.4 splits a reply above MSG_LEN_LIMIT in halves,
  // each with its own proof (as the consensus core's sendCatchupRep does), and the leecher applies
  // each frame on its own
  const frames: Uint8Array[] = [];
  const frame = (from: number, txns: unknown[]): void => {
    const last = from + txns.length - 1;
    const map: Record<string, unknown> = {};
    txns.forEach((t, k) => (map[String(from + k)] = t));
    const consProof = last === target.size ? [] : seeder.executor.consistencyProof(DOMAIN, last, target.size);
    const bytes = encodeMsgpack({ op: 'CATCHUP_REP', ledgerId: DOMAIN, txns: map, consProof });
    if (txns.length > 1 && bytes.length > MSG_LEN_LIMIT) {
      const half = Math.ceil(txns.length / 2);
      frame(from, txns.slice(0, half));
      frame(from + half, txns.slice(half));
    } else frames.push(bytes);
  };
  s = start();
  for (const [from, to] of ranges) frame(from, seeder.executor.txnRange(DOMAIN, from, to));
  report('serve as framed (encode, halve to 128 KiB)', BEHIND, s, 'txns/s', TARGET);
  console.log(
    `${fmt(frames.length)} frames of ${fmt(BEHIND / frames.length)} txns on average (largest ${fmt(Math.max(...frames.map((f) => f.length)))} bytes)`,
  );

  // what a seeder node does (catchup.ts sendCatchupRep): each txn's encoded size counted, the pieces cut greedily to
  // the frame limit from those sizes (each piece's size checked from them, with its own proof), each piece encoded
  // once, by the transport. The node's txnRange gives each stored txn as its stored bytes (MsgpackEncoded), written
  // verbatim; "txns decoded" is the same with the txns decoded from the ledger and encoded again (catchupTxns), as a
  // seeder served them before. The two are run alternately, twice each, and must give the same bytes.
  const serveAsNode = (txnRange: (from: number, to: number) => readonly unknown[]): Uint8Array[] => {
    const out: Uint8Array[] = [];
    const piece = (first: number, txns: readonly unknown[], sizes: readonly number[]): void => {
      const map: Record<string, unknown> = {};
      txns.forEach((t, k) => (map[String(first + k)] = t));
      const last = first + txns.length - 1;
      const rep = {
        op: 'CATCHUP_REP' as const,
        ledgerId: DOMAIN,
        txns: map,
        consProof: last === target.size ? [] : seeder.executor.consistencyProof(DOMAIN, last, target.size),
      };
      if (txns.length > 1 && catchupRepSize(rep, sizes) > MSG_LEN_LIMIT) {
        // its own proof longer than the room kept for it: halved, as sendCatchupPiece does
        const half = Math.ceil(txns.length / 2);
        piece(first, txns.slice(0, half), sizes.slice(0, half));
        piece(first + half, txns.slice(half), sizes.slice(half));
      } else out.push(encodeMsgpack(rep));
    };
    for (const [from, to] of ranges) {
      const txns = txnRange(from, to);
      const sizes = txns.map((t, i) => catchupEntrySize(from + i, t));
      const proof = to === target.size ? [] : seeder.executor.consistencyProof(DOMAIN, from, target.size);
      const room = MSG_LEN_LIMIT - encodeMsgpack({ op: 'CATCHUP_REP', ledgerId: DOMAIN, txns: {}, consProof: proof }).length - (8 * 47 + 4);
      let p = 0;
      for (const e of cutPieces(sizes, room)) {
        piece(from + p, txns.slice(p, e), sizes.slice(p, e));
        p = e;
      }
    }
    return out;
  };
  const storedBytes = (from: number, to: number): readonly unknown[] => seeder.executor.txnRange(DOMAIN, from, to);
  const decodedTxns = (from: number, to: number): readonly unknown[] => seeder.requests.catchupTxns(DOMAIN, from, to);
  let cut: Uint8Array[] = [];
  let before: Uint8Array[] = [];
  for (let r = 0; r < 2; r++) {
    s = start();
    cut = serveAsNode(storedBytes);
    report('serve as a node: stored bytes, sizes counted, cut', BEHIND, s, 'txns/s', TARGET);
    s = start();
    before = serveAsNode(decodedTxns);
    report('serve as a node: txns decoded, encoded once', BEHIND, s, 'txns/s', TARGET);
  }
  const same = cut.length === before.length && cut.every((f, i) => Buffer.compare(f, before[i]!) === 0);
  if (!same) throw new Error('the replies of the stored bytes differ from those of the txns decoded');
  console.log(
    `${fmt(cut.length)} frames of ${fmt(BEHIND / cut.length)} txns on average (largest ${fmt(Math.max(...cut.map((f) => f.length)))} bytes), the same bytes both ways`,
  );
  s = start();
  for (let r = 0; r < ROUNDS; r++) for (const f of cut) decodeMsgpack(f, { keepMapsAtDepth: 2 });
  report('receive: msgpack decoding of those frames', ROUNDS * BEHIND, s, 'txns/s');

  // 2. applying: a fresh leecher appends every reply (as decoded from the wire), then awaits the writes
  const decoded = (list: Uint8Array[]): { txns: unknown[]; consProof: string[] }[] =>
    list.map((bytes) => {
      // as a node's peer wire decodes a CATCHUP_REP: each txn's bytes kept for the ledger (peer-wire.ts)
      const rep = decodeMsgpack(bytes, { keepMapsAtDepth: 2 }) as { txns: Record<string, unknown>; consProof: string[] };
      return {
        txns: Object.keys(rep.txns)
          .map(Number)
          .sort((a, b) => a - b)
          .map((n) => rep.txns[String(n)]),
        consProof: rep.consProof,
      };
    });
  for (const [label, list] of [
    [`${fmt(CHUNK)}-txn chunks`, wire],
    ['128 KiB frames', frames],
  ] as const) {
    const replies = decoded(list);
    const leecher = await openNode(tempDir());
    s = start();
    for (const c of replies) {
      if (!leecher.executor.appendCaughtUp(DOMAIN, c.txns, c.consProof, target.size, target.root)) throw new Error('a reply was refused');
    }
    await leecher.executor.flush();
    report(`apply: appendCaughtUp, ${label}`, BEHIND, s, 'txns/s', TARGET);
    const got = leecher.executor.ledgerStatus(DOMAIN);
    if (got.size !== target.size || got.root !== target.root) throw new Error('leecher ledger differs from the target');
    if (b58encode(leecher.stores.states[1].committedRoot) !== b58encode(seeder.stores.states[1].committedRoot)) throw new Error('leecher state root differs');
    await leecher.kv.close();
  }
  await seeder.kv.close();
} finally {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
