// The decision rule of a write (f+1 identical answers settle it; NO_CONSENSUS once no group can reach f+1), fed
// answers directly: no sockets, no timers.
import { expect } from 'chai';
import fc from 'fast-check';
import { canonicalJson } from '@quire/common';
import { ClientError, ClientErrorCode } from '../../src/errors.js';
import type { NodeAnswer } from '../../src/pool/exchange.js';
import { WriteQuorum, type WriteDecision } from '../../src/pool/write-quorum.js';

const enc = new TextEncoder();
const txn = (seqNo: number): Record<string, unknown> => ({ txn: { type: '1', data: { dest: 'VsKV7grR1BUE29mG2Fm2kX' } }, txnMetadata: { seqNo } });
const reply = (node: string, result: unknown, raw?: string): NodeAnswer => ({
  node,
  kind: 'reply',
  message: { op: 'REPLY', result },
  ...(raw !== undefined ? { raw: enc.encode(raw) } : {}),
});
const nack = (node: string, reason: string, kind: 'nack' | 'reject' = 'nack'): NodeAnswer => ({
  node,
  kind,
  reason,
  code: kind === 'reject' ? 304 : null,
  message: {},
});
const failure = (node: string, code: string = ClientErrorCode.NODE_UNREACHABLE): NodeAnswer => ({
  node,
  kind: 'error',
  error: new ClientError(code as never, { node }),
});
/** A node's client listener refused the request for now (TOO_MANY_PENDING, RATE_LIMITED): it does not hold it. */
const refused = (node: string, refusal: string): NodeAnswer => ({
  node,
  kind: 'error',
  error: new ClientError(ClientErrorCode.NODE_REFUSED, { node, refusal, reason: 'later' }),
});

function failedCode(d: WriteDecision | undefined): string | undefined {
  return d?.kind === 'failed' ? d.error.code : undefined;
}

