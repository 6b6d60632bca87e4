// The PBFT join rule for views far ahead (#15): a node that comes back while the others escalated
// view after view (each NEW_VIEW timing out for want of a quorum) joins the lowest view f+1
// validators have shown in their VIEW_CHANGEs, however far ahead; one validator alone moves
// nobody, and what it sends for far views is held once. Before this rule a VIEW_CHANGE more than
// two views (plus escalation) ahead was dropped, and such a pool stayed split for good (seen on a
// forced POOL_UPGRADE under load: two nodes in view 7, two in view 2 voting for view 3).
import { expect } from 'chai';
import { ConsensusCore, type ConsensusCrypto, type ConsensusEffect } from '@quire/consensus';
import { SimRequestAnalyzer, StandInExecutor, simBlsPublicKey } from '@quire/consensus/sim';

const VALIDATORS = ['Node1', 'Node2', 'Node3', 'Node4'];
const noCrypto: ConsensusCrypto = { blsSign: () => 'sig', blsVerifyShare: () => true, blsAggregate: () => 'agg', blsVerifyMulti: () => true };
const genesis = VALIDATORS.map((alias) => ({ alias, blskey: simBlsPublicKey(alias) }));
const initialCp = { op: 'CHECKPOINT', instId: 0, viewNo: 0, seqNoStart: 0, seqNoEnd: 0, digest: null };
const vc = (viewNo: number) => ({ op: 'VIEW_CHANGE', viewNo, stableCheckpoint: 0, prepared: [], preprepared: [], checkpoints: [initialCp] });

function core(name: string): ConsensusCore {
  const analyzer = new SimRequestAnalyzer();
  const clock = { t: 0, now: () => clock.t, utcSeconds: () => 1_700_000_000 + Math.floor(clock.t / 1000) };
  return new ConsensusCore({ name, validators: VALIDATORS }, { executor: new StandInExecutor(analyzer, genesis), crypto: noCrypto, requests: analyzer, clock });
}

const viewChanges = (effects: ConsensusEffect[]): number[] =>
  effects.flatMap((e) => (e.kind === 'broadcast' && e.msg.op === 'VIEW_CHANGE' ? [(e.msg as { viewNo: number }).viewNo] : []));

function futureVcEntries(c: ConsensusCore): number {
  const m = (c as unknown as { viewChanger: { futureVcs: Map<number, Map<string, unknown>> } }).viewChanger.futureVcs;
  let n = 0;
  for (const byAuthor of m.values()) n += byAuthor.size;
  return n;
}

describe('view change: joining f+1 validators far ahead (#15)', () => {
  it('a node in view 0 joins view 7 once f+1 validators sent VIEW_CHANGEs for it', () => {
    const c = core('Node3');
    expect(viewChanges(c.handle({ kind: 'nodeMessage', from: 'Node1', msg: vc(7) }))).to.deep.equal([]);
    expect(viewChanges(c.handle({ kind: 'nodeMessage', from: 'Node2', msg: vc(7) }))).to.deep.equal([7]);
  });

  it('with validators at views 9 and 7 it joins 7, the highest view f+1 of them reached', () => {
    const c = core('Node3');
    c.handle({ kind: 'nodeMessage', from: 'Node1', msg: vc(9) });
    expect(viewChanges(c.handle({ kind: 'nodeMessage', from: 'Node2', msg: vc(7) }))).to.deep.equal([7]);
  });

  it('one validator alone moves nobody, and its far VIEW_CHANGEs are held once whatever it sends', () => {
    const c = core('Node3');
    for (let v = 5; v < 2_005; v++) expect(viewChanges(c.handle({ kind: 'nodeMessage', from: 'Node4', msg: vc(v) }))).to.deep.equal([]);
    expect(futureVcEntries(c)).to.equal(1);
    // an older far view from the same validator does not replace its highest
    c.handle({ kind: 'nodeMessage', from: 'Node4', msg: vc(6) });
    expect(futureVcEntries(c)).to.equal(1);
    // a non-validator's far VIEW_CHANGE is not held at all
    c.handle({ kind: 'nodeMessage', from: 'Mallory', msg: vc(50) });
    expect(futureVcEntries(c)).to.equal(1);
  });
});
