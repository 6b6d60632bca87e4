// A node's catch-up starts as the node starts, before its connections are up (#16): its first
// LEDGER_STATUS reaches nobody. When a peer connects during the status round, the node sends it its
// status at once; before, it waited for the round's 2 s retry, idle, at every restart.
import { expect } from 'chai';
import type { ConsensusEffect, NodeMessage } from '@quire/consensus';
import { Pool } from './scripted-pool.js';

describe('catch-up status round and peer connections', () => {
  // reconnections at several offsets from the 2 s retries, so that some fall just after one
  for (const reconnectAt of [10_030, 10_700, 11_400]) {
    it(`a node cut off until ${reconnectAt} ms gets its first consistency proof within 300 ms of its peers connecting`, () => {
      const pool = new Pool({ chkFreq: 2, logSize: 6, max3pcBatchSize: 1, stateFreshnessUpdateIntervalSec: 3600 });
      let connected = false;
      const proofsAt: number[] = [];
      pool.drop = (from, to, msg: NodeMessage) => {
        if (!connected && (from === 'Node4' || to === 'Node4')) return true;
        if (to === 'Node4' && msg.op === 'CONSISTENCY_PROOF') proofsAt.push(pool.now);
        return false;
      };
      pool.start();
      pool.submitAt(1_000, 6, ['Node1', 'Node2', 'Node3']);
      pool.runUntil(reconnectAt);
      expect(pool.cores.get('Node4')!.status().catchingUp, 'Node4 still in its first status round').to.equal(true);
      connected = true;
      const apply = (pool as unknown as { apply(from: string, effects: ConsensusEffect[]): void }).apply.bind(pool);
      for (const peer of ['Node1', 'Node2', 'Node3']) apply('Node4', pool.cores.get('Node4')!.handle({ kind: 'peerConnected', alias: peer }));
      pool.runUntil(reconnectAt + 300);
      expect(proofsAt.length, 'consistency proofs within 300 ms').to.be.greaterThan(0);
      pool.runUntil(reconnectAt + 10_000);
      const node4 = pool.cores.get('Node4')!.status();
      expect(node4.catchingUp).to.equal(false);
      expect(node4.lastOrdered).to.deep.equal(pool.cores.get('Node1')!.status().lastOrdered);
    });
  }
});
