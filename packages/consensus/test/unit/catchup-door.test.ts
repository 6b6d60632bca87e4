// A catching-up node refuses client writes at the door (core.ts `admitAtDoor`): it cannot order them, and a write it
// took in would cost it the signature check, the intake and a PROPAGATE of its own for a request that reaches it in the
// catch-up anyway. The refusal is remembered as admission control's are: the node never propagates the request, and
// takes it in from PROPAGATEs only once n-f other validators did.
import { expect } from 'chai';
import type { ClientRequestBody, NodeMessage } from '@quire/consensus';
import { Pool, VALIDATORS } from './scripted-pool.js';

const propagatesOf = (r: ClientRequestBody) => (msg: NodeMessage) => msg.op === 'PROPAGATE' && msg.request.reqId === r.reqId;

/** Node4 crashed while Node1-3 ordered 6 requests, restarted, and held in its catch-up (its CATCHUP_REPs lost). */
function catchingUpNode4(): { pool: Pool; release: () => void; t: number } {
  const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600, max3pcBatchSize: 1 });
  pool.start();
  pool.runUntil(10_000);
  pool.crash('Node4');
  pool.submitAt(10_001, 6, ['Node1', 'Node2', 'Node3']);
  pool.runUntil(12_000);
  let hold = true;
  pool.drop = (_from, to, msg) => hold && to === 'Node4' && msg.op === 'CATCHUP_REP';
  pool.restart('Node4');
  pool.runUntil(12_100);
  return { pool, release: () => (hold = false), t: 12_100 };
}

/** What Node4's client listener does with the client's copy of `r`: REQNACK at the door, else the core takes it. */
function clientCopyToNode4(pool: Pool, r: ClientRequestBody): 'refused' | 'handed to the core' {
  const core = pool.cores.get('Node4')!;
  if (!core.admitAtDoor(r)) return 'refused';
  pool.apply('Node4', core.handle({ kind: 'clientRequest', connId: `c${String(r.reqId)}`, request: r }));
  return 'handed to the core';
}

describe('a catching-up node at the door', () => {
  it('admits writes in its status round: a pool that starts together is catching up on every node, none behind', () => {
    const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600 });
    pool.start();
    const a = pool.client.request('poolstartxxxxxxxxxxxxxxxxxxxxx');
    for (const n of VALIDATORS) expect(pool.cores.get(n)!.status().catchingUp, n).to.equal(true);
    for (const n of VALIDATORS) expect(pool.cores.get(n)!.admitAtDoor(a), n).to.equal(true);
    pool.sendAt(1, a, VALIDATORS);
    pool.runUntil(10_000);
    for (const n of VALIDATORS) expect(pool.orderedBy.get(n)?.has(Number(a.reqId)) ?? false, `${n} ordered it`).to.equal(true);
  });

  it('refuses a client write, does not propagate it before n-f others took it in, and holds nothing of it after the catch-up', () => {
    const { pool, release, t } = catchingUpNode4();
    const node4 = pool.cores.get('Node4')!;
    expect(node4.status().catchingUp, 'Node4 is catching up').to.equal(true);
    const a = pool.client.request('catchupdoorxxxxxxxxxxxxxxxxxxx');
    const isA = propagatesOf(a);
    let node4Propagated = 0;
    const held = pool.drop;
    pool.drop = (from, to, msg) => {
      if (from === 'Node4' && isA(msg)) node4Propagated++;
      return held(from, to, msg);
    };
    expect(clientCopyToNode4(pool, a), 'refused while catching up').to.equal('refused');
    pool.runUntil(t + 1);
    expect(node4Propagated, 'Node4 does not propagate a write it refused').to.equal(0);
    // the client's copies reach Node1-3, which take it in (n-f) and order it; Node4 gets their PROPAGATEs meanwhile
    pool.sendAt(t + 1, a, ['Node1', 'Node2', 'Node3']);
    pool.runUntil(t + 2_000);
    expect(node4.status().catchingUp).to.equal(true);
    expect(pool.orderedBy.get('Node1')?.has(Number(a.reqId)) ?? false, 'Node1-3 order it').to.equal(true);
    release();
    pool.runUntil(t + 30_000);
    expect(node4.status().catchingUp).to.equal(false);
    expect(node4.status().lastOrdered).to.deep.equal(pool.cores.get('Node1')!.status().lastOrdered);
    expect(node4.status().pendingRequests, 'ordered by the pool, caught up here').to.equal(0);
    // after the catch-up the door is the usual one again
    expect(node4.admitAtDoor(pool.client.request('aftercatchupxxxxxxxxxxxxxxxxxx'))).to.equal(true);
  });

  it('a write the catching-up node refused and only two other nodes took in is never ordered: it does not give the n-f-th PROPAGATE', () => {
    const { pool, release, t } = catchingUpNode4();
    const node4 = pool.cores.get('Node4')!;
    const b = pool.client.request('refusedtwicexxxxxxxxxxxxxxxxxx');
    // Node4 refuses it at the door (catching up); Node3 never sees it; Node1 and Node2 take it in: two of the n-f
    // PROPAGATEs it needs. Node4 must not give it the third, during or after its catch-up.
    expect(clientCopyToNode4(pool, b)).to.equal('refused');
    const isB = propagatesOf(b);
    const held = pool.drop;
    pool.drop = (from, to, msg) => (to === 'Node3' && isB(msg)) || held(from, to, msg);
    pool.sendAt(t + 1, b, ['Node1', 'Node2']);
    pool.runUntil(t + 1_000);
    release();
    pool.runUntil(t + 30_000);
    expect(node4.status().catchingUp).to.equal(false);
    for (const n of VALIDATORS) expect(pool.orderedBy.get(n)?.has(Number(b.reqId)) ?? false, `${n} ordered it`).to.equal(false);
  });
});
