import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ConsistencyError,
  EMPTY_ROOT,
  ProofError,
  StorageError,
  StorageErrorCode,
  ValueError,
  merkleLeafHash,
  merkleNodeHash,
  merkleRootAfterAppend,
  merkleRootOfLeafHashes,
  openMemoryKvStore,
  rootFromFrontier,
  verifyConsistency,
  verifyInclusion,
  type KvStore,
} from '../../src/index.js';
import { HashStore } from '../../src/ledger/hash-store.js';
import { consistencyProof, inclusionPath, treeRoot } from '../../src/ledger/tree-proofs.js';
import { VECTORS_DIR, hex, path as modelPath, unhex } from './merkle-model.js';
import { codeOf } from '@quire/testing';

interface Vectors {
  hash_empty: { expected_hex: string };
  hash_leaf: { data_hex: string; expected_hex: string }[];
  hash_children: { left_hex: string; right_hex: string; expected_hex: string }[];
  leaves_hex: string[];
  roots: { tree_size: number; root_hex: string }[];
  consistency_proofs: { old_size: number; new_size: number; old_root_hex: string; new_root_hex: string; proof_hex: string[]; expected: string }[];
  consistency_negative: {
    case: string;
    old_size: number;
    new_size: number;
    old_root_hex: string;
    new_root_hex: string;
    proof_hex: string[];
    expected: string;
  }[];
}

const v = JSON.parse(readFileSync(join(VECTORS_DIR, 'rfc6962.json'), 'utf8')) as Vectors;
const classes: Record<string, new (...a: never) => StorageError> = { ProofError, ConsistencyError, ValueError };

function outcome(f: () => void): string {
  try {
    f();
    return 'ok';
  } catch (e) {
    for (const [name, cls] of Object.entries(classes)) if (e instanceof cls) return name;
    throw e;
  }
}

describe('RFC 6962 vectors (formats 6.2-6.4)', () => {
  let kv: KvStore;
  let store: HashStore;
  const leaves = v.leaves_hex.map(unhex);
  const leafHashes = leaves.map(merkleLeafHash);
  const roots = v.roots.map((r) => unhex(r.root_hex));

  before(async () => {
    kv = await openMemoryKvStore();
    store = new HashStore(kv, 0, 0);
    for (const lh of leafHashes) store.append(lh);
  });
  after(() => kv.close());

  it('hashes the empty tree, leaves and children', () => {
    expect(hex(EMPTY_ROOT)).to.equal(v.hash_empty.expected_hex);
    expect(hex(rootFromFrontier([]))).to.equal(v.hash_empty.expected_hex);
    for (const c of v.hash_leaf) expect(hex(merkleLeafHash(unhex(c.data_hex)))).to.equal(c.expected_hex);
    for (const c of v.hash_children) expect(hex(merkleNodeHash(unhex(c.left_hex), unhex(c.right_hex)))).to.equal(c.expected_hex);
  });

  it('gives the root of the first 1..8 leaves, by compact append and from the hash store', async () => {
    const incremental = new HashStore(kv, 1, 0);
    for (const r of v.roots) {
      incremental.append(leafHashes[r.tree_size - 1]!);
      expect(hex(incremental.root), `append ${r.tree_size}`).to.equal(r.root_hex);
      expect(hex(treeRoot(store.read, r.tree_size)), `rootAt ${r.tree_size}`).to.equal(r.root_hex);
      expect(hex(merkleRootOfLeafHashes(leafHashes.slice(0, r.tree_size)))).to.equal(r.root_hex);
    }
    expect(hex(treeRoot(store.read, 0))).to.equal(v.hash_empty.expected_hex);
  });

  it('generates audit paths that verify against the vector roots (self-check)', () => {
    for (let n = 1; n <= 8; n++) {
      for (let m = 0; m < n; m++) {
        const p = inclusionPath(store.read, m, n);
        expect(p.map(hex), `path ${m} in ${n}`).to.deep.equal(modelPath(m, leafHashes.slice(0, n)).map(hex));
        verifyInclusion(leafHashes[m]!, m, n, p, roots[n - 1]!);
        if (n > 1) expect(outcome(() => verifyInclusion(leafHashes[m]!, m, n, p, roots[n - 2]!))).to.equal('ProofError');
      }
    }
  });

  for (const c of v.consistency_proofs) {
    it(`consistency ${c.old_size} -> ${c.new_size}: ${c.expected}, and generated identically`, () => {
      const proof = c.proof_hex.map(unhex);
      expect(outcome(() => verifyConsistency(c.old_size, c.new_size, unhex(c.old_root_hex), unhex(c.new_root_hex), proof))).to.equal(c.expected);
      expect(consistencyProof(store.read, c.old_size, c.new_size).map(hex)).to.deep.equal(c.proof_hex);
    });
  }

  for (const c of v.consistency_negative) {
    it(`consistency negative: ${c.case} -> ${c.expected}`, () => {
      const f = (): void => verifyConsistency(c.old_size, c.new_size, unhex(c.old_root_hex), unhex(c.new_root_hex), c.proof_hex.map(unhex));
      expect(outcome(f)).to.equal(c.expected);
    });
  }
});

