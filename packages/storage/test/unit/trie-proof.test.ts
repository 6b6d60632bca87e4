import { expect } from 'chai';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { b58decode, b64encode } from '@quire/common';
import {
  BLANK_ROOT,
  ProofError,
  StateTrie,
  StorageErrorCode,
  openMemoryKvStore,
  rlpDecode,
  rlpEncode,
  verifyPrefixProof,
  verifyPrefixProofPairs,
  verifyTrieProofAt,
  type KvStore,
  type RlpItem,
} from '@quire/storage';

const vectors = JSON.parse(readFileSync(new URL('../../../../test/vectors/state_trie.json', import.meta.url), 'utf8')) as {
  cases: {
    name: string;
    trie_contents: { key: string; key_hex: string; value: string }[];
    root_hex: string;
    root_base58: string;
    proof_nodes_hex: string;
    proof_nodes_base64: string;
    lookups: { key: string; key_hex: string; expected_value?: string | null; expected?: string }[];
  }[];
  corrupted_rlp: { proof_nodes_hex: string; root_hex: string };
  blank_node_proof: { proof_nodes_base64: string; proof_nodes_hex: string };
};

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

function proofCode(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(ProofError);
    return (e as ProofError).code;
  }
  return 'no error';
}

describe('state proofs (formats 7.4, 7.5, 7.7)', () => {
  let kv: KvStore;
  beforeEach(async () => {
    kv = await openMemoryKvStore();
  });
  afterEach(async () => {
    await kv.close();
  });

  describe('vectors', () => {
    for (const c of vectors.cases) {
      describe(c.name, () => {
        it('base64 and hex proofs are the same bytes; the base58 root is the hex root', () => {
          expect(hex(Buffer.from(c.proof_nodes_base64, 'base64'))).to.equal(c.proof_nodes_hex);
          expect(hex(b58decode(c.root_base58))).to.equal(c.root_hex);
        });

        for (const l of c.lookups) {
          const expectation = l.expected !== undefined ? 'fails as incomplete' : l.expected_value === null ? 'is absent' : `= ${l.expected_value}`;
          it(`lookup ${l.key} ${expectation} (RLP bytes and base64 alike)`, () => {
            const root = b58decode(c.root_base58);
            for (const proof of [unhex(c.proof_nodes_hex), c.proof_nodes_base64]) {
              for (const key of [l.key, unhex(l.key_hex)]) {
                if (l.expected !== undefined) {
                  expect(proofCode(() => verifyTrieProofAt(root, key, proof))).to.equal(StorageErrorCode.PROOF_INCOMPLETE);
                } else if (l.expected_value === null) {
                  expect(verifyTrieProofAt(root, key, proof)).to.equal(null);
                } else {
                  expect(verifyTrieProofAt(root, key, proof)).to.deep.equal(utf8(l.expected_value!));
                }
              }
            }
          });
        }

        it('a trie with the same contents generates a proof that verifies the same way', async () => {
          const t = await StateTrie.open({ name: 'domain' }, { kv });
          for (const p of c.trie_contents) t.set(p.key, utf8(p.value));
          await t.commit();
          const root = t.committedRoot;
          expect(hex(root)).to.equal(c.root_hex);
          for (const l of c.lookups) {
            const proof = t.generateProof(l.key);
            // path order: top-down, root node last
            const nodes = rlpDecode(proof) as RlpItem[];
            expect(hex(rlpEncode(nodes[nodes.length - 1]!))).to.equal(hex(rlpEncode((rlpDecode(unhex(c.proof_nodes_hex)) as RlpItem[]).at(-1)!)));
            const want = c.trie_contents.find((p) => p.key === l.key);
            const got = verifyTrieProofAt(root, l.key, b64encode(proof));
            expect(got).to.deep.equal(want === undefined ? null : utf8(want.value));
          }
        });
      });
    }

    it('the first vector proof is the exact path-order proof Quire emits for key 33', async () => {
      const c = vectors.cases[0]!;
      const t = await StateTrie.open({ name: 'domain' }, { kv });
      for (const p of c.trie_contents) t.set(p.key, utf8(p.value));
      await t.commit();
      expect(hex(t.generateProof('33'))).to.equal(c.proof_nodes_hex);
      expect(b64encode(t.generateProof('33'))).to.equal(c.proof_nodes_base64);
    });

    it('a corrupted-RLP proof fails', () => {
      const cr = vectors.corrupted_rlp;
      expect(proofCode(() => verifyTrieProofAt(unhex(vectors.cases[0]!.root_hex), '33', unhex(cr.proof_nodes_hex)))).to.equal(StorageErrorCode.PROOF_MALFORMED);
      // and the vector's one-byte root is no root at all
      expect(proofCode(() => verifyTrieProofAt(unhex(cr.root_hex), '33', unhex(cr.proof_nodes_hex)))).to.equal(StorageErrorCode.PROOF_MALFORMED);
    });

    it("the blank proof 'wYA=' proves absence under BLANK_ROOT, and an empty trie generates it", async () => {
      const b = vectors.blank_node_proof;
      expect(verifyTrieProofAt(BLANK_ROOT, 'anything', b.proof_nodes_base64)).to.equal(null);
      expect(verifyTrieProofAt(BLANK_ROOT, '', unhex(b.proof_nodes_hex))).to.equal(null);
      expect(verifyPrefixProof(BLANK_ROOT, '', b.proof_nodes_base64).size).to.equal(0);
      const t = await StateTrie.open({ name: 'config' }, { kv });
      expect(b64encode(t.generateProof('x'))).to.equal(b.proof_nodes_base64);
      expect(b64encode(t.generatePrefixProof('x'))).to.equal(b.proof_nodes_base64);
      // the blank proof is no proof for another root
      expect(proofCode(() => verifyTrieProofAt(unhex(vectors.cases[0]!.root_hex), '33', b.proof_nodes_base64))).to.equal(StorageErrorCode.PROOF_ROOT_MISMATCH);
    });

    it('formats 7.5 example: the proof of 33 -> v1 does not prove a value for 3', async () => {
      const root = unhex('7c3fe8a8e45d3efab16866566676164b85b229318cf31b19069ef822c80e2f5a');
      expect(verifyTrieProofAt(root, '33', 'ysmDIDMzhMOCdjE=')).to.deep.equal(utf8('v1'));
      expect(verifyTrieProofAt(root, '3', 'ysmDIDMzhMOCdjE=')).to.equal(null);
      expect(verifyTrieProofAt(root, '333', 'ysmDIDMzhMOCdjE=')).to.equal(null);
      const t = await StateTrie.open({ name: 'domain' }, { kv });
      t.set('33', utf8('v1'));
      await t.commit();
      expect(b64encode(t.generateProof('33'))).to.equal('ysmDIDMzhMOCdjE=');
      expect(b64encode(t.generateProof('3'))).to.equal('ysmDIDMzhMOCdjE=');
    });
  });

  describe('malformed input', () => {
    const root = unhex(vectors.cases[0]!.root_hex);
    const good = vectors.cases[0]!.proof_nodes_base64;
    const cases: [string, () => unknown, string][] = [
      ['URL-safe base64', () => verifyTrieProofAt(root, '33', good.replace(/\+/g, '-').replace(/\//g, '_')), StorageErrorCode.PROOF_MALFORMED],
      ['unpadded base64', () => verifyTrieProofAt(root, '33', good.replace(/=+$/, '')), StorageErrorCode.PROOF_MALFORMED],
      ['not a list', () => verifyTrieProofAt(root, '33', unhex('83646f67')), StorageErrorCode.PROOF_MALFORMED],
      [
        'trailing bytes',
        () => verifyTrieProofAt(root, '33', Buffer.concat([unhex(vectors.cases[0]!.proof_nodes_hex), Uint8Array.of(0)])),
        StorageErrorCode.PROOF_MALFORMED,
      ],
      ['a node of 3 items', () => verifyTrieProofAt(root, '33', rlpEncode([[utf8('a'), utf8('b'), utf8('c')]])), StorageErrorCode.PROOF_MALFORMED],
      ['a byte string item', () => verifyTrieProofAt(root, '33', rlpEncode([utf8('abc')])), StorageErrorCode.PROOF_MALFORMED],
      ['a root of 31 bytes', () => verifyTrieProofAt(root.subarray(1), '33', good), StorageErrorCode.PROOF_MALFORMED],
      ['an empty proof', () => verifyTrieProofAt(root, '33', rlpEncode([])), StorageErrorCode.PROOF_ROOT_MISMATCH],
      ['a proof that is not bytes', () => verifyTrieProofAt(root, '33', 42 as unknown as string), StorageErrorCode.PROOF_MALFORMED],
    ];
    for (const [name, fn, code] of cases) it(name, () => expect(proofCode(fn)).to.equal(code));

    it('a leaf whose value is not RLP([v]) fails as malformed', () => {
      const leaf: RlpItem = [Uint8Array.of(0x20), utf8('raw')];
      const r = new Uint8Array(createHash('sha3-256').update(rlpEncode(leaf)).digest());
      expect(proofCode(() => verifyTrieProofAt(r, '', rlpEncode([leaf])))).to.equal(StorageErrorCode.PROOF_MALFORMED);
      expect(proofCode(() => verifyTrieProofAt(r, 'x', rlpEncode([leaf])))).to.equal('no error');
    });
  });

  describe('generated proofs (properties)', () => {
    const keyArb = fc.uint8Array({ minLength: 0, maxLength: 4 }).map((k) => k.map((b) => [0x00, 0x01, 0x10, 0x3f, 0x40, 0xff][b % 6]!));
    const opened: KvStore[] = [];
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
    });
    const pairsArb = fc.uniqueArray(fc.tuple(keyArb, fc.uint8Array({ maxLength: 60 })), { selector: ([k]) => hex(k), maxLength: 40 });

    async function build(pairs: [Uint8Array, Uint8Array][]): Promise<{ t: StateTrie; root: Uint8Array; model: Map<string, Uint8Array> }> {
      // a store of its own per run: a state opened on a used store starts from its committed root
      const store = await openMemoryKvStore();
      opened.push(store);
      const t = await StateTrie.open({ name: 'domain', nodeCacheSize: 4 }, { kv: store });
      for (const [k, v] of pairs) t.set(k, v);
      await t.commit();
      return { t, root: t.committedRoot, model: new Map(pairs.map(([k, v]) => [hex(k), v])) };
    }

    function prefixModel(model: Map<string, Uint8Array>, prefix: Uint8Array): [string, Uint8Array][] {
      const p = hex(prefix);
      return [...model].filter(([k]) => k.startsWith(p)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    }

    it('every single-key proof (present and absent keys) verifies to the model value', async () => {
      await fc.assert(
        fc.asyncProperty(pairsArb, fc.array(keyArb, { maxLength: 8 }), async (pairs, extra) => {
          const { t, root, model } = await build(pairs);
          for (const key of [...pairs.map(([k]) => k), ...extra]) {
            const got = verifyTrieProofAt(root, key, t.generateProof(key));
            expect(got).to.deep.equal(model.get(hex(key)) ?? null);
          }
        }),
        { numRuns: 80 },
      );
    });

    it('every prefix proof verifies to exactly the pairs under the prefix', async () => {
      await fc.assert(
        fc.asyncProperty(
          pairsArb,
          fc.array(
            fc.uint8Array({ maxLength: 2 }).map((k) => k.map((b) => [0x00, 0x01, 0x10, 0x3f, 0x40][b % 5]!)),
            { maxLength: 5 },
          ),
          async (pairs, prefixes) => {
            const { t, root, model } = await build(pairs);
            for (const prefix of [new Uint8Array(0), ...prefixes, ...pairs.slice(0, 3).map(([k]) => k)]) {
              const proof = t.generatePrefixProof(prefix);
              const got = verifyPrefixProofPairs(root, prefix, proof).map(({ key, value }): [string, Uint8Array] => [hex(key), value]);
              expect(got).to.deep.equal(prefixModel(model, prefix));
              const asMap = verifyPrefixProof(root, prefix, proof, { keyEncoding: 'hex' });
              expect([...asMap]).to.deep.equal(got);
            }
          },
        ),
        { numRuns: 80 },
      );
    });

    it('a tampered proof never verifies: flipped byte, dropped node, other key', async () => {
      await fc.assert(
        fc.asyncProperty(pairsArb, keyArb, fc.nat(), fc.nat(), fc.integer({ min: 1, max: 255 }), async (pairs, other, at, drop, mask) => {
          const { t, root, model } = await build(pairs);
          const key = pairs.length > 0 ? pairs[at % pairs.length]![0] : other;
          const kinds: [Uint8Array, (p: Uint8Array) => unknown][] = [
            [t.generateProof(key), (p) => verifyTrieProofAt(root, key, p)],
            [t.generatePrefixProof(key), (p) => verifyPrefixProofPairs(root, key, p)],
          ];
          for (const [proof, verify] of kinds) {
            expect(proofCode(() => verify(proof))).to.equal('no error');
            // flipped byte anywhere
            const flipped = Uint8Array.from(proof);
            flipped[at % flipped.length] ^= mask;
            expect(proofCode(() => verify(flipped))).to.not.equal('no error');
            // one node dropped
            const nodes = rlpDecode(proof) as RlpItem[];
            const dropped = rlpEncode(nodes.filter((_, i) => i !== drop % nodes.length));
            expect(proofCode(() => verify(dropped))).to.be.oneOf([StorageErrorCode.PROOF_INCOMPLETE, StorageErrorCode.PROOF_ROOT_MISMATCH]);
          }
          // the proof of one key, asked about another: fails, or tells the truth about the other key
          const proof = t.generateProof(key);
          let answer: Uint8Array | null | 'failed';
          try {
            answer = verifyTrieProofAt(root, other, proof);
          } catch (e) {
            expect(e).to.be.instanceOf(ProofError);
            answer = 'failed';
          }
          if (answer !== 'failed') expect(answer).to.deep.equal(model.get(hex(other)) ?? null);
          // and a prefix proof asked about another prefix: fails, or gives the true set
          let set: [string, Uint8Array][] | 'failed';
          try {
            set = verifyPrefixProofPairs(root, other, t.generatePrefixProof(key)).map(({ key: k, value }): [string, Uint8Array] => [hex(k), value]);
          } catch (e) {
            expect(e).to.be.instanceOf(ProofError);
            set = 'failed';
          }
          if (set !== 'failed') expect(set).to.deep.equal(prefixModel(model, other));
        }),
        { numRuns: 120 },
      );
    });

    it('proofs against an old root after later commits, and against an uncommitted head', async () => {
      const t = await StateTrie.open({ name: 'domain' }, { kv });
      t.set('did:1', utf8('first'));
      await t.commit();
      const r1 = t.committedRoot;
      t.set('did:1', utf8('second'));
      t.set('did:2', utf8('other'));
      await t.commit();
      t.set('did:3', utf8('pending'));
      const head = t.headRoot;
      expect(verifyTrieProofAt(r1, 'did:1', t.generateProof('did:1', r1))).to.deep.equal(utf8('first'));
      expect(verifyTrieProofAt(r1, 'did:2', t.generateProof('did:2', r1))).to.equal(null);
      expect(verifyTrieProofAt(t.committedRoot, 'did:1', t.generateProof('did:1'))).to.deep.equal(utf8('second'));
      expect(verifyTrieProofAt(t.committedRoot, 'did:3', t.generateProof('did:3'))).to.equal(null);
      expect(verifyTrieProofAt(head, 'did:3', t.generateProof('did:3', head))).to.deep.equal(utf8('pending'));
      const all = verifyPrefixProof(head, 'did:', t.generatePrefixProof('did:', head));
      expect([...all.keys()]).to.deep.equal(['did:1', 'did:2', 'did:3']);
      expect(all.get('did:1')).to.deep.equal(utf8('second'));
      // the proof of the committed root does not verify against the head root
      expect(proofCode(() => verifyTrieProofAt(head, 'did:1', t.generateProof('did:1')))).to.equal(StorageErrorCode.PROOF_ROOT_MISMATCH);
    });

    it('a prefix proof missing a subtrie node fails as incomplete; non-UTF-8 keys need hex', async () => {
      const t = await StateTrie.open({ name: 'domain' }, { kv });
      for (let i = 0; i < 20; i++) t.set(`5:reg:${i}`, new Uint8Array(40).fill(i));
      t.set(Uint8Array.of(0x35, 0x3a, 0xff), utf8('binary'));
      await t.commit();
      const root = t.committedRoot;
      const full = t.generatePrefixProof('5:');
      expect(verifyPrefixProof(root, '5:reg:', full).size).to.equal(20);
      const nodes = rlpDecode(full) as RlpItem[];
      expect(nodes.length).to.be.greaterThan(2);
      const partial = rlpEncode(nodes.slice(1));
      expect(proofCode(() => verifyPrefixProof(root, '5:', partial))).to.equal(StorageErrorCode.PROOF_INCOMPLETE);
      // the single-key proof of one entry is no proof of the whole prefix
      expect(proofCode(() => verifyPrefixProof(root, '5:', t.generateProof('5:reg:3')))).to.equal(StorageErrorCode.PROOF_INCOMPLETE);
      expect(proofCode(() => verifyPrefixProof(root, '5:', full))).to.equal(StorageErrorCode.PROOF_KEY_NOT_UTF8);
      expect(verifyPrefixProof(root, '5:', full, { keyEncoding: 'hex' }).get('353aff')).to.deep.equal(utf8('binary'));
    });
  });
});
