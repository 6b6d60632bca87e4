// A node that catches up batches whose requests it holds (finalised, never ordered here through
// 3PC) drops those requests: left pending they would wait for good, and its monitor would blame the
// primary for them.
import { expect } from 'chai';
import type { NodeMessage } from '@quire/consensus';
import { Pool } from './scripted-pool.js';

const THREE_PC = new Set(['PREPREPARE', 'PREPARE', 'COMMIT', 'MESSAGE_RESPONSE']);

describe('requests ordered while a node caught up', () => {
  it('are dropped from its intake once the catch-up brought their transactions', () => {
    const pool = new Pool({ chkFreq: 2, logSize: 6, max3pcBatchSize: 1, stateFreshnessUpdateIntervalSec: 3600 });
    pool.start();
    pool.runUntil(10_000);
    let cut = true;
    pool.drop = (_from, to, msg: NodeMessage) => cut && to === 'Node4' && THREE_PC.has(msg.op);
    pool.submitAt(10_001, 8);
    const node4 = pool.cores.get('Node4')!;
    const node1 = pool.cores.get('Node1')!;
    pool.runUntil(10_030);
    expect(node4.status().pendingRequests, 'Node4 holds the requests').to.equal(8);
    pool.runUntil(14_000);
    cut = false;
    pool.runUntil(40_000);
    expect(node4.status().lastOrdered).to.deep.equal(node1.status().lastOrdered);
    expect(node4.status().pendingRequests).to.equal(0);
  });
});
