// Consensus overhead in the deterministic simulator, fault-free 4-node pool, one core doing the
// work of all four nodes (3PC, BLS shares, aggregation and verification, stand-in execution):
// wall time per ordered batch and per ordered request. Divide by 4 for one node's share.
import { performance } from 'node:perf_hooks';
import { Simulation } from '@quire/consensus';
import { record } from './lib.js';

function run(requests: number, seeds: number[], batchSize?: number): { ms: number; batches: number; requests: number } {
  let ms = 0;
  let batches = 0;
  let reqs = 0;
  for (const seed of seeds) {
    const sim = new Simulation({ seed, nodes: 4, faults: 'none', requests, ...(batchSize !== undefined ? { consensus: { max3pcBatchSize: batchSize } } : {}) });
    const t = performance.now();
    const r = sim.run();
    ms += performance.now() - t;
    if (!r.ok) throw new Error(`simulation failed: ${r.violations.join('; ')}`);
    // per pool: every honest node reports each batch once
    batches += r.orderedBatches / 4;
    reqs += r.orderedRequests / 4;
  }
  return { ms, batches, requests: reqs };
}

run(40, [1]); // warm-up: JIT, BLS key derivation, module loading

const small = run(60, [11, 12, 13, 14, 15]);
record('pool batches ordered / s (4 nodes, ~2-8 requests per batch)', (small.batches * 1000) / small.ms, undefined, 'batches/s');
record('  -> consensus cost per batch, whole pool', small.ms / small.batches, undefined, 'ms');
record('  -> consensus cost per batch, one node', small.ms / small.batches / 4, undefined, 'ms');

const big = run(600, [21, 22, 23]);
record('pool requests ordered / s (4 nodes, bursts of ~8 requests, 600 per run)', (big.requests * 1000) / big.ms, undefined, 'req/s');
record('  -> consensus cost per request, whole pool', (big.ms * 1000) / big.requests, undefined, 'µs');
record('  -> batches per run', big.batches / 3, undefined, 'batches');
