/**
 * RFC 6962 Merkle tree hashing with SHA-256 (formats 6.2) and the pure proof verifiers of
 * formats 6.3 and 6.4. Nothing here touches storage: light clients use these functions to check
 * audit paths and consistency proofs received from any node.
 *
 * Tree sizes and indexes are JavaScript numbers up to 2^53-1; the arithmetic avoids the 32-bit
 * bit operators on purpose.
 */
import { hash } from 'node:crypto';
import { equalBytes } from '@quire/common';
import { ConsistencyError, ProofError, StorageError, StorageErrorCode, ValueError } from '../errors.js';

/** Length of every hash of the tree. */
export const HASH_LENGTH = 32;

/**
 * SHA-256 of `data`. The digest comes back as a latin1 ('binary') string and is copied into a Buffer from Node's
 * shared pool: about half the cost of a 'buffer' digest, which allocates a backing store per hash.
 */
function sha256(data: Uint8Array): Uint8Array {
  return Buffer.from(hash('sha256', data, 'binary'), 'latin1'); // 'binary' is latin1
}

/** Root of the empty tree: SHA-256(""). */
export const EMPTY_ROOT: Uint8Array = sha256(new Uint8Array(0));

/** LEAF(d) = SHA-256(0x00 || d), where d is the leaf data (MP(txn) for a ledger). */
export function merkleLeafHash(data: Uint8Array): Uint8Array {
  if (data.length >= LEAF_SCRATCH_MAX) {
    const buf = new Uint8Array(data.length + 1);
    buf.set(data, 1);
    return sha256(buf);
  }
  if (data.length >= leafScratch.length) leafScratch = new Uint8Array(Math.min(LEAF_SCRATCH_MAX, 2 * (data.length + 1)));
  leafScratch.set(data, 1);
  return sha256(leafScratch.subarray(0, data.length + 1));
}

/** Leaf data below this size is prefixed in a reused buffer (no allocation per leaf); larger data gets its own. */
const LEAF_SCRATCH_MAX = 64 * 1024;
/** 0x00 followed by the leaf data being hashed; byte 0 is never written. */
let leafScratch = new Uint8Array(2048);

const nodeScratch = new Uint8Array(1 + 2 * HASH_LENGTH);
nodeScratch[0] = 1;

/** NODE(l, r) = SHA-256(0x01 || l || r). */
export function merkleNodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  if (left.length === HASH_LENGTH && right.length === HASH_LENGTH) {
    nodeScratch.set(left, 1);
    nodeScratch.set(right, 1 + HASH_LENGTH);
    return sha256(nodeScratch);
  }
  const buf = new Uint8Array(1 + left.length + right.length);
  buf[0] = 1;
  buf.set(left, 1);
  buf.set(right, 1 + left.length);
  return sha256(buf);
}

/** Largest power of two strictly below n (n >= 2). */
export function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * Root of a compact tree given as the hashes of its full subtrees, largest first (formats 6.2).
 * An empty list gives {@link EMPTY_ROOT}.
 */
export function rootFromFrontier(hashes: readonly Uint8Array[]): Uint8Array {
  if (hashes.length === 0) return EMPTY_ROOT;
  let acc = hashes[hashes.length - 1];
  for (let i = hashes.length - 2; i >= 0; i--) acc = merkleNodeHash(hashes[i], acc);
  return acc;
}

/** Number of full subtrees (frontier hashes) of a tree of `size` leaves: the 1 bits of `size`. */
function frontierLength(size: number): number {
  let c = 0;
  for (let x = size; x > 0; x = Math.floor(x / 2)) c += x % 2;
  return c;
}

/**
 * MTH of the tree of `size + leafHashes.length` leaves, given the frontier of the tree of its first
 * `size` leaves (full-subtree hashes, largest first; see Ledger.frontierAt) and the leaf hashes that
 * follow. Throws ProofError PROOF_MALFORMED when the frontier cannot be that of `size` leaves.
 */
export function merkleRootAfterAppend(frontier: readonly Uint8Array[], size: number, leafHashes: readonly Uint8Array[]): Uint8Array {
  if (!Number.isSafeInteger(size) || size < 0 || frontier.length !== frontierLength(size)) {
    throw new ProofError(StorageErrorCode.PROOF_MALFORMED, { what: 'frontier', size, length: frontier.length });
  }
  const stack = [...frontier];
  for (let i = 0; i < leafHashes.length; i++) appendToFrontier(stack, size + i, leafHashes[i]);
  return rootFromFrontier(stack);
}

/**
 * Appends leaf number `size` (0-based) to `frontier`, the frontier of a tree of `size` leaves, in place: the full
 * subtrees the leaf completes are merged (formats 6.2 append).
 */
export function appendToFrontier(frontier: Uint8Array[], size: number, leafHash: Uint8Array): void {
  let x = leafHash;
  for (let c = size; c % 2 === 1; c = (c - 1) / 2) {
    const left = frontier.pop();
    // a frontier of `size` leaves holds one subtree per 1 bit of `size` (callers pass such frontiers only)
    if (left === undefined) throw new StorageError(StorageErrorCode.INTERNAL_INVARIANT, { what: 'frontier shorter than its size', size });
    x = merkleNodeHash(left, x);
  }
  frontier.push(x);
}

/** MTH of a list of leaf hashes, computed in full (O(n)): a reference for tools and tests. */
export function merkleRootOfLeafHashes(leafHashes: readonly Uint8Array[]): Uint8Array {
  return merkleRootAfterAppend([], 0, leafHashes);
}

