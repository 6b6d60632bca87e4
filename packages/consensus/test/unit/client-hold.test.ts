// What the core tells the node about the client writes it holds (core.ts holdsRequest, droppedRequestMemoryMs): the
// node keeps a write's reply targets while the core holds it, and for droppedRequestMemoryMs after it dropped it
// unordered, the longest the write may still be ordered here with its clients answered.
import { expect } from 'chai';
import type { ClientRequestBody, ConsensusOptions } from '@quire/consensus';
import { SimRequestAnalyzer } from '@quire/consensus/sim';
import { Pool, VALIDATORS } from './scripted-pool.js';

function startedPool(consensus: Partial<ConsensusOptions>): { pool: Pool; t: number } {
  const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600, ...consensus });
  pool.start();
  pool.runUntil(10_000);
  return { pool, t: 10_000 };
}

function digestOf(request: ClientRequestBody): string {
  const check = new SimRequestAnalyzer().analyze(request);
  if (!check.ok) throw new Error(`not a valid request: ${check.reason}`);
  return check.info.digest;
}

const isPropagateOf = (reqId: unknown) => (_from: string, _to: string, msg: { op: string; request?: { reqId?: unknown } }) =>
  msg.op === 'PROPAGATE' && msg.request?.reqId === reqId;

/**
 * A write reaches Node3 and Node4 only and their PROPAGATEs to Node1 and Node2 are lost: pending on 2 < n-f votes,
 * both full (room for one request), both acknowledge it and drop it unordered after 2 s. Returns it, once dropped.
 */
function droppedOnNode3(pool: Pool, t: number): ClientRequestBody {
  const [a] = pool.submitAt(t + 1, 1, ['Node3', 'Node4']);
  if (a === undefined) throw new Error('no request');
  pool.drop = (from, to, msg) => (to === 'Node1' || to === 'Node2') && isPropagateOf(a.reqId)(from, to, msg as never);
  pool.runUntil(t + 500);
  expect(pool.answers.get(`Node3:${String(a.reqId)}`)).to.equal('ack');
  expect(pool.cores.get('Node3')?.holdsRequest(digestOf(a))).to.equal(true);
  pool.runUntil(t + 4_000);
  expect(pool.cores.get('Node3')?.holdsRequest(digestOf(a))).to.equal(false);
  pool.drop = () => false;
  return a;
}

describe('the client writes the core holds (holdsRequest, droppedRequestMemoryMs)', () => {
  it('holds a write from its acknowledgement until it is ordered', () => {
    const { pool, t } = startedPool({});
    const [a] = pool.submitAt(t + 1);
    if (a === undefined) throw new Error('no request');
    const d = digestOf(a);
    for (const n of VALIDATORS) expect(pool.cores.get(n)?.holdsRequest(d), n).to.equal(false);
    // acknowledged, not ordered yet (the PRE-PREPARE waits for the batch wait)
    pool.runUntil(t + 2);
    for (const n of VALIDATORS) {
      expect(pool.answers.get(`${n}:${String(a.reqId)}`), n).to.equal('ack');
      expect(pool.cores.get(n)?.holdsRequest(d), n).to.equal(true);
    }
    pool.runUntil(t + 5_000);
    for (const n of VALIDATORS) {
      expect(pool.orderedBy.get(n)?.has(Number(a.reqId)), n).to.equal(true);
      expect(pool.cores.get(n)?.holdsRequest(d), n).to.equal(false);
    }
  });

  it('says how long after a drop a write may still be ordered with its clients answered: twice PROPAGATES_PHASE_REQ_TIMEOUT and an expiry check', () => {
    const pool = new Pool({ propagatesPhaseReqTimeoutMs: 5_000, outdatedReqsCheckIntervalMs: 3_000, tickMs: 20 });
    expect(pool.cores.get('Node1')?.droppedRequestMemoryMs).to.equal(10_000 + 3_000 + 20);
    const defaults = new Pool({});
    expect(defaults.cores.get('Node1')?.droppedRequestMemoryMs).to.equal(120_000 + 10_000 + 20);
  });

  it('a write dropped unordered and brought back by n-f PROPAGATEs within that time is answered to the client the node acknowledged', () => {
    const { pool, t } = startedPool({ maxRequestQueueSize: 1, propagatesPhaseReqTimeoutMs: 5_000 });
    const a = droppedOnNode3(pool, t);
    // dropped at t+2 s to t+3 s: brought back less than twice PROPAGATES_PHASE_REQ_TIMEOUT later
    pool.sendAt(t + 11_000, a, ['Node1', 'Node2']);
    pool.runUntil(t + 20_000);
    for (const n of VALIDATORS) expect(pool.orderedBy.get(n)?.has(Number(a.reqId)) ?? false, n).to.equal(true);
  });

  it('a write brought back after that time is ordered, with no client of the dropped copy left to answer', () => {
    const { pool, t } = startedPool({ maxRequestQueueSize: 1, propagatesPhaseReqTimeoutMs: 5_000 });
    const memory = pool.cores.get('Node3')?.droppedRequestMemoryMs ?? Number.NaN;
    const a = droppedOnNode3(pool, t);
    pool.sendAt(t + 4_000 + memory, a, ['Node1', 'Node2']);
    pool.runUntil(t + 4_000 + memory + 10_000);
    // ordered on every node (Node3 and Node4 take it in again from the PROPAGATEs, or fetch it for the PRE-PREPARE)
    expect(pool.cores.get('Node3')?.status().lastOrdered).to.deep.equal(pool.cores.get('Node1')?.status().lastOrdered);
    for (const n of ['Node1', 'Node2']) expect(pool.orderedBy.get(n)?.has(Number(a.reqId)) ?? false, n).to.equal(true);
    // Node3 and Node4 had forgotten the client connection they acknowledged: no REPLY target named in their ordered batch
    for (const n of ['Node3', 'Node4']) expect(pool.orderedBy.get(n)?.has(Number(a.reqId)) ?? false, n).to.equal(false);
  });
});
