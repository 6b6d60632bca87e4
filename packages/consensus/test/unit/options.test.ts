import { expect } from 'chai';
import { ConsensusError, ConsensusErrorCode, primaryOf, quorumsFor, resolveOptions } from '@quire/consensus';
import { Prng } from '@quire/consensus/sim';

describe('options, quorums and primary selection', () => {
  it('computes the quorum table of consensus.md §1.2', () => {
    const q4 = quorumsFor(4);
    expect([q4.f, q4.propagate, q4.prepare, q4.commit, q4.checkpoint, q4.weak, q4.strong]).to.deep.equal([1, 2, 2, 3, 2, 2, 3]);
    const q7 = quorumsFor(7);
    expect([q7.f, q7.propagate, q7.prepare, q7.commit, q7.checkpoint, q7.weak, q7.strong]).to.deep.equal([2, 3, 4, 5, 4, 3, 5]);
    expect(quorumsFor(1).f).to.equal(0);
  });

  it('rotates the primary round robin', () => {
    const r = ['A', 'B', 'C', 'D'];
    expect([0, 1, 2, 3, 4].map((v) => primaryOf(v, r))).to.deep.equal(['A', 'B', 'C', 'D', 'A']);
  });

  it('rejects inconsistent options with a stable code', () => {
    const bad = [
      { name: 'A', validators: [] },
      { name: 'A', validators: ['A', 'A'] },
      { name: 'A', validators: ['A'], chkFreq: 10, logSize: 5 },
      { name: 'A', validators: ['A'], max3pcBatchSize: 0 },
    ];
    for (const o of bad) {
      try {
        resolveOptions(o);
        expect.fail('accepted');
      } catch (e) {
        expect(e).to.be.instanceOf(ConsensusError);
        expect((e as ConsensusError).code).to.equal(ConsensusErrorCode.INVALID_OPTIONS);
      }
    }
  });

  it('refuses a replicaStashLimit that is not a positive integer, naming it', () => {
    for (const replicaStashLimit of [0, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY, '100' as unknown as number]) {
      try {
        resolveOptions({ name: 'A', validators: ['A'], replicaStashLimit });
        expect.fail(`accepted ${String(replicaStashLimit)}`);
      } catch (e) {
        expect(e).to.be.instanceOf(ConsensusError);
        expect((e as ConsensusError).code).to.equal(ConsensusErrorCode.INVALID_OPTIONS);
        expect((e as ConsensusError).data).to.deep.equal({ field: 'replicaStashLimit' });
      }
    }
    expect(resolveOptions({ name: 'A', validators: ['A'], replicaStashLimit: 1 }).replicaStashLimit).to.equal(1);
  });

  it('has a reproducible seeded PRNG', () => {
    const a = new Prng(42);
    const b = new Prng(42);
    const xs = Array.from({ length: 50 }, () => a.nextU32());
    expect(Array.from({ length: 50 }, () => b.nextU32())).to.deep.equal(xs);
    expect(new Prng(43).nextU32()).to.not.equal(xs[0]);
    const c = new Prng(7);
    for (let i = 0; i < 1000; i++) {
      const v = c.int(3, 9);
      expect(v).to.be.within(3, 9);
    }
  });
});
