// A view change one node entered on votes the others never received (#16; docs/consensus-deviations.md §3): after a
// bench:pool overload, Node1 waited in view 2 voting 28 every 10 s while the others ordered in view 1, and when one of
// them stopped the pool stalled 28 s. The node sends its VIEW_CHANGE and spent vote again to each peer that connects
// and retransmits its VIEW_CHANGE at every NEW_VIEW timeout; a node whose vote for that view stands sends it again
// when the VIEW_CHANGE arrives; and a node that suspects the primary itself counts the VIEW_CHANGE as its author's
// vote, so the pool meets in one view instead of the node waiting alone while the others order without it.
import { expect } from 'chai';
import { Pool, VALIDATORS } from './scripted-pool.js';

describe('a view change one node entered alone is joined (#16)', () => {
  it('a view change only one node entered while links were down is joined once they are back, and the pool orders on all four', () => {
    const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600 });
    pool.start();
    pool.runUntil(10_000);
    // Node2, Node3 and Node4 lose the primary (Node1) and vote PRIMARY_DISCONNECTED for view 1. Their votes and view
    // change messages reach Node2 only: Node2 holds n-f votes and enters the view change, Node3 and Node4 hold their own
    let cut = true;
    const VOTING = new Set(['INSTANCE_CHANGE', 'VIEW_CHANGE', 'VIEW_CHANGE_ACK', 'NEW_VIEW']);
    pool.drop = (from, to, msg) => cut && (from === 'Node1' || to === 'Node1' || (to !== 'Node2' && VOTING.has(msg.op)));
    for (const n of ['Node2', 'Node3', 'Node4']) pool.eventAt(10_001, n, { kind: 'peerDisconnected', alias: 'Node1' });
    pool.runUntil(20_000);
    const state = (): string[] =>
      VALIDATORS.map((n) => {
        const s = pool.cores.get(n)!.status() as { viewNo: number; waitingForNewView?: boolean };
        return `${s.viewNo}${s.waitingForNewView === true ? ' waiting' : ''}`;
      });
    expect(state()).to.deep.equal(['0', '1 waiting', '0', '0']);
    // the links come back: every node sees its peers connect again
    cut = false;
    for (const n of VALIDATORS) for (const m of VALIDATORS) if (m !== n) pool.eventAt(20_001, n, { kind: 'peerConnected', alias: m });
    pool.runUntil(40_000);
    expect(state()).to.deep.equal(['1', '1', '1', '1']);
    const [w] = pool.submitAt(40_001);
    pool.runUntil(60_000);
    for (const n of VALIDATORS) expect(pool.orderedBy.get(n)?.has(Number(w!.reqId)) ?? false, n).to.equal(true);
  });

  it("the same split without any connection event (messages lost, links up): joined at the lone node's next NEW_VIEW timeout", () => {
    const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600 });
    pool.start();
    pool.runUntil(10_000);
    let cut = true;
    const VOTING = new Set(['INSTANCE_CHANGE', 'VIEW_CHANGE', 'VIEW_CHANGE_ACK', 'NEW_VIEW']);
    pool.drop = (from, to, msg) => from === 'Node1' || to === 'Node1' || (cut && to !== 'Node2' && VOTING.has(msg.op));
    for (const n of ['Node2', 'Node3', 'Node4']) pool.eventAt(10_001, n, { kind: 'peerDisconnected', alias: 'Node1' });
    pool.runUntil(20_000);
    const state = (): string[] =>
      VALIDATORS.map((n) => {
        const s = pool.cores.get(n)!.status();
        return `${s.viewNo}${s.waitingForNewView ? ' waiting' : ''}`;
      });
    expect(state()).to.deep.equal(['0', '1 waiting', '0', '0']);
    // the messages get through again; nobody reconnects (Node1 stays down)
    cut = false;
    pool.runUntil(45_000);
    expect(state().slice(1)).to.deep.equal(['1', '1', '1']);
    const [w] = pool.submitAt(45_001, 1, ['Node2', 'Node3', 'Node4']);
    pool.runUntil(50_000);
    for (const n of ['Node2', 'Node3', 'Node4']) expect(pool.orderedBy.get(n)?.has(Number(w!.reqId)) ?? false, n).to.equal(true);
  });

  it("votes cast once (not repeated) and lost among the others: the lone node's VIEW_CHANGE makes each send its vote again", () => {
    const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600 });
    pool.start();
    pool.runUntil(10_000);
    // Node1, Node3 and Node4 each vote once for view 1 (as for NODE_COUNT_CHANGED, never repeated); only Node2 gets
    // the votes, enters the view change, and its VIEW_CHANGE is lost too
    let cut = true;
    pool.drop = (_from, to, msg) => cut && to !== 'Node2' && (msg.op === 'INSTANCE_CHANGE' || msg.op === 'VIEW_CHANGE');
    const voting = (n: string): { vote(code: number, view: number): void } =>
      (pool.cores.get(n) as unknown as { viewChanger: { voting: { vote(code: number, view: number): void } } }).viewChanger.voting;
    pool.schedule(10_001, () => {
      for (const n of ['Node1', 'Node3', 'Node4']) voting(n).vote(46, 1);
    });
    pool.runUntil(12_000);
    const views = (): number[] => VALIDATORS.map((n) => pool.cores.get(n)!.status().viewNo);
    expect(views()).to.deep.equal([0, 1, 0, 0]);
    // messages get through again, no connection event, no request: Node2's VIEW_CHANGE at its NEW_VIEW timeout
    // reaches the others, each sends its standing vote again, and they hold n-f votes for view 1
    cut = false;
    pool.runUntil(30_000);
    expect(views()).to.deep.equal([1, 1, 1, 1]);
    expect(VALIDATORS.map((n) => pool.cores.get(n)!.status().waitingForNewView)).to.deep.equal([false, false, false, false]);
  });

  it('a node alone in a view change is joined once the others suspect the primary themselves: its VIEW_CHANGE counts as its vote', () => {
    const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600 });
    pool.start();
    pool.runUntil(10_000);
    // Node2 alone gets n-f votes for view 1 (the voters' copies to the others were lost) and enters the view change;
    // the others hold no vote and order on in view 0 without it
    for (const from of ['Node1', 'Node3', 'Node4'])
      pool.eventAt(10_001, 'Node2', { kind: 'nodeMessage', from, msg: { op: 'INSTANCE_CHANGE', viewNo: 1, reason: 25 } });
    pool.runUntil(12_000);
    const views = (): number[] => VALIDATORS.map((n) => pool.cores.get(n)!.status().viewNo);
    expect(views()).to.deep.equal([0, 1, 0, 0]);
    const [before] = pool.submitAt(12_001);
    pool.runUntil(14_000);
    for (const n of ['Node1', 'Node3', 'Node4']) expect(pool.orderedBy.get(n)?.has(Number(before!.reqId)) ?? false, n).to.equal(true);
    // Node4 stops: the two nodes left in view 0 cannot order; their monitor votes view 1 after PROGRESS_TIMEOUT, and
    // with Node2's VIEW_CHANGE for view 1 that is n-f: the three meet in view 1 at once, not at Node2's next vote 28
    pool.drop = (from, to) => from === 'Node4' || to === 'Node4';
    const [w] = pool.submitAt(14_001);
    pool.runUntil(19_500);
    expect(views().filter((_, i) => i !== 3)).to.deep.equal([1, 1, 1]);
    for (const n of ['Node1', 'Node2', 'Node3']) expect(pool.orderedBy.get(n)?.has(Number(w!.reqId)) ?? false, n).to.equal(true);
  });

  it('a standing vote for a later view is sent to a peer that connects, never a vote for the current view or from a non-validator', () => {
    const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600 });
    pool.start();
    pool.runUntil(10_000);
    const sent: string[] = [];
    pool.drop = (from, to, msg) => {
      if (msg.op === 'INSTANCE_CHANGE') sent.push(`${from}->${to} ${(msg as { viewNo: number }).viewNo}`);
      return msg.op === 'INSTANCE_CHANGE';
    };
    // nobody has voted: a connection sends nothing
    pool.eventAt(10_001, 'Node3', { kind: 'peerConnected', alias: 'Node4' });
    pool.runUntil(10_100);
    expect(sent).to.deep.equal([]);
    // Node3 votes for view 1 (its votes are lost); a peer connecting later gets that vote, once per connection
    pool.eventAt(10_101, 'Node3', { kind: 'peerDisconnected', alias: 'Node1' });
    pool.runUntil(15_000);
    sent.length = 0;
    pool.eventAt(15_001, 'Node3', { kind: 'peerConnected', alias: 'Node4' });
    pool.eventAt(15_001, 'Node3', { kind: 'peerConnected', alias: 'Observer9' });
    pool.runUntil(15_002);
    expect(sent).to.deep.equal(['Node3->Node4 1']);
  });
});
