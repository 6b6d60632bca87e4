// Adaptive batching by the primary (consensus.md §3.2 as Quire does it, batching.ts): a batch is
// cut when it is full, when nothing is in flight, or when its oldest request has waited
// Max3PCBatchWait. Four cores over a scripted network with one simulated clock; the decisions are
// read from the PRE-PREPAREs the primary broadcasts.
import { expect } from 'chai';
import { type ConsensusOptions, defaultConsensusOptions } from '@quire/consensus';
import { Pool } from './scripted-pool.js';

/** a pool past its start-up batches (freshness and view start), idle at `t` */
function idlePool(consensus: Partial<ConsensusOptions>): { pool: Pool; t: number } {
  const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600, ...consensus });
  pool.start();
  pool.runUntil(10_000);
  expect(pool.inFlight()).to.equal(0);
  return { pool, t: 10_000 };
}

describe('adaptive batching (batching.ts)', () => {
  it('has the adaptive defaults: batches of up to 500, a wait bound of 100 ms, 4 batches in flight', () => {
    expect(defaultConsensusOptions.max3pcBatchSize).to.equal(500);
    expect(defaultConsensusOptions.max3pcBatchWaitMs).to.equal(100);
    expect(defaultConsensusOptions.max3pcBatchesInFlight).to.equal(4);
  });

  it('an idle pool proposes a lone request as soon as it is finalised, not at the wait bound', () => {
    const { pool, t } = idlePool({ max3pcBatchWaitMs: 10_000 });
    const [r] = pool.submitAt(t + 3);
    pool.runUntil(t + 200);
    const w = pool.writes();
    expect(w).to.have.length(1);
    // finalised at the primary once n-f PROPAGATEs are in: one link delay after the submission
    expect(w[0]!.at - (t + 3)).to.be.at.most(10);
    expect(pool.orderedAt.get(Number(r!.reqId))).to.be.lessThan(t + 100);
  });

  it('a busy pool fills the next batch while the previous one is ordered, then sends it at once', () => {
    const { pool, t } = idlePool({ max3pcBatchWaitMs: 10_000 });
    // 40 ms per message: a batch takes about 3 delays to be ordered
    pool.delay = () => 40;
    pool.submitAt(t + 1);
    // 30 requests arrive while the first batch is in flight
    for (let i = 0; i < 30; i++) pool.submitAt(t + 50 + i * 2);
    pool.runUntil(t + 2_000);
    const w = pool.writes();
    expect(w.map((x) => x.size)).to.deep.equal([1, 30]);
    // the second goes out when the first is ordered at the primary, long before the 10 s bound
    expect(w[1]!.at - w[0]!.at).to.be.within(100, 200);
  });

  it('pipelines at the wait bound when a batch takes longer to order', () => {
    const { pool, t } = idlePool({ max3pcBatchWaitMs: 50, max3pcBatchesInFlight: 10 });
    // a batch takes 3 x 100 ms to be ordered; requests keep coming every 10 ms
    pool.delay = () => 100;
    for (let i = 0; i < 40; i++) pool.submitAt(t + i * 10);
    let maxInFlight = 0;
    for (let s = t; s < t + 800; s += 5) {
      pool.runUntil(s);
      maxInFlight = Math.max(maxInFlight, pool.inFlight());
    }
    pool.runUntil(t + 3_000);
    const w = pool.writes();
    expect(maxInFlight).to.be.greaterThan(1);
    expect(w.reduce((a, x) => a + x.size, 0)).to.equal(40);
    // after the first, each batch went out when its oldest request had waited the bound (50 ms,
    // plus at most one 20 ms tick), not one per request
    expect(w.length).to.be.within(4, 12);
    for (let i = 1; i < w.length - 1; i++) expect(w[i]!.size, `batch ${i} of ${JSON.stringify(w)}`).to.be.within(4, 8);
  });

  it('cuts a full batch at once while others are in flight', () => {
    const { pool, t } = idlePool({ max3pcBatchWaitMs: 10_000, max3pcBatchSize: 10 });
    pool.delay = () => 40;
    pool.submitAt(t + 1);
    pool.submitAt(t + 20, 25);
    pool.runUntil(t + 2_000);
    const w = pool.writes();
    expect(w[0]!.size).to.equal(1);
    // two full batches of 10 go out as soon as 10 are finalised, without waiting for the first batch
    expect(w[1]!.size).to.equal(10);
    expect(w[2]!.size).to.equal(10);
    expect(w[1]!.at).to.be.lessThan(w[0]!.at + 100);
    expect(w[2]!.at).to.equal(w[1]!.at);
    // the rest (5) when the pool has nothing in flight again
    expect(w[3]!.size).to.equal(5);
    expect(w.reduce((a, x) => a + x.size, 0)).to.equal(26);
  });

  it('never exceeds max3pcBatchesInFlight', () => {
    const { pool, t } = idlePool({ max3pcBatchWaitMs: 0, max3pcBatchesInFlight: 2 });
    pool.delay = () => 100;
    for (let i = 0; i < 30; i++) pool.submitAt(t + i * 3);
    let maxInFlight = 0;
    for (let s = t; s < t + 2_000; s += 1) {
      pool.runUntil(s);
      maxInFlight = Math.max(maxInFlight, pool.inFlight());
    }
    expect(maxInFlight).to.equal(2);
    expect(pool.writes().reduce((a, x) => a + x.size, 0)).to.equal(30);
  });
});
