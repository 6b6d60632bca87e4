// A reference check of an honest NEW_VIEW (consensus.md §6.5, with the checkpoint rule of
// docs/consensus-deviations.md: f+1 holders), written from the specification and independent of
// new-view-calc.ts: given the VIEW_CHANGEs a NEW_VIEW names, its checkpoint must be the largest
// eligible one, each batch must have its prepared and pre-prepared witnesses, and the list may end
// only where n-f VIEW_CHANGEs show nothing prepared and no batch qualifies. The simulator runs it on
// every NEW_VIEW an honest primary broadcasts, so that a wrong selection is seen even when it does
// no harm in that run.
import type { BatchId, Checkpoint, NewView, ViewChange } from '../messages.js';

/** What is wrong with `nv` given the bodies of the VIEW_CHANGEs it names (n validators), or undefined. */
export function newViewProblem(nv: NewView, vcs: readonly ViewChange[], n: number, logSize: number): string | undefined {
  const f = Math.floor((n - 1) / 3);
  const strong = n - f;
  const weak = f + 1;
  const sameCp = (a: Checkpoint, b: Checkpoint): boolean => a.seqNoEnd === b.seqNoEnd && a.digest === b.digest;
  const eligible = (cp: Checkpoint): boolean =>
    vcs.filter((vc) => cp.seqNoEnd >= vc.stableCheckpoint).length >= strong && vcs.filter((vc) => vc.checkpoints.some((c) => sameCp(c, cp))).length >= weak;
  const cp = nv.checkpoint;
  // the initial checkpoint (nothing stable yet) is eligible when no VIEW_CHANGE names a stable one
  const initial = cp.seqNoEnd === 0 && cp.digest === null && vcs.filter((vc) => vc.stableCheckpoint === 0).length >= strong;
  if (!initial && !eligible(cp)) return `checkpoint ${cp.seqNoEnd} is not held by f+1 VIEW_CHANGEs with n-f not above it`;
  for (const vc of vcs) {
    for (const c of vc.checkpoints) {
      if (c.seqNoEnd > cp.seqNoEnd && eligible(c)) return `checkpoint ${cp.seqNoEnd} chosen over the eligible checkpoint ${c.seqNoEnd}`;
    }
  }
  const qualifies = (s: number, b: BatchId): boolean => {
    const preparedWitness = vcs.filter(
      (vc) =>
        s > vc.stableCheckpoint &&
        vc.prepared.every(
          (e) => e.pp_seq_no !== s || e.view_no < b.view_no || (e.view_no === b.view_no && e.pp_digest === b.pp_digest && e.pp_view_no === b.pp_view_no),
        ),
    ).length;
    const ppWitness = vcs.filter((vc) =>
      vc.preprepared.some((e) => e.pp_seq_no === s && e.pp_view_no === b.pp_view_no && e.pp_digest === b.pp_digest && e.view_no >= b.view_no),
    ).length;
    return preparedWitness >= strong && ppWitness >= weak;
  };
  const candidates = (s: number): BatchId[] => vcs.flatMap((vc) => vc.prepared.filter((b) => b.pp_seq_no === s && qualifies(s, b)));
  for (let i = 0; i < nv.batches.length; i++) {
    const b = nv.batches[i];
    const s = cp.seqNoEnd + 1 + i;
    if (b.pp_seq_no !== s) return `batch ${i + 1} has ppSeqNo ${b.pp_seq_no}, ${s} expected`;
    if (
      !vcs.some((vc) => vc.prepared.some((e) => e.pp_seq_no === s && e.view_no === b.view_no && e.pp_view_no === b.pp_view_no && e.pp_digest === b.pp_digest))
    ) {
      return `batch ${s} is in no VIEW_CHANGE's prepared list`;
    }
    if (!qualifies(s, b)) return `batch ${s} (view ${b.view_no}) lacks n-f prepared or f+1 pre-prepared witnesses`;
  }
  const next = cp.seqNoEnd + nv.batches.length + 1;
  if (next <= cp.seqNoEnd + logSize) {
    if (candidates(next).length > 0) return `ends before batch ${next}, which qualifies`;
    const nothing = vcs.filter((vc) => next > vc.stableCheckpoint && !vc.prepared.some((e) => e.pp_seq_no === next)).length;
    if (nothing < strong) return `ends before batch ${next} with ${nothing} VIEW_CHANGEs showing nothing prepared (n-f needed)`;
  }
  return undefined;
}
