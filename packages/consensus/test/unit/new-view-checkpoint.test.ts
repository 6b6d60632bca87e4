// NEW_VIEW checkpoint selection (#15 F1, docs/consensus-deviations.md): the largest checkpoint that
// n-f VIEW_CHANGEs are not past and that f+1 of them hold.
import { expect } from 'chai';
import fc from 'fast-check';
import { calcCheckpoint } from '../../src/new-view-calc.js';
import type { Checkpoint, ViewChange } from '../../src/messages.js';

const cp = (seqNoEnd: number, digest: string | null = seqNoEnd === 0 ? null : `d${seqNoEnd}`): Checkpoint => ({
  op: 'CHECKPOINT',
  instId: 0,
  viewNo: 0,
  seqNoStart: 0,
  seqNoEnd,
  digest,
});
const vc = (stable: number, ...held: number[]): ViewChange => ({
  op: 'VIEW_CHANGE',
  viewNo: 1,
  stableCheckpoint: stable,
  prepared: [],
  preprepared: [],
  checkpoints: held.map((s) => cp(s)),
});

// n = 4: strong n-f = 3, weak f+1 = 2
const STRONG = 3;
const WEAK = 2;

describe('NEW_VIEW checkpoint (calcCheckpoint)', () => {
  it('primary down, one backup a checkpoint behind: the checkpoint the two others made stable', () => {
    // before #15 F1 this asked for 3 holders: no checkpoint at all, and no NEW_VIEW could ever be built
    expect(calcCheckpoint([vc(100, 100), vc(100, 100), vc(0, 0)], STRONG, WEAK)).to.deep.equal(cp(100));
  });

  it('a checkpoint one VIEW_CHANGE holds is not enough (it may be a Byzantine node lying)', () => {
    expect(calcCheckpoint([vc(0, 0, 100), vc(0, 0), vc(0, 0)], STRONG, WEAK)).to.deep.equal(cp(0));
    // a forged digest at a seqNoEnd honest nodes hold does not count with theirs
    const forged = vc(0, 0);
    forged.checkpoints.push(cp(100, 'forged'));
    expect(calcCheckpoint([forged, vc(0, 0, 100), vc(0, 0)], STRONG, WEAK)).to.deep.equal(cp(0));
  });

  it('never a checkpoint below the stable checkpoint of more than f VIEW_CHANGEs', () => {
    // 0 is below two stable checkpoints of 100: only 100 qualifies, and only if f+1 hold it
    expect(calcCheckpoint([vc(100, 100), vc(100, 100), vc(0, 0)], STRONG, WEAK)!.seqNoEnd).to.equal(100);
    expect(calcCheckpoint([vc(100, 100), vc(100, 100, 200), vc(0, 0)], STRONG, WEAK)!.seqNoEnd).to.equal(100);
    expect(calcCheckpoint([vc(200, 200), vc(200, 200), vc(0, 0, 100)], STRONG, WEAK)!.seqNoEnd).to.equal(200);
  });

  it('waits (undefined) when no checkpoint qualifies yet', () => {
    expect(calcCheckpoint([vc(100, 100), vc(200, 200), vc(0, 0)], STRONG, WEAK)).to.equal(undefined);
  });

  it('property: the result is held by f+1, not past for n-f, and no larger checkpoint qualifies', () => {
    const vcArb = fc.record({
      stable: fc.constantFrom(0, 100, 200),
      extra: fc.subarray([100, 200, 300]),
    });
    fc.assert(
      fc.property(fc.array(vcArb, { minLength: 3, maxLength: 4 }), (raw) => {
        const vcs = raw.map((r) => vc(r.stable, ...[r.stable, ...r.extra.filter((s) => s > r.stable)]));
        const qualifies = (c: Checkpoint): boolean =>
          vcs.filter((v) => c.seqNoEnd >= v.stableCheckpoint).length >= STRONG &&
          vcs.filter((v) => v.checkpoints.some((h) => h.seqNoEnd === c.seqNoEnd && h.digest === c.digest)).length >= WEAK;
        const got = calcCheckpoint(vcs, STRONG, WEAK);
        const all = vcs.flatMap((v) => v.checkpoints);
        if (got === undefined) return all.every((c) => !qualifies(c));
        return qualifies(got) && all.every((c) => c.seqNoEnd <= got.seqNoEnd || !qualifies(c));
      }),
    );
  });
});
