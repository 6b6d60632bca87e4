// ConsensusCore.quiesce (a node about to exit for a POOL_RESTART or an upgrade): as the primary it
// proposes nothing more, while the batches already in flight are still ordered, by it too.
import { expect } from 'chai';
import { Pool } from './scripted-pool.js';

describe('quiesce before a restart exit', () => {
  it('the primary proposes nothing after quiesce; a batch in flight is ordered everywhere first', () => {
    const pool = new Pool({});
    pool.start();
    const first = pool.submitAt(100, 3);
    pool.runUntil(2_000);
    for (const r of first) expect(pool.orderedBy.get('Node2')?.has(Number(r.reqId))).to.equal(true);
    const before = pool.writes().length;

    // a write in flight: quiesce the primary once its PRE-PREPARE is out, before it is ordered
    const inFlight = pool.submitAt(3_000, 1);
    let pending: boolean | undefined;
    const primary = pool.cores.get('Node1')!;
    pool.delay = () => 40;
    let quiesceAt = 0;
    for (let t = 3_000; t < 4_000 && quiesceAt === 0; t += 5) {
      pool.runUntil(t);
      if (pool.writes().length > before) {
        quiesceAt = t;
        pending = primary.quiesce();
      }
    }
    expect(quiesceAt, 'the PRE-PREPARE of the second write went out').to.be.greaterThan(0);
    expect(pending, 'quiesce reports the batch in flight').to.equal(true);
    pool.runUntil(6_000);
    for (const name of ['Node1', 'Node2', 'Node3', 'Node4'])
      for (const r of inFlight) expect(pool.orderedBy.get(name)?.has(Number(r.reqId)), name).to.equal(true);
    expect(primary.quiesce(), 'nothing in flight any more').to.equal(false);

    // later writes get no PRE-PREPARE from the quiesced primary
    const proposed = pool.writes().length;
    pool.submitAt(6_500, 4);
    pool.runUntil(9_000);
    expect(pool.writes().length).to.equal(proposed);
  });
});
