// NEW_VIEW selection with prepared certificates of two views for one ppSeqNo (consensus.md §6.5;
// issue #15, the mutation gate's `nv-lowest-prepared`): batch 1 prepared in view 0 under digest A
// at one node, and re-proposed and prepared in view 1 under digest B at two others (the first
// version never reached a quorum). A NEW_VIEW for view 2 must carry B, the certificate of the
// highest view, which all three VIEW_CHANGEs witness; a backup that finds A or nothing instead
// accuses the honest primary of view 2 and refuses its NEW_VIEW.
import { expect } from 'chai';
import { sha256Hex } from '@quire/common';
import { ConsensusCore, type ConsensusCrypto, type ConsensusEffect, viewChangeDigest } from '@quire/consensus';
import { SimRequestAnalyzer, StandInExecutor, simBlsPublicKey } from '@quire/consensus/sim';
import { calcBatches } from '../../src/new-view-calc.js';
import type { ViewChange } from '../../src/messages.js';

const VALIDATORS = ['Node1', 'Node2', 'Node3', 'Node4'];
const noCrypto: ConsensusCrypto = { blsSign: () => 'sig', blsVerifyShare: () => true, blsAggregate: () => 'agg', blsVerifyMulti: () => true };
const genesis = VALIDATORS.map((alias) => ({ alias, blskey: simBlsPublicKey(alias) }));
const initialCp = { op: 'CHECKPOINT' as const, instId: 0, viewNo: 0, seqNoStart: 0, seqNoEnd: 0, digest: null };
const A = { view_no: 0, pp_view_no: 0, pp_seq_no: 1, pp_digest: sha256Hex('batch 1, view 0') };
const B = { view_no: 1, pp_view_no: 1, pp_seq_no: 1, pp_digest: sha256Hex('batch 1, view 1') };
const vc = (b: typeof A) =>
  ({ op: 'VIEW_CHANGE', viewNo: 2, stableCheckpoint: 0, prepared: [b], preprepared: [b], checkpoints: [initialCp] }) as unknown as ViewChange;

function core(name: string): ConsensusCore {
  const analyzer = new SimRequestAnalyzer();
  const clock = { t: 0, now: () => clock.t, utcSeconds: () => 1_700_000_000 + Math.floor(clock.t / 1000) };
  return new ConsensusCore({ name, validators: VALIDATORS }, { executor: new StandInExecutor(analyzer, genesis), crypto: noCrypto, requests: analyzer, clock });
}

describe('NEW_VIEW with prepared certificates of two views for one batch', () => {
  it('selects the certificate of the highest view', () => {
    for (const order of [
      [vc(A), vc(B), vc(B)],
      [vc(B), vc(A), vc(B)],
      [vc(B), vc(B), vc(A)],
    ]) {
      expect(calcBatches(initialCp as never, order, 300, 3, 2)).to.deep.equal([B]);
    }
  });

  it('a backup accepts the honest NEW_VIEW carrying it, and accuses nobody', () => {
    const c = core('Node1');
    const effects: ConsensusEffect[] = [];
    const held = { Node2: vc(A), Node3: vc(B), Node4: vc(B) };
    for (const [from, msg] of Object.entries(held)) effects.push(...c.handle({ kind: 'nodeMessage', from, msg }));
    expect(c.status().viewNo, 'Node1 joined view 2').to.equal(2);
    const nv = { op: 'NEW_VIEW', viewNo: 2, viewChanges: Object.entries(held).map(([a, v]) => [a, viewChangeDigest(v)]), checkpoint: initialCp, batches: [B] };
    effects.push(...c.handle({ kind: 'nodeMessage', from: 'Node3', msg: nv }));
    expect(effects.flatMap((e) => (e.kind === 'suspicion' ? [`${e.peer}:${e.code}`] : []))).to.deep.equal([]);
    expect(c.status().waitingForNewView, 'the NEW_VIEW was accepted').to.equal(false);
  });
});
