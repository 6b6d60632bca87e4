// Reference RFC 6962 recursions (MTH, PATH, PROOF) over a full list of leaf hashes, written from
// the RFC text independently of src/ledger/tree-proofs.ts, to check the store-backed versions.
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const VECTORS_DIR = process.env.QUIRE_VECTORS ?? join(here, '../../../../test/vectors');

export const hex = (u: Uint8Array): string => Buffer.from(u).toString('hex');
export const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));

function h(...parts: Uint8Array[]): Uint8Array {
  const c = createHash('sha256');
  for (const p of parts) c.update(p);
  return new Uint8Array(c.digest());
}

export const modelLeaf = (d: Uint8Array): Uint8Array => h(Uint8Array.of(0), d);
export const modelNode = (l: Uint8Array, r: Uint8Array): Uint8Array => h(Uint8Array.of(1), l, r);

function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

export function mth(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return h(new Uint8Array(0));
  if (leaves.length === 1) return leaves[0]!;
  const k = split(leaves.length);
  return modelNode(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

export function path(m: number, leaves: Uint8Array[]): Uint8Array[] {
  if (leaves.length <= 1) return [];
  const k = split(leaves.length);
  if (m < k) return [...path(m, leaves.slice(0, k)), mth(leaves.slice(k))];
  return [...path(m - k, leaves.slice(k)), mth(leaves.slice(0, k))];
}

function subproof(m: number, leaves: Uint8Array[], b: boolean): Uint8Array[] {
  const n = leaves.length;
  if (m === n) return b ? [] : [mth(leaves)];
  const k = split(n);
  if (m <= k) return [...subproof(m, leaves.slice(0, k), b), mth(leaves.slice(k))];
  return [...subproof(m - k, leaves.slice(k), false), mth(leaves.slice(0, k))];
}

export function proof(m: number, leaves: Uint8Array[]): Uint8Array[] {
  if (m === 0 || m === leaves.length) return [];
  return subproof(m, leaves, true);
}
