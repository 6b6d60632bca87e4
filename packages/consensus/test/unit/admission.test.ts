// Admission control decided once per node and request (intake.ts): a write refused by f+1 nodes
// ("pool overloaded") is never ordered, a write n-f nodes took in is ordered and answered, and the
// door check refuses without the request being verified or queued.
import { expect } from 'chai';
import type { ConsensusOptions } from '@quire/consensus';
import { Pool, VALIDATORS } from './scripted-pool.js';

function startedPool(consensus: Partial<ConsensusOptions>): { pool: Pool; t: number } {
  const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600, ...consensus });
  pool.start();
  pool.runUntil(10_000);
  return { pool, t: 10_000 };
}

const isPropagateOf = (reqId: unknown) => (_from: string, _to: string, msg: { op: string; request?: { reqId?: unknown } }) => msg.op === 'PROPAGATE' && msg.request?.reqId === reqId;

describe('admission control (intake.ts)', () => {
  it('a write refused by f+1 full nodes is never ordered, though n-f-1 nodes took it in', () => {
    const { pool, t } = startedPool({ maxRequestQueueSize: 1 });
    // A reaches Node3 and Node4 only and its PROPAGATEs to Node1 and Node2 are lost: it stays
    // pending (2 < n-f PROPAGATEs) and fills both nodes
    const [a] = pool.submitAt(t + 1, 1, ['Node3', 'Node4']);
    pool.drop = (from, to, msg) => (to === 'Node1' || to === 'Node2') && isPropagateOf(a!.reqId)(from, to, msg as never);
    pool.runUntil(t + 100);
    // B: Node1 and Node2 take it in, Node3 and Node4 refuse it: f+1 = 2 refusals, the client is told
    const [b] = pool.submitAt(t + 100);
    pool.runUntil(t + 60_000);
    const id = String(b!.reqId);
    expect(VALIDATORS.map((n) => pool.answers.get(`${n}:${id}`))).to.deep.equal(['ack', 'ack', 'nack', 'nack']);
    for (const n of VALIDATORS) expect(pool.orderedBy.get(n)?.has(Number(id)) ?? false, n).to.equal(false);
    expect(pool.writes()).to.deep.equal([]);
  });

  it('a write taken in by n-f nodes and refused by one is ordered on every node and answered by those that took it in', () => {
    const { pool, t } = startedPool({ maxRequestQueueSize: 1 });
    const [a] = pool.submitAt(t + 1, 1, ['Node4']);
    pool.drop = (from, to, msg) => to !== 'Node4' && isPropagateOf(a!.reqId)(from, to, msg as never);
    pool.runUntil(t + 100);
    const [b] = pool.submitAt(t + 100);
    pool.runUntil(t + 5_000);
    const id = Number(b!.reqId);
    expect(VALIDATORS.map((n) => pool.answers.get(`${n}:${id}`))).to.deep.equal(['ack', 'ack', 'ack', 'nack']);
    // ordered everywhere (Node4 fetches the body the PRE-PREPARE names), replied by Node1-3
    for (const n of ['Node1', 'Node2', 'Node3']) expect(pool.orderedBy.get(n)?.has(id) ?? false, n).to.equal(true);
    expect(pool.cores.get('Node4')!.status().lastOrdered).to.deep.equal(pool.cores.get('Node1')!.status().lastOrdered);
    expect(pool.orderedBy.get('Node4')?.has(id) ?? false).to.equal(false);
  });

  it('refuses at the door while full, and keeps refusing that request after room is made', () => {
    const { pool, t } = startedPool({ maxRequestQueueSize: 1, max3pcBatchWaitMs: 0 });
    const node1 = pool.cores.get('Node1')!;
    // Node1 is full while A waits to be ordered (its PRE-PREPAREs are held back)
    let hold = true;
    pool.drop = (from, _to, msg) => hold && from === 'Node1' && msg.op !== 'PROPAGATE';
    pool.submitAt(t + 1);
    pool.runUntil(t + 50);
    const b = pool.client.request('doorxxxxxxxxxxxxxxxxxxxxxxxxxx');
    expect(node1.admitAtDoor(b)).to.equal(false);
    expect(node1.admitAtDoor(pool.client.request('otherxxxxxxxxxxxxxxxxxxxxxxxxx'))).to.equal(false);
    // a request without an identity passes the door (its full check refuses it as malformed)
    expect(node1.admitAtDoor({ operation: { type: '1' } })).to.equal(true);
    // room is made; B is still refused, a new request is not
    hold = false;
    pool.runUntil(t + 20_000);
    expect(node1.status().pendingRequests).to.equal(0);
    expect(node1.admitAtDoor(b)).to.equal(false);
    expect(node1.admitAtDoor(pool.client.request('newxxxxxxxxxxxxxxxxxxxxxxxxxxx'))).to.equal(true);
    // the client's copy of B is refused too, and nothing of B is stored
    const effects = node1.handle({ kind: 'clientRequest', connId: 'cB', request: b });
    expect(effects.filter((e) => e.kind === 'clientNack').map((e) => (e as { code?: string }).code)).to.deep.equal(['POOL_OVERLOADED']);
    expect(node1.status().pendingRequests).to.equal(0);
  });

  it('a full node drops a request it took in that is not finalised after 2 s, and admits new ones', () => {
    const { pool, t } = startedPool({ maxRequestQueueSize: 1 });
    const [a] = pool.submitAt(t + 1, 1, ['Node3', 'Node4']);
    pool.drop = (from, to, msg) => (to === 'Node1' || to === 'Node2') && isPropagateOf(a!.reqId)(from, to, msg as never);
    pool.runUntil(t + 1_000);
    const node3 = pool.cores.get('Node3')!;
    expect(node3.status().pendingRequests).to.equal(1);
    expect(node3.admitAtDoor(pool.client.request('laterxxxxxxxxxxxxxxxxxxxxxxxxx'))).to.equal(false);
    pool.runUntil(t + 4_000);
    expect(node3.status().pendingRequests).to.equal(0);
    const [c] = pool.submitAt(t + 4_001);
    pool.runUntil(t + 6_000);
    expect(pool.orderedBy.get('Node1')?.has(Number(c!.reqId))).to.equal(true);
    expect(pool.orderedBy.get('Node3')?.has(Number(c!.reqId))).to.equal(true);
  });

  it('a request already held passes the door even when the node is full', () => {
    const { pool, t } = startedPool({ maxRequestQueueSize: 1 });
    pool.drop = (from, _to, msg) => from === 'Node1' && msg.op !== 'PROPAGATE';
    const [a] = pool.submitAt(t + 1);
    pool.runUntil(t + 50);
    expect(pool.cores.get('Node1')!.admitAtDoor(a!)).to.equal(true);
  });
});
