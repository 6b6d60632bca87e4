// Consensus overhead in the deterministic simulator, fault-free 4-node pool, one core doing the
// work of all four nodes (3PC, BLS shares, aggregation and verification, stand-in execution):
// rate of ordered batches and requests, and the cost per ordered batch and per ordered request.
// Divide a cost by 4 for one node's share. Rates are given as wall-clock, per CPU-second of the
// process and of the main thread, with the load average (see lib.ts).
import { Simulation } from '@quire/consensus/sim';
import { NO_TIME, addTimes, record, report, sample, since, type CpuClock } from './lib.js';

/** Runs one simulation per seed; only `sim.run()` is timed. Batches and requests are counted once per pool. */
function run(requests: number, seeds: number[], batchSize?: number): { time: CpuClock; batches: number; requests: number } {
  let time = NO_TIME;
  let batches = 0;
  let reqs = 0;
  for (const seed of seeds) {
    const sim = new Simulation({ seed, nodes: 4, faults: 'none', requests, ...(batchSize !== undefined ? { consensus: { max3pcBatchSize: batchSize } } : {}) });
    const t = sample();
    const r = sim.run();
    time = addTimes(time, since(t));
    if (!r.ok) throw new Error(`simulation failed: ${r.violations.join('; ')}`);
    // per pool: every honest node reports each batch once
    batches += r.orderedBatches / 4;
    reqs += r.orderedRequests / 4;
  }
  return { time, batches, requests: reqs };
}

run(40, [1]); // warm-up: JIT, BLS key derivation, module loading

const small = run(60, [11, 12, 13, 14, 15]);
report('pool batches ordered (4 nodes, ~2-8 requests per batch)', small.batches, small.time, { unit: 'batches/s' });
record('  -> consensus cost per batch, whole pool (wall)', small.time.wallMs / small.batches, undefined, 'ms');
record('  -> consensus cost per batch, one node (wall)', small.time.wallMs / small.batches / 4, undefined, 'ms');
record('  -> consensus cost per batch, one node (CPU)', small.time.cpuUs / 1000 / small.batches / 4, undefined, 'ms');

const big = run(600, [21, 22, 23]);
report('pool requests ordered (4 nodes, bursts of ~8, 600 per run)', big.requests, big.time, { unit: 'req/s' });
record('  -> consensus cost per request, whole pool (wall)', (big.time.wallMs * 1000) / big.requests, undefined, 'µs');
record('  -> consensus cost per request, whole pool (CPU)', big.time.cpuUs / big.requests, undefined, 'µs');
record('  -> batches per run', big.batches / 3, undefined, 'batches');
