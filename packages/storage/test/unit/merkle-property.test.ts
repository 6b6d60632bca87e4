import { expect } from 'chai';
import fc from 'fast-check';
import type { Txn } from '@quire/common';
import { ConsistencyError, Ledger, ProofError, openMemoryKvStore, verifyConsistency, verifyInclusion, type KvStore } from '../../src/index.js';
import { hex, mth, modelLeaf, path as modelPath, proof as modelProof } from './merkle-model.js';

const N = 2000;
const COMMITTED = 1500; // the rest stays in the uncommitted tail, so proofs mix stored and in-memory hashes

const mkTxn = (i: number): Txn => ({ ver: '1', txn: { type: '1', data: { dest: `dest-${i}`, i }, metadata: {} }, txnMetadata: {}, reqSignature: {} });

function flip(bytes: Uint8Array, bit: number): Uint8Array {
  const out = Uint8Array.from(bytes);
  out[Math.floor(bit / 8) % out.length]! ^= 1 << (bit % 8);
  return out;
}

describe('Merkle proofs from the hash store (property)', () => {
  let kv: KvStore;
  let ledger: Ledger;
  let leaves: Uint8Array[];
  const rootCache = new Map<number, Uint8Array>();
  const modelRoot = (n: number): Uint8Array => {
    let r = rootCache.get(n);
    if (r === undefined) rootCache.set(n, (r = mth(leaves.slice(0, n))));
    return r;
  };

  before(async () => {
    kv = await openMemoryKvStore();
    ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    for (let s = 0; s < N; s += 100) {
      ledger.append(Array.from({ length: 100 }, (_, j) => mkTxn(s + j + 1)));
      if (s + 100 <= COMMITTED) await ledger.commit();
    }
    expect(ledger.size).to.equal(COMMITTED);
    expect(ledger.uncommittedSize).to.equal(N);
    leaves = [];
    for (let i = 1; i <= N; i++) leaves.push(modelLeaf((await ledger.getEncoded(i))!));
  });
  after(() => kv.close());

  it('roots of every size agree with the model', async () => {
    for (const n of [0, 1, 2, 3, 255, 256, 257, 1023, 1024, 1499, 1500, 1501, 1999, 2000]) {
      expect(hex(await ledger.rootAt(n)), `size ${n}`).to.equal(hex(modelRoot(n)));
    }
  });

  it('inclusion proofs equal RFC 6962 PATH, verify, and fail on any flipped bit', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: N }), fc.nat(), fc.nat(), fc.nat(255), async (n, mRaw, which, bit) => {
        const m = mRaw % n;
        const root = await ledger.rootAt(n);
        const path = await ledger.inclusionProof(m + 1, n);
        expect(path.map(hex)).to.deep.equal(modelPath(m, leaves.slice(0, n)).map(hex));
        verifyInclusion(leaves[m]!, m, n, path, root);
        // flip one bit of the leaf, of a path element, or of the root
        const slot = which % (path.length + 2);
        let leaf = leaves[m]!;
        let r = root;
        const p = [...path];
        if (slot === 0) leaf = flip(leaf, bit);
        else if (slot === 1) r = flip(r, bit);
        else p[slot - 2] = flip(p[slot - 2]!, bit);
        expect(() => verifyInclusion(leaf, m, n, p, r)).to.throw(ProofError);
      }),
      { numRuns: 150 },
    );
  });

  it('consistency proofs equal RFC 6962 PROOF, verify, and fail on any flipped bit', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: N }), fc.nat(), fc.nat(), fc.nat(255), async (n, mRaw, which, bit) => {
        const m = 1 + (mRaw % n);
        const [oldRoot, newRoot] = [await ledger.rootAt(m), await ledger.rootAt(n)];
        const proof = await ledger.consistencyProof(m, n);
        expect(proof.map(hex)).to.deep.equal(modelProof(m, leaves.slice(0, n)).map(hex));
        verifyConsistency(m, n, oldRoot, newRoot, proof);
        const slot = which % (proof.length + 2);
        let o = oldRoot;
        let nr = newRoot;
        const p = [...proof];
        if (slot === 0) o = flip(o, bit);
        else if (slot === 1) nr = flip(nr, bit);
        else p[slot - 2] = flip(p[slot - 2]!, bit);
        let failed: unknown;
        try {
          verifyConsistency(m, n, o, nr, p);
        } catch (e) {
          failed = e;
        }
        expect(failed instanceof ProofError || failed instanceof ConsistencyError, `m=${m} n=${n} slot=${slot}`).to.equal(true);
      }),
      { numRuns: 150 },
    );
  });

  it('old size 0 gives an empty proof consistent with any tree', async () => {
    expect(await ledger.consistencyProof(0, 17)).to.deep.equal([]);
    verifyConsistency(0, 17, await ledger.rootAt(0), await ledger.rootAt(17), []);
  });
});
