// Memory and speed of the explorer's search index (search-index.ts) on a large domain ledger, without a pool: txns are
// handed to the index directly, so the figures are what the index itself costs (the pool's cost is one verified GET_TXN
// per txn, once, measured by the gateway benchmark).
//
//   node --expose-gc --conditions=quire-source --import tsx --import @quire/common/polyfill packages/gateway/test/explorer/search-index.bench.ts [TXNS] [ALIAS_EVERY]
//
// TXNS (default 1,000,000) NYMs with a DID, an author and a txnId each; one in ALIAS_EVERY (default 10) has an alias of
// about 20 characters, one in 50 is a SCHEMA with a name. Prints the heap the index holds, the time to index, and the
// median and 95th percentile of 20 searches of each kind.
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { VerifiedTxn } from '../../src/explorer/data.js';
import { SearchIndex, defaultSearchIndexOptions } from '../../src/explorer/search-index.js';

const TXNS = Number(process.argv[2] ?? 1_000_000);
const ALIAS_EVERY = Number(process.argv[3] ?? 10);
const gc = (globalThis as { gc?: () => void }).gc;

const did = (s: number): string => `D${s.toString(36).padStart(21, 'x')}`;

function txn(s: number): VerifiedTxn {
  const schema = s % 50 === 0;
  const data = schema
    ? { data: { name: `schema-${s}`, version: '1.0', attr_names: ['a'] } }
    : { dest: did(s), ...(s % ALIAS_EVERY === 0 ? { alias: `Agent number ${s}` } : {}) };
  return {
    ledgerId: 1,
    seqNo: s,
    entry: {
      txn: { type: schema ? '101' : '1', data, metadata: { from: did(s % 1000) } },
      txnMetadata: { seqNo: s, txnTime: 1_700_000_000 + s, txnId: s.toString(16).padStart(64, '0') },
    },
    rootHash: undefined,
    ledgerSize: undefined,
    auditPathLength: 0,
    multiSignature: undefined,
    verified: 'proof',
    nodes: [],
  };
}

function heapMb(): number {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  // the typed arrays' storage is outside the JS heap
  return (m.heapUsed + m.arrayBuffers) / 2 ** 20;
}

function times(fn: () => unknown, runs = 20): { p50: number; p95: number } {
  fn();
  const xs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    xs.push(performance.now() - t0);
  }
  xs.sort((a, b) => a - b);
  return { p50: xs[Math.floor(xs.length / 2)]!, p95: xs[Math.floor(xs.length * 0.95)]! };
}

const before = heapMb();
// the bounds are applied by the loop that reads the ledger, not by put(): this measures the structure unbounded
const index = new SearchIndex(
  { size: async () => TXNS, read: async () => [] },
  { ...defaultSearchIndexOptions, maxTxns: Math.max(TXNS, 4096), maxNameChars: Number.MAX_SAFE_INTEGER },
);
const t0 = performance.now();
for (let s = 1; s <= TXNS; s++) index.put(txn(s));
const putMs = performance.now() - t0;
const after = heapMb();
if (!gc) console.log('(run with --expose-gc for exact heap figures)');
console.log(`${TXNS} txns, an alias every ${ALIAS_EVERY}, a schema every 50; load ${loadavg()[0]!.toFixed(1)}`);
console.log(
  `index memory (heap + typed arrays): ${(after - before).toFixed(1)} MB (${(((after - before) * 2 ** 20) / TXNS).toFixed(1)} bytes a txn), names ${index.status().nameChars} characters`,
);
console.log(`indexing: ${(putMs / 1000).toFixed(2)} s (${Math.round(TXNS / (putMs / 1000))} txns/s, without the reads)`);
// status() reports the range the loop maintains; here the range is set by the puts only, so search the blocks directly
(index as unknown as { low: number; high: number }).low = 1;
(index as unknown as { low: number; high: number }).high = TXNS;
const cases: [string, string][] = [
  ['txnId (exact)', (TXNS - 7).toString(16).padStart(64, '0')],
  ['DID (exact; target of 1 txn, author of 1,000)', did(3)],
  ['author DID, 100 newest of many', did(5)],
  ['alias, any part', `number ${TXNS - 10}`],
  ['schema name, any part', 'schema-5000'],
  ['no match', 'nothing-like-this'],
];
console.log('| search | p50 | p95 | hits |');
console.log('|---|---|---|---|');
for (const [name, q] of cases) {
  const r = times(() => index.search(q, 100));
  console.log(`| ${name} | ${r.p50.toFixed(1)} ms | ${r.p95.toFixed(1)} ms | ${index.search(q, 100).hits.length} |`);
}