describe('merkleRootAfterAppend', () => {
  const leaves = Array.from({ length: 40 }, (_, i) => merkleLeafHash(new Uint8Array([i, 7])));
  /** full-subtree roots of the first `size` leaves, largest first */
  const frontierOf = (size: number): Uint8Array[] => {
    const out: Uint8Array[] = [];
    let off = 0;
    for (let bit = 2 ** 6; bit >= 1; bit /= 2) {
      if ((size & bit) === 0) continue;
      out.push(merkleRootOfLeafHashes(leaves.slice(off, off + bit)));
      off += bit;
    }
    return out;
  };

  it('gives the root of the whole tree from the frontier of any prefix and the leaves after it', () => {
    for (let n = 0; n <= leaves.length; n++) {
      const root = merkleRootOfLeafHashes(leaves.slice(0, n));
      for (let k = 0; k <= n; k++) expect(hex(merkleRootAfterAppend(frontierOf(k), k, leaves.slice(k, n))), `${k} + ${n - k}`).to.equal(hex(root));
    }
  });

  it('refuses a frontier that cannot be that of the prefix (PROOF_MALFORMED)', () => {
    expect(codeOf(() => merkleRootAfterAppend(frontierOf(5).slice(1), 5, leaves.slice(5, 9)))).to.equal(StorageErrorCode.PROOF_MALFORMED);
    expect(codeOf(() => merkleRootAfterAppend(frontierOf(4), 5, []))).to.equal(StorageErrorCode.PROOF_MALFORMED);
    expect(codeOf(() => merkleRootAfterAppend([], -1, []))).to.equal(StorageErrorCode.PROOF_MALFORMED);
  });
});

describe('proof verifiers: malformed input', () => {
  const leaves = Array.from({ length: 7 }, (_, i) => merkleLeafHash(Uint8Array.of(i)));
  const root7 = merkleRootOfLeafHashes(leaves);
  const root3 = merkleRootOfLeafHashes(leaves.slice(0, 3));
  const incl = modelPath(2, leaves);

  it('inclusion: wrong index, sizes, lengths and hash sizes have stable codes', () => {
    verifyInclusion(leaves[2]!, 2, 7, incl, root7);
    expect(codeOf(() => verifyInclusion(leaves[2]!, 7, 7, incl, root7))).to.equal(StorageErrorCode.INVALID_PROOF_ARGUMENT);
    expect(codeOf(() => verifyInclusion(leaves[2]!, -1, 7, incl, root7))).to.equal(StorageErrorCode.INVALID_PROOF_ARGUMENT);
    expect(codeOf(() => verifyInclusion(leaves[2]!, 2, 7.5, incl, root7))).to.equal(StorageErrorCode.INVALID_PROOF_ARGUMENT);
    expect(codeOf(() => verifyInclusion(leaves[2]!, 2, 7, incl.slice(0, 2), root7))).to.equal(StorageErrorCode.PROOF_TOO_SHORT);
    expect(codeOf(() => verifyInclusion(leaves[2]!, 2, 7, [...incl, leaves[0]!], root7))).to.equal(StorageErrorCode.PROOF_TOO_LONG);
    expect(codeOf(() => verifyInclusion(leaves[3]!, 2, 7, incl, root7))).to.equal(StorageErrorCode.PROOF_ROOT_MISMATCH);
    expect(codeOf(() => verifyInclusion(leaves[2]!, 2, 7, [incl[0]!.subarray(1), ...incl.slice(1)], root7))).to.equal(StorageErrorCode.PROOF_MALFORMED);
    expect(codeOf(() => verifyInclusion(leaves[2]!, 2, 7, incl, root7.subarray(0, 31)))).to.equal(StorageErrorCode.PROOF_MALFORMED);
    expect(codeOf(() => verifyInclusion(leaves[2]!, 2, 7, 'x' as unknown as Uint8Array[], root7))).to.equal(StorageErrorCode.PROOF_MALFORMED);
    expect(outcome(() => verifyInclusion(leaves[0]!, 0, 1, [], leaves[0]!))).to.equal('ok');
    expect(outcome(() => verifyInclusion(leaves[0]!, 0, 1, [leaves[1]!], leaves[0]!))).to.equal('ProofError');
  });

  it('consistency: codes for each failure', () => {
    const p = [...modelPath(0, [])]; // empty
    expect(p).to.deep.equal([]);
    expect(codeOf(() => verifyConsistency(3, 7, root3, root7, []))).to.equal(StorageErrorCode.PROOF_TOO_SHORT);
    expect(codeOf(() => verifyConsistency(3, 3, root3, root7, []))).to.equal(StorageErrorCode.CONSISTENCY_ROOTS_DIFFER);
    expect(codeOf(() => verifyConsistency(4, 3, root3, root7, []))).to.equal(StorageErrorCode.INVALID_PROOF_ARGUMENT);
    expect(codeOf(() => verifyConsistency(3, 7, root3, root7, [root3.subarray(2)]))).to.equal(StorageErrorCode.PROOF_MALFORMED);
    expect(codeOf(() => verifyConsistency(3, 7, root3.subarray(1), root7, []))).to.equal(StorageErrorCode.PROOF_MALFORMED);
  });
});
