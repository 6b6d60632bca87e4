// Pure parts of the view change (consensus.md §6.4, §6.5): the VIEW_CHANGE digest and the NEW_VIEW
// checkpoint and batch selection that the new primary computes and every other node recomputes.
import { canonicalJson, sha256Hex } from '@quire/common';
import type { BatchId, Checkpoint, ViewChange } from './messages.js';

export function viewChangeDigest(vc: ViewChange): string {
  return sha256Hex(
    canonicalJson({
      op: 'VIEW_CHANGE',
      viewNo: vc.viewNo,
      stableCheckpoint: vc.stableCheckpoint,
      prepared: vc.prepared.map(batchIdMap),
      preprepared: vc.preprepared.map(batchIdMap),
      checkpoints: vc.checkpoints.map((c) => ({
        op: 'CHECKPOINT',
        instId: c.instId,
        viewNo: c.viewNo,
        seqNoStart: c.seqNoStart,
        seqNoEnd: c.seqNoEnd,
        digest: c.digest,
      })),
    }),
  );
}

function batchIdMap(b: BatchId): Record<string, unknown> {
  return { view_no: b.view_no, pp_view_no: b.pp_view_no, pp_seq_no: b.pp_seq_no, pp_digest: b.pp_digest };
}

export function initialCheckpoint(): Checkpoint {
  return { op: 'CHECKPOINT', instId: 0, viewNo: 0, seqNoStart: 0, seqNoEnd: 0, digest: null };
}

export function sameCheckpoint(a: Checkpoint, b: Checkpoint): boolean {
  return a.seqNoEnd === b.seqNoEnd && a.digest === b.digest;
}

export function sameBatchId(a: BatchId, b: BatchId): boolean {
  return a.view_no === b.view_no && a.pp_view_no === b.pp_view_no && a.pp_seq_no === b.pp_seq_no && a.pp_digest === b.pp_digest;
}

/**
 * The checkpoint of NEW_VIEW: the largest seqNoEnd that is not below the stable checkpoint of n-f
 * VCs (`strong`) and that f+1 VCs hold (`weak`). f+1 holders include an honest node, which only
 * makes a checkpoint of batches it ordered, i.e. committed on n-f nodes; nodes that lack it catch
 * up. consensus.md §6.5 asks for n-f holders, which deadlocks a pool with one node down and one a
 * checkpoint behind (docs/consensus-deviations.md).
 */
export function calcCheckpoint(vcs: readonly ViewChange[], strong: number, weak: number): Checkpoint | undefined {
  let best: Checkpoint | undefined;
  const seen: Checkpoint[] = [];
  for (const vc of vcs) {
    for (const cp of vc.checkpoints) {
      if (seen.some((s) => sameCheckpoint(s, cp))) continue;
      seen.push(cp);
      const notBehind = vcs.filter((v) => cp.seqNoEnd >= v.stableCheckpoint).length;
      const holding = vcs.filter((v) => v.checkpoints.some((c) => sameCheckpoint(c, cp))).length;
      if (notBehind >= strong && holding >= weak && (best === undefined || cp.seqNoEnd > best.seqNoEnd)) best = cp;
    }
  }
  return best;
}

/**
 * The batches of NEW_VIEW after checkpoint `cp`: for every ppSeqNo the prepared BatchID with a
 * prepared witness (n-f) and a pre-prepared witness (f+1); stops at the first ppSeqNo that n-f VCs
 * show nothing prepared for; undefined when the VCs cannot decide yet.
 */
export function calcBatches(cp: Checkpoint, vcs: readonly ViewChange[], logSize: number, strong: number, weak: number): BatchId[] | undefined {
  const out: BatchId[] = [];
  for (let s = cp.seqNoEnd + 1; s <= cp.seqNoEnd + logSize; s++) {
    let found: BatchId | undefined;
    for (const vc of vcs) {
      for (const b of vc.prepared) {
        if (b.pp_seq_no !== s) continue;
        const preparedWitness = vcs.filter(
          (v) =>
            s > v.stableCheckpoint &&
            v.prepared.every(
              (e) => e.pp_seq_no !== s || e.view_no < b.view_no || (e.view_no === b.view_no && e.pp_digest === b.pp_digest && e.pp_view_no === b.pp_view_no),
            ),
        ).length;
        if (preparedWitness < strong) continue;
        const ppWitness = vcs.filter((v) =>
          v.preprepared.some((e) => e.pp_seq_no === s && e.pp_view_no === b.pp_view_no && e.pp_digest === b.pp_digest && e.view_no >= b.view_no),
        ).length;
        if (ppWitness < weak) continue;
        found = b;
        break;
      }
      if (found !== undefined) break;
    }
    if (found !== undefined) {
      out.push(found);
      continue;
    }
    const nothing = vcs.filter((v) => s > v.stableCheckpoint && !v.prepared.some((e) => e.pp_seq_no === s)).length;
    if (nothing >= strong) return out;
    return undefined;
  }
  return out;
}
