// Monitor votes are evidence of now (#16): a validator whose monitor (M1-M3 -> 25, M2 -> 61) still reports votes again
// every ViewChangeWindowSize, so its vote counts for a few windows only (5), not for OUTDATED_INSTANCE_CHANGES. In a
// curve run of bench:pool on a loaded machine, Node4 and Node3 voted 25 during the 600/s step, the pool then ordered
// on in view 0, and Node2's vote 2 minutes later, in the 2,500/s step, completed a quorum of votes that never stood
// together: the honest, busy primary was voted out.
import { expect } from 'chai';
import { Pool, VALIDATORS } from './scripted-pool.js';

const ic = (reason: number) => ({ op: 'INSTANCE_CHANGE' as const, viewNo: 1, reason });

describe('monitor votes count while their voter keeps sending them (#16)', () => {
  it('three votes 25 that never stood together start no view change; three within a few windows do', () => {
    const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600 });
    pool.start();
    pool.runUntil(10_000);
    const views = (): number[] => VALIDATORS.map((n) => pool.cores.get(n)!.status().viewNo);
    // Node1 (the primary) hears Node2 at 10 s, Node3 and Node4 at 40 s: Node2 sent nothing since, its monitor cleared
    pool.eventAt(10_001, 'Node1', { kind: 'nodeMessage', from: 'Node2', msg: ic(25) });
    pool.eventAt(40_001, 'Node1', { kind: 'nodeMessage', from: 'Node3', msg: ic(61) });
    pool.eventAt(40_002, 'Node1', { kind: 'nodeMessage', from: 'Node4', msg: ic(25) });
    pool.runUntil(41_000);
    expect(views()[0]).to.equal(0);
    // Node2 still suspects and votes again: now three stand together
    pool.eventAt(41_001, 'Node1', { kind: 'nodeMessage', from: 'Node2', msg: ic(25) });
    pool.runUntil(42_000);
    expect(views()[0]).to.equal(1);
  });

  it('a vote for another reason (primary disconnected, NEW_VIEW timeout, node count changed) keeps its full lifetime', () => {
    const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600 });
    pool.start();
    pool.runUntil(10_000);
    pool.eventAt(10_001, 'Node1', { kind: 'nodeMessage', from: 'Node2', msg: ic(26) });
    pool.eventAt(100_001, 'Node1', { kind: 'nodeMessage', from: 'Node3', msg: ic(25) });
    pool.eventAt(100_002, 'Node1', { kind: 'nodeMessage', from: 'Node4', msg: ic(28) });
    pool.runUntil(101_000);
    expect(pool.cores.get('Node1')!.status().viewNo).to.equal(1);
  });
});
