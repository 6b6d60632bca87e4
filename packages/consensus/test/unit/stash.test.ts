import { expect } from 'chai';
import { MessageStash, type Prepare } from '@quire/consensus';

// The stash's bookkeeping per sender (consensus.md §4.3, #15 F11): what is evicted, taken or pruned
// leaves the sender's count, and a sender with nothing held can stash again.
function prepare(ppSeqNo: number, viewNo = 1): Prepare {
  return { op: 'PREPARE', instId: 0, viewNo, ppSeqNo, ppTime: 1, digest: 'd', stateRootHash: 's', txnRootHash: 't', auditTxnRootHash: 'a' };
}

describe('message stash', () => {
  it('a full stash makes room from the largest holder, oldest first, and counts what each sender holds', () => {
    const stash = new MessageStash(4, 3);
    for (const s of [1, 2, 3]) expect(stash.add({ from: 'A', msg: prepare(s) })).to.equal(true);
    expect(stash.add({ from: 'B', msg: prepare(1) })).to.equal(true);
    expect(stash.add({ from: 'C', msg: prepare(1) })).to.equal(true);
    expect([stash.size, stash.heldFrom('A'), stash.heldFrom('B'), stash.heldFrom('C'), stash.dropped]).to.deep.equal([4, 2, 1, 1, 1]);
    // A's oldest (ppSeqNo 1) went
    expect(stash.take((s) => s.from === 'A').map((s) => s.msg.ppSeqNo)).to.deep.equal([2, 3]);
    expect([stash.size, stash.heldFrom('A')]).to.deep.equal([2, 0]);
    expect(stash.add({ from: 'D', msg: prepare(1) })).to.equal(true);
    expect(stash.add({ from: 'D', msg: prepare(2) })).to.equal(true);
    // full again: D holds two, E none: D's oldest makes room
    expect(stash.add({ from: 'E', msg: prepare(1) })).to.equal(true);
    expect([stash.size, stash.heldFrom('D'), stash.dropped]).to.deep.equal([4, 1, 2]);
    // every holder has one, F none: no one holds more than one more than F, F's message is dropped
    expect(stash.add({ from: 'F', msg: prepare(1) })).to.equal(false);
    expect([stash.size, stash.heldFrom('F'), stash.dropped]).to.deep.equal([4, 0, 3]);
    expect(stash.take(() => true).map((s) => `${s.from}${s.msg.ppSeqNo}`)).to.deep.equal(['B1', 'C1', 'E1', 'D2']);
  });

  it('a sender whose messages were all taken or pruned stashes again from zero', () => {
    const stash = new MessageStash(10, 2);
    stash.add({ from: 'A', msg: prepare(1) });
    stash.add({ from: 'A', msg: prepare(2) });
    expect(stash.add({ from: 'A', msg: prepare(3) })).to.equal(false);
    stash.prune((s) => s.msg.ppSeqNo === 1);
    expect(stash.heldFrom('A')).to.equal(1);
    expect(stash.take(() => true).map((s) => s.msg.ppSeqNo)).to.deep.equal([2]);
    expect([stash.size, stash.heldFrom('A')]).to.deep.equal([0, 0]);
    expect(stash.add({ from: 'A', msg: prepare(3) })).to.equal(true);
    expect(stash.add({ from: 'A', msg: prepare(4) })).to.equal(true);
    expect(stash.heldFrom('A')).to.equal(2);
  });
});