describe('WriteQuorum: the decision of a write from the nodes answers', () => {
  it('f+1 REPLYs of the same txn commit it, naming the nodes; a disagreeing and a silent node change nothing', () => {
    const q = new WriteQuorum(4, 1);
    expect(q.add(reply('Node1', txn(7)))).to.equal(undefined);
    expect(q.add(reply('Node3', txn(8)))).to.equal(undefined);
    const d = q.add(reply('Node2', txn(7)));
    expect(d).to.deep.equal({ kind: 'committed', result: txn(7), nodes: ['Node1', 'Node2'] });
    // decided once: a later answer returns the same decision
    expect(q.add(nack('Node4', 'late'))).to.equal(d);
    expect(q.decided).to.equal(d);
  });

  it('REPLYs that are equal as JSON but differ in key order or bytes agree', () => {
    const q = new WriteQuorum(4, 1);
    const a = txn(9);
    const b = Object.fromEntries(Object.entries(txn(9)).reverse());
    q.add(reply('Node1', a, JSON.stringify({ op: 'REPLY', result: a })));
    const d = q.add(reply('Node2', b, JSON.stringify({ op: 'REPLY', result: b })));
    expect(d?.kind).to.equal('committed');
    // byte-equal replies join the group of the first without a second canonicalization
    const q2 = new WriteQuorum(4, 1);
    const raw = JSON.stringify({ op: 'REPLY', result: a });
    q2.add(reply('Node1', a, raw));
    expect(q2.add(reply('Node2', a, raw))).to.deep.include({ kind: 'committed', nodes: ['Node1', 'Node2'] });
  });

  it('replies first grouped by their bytes are compared canonically once bytes differ: a different txn never joins, a reordered one does', () => {
    // n = 7, f = 2: three matching replies settle the write
    const q = new WriteQuorum(7, 2);
    const x = txn(9);
    const y = txn(10);
    const yReordered = Object.fromEntries(Object.entries(txn(10)).reverse());
    const bytes = (r: unknown): string => JSON.stringify({ op: 'REPLY', result: r });
    expect(q.add(reply('Node1', x, bytes(x)))).to.equal(undefined);
    expect(q.add(reply('Node2', y, bytes(y)))).to.equal(undefined);
    expect(q.add(reply('Node3', x, bytes(x)))).to.equal(undefined);
    // other bytes, the result of Node2's: joins Node2's group, not Node1's
    expect(q.add(reply('Node4', yReordered, bytes(yReordered)))).to.equal(undefined);
    expect(q.summary().replies.map((g) => g.nodes)).to.deep.equal([
      ['Node1', 'Node3'],
      ['Node2', 'Node4'],
    ]);
    // the bytes of Node4's reply are now known as Node2's group's: a third copy of them settles it
    expect(q.add(reply('Node5', yReordered, bytes(yReordered)))).to.deep.include({ kind: 'committed', nodes: ['Node2', 'Node4', 'Node5'] });
  });

  it('replies without their bytes (answers fed directly) are grouped by their canonical JSON', () => {
    const q = new WriteQuorum(4, 1);
    expect(q.add(reply('Node1', txn(1)))).to.equal(undefined);
    expect(q.add(reply('Node2', txn(2)))).to.equal(undefined);
    expect(q.add(reply('Node3', Object.fromEntries(Object.entries(txn(2)).reverse())))).to.deep.include({ kind: 'committed', nodes: ['Node2', 'Node3'] });
  });

  it('f+1 REQNACKs with one reason fail with REQUEST_NACKED, f+1 REJECTs with REQUEST_REJECTED, with reason, code and nodes', () => {
    const q = new WriteQuorum(4, 1);
    q.add(nack('Node1', 'pool overloaded'));
    q.add(reply('Node2', txn(1)));
    const d = q.add(nack('Node4', 'pool overloaded'));
    expect(failedCode(d)).to.equal(ClientErrorCode.REQUEST_NACKED);
    expect(d?.kind === 'failed' && d.error.data).to.deep.equal({ reason: 'pool overloaded', code: null, nodes: ['Node1', 'Node4'] });
    const r = new WriteQuorum(4, 1);
    r.add(nack('Node1', 'DID not found', 'reject'));
    const dr = r.add(nack('Node2', 'DID not found', 'reject'));
    expect(failedCode(dr)).to.equal(ClientErrorCode.REQUEST_REJECTED);
    expect(dr?.kind === 'failed' && dr.error.data.code).to.equal(304);
    // a REQNACK and a REJECT with the same reason are different answers
    const m = new WriteQuorum(4, 1);
    m.add(nack('Node1', 'same'));
    expect(m.add(nack('Node2', 'same', 'reject'))).to.equal(undefined);
  });

  it('the REQUEST_NACKED (REQUEST_REJECTED) error is built without a stack trace, its message the reason, and the stack trace limit left as it was', () => {
    const limit = Error.stackTraceLimit;
    for (const kind of ['nack', 'reject'] as const) {
      const q = new WriteQuorum(4, 1);
      q.add(nack('Node1', 'pool overloaded', kind));
      const d = q.add(nack('Node2', 'pool overloaded', kind));
      if (d?.kind !== 'failed') throw new Error('the write should fail');
      expect(d.error).to.be.instanceOf(ClientError);
      expect(d.error.code).to.equal(kind === 'nack' ? ClientErrorCode.REQUEST_NACKED : ClientErrorCode.REQUEST_REJECTED);
      expect(d.error.message).to.equal('pool overloaded');
      expect(d.error.stack ?? '').to.not.match(/\n\s+at /);
    }
    expect(Error.stackTraceLimit).to.equal(limit);
    expect(new Error('x').stack).to.match(/\n\s+at /);
  });

  it('fails with NO_CONSENSUS as soon as no group can reach f+1, naming groups, failed nodes and the nodes heard', () => {
    const q = new WriteQuorum(4, 1);
    q.ack('Node4');
    q.add(nack('Node1', 'first reason'));
    q.add(nack('Node2', 'second reason'));
    expect(q.add(failure('Node3'))).to.equal(undefined); // Node4 could still agree with Node1 or Node2
    const d = q.add(failure('Node4', ClientErrorCode.MALFORMED_REPLY));
    expect(failedCode(d)).to.equal(ClientErrorCode.NO_CONSENSUS);
    expect(d?.kind === 'failed' && d.error.data).to.deep.equal({
      replies: [
        { kind: 'nack', nodes: ['Node1'], reason: 'first reason' },
        { kind: 'nack', nodes: ['Node2'], reason: 'second reason' },
      ],
      errors: [
        { node: 'Node3', code: ClientErrorCode.NODE_UNREACHABLE },
        { node: 'Node4', code: ClientErrorCode.MALFORMED_REPLY },
      ],
      answered: ['Node4', 'Node1', 'Node2'],
      n: 4,
    });
    // with f+1 failures of 4 nodes and nothing else, no group can form: decided at the second failure
    const e = new WriteQuorum(4, 1);
    expect(e.add(failure('Node1'))).to.equal(undefined);
    expect(e.add(failure('Node2'))).to.equal(undefined);
    expect(failedCode(e.add(failure('Node3')))).to.equal(ClientErrorCode.NO_CONSENSUS);
  });

  it('f+1 REPLYs whose result is not an object decide nothing: the write waits for its deadline', () => {
    const q = new WriteQuorum(4, 1);
    q.add(reply('Node1', 'not a txn'));
    expect(q.add(reply('Node2', 'not a txn'))).to.equal(undefined);
    q.add(reply('Node3', 'not a txn'));
    expect(q.add(reply('Node4', 'not a txn'))).to.equal(undefined);
  });

  it("a node's transient refusal (TOO_MANY_PENDING, RATE_LIMITED) is set aside and asked again once another node took the request in", () => {
    const q = new WriteQuorum(4, 1);
    expect(q.add(refused('Node1', 'TOO_MANY_PENDING'))).to.equal(undefined);
    expect(q.add(refused('Node2', 'RATE_LIMITED'))).to.equal(undefined);
    expect(q.add(refused('Node4', 'TOO_MANY_PENDING'))).to.equal(undefined); // counted as failures, NO_CONSENSUS would be decided here
    expect(q.takeRetries()).to.deep.equal([]); // nobody holds the request yet
    q.ack('Node3');
    expect([...q.takeRetries()].sort()).to.deep.equal(['Node1', 'Node2', 'Node4']);
    expect(q.takeRetries()).to.deep.equal([]); // handed out once
    expect(q.add(reply('Node3', txn(5)))).to.equal(undefined);
    expect(q.add(refused('Node1', 'TOO_MANY_PENDING'))).to.equal(undefined); // refused again: set aside again
    expect(q.takeRetries()).to.deep.equal(['Node1']);
    expect(q.add(reply('Node2', txn(5)))).to.deep.equal({ kind: 'committed', result: txn(5), nodes: ['Node3', 'Node2'] });
    expect(q.takeRetries()).to.deep.equal([]);
  });

  it('transient refusals count as REQNACKs "pool overloaded" when no node took the request in and every other node refused it', () => {
    const q = new WriteQuorum(4, 1);
    q.add(refused('Node1', 'RATE_LIMITED'));
    q.add(refused('Node2', 'TOO_MANY_PENDING'));
    q.add(nack('Node3', 'first reason'));
    const d = q.add(nack('Node4', 'second reason'));
    // nobody holds the request: the pool cannot order it, and the client is told it is overloaded (it backs off)
    expect(failedCode(d)).to.equal(ClientErrorCode.REQUEST_NACKED);
    expect(d?.kind === 'failed' && d.error.data).to.deep.include({ reason: 'pool overloaded', nodes: ['Node1', 'Node2'] });
    // every node's listener refused it (the node's session was full everywhere): REQUEST_NACKED "pool overloaded", not NO_CONSENSUS
    const all = new WriteQuorum(4, 1);
    for (const node of ['Node1', 'Node2', 'Node3']) expect(all.add(refused(node, 'TOO_MANY_PENDING'))).to.equal(undefined);
    const da = all.add(refused('Node4', 'TOO_MANY_PENDING'));
    expect(failedCode(da)).to.equal(ClientErrorCode.REQUEST_NACKED);
    expect(da?.kind === 'failed' && da.error.data.reason).to.equal('pool overloaded');
    // with REQNACKs "pool overloaded" of the nodes' door they make one group
    const mixed = new WriteQuorum(4, 1);
    mixed.add(nack('Node1', 'pool overloaded'));
    mixed.add(refused('Node2', 'TOO_MANY_PENDING'));
    mixed.add(nack('Node3', 'other'));
    const dm = mixed.add(nack('Node4', 'another'));
    expect(dm?.kind === 'failed' && dm.error.data).to.deep.include({ reason: 'pool overloaded', nodes: ['Node1', 'Node2'] });
  });

  it('transient refusals count as failures when no node took the request in and a node failed (it may hold the request)', () => {
    const q = new WriteQuorum(4, 1);
    q.add(refused('Node1', 'RATE_LIMITED'));
    q.add(refused('Node2', 'TOO_MANY_PENDING'));
    q.add(nack('Node3', 'pool overloaded'));
    const d = q.add(failure('Node4'));
    expect(failedCode(d)).to.equal(ClientErrorCode.NO_CONSENSUS);
    expect(d?.kind === 'failed' && (d.error.data.errors as { node: string; code: string }[]).map((e) => `${e.node} ${e.code}`)).to.deep.equal([
      'Node4 NODE_UNREACHABLE',
      'Node1 RATE_LIMITED',
      'Node2 TOO_MANY_PENDING',
    ]);
    // another refusal code is the node's answer at once
    const o = new WriteQuorum(4, 1);
    o.add(refused('Node1', 'MESSAGE_TOO_LARGE'));
    o.add(refused('Node2', 'MESSAGE_TOO_LARGE'));
    expect(failedCode(o.add(refused('Node3', 'MESSAGE_TOO_LARGE')))).to.equal(ClientErrorCode.NO_CONSENSUS);
    // at the deadline the refusals set aside are in the detail
    const t = new WriteQuorum(4, 1);
    t.add(refused('Node1', 'RATE_LIMITED'));
    expect(t.timedOut(100).data.errors).to.deep.equal([{ node: 'Node1', code: 'RATE_LIMITED', reason: 'later' }]);
  });

  it("a REQNACK from a node that acknowledged the write is that node's failure, not a refusal toward f+1", () => {
    // Node2 acknowledged the write (its PROPAGATE may count toward the n-f that order it), then refused a copy sent again
    // after a lost session: with Node1's refusal that made f+1 "refused" for a write the pool can order
    const q = new WriteQuorum(4, 1);
    q.ack('Node2');
    expect(q.add(nack('Node1', 'pool overloaded'))).to.equal(undefined);
    expect(q.add(nack('Node2', 'pool overloaded'))).to.equal(undefined);
    // the nodes that hold it answer
    expect(q.add(reply('Node3', txn(4)))).to.equal(undefined);
    expect(q.add(reply('Node4', txn(4)))).to.deep.equal({ kind: 'committed', result: txn(4), nodes: ['Node3', 'Node4'] });
    // when nothing else comes, the failure names the node and why
    const t = new WriteQuorum(4, 1);
    t.ack('Node2');
    t.add(nack('Node1', 'pool overloaded'));
    t.add(nack('Node2', 'pool overloaded'));
    expect(t.timedOut(100).data.errors).to.deep.equal([{ node: 'Node2', code: 'NACK_AFTER_ACK', reason: 'pool overloaded' }]);
    // two nodes that never acknowledged it refuse it
    const r = new WriteQuorum(4, 1);
    r.ack('Node3');
    r.add(nack('Node1', 'pool overloaded'));
    expect(failedCode(r.add(nack('Node2', 'pool overloaded')))).to.equal(ClientErrorCode.REQUEST_NACKED);
  });

  it('timedOut names what was heard', () => {
    const q = new WriteQuorum(4, 1);
    q.ack('Node2');
    q.add(reply('Node1', txn(3)));
    const e = q.timedOut(500);
    expect(e.code).to.equal(ClientErrorCode.TIMEOUT);
    expect(e.data).to.deep.include({ timeoutMs: 500, n: 4, answered: ['Node2', 'Node1'] });
  });

  it('property: commits only what f+1 nodes replied, fails only when no group can reach f+1 or f+1 refused alike', () => {
    const answerArb = fc.oneof(
      fc.record({ kind: fc.constant('reply' as const), v: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ kind: fc.constant('nack' as const), v: fc.integer({ min: 1, max: 2 }) }),
      fc.record({ kind: fc.constant('error' as const), v: fc.constant(0) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), fc.array(answerArb, { minLength: 13, maxLength: 13 }), (f, all) => {
        const n = 3 * f + 1;
        const answers = all.slice(0, n);
        const q = new WriteQuorum(n, f);
        const counts = new Map<string, number>();
        let decided: WriteDecision | undefined;
        answers.forEach((a, i) => {
          const node = `Node${i + 1}`;
          const d = q.add(a.kind === 'reply' ? reply(node, txn(a.v)) : a.kind === 'nack' ? nack(node, `r${a.v}`) : failure(node));
          if (decided !== undefined) {
            expect(d).to.equal(decided);
            return;
          }
          if (a.kind !== 'error') {
            const id = a.kind === 'reply' ? `reply|${canonicalJson(txn(a.v))}` : `nack|r${a.v}`;
            counts.set(id, (counts.get(id) ?? 0) + 1);
          }
          const best = Math.max(0, ...counts.values());
          const left = n - i - 1;
          if (best >= f + 1) {
            expect(d).to.not.equal(undefined);
            if (a.kind === 'reply') expect(d).to.deep.equal({ kind: 'committed', result: txn(a.v), nodes: d?.kind === 'committed' ? d.nodes : [] });
            if (a.kind === 'nack') expect(failedCode(d)).to.equal(ClientErrorCode.REQUEST_NACKED);
          } else if (best + left < f + 1) expect(failedCode(d)).to.equal(ClientErrorCode.NO_CONSENSUS);
          else expect(d).to.equal(undefined);
          decided = d;
        });
      }),
    );
  });
});