export { equalBytes };

function checkSize(what: string, v: unknown): asserts v is number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw new ValueError(StorageErrorCode.INVALID_PROOF_ARGUMENT, { what, value: typeof v === 'number' ? v : String(v) });
  }
}

function checkHash(what: string, v: unknown, index?: number): asserts v is Uint8Array {
  if (!(v instanceof Uint8Array) || v.length !== HASH_LENGTH) {
    const length = v instanceof Uint8Array ? v.length : -1;
    throw new ProofError(StorageErrorCode.PROOF_MALFORMED, index === undefined ? { what, length } : { what, length, index });
  }
}

function checkPath(v: unknown, what: string): asserts v is readonly Uint8Array[] {
  if (!Array.isArray(v)) throw new ProofError(StorageErrorCode.PROOF_MALFORMED, { what, length: -1 });
}

const half = (x: number): number => Math.floor(x / 2);
const odd = (x: number): boolean => x % 2 === 1;

/**
 * Checks an audit path (formats 6.3, RFC 9162 2.1.3.2): that the leaf with hash `leafHash` at
 * 0-based index `leafIndex` (seqNo - 1) is in the tree of `treeSize` leaves whose root is `root`.
 * Returns normally when it is; throws {@link ValueError} when `leafIndex >= treeSize` or a size is
 * not a non-negative integer, and {@link ProofError} when the path is malformed, too long, too
 * short, or leads to another root.
 */
export function verifyInclusion(leafHash: Uint8Array, leafIndex: number, treeSize: number, path: readonly Uint8Array[], root: Uint8Array): void {
  checkSize('leafIndex', leafIndex);
  checkSize('treeSize', treeSize);
  if (leafIndex >= treeSize) throw new ValueError(StorageErrorCode.INVALID_PROOF_ARGUMENT, { what: 'leafIndex', value: leafIndex, treeSize });
  checkHash('leafHash', leafHash);
  checkHash('root', root);
  checkPath(path, 'path');
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = leafHash;
  for (let i = 0; i < path.length; i++) {
    const p = path[i];
    checkHash('path', p, i);
    if (sn === 0) throw new ProofError(StorageErrorCode.PROOF_TOO_LONG, { expected: i, length: path.length });
    if (odd(fn) || fn === sn) {
      r = merkleNodeHash(p, r);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = merkleNodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  if (sn !== 0) throw new ProofError(StorageErrorCode.PROOF_TOO_SHORT, { length: path.length });
  if (!equalBytes(r, root)) throw new ProofError(StorageErrorCode.PROOF_ROOT_MISMATCH);
}

/**
 * Checks a consistency proof (formats 6.4): that the tree of `newSize` leaves with root `newRoot`
 * extends the tree of `oldSize` leaves with root `oldRoot`. Returns normally when it does; throws
 * {@link ValueError} for sizes that cannot describe a proof (old > new, negative, fractional),
 * {@link ProofError} when the proof is malformed, has the wrong length or does not lead to
 * `newRoot`, and {@link ConsistencyError} when it leads to `newRoot` but shows another old root
 * (or the sizes are equal and the roots differ). An old size of 0 is consistent with anything.
 */
export function verifyConsistency(oldSize: number, newSize: number, oldRoot: Uint8Array, newRoot: Uint8Array, proof: readonly Uint8Array[]): void {
  checkSize('oldSize', oldSize);
  checkSize('newSize', newSize);
  if (oldSize > newSize) throw new ValueError(StorageErrorCode.INVALID_PROOF_ARGUMENT, { what: 'oldSize', value: oldSize, newSize });
  checkHash('oldRoot', oldRoot);
  checkHash('newRoot', newRoot);
  if (oldSize === newSize) {
    if (!equalBytes(oldRoot, newRoot)) throw new ConsistencyError(StorageErrorCode.CONSISTENCY_ROOTS_DIFFER, { size: oldSize });
    return;
  }
  if (oldSize === 0) return;
  checkPath(proof, 'proof');
  if (proof.length === 0) throw new ProofError(StorageErrorCode.PROOF_TOO_SHORT, { length: 0 });
  let next = 0;
  const take = (): Uint8Array => {
    if (next >= proof.length) throw new ProofError(StorageErrorCode.PROOF_TOO_SHORT, { length: proof.length });
    const h = proof[next];
    checkHash('proof', h, next);
    next++;
    return h;
  };
  let node = oldSize - 1;
  let last = newSize - 1;
  while (odd(node)) {
    node = half(node);
    last = half(last);
  }
  let a: Uint8Array;
  let b: Uint8Array;
  if (node !== 0) a = b = take();
  else a = b = oldRoot;
  while (node !== 0) {
    if (odd(node)) {
      const p = take();
      a = merkleNodeHash(p, a);
      b = merkleNodeHash(p, b);
    } else if (node < last) {
      b = merkleNodeHash(b, take());
    }
    node = half(node);
    last = half(last);
  }
  while (last !== 0) {
    b = merkleNodeHash(b, take());
    last = half(last);
  }
  if (!equalBytes(b, newRoot)) throw new ProofError(StorageErrorCode.PROOF_ROOT_MISMATCH);
  if (!equalBytes(a, oldRoot)) throw new ConsistencyError(StorageErrorCode.CONSISTENCY_OLD_ROOT_MISMATCH, { oldSize, newSize });
  if (next !== proof.length) throw new ProofError(StorageErrorCode.PROOF_TOO_LONG, { expected: next, length: proof.length });
}
