// A checkpoint becomes stable with n-f matching CHECKPOINTs, this node's own included (consensus.md
// §7; issue #15, the mutation gate's `q-checkpoint` and `cp-own-quorum`): with the CHECKPOINTs of
// two peers lost, a node holding its own and one matching one (n-f-1 of 3 at n = 4) keeps its
// window and its 3PC log; it makes the checkpoint stable once the quorum arrives.
import { expect } from 'chai';
import type { NodeMessage } from '@quire/consensus';
import { Pool } from './scripted-pool.js';

describe('checkpoint quorum', () => {
  it('is not stable with one matching CHECKPOINT besides its own, and is with n-f', () => {
    const pool = new Pool({ chkFreq: 2, logSize: 6, max3pcBatchSize: 1, stateFreshnessUpdateIntervalSec: 3600 });
    let lost = true;
    pool.drop = (from, to, msg: NodeMessage) => lost && to === 'Node2' && msg.op === 'CHECKPOINT' && (from === 'Node3' || from === 'Node4');
    pool.start();
    pool.submitAt(100, 2);
    pool.runUntil(3_000);
    const node2 = pool.cores.get('Node2')!;
    expect(node2.status().lastOrdered.ppSeqNo, 'Node2 ordered the checkpoint batch').to.be.greaterThanOrEqual(2);
    expect(pool.cores.get('Node1')!.status().stableCheckpoint, 'stable where the quorum arrived').to.be.greaterThanOrEqual(2);
    expect(node2.status().stableCheckpoint, 'Node2 holds its own CHECKPOINT 2 and one match').to.equal(0);
    // the quorum arrives with the next checkpoint
    lost = false;
    pool.submitAt(3_100, 2);
    pool.runUntil(8_000);
    expect(node2.status().stableCheckpoint).to.equal(pool.cores.get('Node1')!.status().stableCheckpoint);
    expect(node2.status().stableCheckpoint).to.be.greaterThan(2);
  });
});
