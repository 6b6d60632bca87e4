// The PROPAGATEs a catching-up node holds as bytes until its catch-up ends (catchup-propagates.ts): one entry per
// distinct encoding with its senders, a copy of the bytes, bounded in count and bytes all together and per sending
// peer, the oldest dropped; held no longer than maxAgeMs by the time they are taken. Every count is of messages from
// one peer.
import { expect } from 'chai';
import { CatchupPropagateStash } from '../../src/catchup-propagates.js';
import { encodePeerMessage, isPropagateEncoding } from '../../src/peer-wire.js';

const propagate = (i: number, pad = 0): Uint8Array =>
  encodePeerMessage({ op: 'PROPAGATE', request: { identifier: 'did', reqId: i, operation: { type: '1', dest: 'x'.repeat(pad) } }, senderClient: null });

/** bytes an entry counts: its copy and its latin1 key */
const cost = (data: Uint8Array): number => 2 * data.length;

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
    expect(s.size).to.deep.equal({ entries: 2, bytes: cost(a) + cost(b) });
    const taken = s.take();
    expect(taken.entries.map((h) => h.peers)).to.deep.equal([['Node1', 'Node2'], ['Node3']]);
    expect(taken.entries[0]?.data).to.deep.equal(a);
    expect(taken).to.include({ tooOld: 0, dropped: 0 });
    expect(s.size).to.deep.equal({ entries: 0, bytes: 0 });
    expect(s.take().entries).to.deep.equal([]);
  });

  it('holds a copy of the bytes, not a view of the chunk they arrived in', () => {
    const a = propagate(1);
    const chunk = new Uint8Array(64 * 1024);
    chunk.set(a, 100);
    const s = new CatchupPropagateStash();
    s.add('Node1', chunk.subarray(100, 100 + a.length));
    chunk.fill(0);
    const held = s.take().entries[0]?.data;
    expect(held).to.deep.equal(a);
    expect(held?.buffer.byteLength, 'the chunk is not pinned').to.equal(a.length);
  });

  it("drops a sender's oldest past its count bound, and counts them per message and peer, per take", () => {
    const s = new CatchupPropagateStash({ maxEntries: 3 });
    for (let i = 1; i <= 5; i++) s.add('Node1', propagate(i));
    const taken = s.take();
    expect(taken.dropped).to.equal(2);
    expect(taken.entries.map((h) => h.data)).to.deep.equal([propagate(3), propagate(4), propagate(5)]);
    s.add('Node1', propagate(6));
    expect(s.take().dropped, 'counted per take').to.equal(0);
  });

  it('past the bound in all, the peer holding the most drops its oldest, one message at a time', () => {
    const s = new CatchupPropagateStash({ maxEntries: 3 });
    s.add('Node1', propagate(1));
    s.add('Node2', propagate(1));
    s.add('Node1', propagate(2));
    s.add('Node1', propagate(3));
    expect(s.add('Node2', propagate(4)), "Node1's copy of 1, then its 2").to.equal(2);
    expect(s.take().entries.map((h) => [h.data, h.peers])).to.deep.equal([
      [propagate(1), ['Node2']],
      [propagate(3), ['Node1']],
      [propagate(4), ['Node2']],
    ]);
  });

  it('senders beyond the validators (more than `peers`) cannot push out what the validators sent', () => {
    const s = new CatchupPropagateStash({ maxEntries: 30, peers: () => 3 });
    for (let i = 1; i <= 5; i++) for (const p of ['Node1', 'Node2', 'Node3']) s.add(p, propagate(i));
    for (const junk of ['X1', 'X2', 'X3']) for (let i = 0; i < 100; i++) s.add(junk, propagate(1000 * junk.charCodeAt(1) + i));
    const held = s.take().entries;
    expect(held.slice(0, 5).map((h) => h.peers)).to.deep.equal(Array(5).fill(['Node1', 'Node2', 'Node3']));
    expect(held.length).to.equal(30);
  });

  it('drops the oldest past its byte bound (copies and keys), and refuses an encoding longer than the bound alone', () => {
    const one = cost(propagate(1, 100));
    const s = new CatchupPropagateStash({ maxBytes: 2 * one + 10 });
    expect(s.add('Node1', propagate(1, 100))).to.equal(0);
    expect(s.add('Node1', propagate(2, 100))).to.equal(0);
    expect(s.add('Node1', propagate(3, 100)), 'the oldest goes').to.equal(1);
    expect(s.size.bytes).to.be.at.most(2 * one + 10);
    expect(s.add('Node1', propagate(4, 2 * one)), 'too long alone').to.equal(1);
    const taken = s.take();
    expect(taken.dropped).to.equal(2);
    expect(taken.entries.map((h) => h.data)).to.deep.equal([propagate(2, 100), propagate(3, 100)]);
  });

  it("bounds each peer to its share: one peer's flood drops its own oldest, not what the others sent", () => {
    const s = new CatchupPropagateStash({ maxEntries: 30, peers: () => 3 });
    for (let i = 1; i <= 5; i++) for (const p of ['Node1', 'Node2']) s.add(p, propagate(i));
    let dropped = 0;
    for (let i = 1000; i < 3000; i++) dropped += s.add('Node9', propagate(i));
    expect(dropped).to.equal(2000 - 10);
    const held = s.take().entries;
    expect(held.slice(0, 5).map((h) => h.peers)).to.deep.equal(Array(5).fill(['Node1', 'Node2']));
    expect(held.slice(5).map((h) => h.data)).to.deep.equal(Array.from({ length: 10 }, (_, k) => propagate(2990 + k)));
  });

  it("bounds each peer's bytes to its share too", () => {
    const one = cost(propagate(1, 100));
    const s = new CatchupPropagateStash({ maxBytes: 4 * one, peers: () => 2 });
    s.add('Node1', propagate(1, 100));
    for (let i = 10; i < 20; i++) s.add('Node9', propagate(i, 100));
    const held = s.take().entries;
    expect(held.map((h) => h.data)).to.deep.equal([propagate(1, 100), propagate(18, 100), propagate(19, 100)]);
  });

  it('never gives a peer more than maxEntriesPerPeer, whatever its share', () => {
    const s = new CatchupPropagateStash({ maxEntries: 100, maxEntriesPerPeer: 4 });
    for (let i = 1; i <= 10; i++) s.add('Node1', propagate(i));
    expect(s.take().entries.map((h) => h.data)).to.deep.equal([propagate(7), propagate(8), propagate(9), propagate(10)]);
  });

  it('drops at take, unhandled and counted, the entries held longer than maxAgeMs since their first arrival', () => {
    // a write refused at this node's door while it caught up: its refusal is remembered 2 x propagatesPhaseReqTimeoutMs,
    // so a PROPAGATE of it handled more than propagatesPhaseReqTimeoutMs after it arrived could come after the refusal
    // is forgotten
    let clock = 1_000;
    const s = new CatchupPropagateStash({ maxAgeMs: 60_000, now: () => clock });
    s.add('Node2', propagate(1));
    clock += 10_000;
    s.add('Node3', propagate(1));
    clock += 20_000;
    s.add('Node2', propagate(2));
    clock += 30_001;
    const taken = s.take();
    expect(taken.entries.map((h) => h.data)).to.deep.equal([propagate(2)]);
    expect(taken.tooOld, 'both copies of the first').to.equal(2);
    expect(s.size).to.deep.equal({ entries: 0, bytes: 0 });
  });

  it('hands on an entry held exactly maxAgeMs', () => {
    let clock = 0;
    const s = new CatchupPropagateStash({ maxAgeMs: 60_000, now: () => clock });
    s.add('Node2', propagate(1));
    clock = 60_000;
    expect(s.take()).to.deep.include({ tooOld: 0 });
  });

  it('clear drops everything held, uncounted', () => {
    const s = new CatchupPropagateStash({ maxEntries: 1 });
    s.add('Node2', propagate(1));
    s.add('Node2', propagate(2));
    s.clear();
    expect(s.size).to.deep.equal({ entries: 0, bytes: 0 });
    expect(s.take()).to.deep.equal({ entries: [], tooOld: 0, dropped: 0 });
  });
});
