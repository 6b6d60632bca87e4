// The door of admission control (intake.ts `admitAtDoor`) against the node's own view of a request: a node that
// took a request in after refusing it (n-f validators' PROPAGATEs, or a PRE-PREPARE that names it) answers the
// client's late copy like any request it holds, never with REQNACK; f+1 such REQNACKs told a client "refused" for a
// write the pool ordered.
import { expect } from 'chai';
import type { ClientRequestBody, ConsensusOptions } from '@quire/consensus';
import { Pool, VALIDATORS } from './scripted-pool.js';

function startedPool(consensus: Partial<ConsensusOptions>): { pool: Pool; t: number } {
  const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600, ...consensus });
  pool.start();
  pool.runUntil(10_000);
  return { pool, t: 10_000 };
}

type Msg = { op: string; request?: { reqId?: unknown } };
const isPropagateOf = (r: ClientRequestBody) => (msg: Msg) => msg.op === 'PROPAGATE' && msg.request?.reqId === r.reqId;

/** What a node's client listener answers a client's copy: REQNACK at the door, else what the core says. */
function clientCopy(pool: Pool, node: string, r: ClientRequestBody): string {
  const core = pool.cores.get(node)!;
  if (!core.admitAtDoor(r)) return 'nack (door)';
  const effects = core.handle({ kind: 'clientRequest', connId: `c${String(r.reqId)}`, request: r });
  const answer = effects.find((e) => e.kind === 'clientAck' || e.kind === 'clientNack' || e.kind === 'replyFromLedger');
  return answer === undefined ? 'none' : answer.kind;
}

describe('admission control at the door (intake.ts admitAtDoor)', () => {
  it('two nodes that refused a write and then took it in from n-f PROPAGATEs do not REQNACK the client: the pool orders it', () => {
    const { pool, t } = startedPool({ maxRequestQueueSize: 1 });
    // Node3 is full with F (F reaches Node3 only, its PROPAGATEs are lost)
    const [filler] = pool.submitAt(t + 1, 1, ['Node3']);
    const a = pool.client.request('doorlatexxxxxxxxxxxxxxxxxxxxxx');
    // A reaches Node1 and Node2 from the client; its copies to Node3 and Node4 come late (below). Node4 is not full
    // and takes A in from Node1's PROPAGATE (Node2's is lost), which fills it; Node3, full, refuses it, then takes it
    // in once the PROPAGATEs of Node1, Node2 and Node4 are there. Node3's PROPAGATE reaches Node4 after 3 s, and
    // Node4 sees no PRE-PREPARE meanwhile: A, pending there on 2 votes, is dropped after 2 s and refused, then taken
    // in again with Node3's PROPAGATE (n-f).
    let hold = true;
    pool.drop = (from, to, msg) => {
      const m = msg as Msg;
      if (isPropagateOf(filler!)(m) && from === 'Node3') return true;
      if (isPropagateOf(a)(m) && from === 'Node2' && to === 'Node4') return true;
      return hold && to === 'Node4' && m.op !== 'PROPAGATE';
    };
    pool.delay = (from, to, msg) => (isPropagateOf(a)(msg as Msg) && from === 'Node3' && to === 'Node4' ? 3000 : 5);
    pool.sendAt(t + 100, a, ['Node1', 'Node2']);
    pool.runUntil(t + 3_500);
    hold = false;
    // the client's copies reach Node3 and Node4 now: both took A in and propagated it (Node1-3 ordered it), so
    // neither may refuse it: Node3 answers from its ledger, Node4 acknowledges it and answers once it orders it
    const late = { Node3: clientCopy(pool, 'Node3', a), Node4: clientCopy(pool, 'Node4', a) };
    expect(late).to.deep.equal({ Node3: 'replyFromLedger', Node4: 'clientAck' });
    pool.runUntil(t + 20_000);
    expect(pool.orderedBy.get('Node4')?.has(Number(a.reqId)) ?? false, 'Node4 answers the client it acknowledged').to.equal(true);
    const ordered = VALIDATORS.map((n) => pool.cores.get(n)!.status().lastOrdered.ppSeqNo);
    expect(new Set(ordered).size, String(ordered)).to.equal(1);
  });

  it('a full node answers a late client copy of a request it ordered from its ledger, after the body was collected at a stable checkpoint', () => {
    const { pool, t } = startedPool({ maxRequestQueueSize: 1, chkFreq: 2, logSize: 6 });
    // A reaches Node1 and Node2 from the client; Node3 takes it in from their PROPAGATEs; all order it
    const a = pool.client.request('orderedlatexxxxxxxxxxxxxxxxxxx');
    pool.sendAt(t + 1, a, ['Node1', 'Node2']);
    pool.runUntil(t + 1_000);
    expect(pool.orderedBy.get('Node1')?.has(Number(a.reqId)) ?? false).to.equal(true);
    // more batches: a stable checkpoint past A's batch collects its body
    for (let i = 0; i < 6; i++) pool.submitAt(t + 1_000 + i * 500);
    pool.runUntil(t + 6_000);
    const node3 = pool.cores.get('Node3')!;
    expect(node3.status().lastOrdered.ppSeqNo).to.be.greaterThan(4);
    // Node3 is full with F (its PROPAGATEs are lost), and the client's copy of A comes now
    const [filler] = pool.submitAt(t + 6_001, 1, ['Node3']);
    pool.drop = (from, _to, msg) => from === 'Node3' && isPropagateOf(filler!)(msg as Msg);
    pool.runUntil(t + 6_100);
    expect(node3.status().pendingRequests).to.equal(1);
    expect(clientCopy(pool, 'Node3', a)).to.equal('replyFromLedger');
    // a new request is still refused at the door
    expect(node3.admitAtDoor(pool.client.request('newlatexxxxxxxxxxxxxxxxxxxxxxx'))).to.equal(false);
  });

  it('remembers refusals within a bound of characters too: a flood of refused writes with long signatures forgets the oldest first', () => {
    // the refusal memory was bounded by count only (200,000), and a client makes the key of a write refused at the door,
    // before its signature is checked: 200,000 writes with a signature of 100 KB each were kept, 20 GB
    const { pool } = startedPool({ maxRequestQueueSize: 1 });
    const core = pool.cores.get('Node1');
    if (core === undefined) throw new RangeError('no Node1');
    // full (one write in progress, the limit is 1): X is refused, and remembered once there is room again
    const x = pool.client.request('floodxxxxxxxxxxxxxxxxxxxxxxxxx');
    expect(core.admitAtDoor(x, 1)).to.equal(false);
    expect(core.admitAtDoor(x, 0), 'X is remembered as refused').to.equal(false);
    // 100 writes whose signature is a million characters are refused while full
    const long = (i: number): ClientRequestBody => ({ ...x, reqId: Number(x.reqId) + 1 + i, signature: `${i}:`.padEnd(1 << 20, 'x') });
    for (let i = 0; i < 100; i++) expect(core.admitAtDoor(long(i), 1)).to.equal(false);
    // X, the oldest, is forgotten: with room, it is admitted; the last refused is still remembered
    expect(core.admitAtDoor(x, 0), 'X after the flood').to.equal(true);
    expect(core.admitAtDoor(long(99), 0), 'the last write refused').to.equal(false);
  });
});
