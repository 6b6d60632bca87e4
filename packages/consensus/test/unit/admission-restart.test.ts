// Admission control across a restart (intake.ts, (3)): a node keeps its refusals in memory only, so a node restarted
// with history must not take in, from PROPAGATEs alone, a write it may have refused before it stopped. In the idle
// default bench:pool run at 6a3da7c, 19 writes refused by Node1 and Node4 (REQUEST_NACKED "pool overloaded") were
// ordered after Node1 was killed and restarted: Node2 and Node3 still held them and propagated them again, the
// restarted Node1 took them in and its PROPAGATE made the n-f that ordered them.
import { expect } from 'chai';
import { Suspicion, type ClientRequestBody, type ConsensusOptions } from '@quire/consensus';
import { Pool, VALIDATORS } from './scripted-pool.js';

type Msg = { op: string; request?: { reqId?: unknown } };
const isPropagateOf = (r: ClientRequestBody) => (msg: Msg) => msg.op === 'PROPAGATE' && msg.request?.reqId === r.reqId;

/** A started pool that ordered one batch (so a node that restarts has history), at time `t`. */
function pooled(consensus: Partial<ConsensusOptions> = {}): { pool: Pool; t: number } {
  const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600, maxRequestQueueSize: 1, ...consensus });
  pool.start();
  pool.runUntil(10_000);
  const [h] = pool.submitAt(10_001);
  pool.runUntil(11_000);
  for (const n of VALIDATORS) expect(pool.orderedBy.get(n)?.has(Number(h!.reqId)) ?? false, `${n} ordered the first write`).to.equal(true);
  return { pool, t: 11_000 };
}

const firstOf = (reqs: ClientRequestBody[]): ClientRequestBody => {
  const [r] = reqs;
  if (r === undefined) throw new RangeError('no request');
  return r;
};
const answers = (pool: Pool, r: ClientRequestBody): (string | undefined)[] => VALIDATORS.map((n) => pool.answers.get(`${n}:${String(r.reqId)}`));
const orderedOn = (pool: Pool, r: ClientRequestBody): string[] => VALIDATORS.filter((n) => pool.orderedBy.get(n)?.has(Number(r.reqId)) ?? false);

