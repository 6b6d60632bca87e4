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

const no3pc = (_from: string, _to: string, msg: { op: string }): boolean => ['PREPREPARE', 'PREPARE', 'COMMIT', 'MESSAGE_RESPONSE'].includes(msg.op);

const isPropagateOf = (reqId: unknown) => (_from: string, _to: string, msg: { op: string; request?: { reqId?: unknown } }) =>
  msg.op === 'PROPAGATE' && msg.request?.reqId === reqId;

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

  it('counts the writes admitted at the door and not yet stored (inProgress) toward the limit, and remembers that refusal', () => {
    const { pool } = startedPool({ maxRequestQueueSize: 3 });
    const node1 = pool.cores.get('Node1')!;
    expect(node1.status().pendingRequests).to.equal(0);
    // three writes of a burst are in verification: the fourth is refused, though nothing is stored yet
    expect(node1.admitAtDoor(pool.client.request('burst1xxxxxxxxxxxxxxxxxxxxxxxx'), 2)).to.equal(true);
    const d = pool.client.request('burst4xxxxxxxxxxxxxxxxxxxxxxxx');
    expect(node1.admitAtDoor(d, 3)).to.equal(false);
    // refused once, refused again when the burst is gone
    expect(node1.admitAtDoor(d, 0)).to.equal(false);
    expect(node1.admitAtDoor(pool.client.request('burst5xxxxxxxxxxxxxxxxxxxxxxxx'), 0)).to.equal(true);
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

  it("a node that dropped a request it had propagated acknowledges the client's late copy, and answers it once the pool orders it", () => {
    const { pool, t } = startedPool({ maxRequestQueueSize: 1 });
    // A reaches Node3 and Node4 first (its copies to Node1 and Node2 are late) and their PROPAGATEs to Node1 and
    // Node2 are lost: pending on 2 < n-f votes, both nodes full, so both drop it after 2 s; their PROPAGATEs stand
    const [a] = pool.submitAt(t + 1, 1, ['Node3', 'Node4']);
    pool.drop = (from, to, msg) => (to === 'Node1' || to === 'Node2') && isPropagateOf(a!.reqId)(from, to, msg as never);
    pool.runUntil(t + 4_000);
    const node3 = pool.cores.get('Node3')!;
    expect(node3.status().pendingRequests).to.equal(0);
    // the client's copy reaches Node3 again: a REQNACK would count toward an f+1 "refused" while Node3's PROPAGATE
    // still counts toward the n-f that order it
    expect(node3.admitAtDoor(a!)).to.equal(true);
    const late = node3.handle({ kind: 'clientRequest', connId: `c${String(a!.reqId)}`, request: a! });
    expect(late.filter((e) => e.kind === 'clientAck' || e.kind === 'clientNack').map((e) => e.kind)).to.deep.equal(['clientAck']);
    // the late copies reach Node1 and Node2, which take it in: with the PROPAGATEs of Node3 and Node4 the pool holds
    // it on n-f; it is ordered and Node3 answers the client it acknowledged
    pool.drop = () => false;
    pool.sendAt(t + 4_001, a!, ['Node1', 'Node2']);
    pool.runUntil(t + 10_000);
    for (const n of VALIDATORS) expect(pool.orderedBy.get(n)?.has(Number(a!.reqId)) ?? false, n).to.equal(true);
  });

  it('a request already held passes the door even when the node is full', () => {
    const { pool, t } = startedPool({ maxRequestQueueSize: 1 });
    pool.drop = (from, _to, msg) => from === 'Node1' && msg.op !== 'PROPAGATE';
    const [a] = pool.submitAt(t + 1);
    pool.runUntil(t + 50);
    expect(pool.cores.get('Node1')!.admitAtDoor(a!)).to.equal(true);
  });
  it('a primary that refused a write n-f others took in stores and proposes it once their PROPAGATEs arrive', () => {
    const { pool, t } = startedPool({ maxRequestQueueSize: 1 });
    // A fills the primary only: its PROPAGATEs to the others are lost, so it stays pending there
    const [a] = pool.submitAt(t + 1, 1, ['Node1']);
    pool.drop = (from, to, msg) => from === 'Node1' && isPropagateOf(a!.reqId)(from, to, msg as never);
    pool.runUntil(t + 100);
    // B reaches the backups only: the full primary refuses it when the first PROPAGATE arrives
    const [b] = pool.submitAt(t + 100, 1, ['Node2', 'Node3', 'Node4']);
    pool.runUntil(t + 5_000);
    const id = Number(b!.reqId);
    // n-f = 3 validators took it in: the pool decided; the primary proposes it, nobody changes view
    for (const n of ['Node2', 'Node3', 'Node4']) expect(pool.orderedBy.get(n)?.has(id) ?? false, n).to.equal(true);
    expect(pool.cores.get('Node2')!.status().viewNo).to.equal(0);
  });
  it('the admission limit follows the ordering rate of the pool: what it orders in maxQueueWaitMs, never below 1,000', function () {
    // about 5,000 signed requests: seconds of CPU on a loaded machine
    this.timeout(120_000);
    const { pool, t } = startedPool({ maxRequestQueueSize: 50_000, maxQueueWaitMs: 10_000, max3pcBatchSize: 100 });
    const node2 = pool.cores.get('Node2')!;
    expect(node2.status().admissionLimit, 'idle pool: the floor').to.equal(1000);
    // 200 writes a second for 12 s: the limit becomes about 10 s of that rate
    for (let i = 0; i < 12; i++) pool.submitAt(t + i * 1000, 200);
    pool.runUntil(t + 12_000);
    const limit = node2.status().admissionLimit;
    expect(limit).to.be.within(1600, 2400);
    // the ceiling holds
    const capped = startedPool({ maxRequestQueueSize: 1200, maxQueueWaitMs: 10_000, max3pcBatchSize: 100 });
    for (let i = 0; i < 12; i++) capped.pool.submitAt(capped.t + i * 1000, 200);
    capped.pool.runUntil(capped.t + 12_000);
    expect(capped.pool.cores.get('Node2')!.status().admissionLimit).to.equal(1200);
  });

  it('the batches in flight are admitted while the oldest finalised write held is younger than maxQueueWaitMs, then what the pool orders in it (at least 1,000)', () => {
    // the defaults: batches of 500, 4 in flight. An idle pool takes a burst of 2,000 in; with 2,000 as the floor in every
    // case, an overloaded pool ordering 234 writes/s held 2,000 writes at each node, 8-10 s of waiting
    const { pool, t } = startedPool({});
    const node1 = pool.cores.get('Node1')!;
    expect(node1.status().admissionLimit, 'idle').to.equal(2000);
    // a write Node1 alone holds (its PROPAGATEs lost) is not waiting for the pool: the burst is still admitted
    const [a] = pool.submitAt(t + 1, 1, ['Node1']);
    pool.drop = isPropagateOf(a!.reqId);
    pool.runUntil(t + 7_000);
    expect(node1.status().pendingRequests).to.equal(1);
    expect(node1.status().admissionLimit, 'an unfinalised write held 7 s').to.equal(2000);
    // a write every node finalised and the pool does not order (its 3PC messages lost)
    pool.drop = (from, to, msg) => no3pc(from, to, msg) || isPropagateOf(a!.reqId)(from, to, msg as never);
    pool.submitAt(t + 7_001);
    pool.runUntil(t + 11_000);
    expect(node1.status().admissionLimit, 'finalised, held 4 s').to.equal(2000);
    pool.runUntil(t + 13_500);
    for (const n of VALIDATORS) expect(pool.cores.get(n)!.status().admissionLimit, `${n}: finalised, held 6 s, nothing ordered`).to.equal(1000);
    // ordered once the 3PC messages pass: nothing old is held, the burst is admitted again
    pool.drop = () => false;
    pool.runUntil(t + 60_000);
    expect(pool.cores.get('Node2')!.status().pendingRequests).to.equal(0);
    expect(pool.cores.get('Node2')!.status().admissionLimit).to.equal(2000);
    // two full batches when they are more than 1,000
    const big = startedPool({ max3pcBatchSize: 800, max3pcBatchesInFlight: 1 });
    big.pool.drop = no3pc;
    big.pool.submitAt(big.t + 1);
    big.pool.runUntil(big.t + 7_000);
    expect(big.pool.cores.get('Node1')!.status().admissionLimit).to.equal(1600);
  });
});
