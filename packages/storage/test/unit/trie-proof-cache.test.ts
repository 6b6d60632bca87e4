// verifyTrieProofAt with a ProofNodeCache answers exactly as without one: the same value or absence for genuine
// proofs, the same error code for tampered ones, while the cache is shared by tries, roots and runs and evicts.
import { expect } from 'chai';
import fc from 'fast-check';
import {
  PROOF_NODE_CACHE_BYTES,
  ProofError,
  ProofNodeCache,
  StateTrie,
  openMemoryKvStore,
  rlpDecode,
  rlpEncode,
  verifyTrieProofAt,
  type KvStore,
  type RlpItem,
} from '@quire/storage';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** The value, null, or the error code of a verification. */
function outcome(fn: () => Uint8Array | null): string {
  try {
    const v = fn();
    return v === null ? 'absent' : `value ${hex(v)}`;
  } catch (e) {
    expect(e).to.be.instanceOf(ProofError);
    return `error ${(e as ProofError).code}`;
  }
}

describe('state proofs with a cache of decoded nodes', () => {
  const opened: KvStore[] = [];
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
  });
  // keys sharing prefixes, so that proofs share upper nodes and branch / extension nodes appear
  const keyArb = fc.uint8Array({ minLength: 1, maxLength: 4 }).map((k) => k.map((b) => [0x00, 0x01, 0x10, 0x11, 0x3f, 0x40, 0xff][b % 7]!));
  const pairsArb = fc.uniqueArray(fc.tuple(keyArb, fc.uint8Array({ maxLength: 60 })), { selector: ([k]) => hex(k), maxLength: 40 });

  async function build(pairs: [Uint8Array, Uint8Array][]): Promise<StateTrie> {
    const store = await openMemoryKvStore();
    opened.push(store);
    const t = await StateTrie.open({ name: 'domain', nodeCacheSize: 4 }, { kv: store });
    for (const [k, v] of pairs) t.set(k, v);
    await t.commit();
    return t;
  }

  it('the same answer as without a cache for genuine, flipped, truncated and node-dropped proofs and other keys', async () => {
    const cache = new ProofNodeCache(16); // shared by every run: hits across tries and evictions
    await fc.assert(
      fc.asyncProperty(pairsArb, fc.array(keyArb, { maxLength: 4 }), fc.nat(), fc.integer({ min: 1, max: 255 }), async (pairs, extra, at, mask) => {
        const t = await build(pairs);
        const root = t.committedRoot;
        for (const key of [...pairs.map(([k]) => k), ...extra]) {
          const proof = t.generateProof(key);
          const nodes = rlpDecode(proof) as RlpItem[];
          const flipped = Uint8Array.from(proof);
          flipped[at % flipped.length] ^= mask;
          const variants = [proof, flipped, proof.subarray(0, at % proof.length), rlpEncode(nodes.filter((_, i) => i !== at % nodes.length))];
          for (const p of variants) {
            for (const k of [key, ...extra]) {
              const plain = outcome(() => verifyTrieProofAt(root, k, p));
              // twice: a miss that fills the cache, then hits
              expect(outcome(() => verifyTrieProofAt(root, k, p, cache))).to.equal(plain);
              expect(outcome(() => verifyTrieProofAt(root, k, p, cache))).to.equal(plain);
            }
          }
        }
        expect(cache.size).to.be.at.most(16);
      }),
      { numRuns: 60 },
    );
  });

  it('a value returned is a copy: changing it changes neither the cache nor the next answer', async () => {
    const t = await build([[Uint8Array.of(1, 2), Uint8Array.of(7, 7, 7)]]);
    const cache = new ProofNodeCache();
    const proof = Uint8Array.from(t.generateProof(Uint8Array.of(1, 2))); // a copy: a Buffer's slice() is a view
    const v = verifyTrieProofAt(t.committedRoot, Uint8Array.of(1, 2), proof, cache) as Uint8Array;
    v.fill(0);
    proof.fill(0); // the proof's bytes reused by the caller
    const again = verifyTrieProofAt(t.committedRoot, Uint8Array.of(1, 2), t.generateProof(Uint8Array.of(1, 2)), cache);
    expect(again).to.deep.equal(Uint8Array.of(7, 7, 7));
  });
  it('holds at most its byte bound of nodes: large off-path nodes in hostile proofs neither grow it nor change the answers', async () => {
    const t = await build([[Uint8Array.of(1, 2), Uint8Array.of(7, 7, 7)]]);
    const key = Uint8Array.of(1, 2);
    const nodes = rlpDecode(t.generateProof(key)) as RlpItem[];
    const cache = new ProofNodeCache(); // the defaults, as the SDK's shared cache
    for (let i = 0; i < 64; i++) {
      // a leaf of 60 KiB the walk never reaches: decoded (and kept) before the walk, a distinct node each time
      const junk = [Uint8Array.of(0x20, i), new Uint8Array(60 * 1024).fill(i)];
      const proof = rlpEncode([junk, ...nodes]);
      expect(verifyTrieProofAt(t.committedRoot, key, proof, cache)).to.deep.equal(Uint8Array.of(7, 7, 7));
      expect(cache.bytes).to.be.at.most(PROOF_NODE_CACHE_BYTES);
    }
    // in nodes: what fits in the byte bound, not 64 large ones (the count bound alone kept them all)
    expect(cache.size).to.be.at.most(Math.floor(PROOF_NODE_CACHE_BYTES / (60 * 1024)) + nodes.length);
    // a node larger than the whole bound is decoded but not kept
    const small = new ProofNodeCache(1024, 4096);
    const huge = rlpEncode([[Uint8Array.of(0x20, 1), new Uint8Array(8192)], ...nodes]);
    expect(verifyTrieProofAt(t.committedRoot, key, huge, small)).to.deep.equal(Uint8Array.of(7, 7, 7));
    expect(small.bytes).to.be.at.most(4096);
    expect(small.size).to.equal(nodes.length);
    // the path's nodes are still served from the cache after the large ones went
    expect(verifyTrieProofAt(t.committedRoot, key, t.generateProof(key), small)).to.deep.equal(Uint8Array.of(7, 7, 7));
  });
});
