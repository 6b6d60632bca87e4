// Admission control for a request without a well-formed requestIdentity (intake.ts refusalKey): the node's own request
// checks refuse one (both `signature` and `signatures`), a stand-in analyzer may not, and the intake must not depend on
// it. Its refusal was not remembered and its PROPAGATEs were stored past the admission limit: in the overloadRestart
// mix of the simulator (n = 7, seeds 9 and 21) such a write refused by six nodes was ordered.
import { expect } from 'chai';
import { requestIdentity } from '@quire/consensus';
import { Pool, VALIDATORS } from './scripted-pool.js';

type Msg = { op: string; request?: { reqId?: unknown } };

describe('admission control of a request without an identity (intake.ts)', () => {
  it('a write refused by f+1 full nodes is never ordered, and a full node does not store it from PROPAGATEs', () => {
    const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600, maxRequestQueueSize: 1 });
    pool.start();
    pool.runUntil(10_000);
    const t = 10_000;
    // Node3 and Node4 are full with F (its PROPAGATEs to Node1 and Node2 are lost)
    const [filler] = pool.submitAt(t + 1, 1, ['Node3', 'Node4']);
    pool.drop = (_from, to, msg) => (to === 'Node1' || to === 'Node2') && (msg as Msg).op === 'PROPAGATE' && (msg as Msg).request?.reqId === filler!.reqId;
    pool.runUntil(t + 100);
    // V: both signature and signatures (no identity); Node1 and Node2 take it in, Node3 and Node4 refuse it
    const v = pool.client.variant(pool.client.request('noidentityxxxxxxxxxxxxxxxxxxxx'));
    expect(requestIdentity(v)).to.equal(undefined);
    pool.sendAt(t + 100, v, VALIDATORS);
    pool.runUntil(t + 200);
    expect(VALIDATORS.map((n) => pool.answers.get(`${n}:${String(v.reqId)}`))).to.deep.equal(['ack', 'ack', 'nack', 'nack']);
    // still full, Node3 and Node4 hold one request each: V's PROPAGATEs were not stored
    for (const n of ['Node3', 'Node4']) expect(pool.cores.get(n)!.status().pendingRequests, n).to.equal(1);
    // F is dropped after 2 s and Node3 and Node4 have room again; Node1 and Node2 propagate V again: not taken in
    pool.runUntil(t + 40_000);
    for (const n of VALIDATORS) expect(pool.orderedBy.get(n)?.has(Number(v.reqId)) ?? false, n).to.equal(false);
  });
});
