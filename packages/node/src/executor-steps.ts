// The RFC 6962 consistency proof over leaf hashes, for the catch-up the executor serves.
import { merkleRootOfLeafHashes } from '@quire/storage';

/** RFC 6962 SUBPROOF(m, D[n], b) over leaf hashes (formats.md §6.4). */
export function consistencySubproof(m: number, leaves: readonly Uint8Array[], b: boolean): Uint8Array[] {
  const n = leaves.length;
  if (m === n) return b ? [] : [merkleRootOfLeafHashes(leaves)];
  let k = 1;
  while (k * 2 < n) k *= 2;
  if (m <= k) return [...consistencySubproof(m, leaves.slice(0, k), b), merkleRootOfLeafHashes(leaves.slice(k))];
  return [...consistencySubproof(m - k, leaves.slice(k), false), merkleRootOfLeafHashes(leaves.slice(0, k))];
}
