// A NEW_VIEW is checked against the VIEW_CHANGEs it names by digest (consensus.md §6.5; issue #15,
// the mutation gate's `nv-vc-digest`): a backup that holds another version of a named VIEW_CHANGE
// (its equivocating author sent it a different one) must fetch the named version, not validate
// the NEW_VIEW against its own. Here the Byzantine Node4 sends Node3 a version claiming a higher
// stable checkpoint, which makes the honest primary's selection look wrong from Node3's copy.
import { expect } from 'chai';
import { ConsensusCore, type ConsensusCrypto, type ConsensusEffect, Suspicion, viewChangeDigest } from '@quire/consensus';
import { SimRequestAnalyzer, StandInExecutor, simBlsPublicKey } from '@quire/consensus/sim';
import type { ViewChange } from '../../src/messages.js';

const VALIDATORS = ['Node1', 'Node2', 'Node3', 'Node4'];
const noCrypto: ConsensusCrypto = { blsSign: () => 'sig', blsVerifyShare: () => true, blsAggregate: () => 'agg', blsVerifyMulti: () => true };
const genesis = VALIDATORS.map((alias) => ({ alias, blskey: simBlsPublicKey(alias) }));
const initialCp = { op: 'CHECKPOINT' as const, instId: 0, viewNo: 0, seqNoStart: 0, seqNoEnd: 0, digest: null };
/** what every honest node (and Node4 to everyone but Node3) sends for view 1 */
const honestVc = { op: 'VIEW_CHANGE', viewNo: 1, stableCheckpoint: 0, prepared: [], preprepared: [], checkpoints: [initialCp] } as unknown as ViewChange;
/** Node4's version for Node3: a stable checkpoint 10 nobody else has */
const otherVc = {
  ...honestVc,
  stableCheckpoint: 10,
  checkpoints: [initialCp, { op: 'CHECKPOINT', instId: 0, viewNo: 0, seqNoStart: 0, seqNoEnd: 10, digest: 'Xd6g3kYf7a1Y8bQv6y1m9Xn2p5R4s3T2u1V9w8Z7x6Yq' }],
} as unknown as ViewChange;

function core(name: string): ConsensusCore {
  const analyzer = new SimRequestAnalyzer();
  const clock = { t: 0, now: () => clock.t, utcSeconds: () => 1_700_000_000 + Math.floor(clock.t / 1000) };
  return new ConsensusCore({ name, validators: VALIDATORS }, { executor: new StandInExecutor(analyzer, genesis), crypto: noCrypto, requests: analyzer, clock });
}

const sentOps = (effects: ConsensusEffect[], op: string) =>
  effects.flatMap((e) => ((e.kind === 'broadcast' || e.kind === 'send') && e.msg.op === op ? [e.msg] : []));

describe('NEW_VIEW validated against the VIEW_CHANGEs it names by digest', () => {
  it('a backup holding another version of a named VIEW_CHANGE fetches the named one and accepts the honest NEW_VIEW', () => {
    const c = core('Node3');
    const effects: ConsensusEffect[] = [];
    effects.push(...c.handle({ kind: 'nodeMessage', from: 'Node1', msg: honestVc }));
    effects.push(...c.handle({ kind: 'nodeMessage', from: 'Node2', msg: honestVc }));
    expect(c.status().viewNo, 'Node3 joined view 1').to.equal(1);
    effects.push(...c.handle({ kind: 'nodeMessage', from: 'Node4', msg: otherVc }));
    // the honest primary of view 1 (Node2) names the versions it holds: Node4's honest one
    const d = viewChangeDigest(honestVc);
    const nv = {
      op: 'NEW_VIEW',
      viewNo: 1,
      viewChanges: [
        ['Node1', d],
        ['Node2', d],
        ['Node4', d],
      ],
      checkpoint: initialCp,
      batches: [],
    };
    effects.push(...c.handle({ kind: 'nodeMessage', from: 'Node2', msg: nv }));
    const asked = sentOps(effects, 'MESSAGE_REQUEST') as unknown as { msg_type: string; params: { name: string; digest: string } }[];
    const wanted = asked.find((m) => m.msg_type === 'VIEW_CHANGE' && m.params.name === 'Node4');
    if (wanted !== undefined) {
      // its author answers with the named version
      effects.push(
        ...c.handle({ kind: 'nodeMessage', from: 'Node4', msg: { op: 'MESSAGE_RESPONSE', msg_type: 'VIEW_CHANGE', params: wanted.params, msg: honestVc } }),
      );
    }
    const accused = effects.flatMap((e) => (e.kind === 'suspicion' && e.peer === 'Node2' ? [e.code] : []));
    expect(accused, 'no suspicion of the honest primary').to.not.include.members([Suspicion.NEW_VIEW_INVALID_CHECKPOINTS, Suspicion.NEW_VIEW_INVALID_BATCHES]);
    expect(accused).to.deep.equal([]);
    expect(c.status().viewNo).to.equal(1);
    expect(c.status().waitingForNewView, 'the NEW_VIEW was accepted').to.equal(false);
  });
});
