// Steps of the catch-up the executor serves and applies (consensus.md §7): the size checks of the
// roots and proofs it serves, and the proof check of caught-up txns against the target.
import { b58decode, equalBytes } from '@quire/common';
import { type Ledger, verifyConsistency } from '@quire/storage';
import { NodeError, NodeErrorCode } from './errors.js';

/** Refuses (EXECUTOR_STATE) sizes that are not 0 <= oldSize <= newSize <= the committed size. */
export function checkCommittedSizes(l: Ledger, oldSize: number, newSize: number): void {
  if (!(Number.isSafeInteger(oldSize) && Number.isSafeInteger(newSize) && oldSize >= 0 && oldSize <= newSize && newSize <= l.size)) {
    throw new NodeError(NodeErrorCode.EXECUTOR_STATE, { reason: `sizes ${String(oldSize)}..${String(newSize)} of a ledger of ${l.size}` });
  }
}

/**
 * The check of caught-up txns (consensus.md §7.3 step 7): given the ledger root after appending
 * them and the size it reached, true when that tree is the target (size = target size and the same
 * root) or extends to it by `consProof` (RFC 6962 consistency from that size to the target).
 * The target root and the proof are decoded once; undefined when they are not base58 hashes.
 */
export function catchupProofCheck(
  consProof: readonly string[],
  targetSize: number,
  targetRoot: string,
): ((root: Uint8Array, size: number) => boolean) | undefined {
  let target: Uint8Array;
  let proof: Uint8Array[];
  try {
    if (!Array.isArray(consProof)) return undefined;
    target = b58decode(targetRoot);
    proof = consProof.map((p) => b58decode(p));
  } catch {
    return undefined;
  }
  return (root, size) => {
    if (size === targetSize) return equalBytes(root, target);
    if (!(size < targetSize)) return false;
    try {
      verifyConsistency(size, targetSize, root, target, proof);
      return true;
    } catch {
      return false;
    }
  };
}
