/**
 * Roots and proofs of an RFC 6962 tree computed from the hashes of its full subtrees (formats 6.2-6.5).
 *
 * A full subtree is named by (height, index): it covers leaves [index * 2^height, (index+1) * 2^height).
 * Every range the RFC 6962 recursions visit, D[start..start+n], starts at a multiple of a power of
 * two that is at least n, so its hash is the fold of at most log2(n)+1 full subtrees: that is how a
 * root or a proof for any earlier tree size comes out of the hash store in O(log n) reads, without
 * rebuilding the tree.
 */
import { EMPTY_ROOT, largestPowerOfTwoBelow, merkleNodeHash } from './merkle.js';

/** Gives the hash of the full subtree (height, index); throws when the store lacks it. */
export type NodeReader = (height: number, index: number) => Uint8Array;

/** Full subtrees (height, index) whose fold is MTH(D[start..start+n]), largest first. */
export function decompose(start: number, n: number): [number, number][] {
  const out: [number, number][] = [];
  let p = 1;
  let h = 0;
  while (p * 2 <= n) {
    p *= 2;
    h++;
  }
  let offset = start;
  let rest = n;
  while (rest > 0) {
    if (rest >= p) {
      out.push([h, offset / p]);
      offset += p;
      rest -= p;
    }
    p /= 2;
    h--;
  }
  return out;
}

/** MTH(D[start..start+n]) for an aligned range (see the module comment); n >= 1. */
export function rangeHash(read: NodeReader, start: number, n: number): Uint8Array {
  const parts = decompose(start, n);
  let acc = read(...parts[parts.length - 1]);
  for (let i = parts.length - 2; i >= 0; i--) acc = merkleNodeHash(read(...parts[i]), acc);
  return acc;
}

/** Root of the tree of the first n leaves. */
export function treeRoot(read: NodeReader, n: number): Uint8Array {
  return n === 0 ? EMPTY_ROOT : rangeHash(read, 0, n);
}

/** PATH(m, D[0..n]) of RFC 6962 (formats 6.3), from the leaf level upward; 0 <= m < n. */
export function inclusionPath(read: NodeReader, m: number, n: number): Uint8Array[] {
  const topDown: Uint8Array[] = [];
  let start = 0;
  let size = n;
  let idx = m;
  while (size > 1) {
    const k = largestPowerOfTwoBelow(size);
    if (idx < k) {
      topDown.push(rangeHash(read, start + k, size - k));
      size = k;
    } else {
      topDown.push(rangeHash(read, start, k));
      start += k;
      idx -= k;
      size -= k;
    }
  }
  return topDown.reverse();
}

/** PROOF(m, D[0..n]) of RFC 6962 (formats 6.4); empty when m = 0 or m = n. */
export function consistencyProof(read: NodeReader, m: number, n: number): Uint8Array[] {
  if (m === 0 || m === n) return [];
  const topDown: Uint8Array[] = [];
  let start = 0;
  let size = n;
  let old = m;
  let whole = true; // the b flag of SUBPROOF: true while the old tree is a prefix we started from
  while (old !== size) {
    const k = largestPowerOfTwoBelow(size);
    if (old <= k) {
      topDown.push(rangeHash(read, start + k, size - k));
      size = k;
    } else {
      topDown.push(rangeHash(read, start, k));
      start += k;
      old -= k;
      size -= k;
      whole = false;
    }
  }
  if (!whole) topDown.push(rangeHash(read, start, size));
  return topDown.reverse();
}
