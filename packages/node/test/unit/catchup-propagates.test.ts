// The PROPAGATEs a catching-up node holds as bytes until its catch-up ends (catchup-propagates.ts): one entry per
// distinct encoding with its senders, bounded in count and bytes, the oldest dropped and counted.
import { expect } from 'chai';
import { CatchupPropagateStash } from '../../src/catchup-propagates.js';
import { encodePeerMessage, isPropagateEncoding } from '../../src/peer-wire.js';

const propagate = (i: number, pad = 0): Uint8Array =>
  encodePeerMessage({ op: 'PROPAGATE', request: { identifier: 'did', reqId: i, operation: { type: '1', dest: 'x'.repeat(pad) } }, senderClient: null });

describe('CatchupPropagateStash', () => {
  it('holds one entry per encoding with every peer that sent it, and hands them back oldest first', () => {
    const s = new CatchupPropagateStash();
    const a = propagate(1);
    const b = propagate(2);
    expect(isPropagateEncoding(a)).to.equal(true);
    s.add('Node1', a);
    s.add('Node2', Uint8Array.from(a));
    s.add('Node2', a);
    s.add('Node3', b);
    expect(s.size).to.deep.equal({ entries: 2, bytes: a.length + b.length });
    const held = s.take();
    expect(held.map((h) => h.peers)).to.deep.equal([['Node1', 'Node2'], ['Node3']]);
    expect(held[0]!.data).to.deep.equal(a);
    expect(s.size).to.deep.equal({ entries: 0, bytes: 0 });
    expect(s.take()).to.deep.equal([]);
  });

  it('drops the oldest past its count bound, and counts them', () => {
    const s = new CatchupPropagateStash({ maxEntries: 3 });
    for (let i = 1; i <= 5; i++) s.add('Node1', propagate(i));
    expect(s.dropped).to.equal(2);
    expect(s.take().map((h) => h.data)).to.deep.equal([propagate(3), propagate(4), propagate(5)]);
  });

  it('drops the oldest past its byte bound, and refuses an encoding longer than the bound alone', () => {
    const one = propagate(1, 100).length;
    const s = new CatchupPropagateStash({ maxBytes: 2 * one + 10 });
    expect(s.add('Node1', propagate(1, 100))).to.equal(0);
    expect(s.add('Node1', propagate(2, 100))).to.equal(0);
    expect(s.add('Node1', propagate(3, 100)), 'the oldest goes').to.equal(1);
    expect(s.size.bytes).to.be.at.most(2 * one + 10);
    expect(s.add('Node1', propagate(4, 4 * one)), 'too long alone').to.equal(1);
    expect(s.dropped).to.equal(2);
    expect(s.take().map((h) => h.data)).to.deep.equal([propagate(2, 100), propagate(3, 100)]);
  });
});
