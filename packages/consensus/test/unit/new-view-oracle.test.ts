// The simulator's reference check of an honest NEW_VIEW (sim/new-view-oracle.ts, docs/mutation.md):
// it accepts every NEW_VIEW the core's selection builds, and names what is wrong with one built by
// a wrong selection (the planted bugs nv-* of the mutation gate).
import { expect } from 'chai';
import fc from 'fast-check';
import type { BatchId, Checkpoint, NewView, ViewChange } from '../../src/messages.js';
import { calcBatches, calcCheckpoint } from '../../src/new-view-calc.js';
import { newViewProblem } from '../../src/sim/new-view-oracle.js';

const cp = (seqNoEnd: number, digest: string | null = seqNoEnd === 0 ? null : `d${seqNoEnd}`): Checkpoint => ({
  op: 'CHECKPOINT',
  instId: 0,
  viewNo: 0,
  seqNoStart: 0,
  seqNoEnd,
  digest,
});
const batch = (s: number, view = 0, digest = `b${s}v${view}`): BatchId => ({ view_no: view, pp_view_no: view, pp_seq_no: s, pp_digest: digest });
const vc = (stable: number, held: number[], prepared: BatchId[], preprepared: BatchId[] = prepared): ViewChange => ({
  op: 'VIEW_CHANGE',
  viewNo: 2,
  stableCheckpoint: stable,
  prepared,
  preprepared,
  checkpoints: held.map((s) => cp(s)),
});
const nv = (checkpoint: Checkpoint, batches: BatchId[], n: number): NewView => ({
  op: 'NEW_VIEW',
  viewNo: 2,
  viewChanges: Array.from({ length: n }, (_, i) => [`Node${i + 1}`, `digest${i}`]),
  checkpoint,
  batches,
});
const LOG = 15;

describe('reference check of NEW_VIEW selection (simulator oracle)', () => {
  it('accepts the NEW_VIEW the core computes, for any VIEW_CHANGEs it can decide on (n = 4 and 7)', () => {
    const arbBatch = fc
      .record({ s: fc.integer({ min: 1, max: 8 }), view: fc.integer({ min: 0, max: 1 }), alt: fc.boolean() })
      .map(({ s, view, alt }) => batch(s, view, `b${s}v${view}${alt ? 'x' : ''}`));
    const arbVc = fc
      .record({
        stable: fc.constantFrom(0, 5),
        extra: fc.boolean(),
        prepared: fc.array(arbBatch, { maxLength: 4 }),
        more: fc.array(arbBatch, { maxLength: 2 }),
      })
      .map(({ stable, extra, prepared, more }) => {
        const kept = prepared.filter((b) => b.pp_seq_no > stable);
        return vc(stable, [stable, ...(extra ? [stable + 5] : [])], kept, [...kept, ...more.filter((b) => b.pp_seq_no > stable)]);
      });
    fc.assert(
      fc.property(fc.constantFrom(4, 7), fc.array(arbVc, { minLength: 7, maxLength: 7 }), (n, all) => {
        const f = Math.floor((n - 1) / 3);
        const vcs = all.slice(0, n - f);
        const c = calcCheckpoint(vcs, n - f, f + 1);
        if (c === undefined) return;
        const batches = calcBatches(c, vcs, LOG, n - f, f + 1);
        if (batches === undefined) return;
        expect(newViewProblem(nv(c, batches, vcs.length), vcs, n, LOG)).to.equal(undefined);
      }),
      { numRuns: 400 },
    );
  });

  it('names a smaller checkpoint chosen over a larger eligible one, and one held by a single VIEW_CHANGE', () => {
    const vcs = [vc(0, [0, 5], []), vc(0, [0, 5], []), vc(0, [0], [])];
    expect(newViewProblem(nv(cp(5), [], 3), vcs, 4, LOG)).to.equal(undefined);
    expect(newViewProblem(nv(cp(0), [], 3), vcs, 4, LOG)).to.match(/chosen over the eligible checkpoint 5/);
    const forged = [vc(0, [0, 10], []), vc(0, [0], []), vc(0, [0], [])];
    expect(newViewProblem(nv(cp(10), [], 3), forged, 4, LOG)).to.match(/not held by f\+1/);
  });

  it('names a batch with one pre-prepared witness, a lower-view certificate over a higher one, and an early end', () => {
    // one VIEW_CHANGE alone claims batch 1: f+1 = 2 pre-prepared witnesses are missing
    const lone = [vc(0, [0], [batch(1)]), vc(0, [0], []), vc(0, [0], []), vc(0, [0], [])];
    expect(newViewProblem(nv(cp(0), [], 4), lone, 4, LOG)).to.equal(undefined);
    expect(newViewProblem(nv(cp(0), [batch(1)], 4), lone, 4, LOG)).to.match(/lacks n-f prepared or f\+1 pre-prepared witnesses/);
    // batch 1 prepared in view 0 by two, another version prepared in view 1 by two: view 1 wins
    const v0 = batch(1, 0, 'old');
    const v1 = batch(1, 1, 'new');
    const conflict = [vc(0, [0], [v0], [v0, v1]), vc(0, [0], [v0], [v0, v1]), vc(0, [0], [v1]), vc(0, [0], [v1])];
    expect(newViewProblem(nv(cp(0), [v1], 4), conflict, 4, LOG)).to.equal(undefined);
    expect(newViewProblem(nv(cp(0), [v0], 4), conflict, 4, LOG)).to.match(/lacks/);
    // ending before a batch that qualifies, or with fewer than n-f VIEW_CHANGEs showing nothing
    const two = [vc(0, [0], [batch(1)]), vc(0, [0], [batch(1)]), vc(0, [0], [])];
    expect(newViewProblem(nv(cp(0), [batch(1)], 3), two, 4, LOG)).to.equal(undefined);
    expect(newViewProblem(nv(cp(0), [], 3), two, 4, LOG)).to.match(/ends before batch 1, which qualifies/);
    const undecided = [vc(0, [0], [batch(1, 0, 'x')]), vc(0, [0], [batch(1, 0, 'y')]), vc(0, [0], [])];
    expect(newViewProblem(nv(cp(0), [], 3), undecided, 4, LOG)).to.match(/showing nothing prepared/);
  });
});