describe('admission control across a restart (intake.ts)', () => {
  for (const restarted of ['Node1', 'Node4']) {
    it(`a write refused by Node1 and Node4 is never ordered, though ${restarted} restarts while Node2 and Node3 still propagate it`, () => {
      const { pool, t } = pooled();
      // Node1 and Node4 are full with F (its PROPAGATEs are lost, so it stays pending there)
      const [filler] = pool.submitAt(t + 1, 1, ['Node1', 'Node4']);
      pool.drop = (_from, _to, msg) => isPropagateOf(filler!)(msg as Msg);
      pool.runUntil(t + 100);
      // X: Node2 and Node3 take it in, Node1 and Node4 refuse it: f+1 refusals, the client is told "refused"
      const [x] = pool.submitAt(t + 100);
      pool.runUntil(t + 200);
      expect(answers(pool, x!)).to.deep.equal(['nack', 'ack', 'ack', 'nack']);
      // one of the nodes that refused X stops and starts again; Node2 and Node3 still hold X and propagate it again
      pool.schedule(t + 300, () => pool.crash(restarted));
      pool.schedule(t + 1_300, () => pool.restart(restarted));
      pool.runUntil(t + 40_000);
      expect(orderedOn(pool, x!), 'nodes that ordered X').to.deep.equal([]);
      // the pool goes on ordering: a new write is ordered on every node
      const [y] = pool.submitAt(t + 40_000);
      pool.runUntil(t + 60_000);
      expect(answers(pool, y!)).to.deep.equal(['ack', 'ack', 'ack', 'ack']);
      expect(orderedOn(pool, y!)).to.deep.equal(VALIDATORS);
    });
  }

  it('a restarted node takes in a write from the client, or from the PROPAGATEs of n-f other validators, and orders it', () => {
    const { pool, t } = pooled();
    pool.schedule(t + 1, () => pool.crash('Node4'));
    pool.schedule(t + 500, () => pool.restart('Node4'));
    pool.runUntil(t + 1_000);
    // A: the client's copy reaches every node; B: its copy to Node4 is lost, Node1-3 take it in
    const [a] = pool.submitAt(t + 1_000);
    const [b] = pool.submitAt(t + 1_500, 1, ['Node1', 'Node2', 'Node3']);
    pool.runUntil(t + 5_000);
    expect(answers(pool, a!)).to.deep.equal(['ack', 'ack', 'ack', 'ack']);
    expect(orderedOn(pool, a!)).to.deep.equal(VALIDATORS);
    expect(orderedOn(pool, b!)).to.deep.equal(['Node1', 'Node2', 'Node3']);
    const last = (n: string) => pool.cores.get(n)!.status().lastOrdered;
    expect(last('Node4')).to.deep.equal(last('Node1'));
  });

  it('a restarted node that refused writes takes in from PROPAGATEs alone only what n-f others took in, until its refusals would be forgotten', () => {
    const { pool, t } = pooled({ propagatesPhaseReqTimeoutMs: 4_000 });
    // Node4 is full with F and refuses G (its mark: refusals remembered until 8 s after, saved 11 s ahead)
    const [filler] = pool.submitAt(t + 1, 1, ['Node4']);
    pool.drop = (_from, _to, msg) => isPropagateOf(filler!)(msg as Msg);
    pool.runUntil(t + 100);
    const [g] = pool.submitAt(t + 100, 1, ['Node4']);
    pool.runUntil(t + 200);
    expect(pool.answers.get(`Node4:${String(g!.reqId)}`)).to.equal('nack');
    expect(pool.refusalMarks.get('Node4')).to.be.a('number');
    // Node3 is down; Node4 restarts
    pool.schedule(t + 300, () => pool.crash('Node3'));
    pool.schedule(t + 400, () => pool.crash('Node4'));
    pool.schedule(t + 500, () => pool.restart('Node4'));
    // V and W reach Node1 and Node2 only: n-f needs Node4's PROPAGATE. V comes while Node4 could still remember
    // refusals from before its restart: the price of the rule, V is not ordered (Node1 and Node2 drop it after 4 s).
    // W comes after that time: Node4 takes it in from their PROPAGATEs and the pool orders it
    const [v] = pool.submitAt(t + 1_000, 1, ['Node1', 'Node2']);
    const [w] = pool.submitAt(t + 25_000, 1, ['Node1', 'Node2']);
    pool.runUntil(t + 40_000);
    expect(orderedOn(pool, v!), 'V, while Node4 could remember refusals').to.deep.equal([]);
    expect(orderedOn(pool, w!), 'W, after that time').to.deep.equal(['Node1', 'Node2']);
    const last = (n: string) => pool.cores.get(n)!.status().lastOrdered;
    expect(last('Node4')).to.deep.equal(last('Node1'));
  });

  it('a restarted node that refused writes checks a PROPAGATE before it notes it: a forged one counts against its sender', () => {
    // before the check, a peer's PROPAGATEs of a well-formed identity were noted unchecked while the node could remember
    // refusals (up to 200,000 identities of any length) and never counted against the peer
    const { pool, t } = pooled({ propagatesPhaseReqTimeoutMs: 4_000 });
    const filler = firstOf(pool.submitAt(t + 1, 1, ['Node4']));
    pool.drop = (_from, _to, msg) => isPropagateOf(filler)(msg as Msg);
    pool.runUntil(t + 100);
    const g = firstOf(pool.submitAt(t + 100, 1, ['Node4']));
    pool.runUntil(t + 200);
    expect(pool.answers.get(`Node4:${String(g.reqId)}`)).to.equal('nack');
    pool.schedule(t + 400, () => pool.crash('Node4'));
    pool.schedule(t + 500, () => pool.restart('Node4'));
    // Node1 sends the restarted Node4 PROPAGATEs of requests whose signature is another request's
    const signed = [0, 1, 2, 3].map((i) => pool.client.request(`forged${i}xxxxxxxxxxxxxxxxxxxxxxxxx`));
    const forged = signed.map((r, i) => ({ ...r, signature: signed[(i + 1) % signed.length]?.signature }));
    forged.forEach((request, i) =>
      pool.eventAt(t + 1_000 + i, 'Node4', { kind: 'nodeMessage', from: 'Node1', msg: { op: 'PROPAGATE', request, senderClient: null } }),
    );
    pool.runUntil(t + 2_000);
    const counted = pool.suspicions.filter((s) => s.by === 'Node4' && s.peer === 'Node1' && s.code === Suspicion.INVALID_PROPAGATED_REQUEST);
    expect(counted).to.have.length(forged.length);
  });

  it('a refusal mark far ahead of the clock (set ahead, then corrected) keeps a restarted node from PROPAGATEs only as long as a real one', () => {
    const { pool, t } = pooled({ propagatesPhaseReqTimeoutMs: 4_000 });
    // Node4's mark says refusals may be remembered for years: a mark saved now says 19 s at most (8 s of memory, 11 ahead)
    pool.refusalMarks.set('Node4', 4_000_000_000);
    pool.schedule(t + 300, () => pool.crash('Node3'));
    pool.schedule(t + 400, () => pool.crash('Node4'));
    pool.schedule(t + 500, () => pool.restart('Node4'));
    // W reaches Node1 and Node2 only once that time is over: n-f needs Node4's PROPAGATE
    const w = firstOf(pool.submitAt(t + 25_000, 1, ['Node1', 'Node2']));
    pool.runUntil(t + 40_000);
    expect(orderedOn(pool, w), 'W, after the time a mark saved at the restart would cover').to.deep.equal(['Node1', 'Node2']);
  });

  it('f+1 nodes that refused nothing restart: the writes the others took in meanwhile are ordered', () => {
    const { pool, t } = pooled({ maxRequestQueueSize: 100 });
    pool.schedule(t + 1, () => pool.crash('Node3'));
    pool.schedule(t + 2, () => pool.crash('Node4'));
    const [a] = pool.submitAt(t + 100);
    pool.schedule(t + 1_000, () => pool.restart('Node3'));
    pool.schedule(t + 1_000, () => pool.restart('Node4'));
    pool.runUntil(t + 20_000);
    expect(pool.refusalMarks.size).to.equal(0);
    expect(orderedOn(pool, a!)).to.deep.equal(['Node1', 'Node2']);
    const last = (n: string) => pool.cores.get(n)!.status().lastOrdered;
    for (const n of VALIDATORS) expect(last(n), n).to.deep.equal(last('Node1'));
  });
});
