// The primary does not vote itself out with its own monitor (#16): in a curve run of bench:pool the primary Node1's M3
// voted 25 against itself four times under overload (1,825 requests finalised and 40 ordered in 10 s), one of the
// n-f votes an honest, busy primary must not get. The backups, n-1 >= n-f of them, still vote a stalled primary out.
import { expect } from 'chai';
import { Pool, VALIDATORS } from './scripted-pool.js';

describe("the primary's monitor does not judge the primary (#16)", () => {
  it('ordering stalls in view 0: the three backups vote 25 and change view, the primary sends no monitor vote', () => {
    const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600 });
    const votes: string[] = [];
    let stall = false;
    pool.drop = (from, _to, msg) => {
      if (msg.op === 'INSTANCE_CHANGE') votes.push(`${from} ${(msg as { viewNo: number }).viewNo} ${(msg as { reason: number }).reason}`);
      // PREPAREs and COMMITs of view 0 are lost, and the repair of them: the primary's batches are ordered nowhere
      return (
        stall &&
        (((msg.op === 'PREPARE' || msg.op === 'COMMIT') && (msg as { viewNo: number }).viewNo === 0) ||
          msg.op === 'MESSAGE_REQUEST' ||
          msg.op === 'MESSAGE_RESPONSE')
      );
    };
    pool.start();
    pool.runUntil(10_000);
    stall = true;
    const [w] = pool.submitAt(10_001, 5);
    pool.runUntil(30_000);
    expect(
      votes.filter((v) => v.startsWith('Node1 ')),
      'votes of the primary',
    ).to.deep.equal([]);
    expect(new Set(votes.filter((v) => v.endsWith(' 25') || v.endsWith(' 61')).map((v) => v.split(' ')[0]))).to.deep.equal(
      new Set(['Node2', 'Node3', 'Node4']),
    );
    expect(VALIDATORS.map((n) => pool.cores.get(n)!.status().viewNo)).to.deep.equal([1, 1, 1, 1]);
    for (const n of VALIDATORS) expect(pool.orderedBy.get(n)?.has(Number(w!.reqId)) ?? false, n).to.equal(true);
  });
});
