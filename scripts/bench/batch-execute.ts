// One ordered batch at one node, the synchronous part of it: the consensus executor's applyBatch (the requests
// validated, authorized and applied to the uncommitted state and ledger, the audit txn) and commitBatch (ledger,
// state, indexes and audit txn into one LevelDB write batch), as the node runs them on its event loop while it orders.
// The write itself (LevelDB's threads) is awaited apart. NYM creations by the trustee, signed and verified beforehand
// (as a node verifies a client's write at receipt: the executor's check is then a cache hit), over a domain state of
// PREFILL NYMs, on the node's real ConsensusExecutor over LevelDB, durable writes as a node's default.
//
// Prints, per batch size, the main thread's CPU per batch and per request of apply and commit, and the wall time of a
// batch's apply + commit (the long task a node runs in one piece). CPU figures are the firm ones on a shared machine.
//
// Profile: node --conditions=quire-source --import tsx --import @quire/common/polyfill \
//   --cpu-prof --cpu-prof-dir=/tmp/prof scripts/bench/batch-execute.ts
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LedgerId } from '@quire/common';
import { openExecutorNode, trusteeNymRequests } from './executor-node.js';
import { parseRequest } from '@quire/requests';

const PREFILL = Number(process.env.BATCH_BENCH_PREFILL ?? 20_000);
const SIZES = (process.env.BATCH_BENCH_SIZES ?? '25,100,500').split(',').map(Number);
/** requests applied per batch size, after the warm-up */
const PER_SIZE = Number(process.env.BATCH_BENCH_REQUESTS ?? 10_000);
const DOMAIN = LedgerId.DOMAIN;

/** CPU time (ms) of the calling thread, from /proc (Linux). */
function mainThreadCpuMs(): number {
  const st = readFileSync('/proc/thread-self/stat', 'utf8');
  const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime in clock ticks (USER_HZ = 100)
}

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

let nextUser = 0;
/** The next `count` NYM creations (users numbered on from the last call). */
function nymRequests(count: number): Record<string, unknown>[] {
  const out = trusteeNymRequests('batch bench user', nextUser, count);
  nextUser += count;
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'quire-batch-bench-'));
try {
  const { kv, requests, executor } = await openExecutorNode(dir);

  let ppSeqNo = 0;
  /** Orders one batch: apply, commit, write; returns the main thread's CPU (ms) of apply and commit and their wall time. */
  const order = async (batch: Record<string, unknown>[]): Promise<{ apply: number; commit: number; wall: number }> => {
    // what the node did at receipt: the signature checked and the payload looked up among the ordered ones (the
    // executor's checks are then cache hits)
    for (const r of batch) {
      const req = parseRequest(r);
      requests.verifier.verify(req, requests.idr, requests.views[0]);
      executor.isPayloadCommitted(req.payloadDigest);
    }
    ppSeqNo++;
    const digests = batch.map((r) => parseRequest(r).digest);
    const t0 = performance.now();
    const c0 = mainThreadCpuMs();
    const applied = executor.applyBatch({
      ledgerId: DOMAIN,
      requests: batch as never,
      digests,
      ppTime: 1_700_000_000 + ppSeqNo,
      ppSeqNo,
      originalViewNo: 0,
      primaries: ['Node1'],
      digest: createHash('sha256').update(`batch ${ppSeqNo}`).digest('hex'),
    });
    const c1 = mainThreadCpuMs();
    executor.commitBatch([]);
    const c2 = mainThreadCpuMs();
    const wall = performance.now() - t0;
    if (applied.discarded.length > 0) throw new Error(`a request was refused: ${applied.rejectReasons[0] ?? ''}`);
    await executor.flush();
    return { apply: c1 - c0, commit: c2 - c1, wall };
  };

  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; prefilling the domain state with ${fmt(PREFILL)} NYMs...`,
  );
  for (let done = 0; done < PREFILL; done += 500) await order(nymRequests(Math.min(500, PREFILL - done)));
  for (const size of SIZES) {
    const batches = Math.max(4, Math.round(PER_SIZE / size));
    const work = Array.from({ length: batches }, () => nymRequests(size));
    // warm-up: a quarter of the batches (JIT, caches)
    for (const b of work.splice(0, Math.ceil(batches / 4))) await order(b);
    let apply = 0;
    let commit = 0;
    const walls: number[] = [];
    for (const b of work) {
      const r = await order(b);
      apply += r.apply;
      commit += r.commit;
      walls.push(r.wall);
    }
    walls.sort((a, b) => a - b);
    const n = work.length;
    console.log(
      `batches of ${String(size).padStart(3)}: main-thread CPU per batch apply ${fmt(apply / n, 2)} ms + commit ${fmt(commit / n, 2)} ms; ` +
        `per request ${fmt(((apply + commit) * 1000) / (n * size))} us (apply ${fmt((apply * 1000) / (n * size))}, commit ${fmt((commit * 1000) / (n * size))}); ` +
        `apply + commit wall p50 ${fmt(walls[Math.floor(n / 2)] ?? 0, 1)} ms, max ${fmt(walls[n - 1] ?? 0, 1)} ms; ${n} batches, load ${loadavg()[0]?.toFixed(1) ?? '?'}`,
    );
  }
  await kv.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
