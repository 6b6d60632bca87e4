// The trie proofs a client verified last are remembered by their text (ProvenValues): a proof read again answers as
// verifyTrieProof does, for the exact root and key it was verified with only; any other root, key or proof text is
// walked again, so a tampered, re-rooted or re-keyed proof is refused with the code it gets without the memory.
import { expect } from 'chai';
import fc from 'fast-check';
import { b58encode, b64decode, b64encode } from '@quire/common';
import { rlpDecode, rlpEncode, type RlpItem } from '@quire/storage';
import { encodeNymRecord, nymKey, type NymRecord } from '@quire/requests';
import { verifyTrieProof } from '../../src/index.js';
import { PROVEN_MAX_PROOF_CHARS, ProvenValues } from '../../src/verify/proofs.js';
import { codeOf, stateProof, stateWith } from './fixtures.js';

const TS = 1_700_000_000;
const DESTS = ['VsKV7grR1BUE29mG2Fm2kX', 'Th7MpTaRZVRYnPiabds81Y', 'EbP4aYNeTHL6q385GuVpRV', '4cU41vWW82ArfxJxHkzXPG'];
const ABSENT = 'V4SGRU86Z58d6TV7PBUe6f';
const rec = (i: number): NymRecord => ({ identifier: 'V4SGRU86Z58d6TV7PBUe6f', role: '101', verkey: '~CoRER63DVYnWZtK8uAzNbx', seqNo: 40 + i, txnTime: TS });

interface Case {
  rootHash: string;
  key: Uint8Array | string;
  proofNodes: string;
}

/** verifyTrieProof's answer or error code, as text */
function outcome(verify: (c: Case) => Uint8Array | null, c: Case): string {
  const code = codeOf(() => verify(c));
  if (code !== undefined) return `error ${code}`;
  const v = verify(c);
  return v === null ? 'absent' : b64encode(v);
}

async function proofs(): Promise<Case[]> {
  const trie = await stateWith(DESTS.map((d, i) => [nymKey(d), encodeNymRecord(rec(i))]));
  return [...DESTS, ABSENT].map((d) => {
    const sp = stateProof(trie, nymKey(d), 1, TS) as { root_hash: string; proof_nodes: string };
    return { rootHash: sp.root_hash, key: nymKey(d), proofNodes: sp.proof_nodes };
  });
}

describe('ProvenValues: the trie proofs verified last', () => {
  it('answers as verifyTrieProof for genuine, tampered, re-keyed and re-rooted proofs, after the genuine ones were kept', async () => {
    const all = await proofs();
    const memo = new ProvenValues(16);
    const direct = (c: Case): Uint8Array | null => verifyTrieProof(c);
    const kept = (c: Case): Uint8Array | null => memo.verify(c);
    for (const c of all) expect(outcome(kept, c)).to.equal(outcome(direct, c));
    expect(memo.size).to.equal(all.length);
    const otherRoot = b58encode(new Uint8Array(32).fill(7));
    await fc.assert(
      fc.property(fc.nat(), fc.nat(), fc.nat(), fc.integer({ min: 1, max: 255 }), (which, other, at, mask) => {
        const c = all[which % all.length]!;
        const o = all[other % all.length]!;
        const bytes = b64decode(c.proofNodes);
        const flipped = Uint8Array.from(bytes);
        flipped[at % flipped.length] ^= mask;
        const nodes = rlpDecode(bytes) as RlpItem[];
        const dropped = rlpEncode(nodes.filter((_, i) => i !== at % nodes.length));
        const variants: Case[] = [
          c,
          { ...c, proofNodes: b64encode(flipped) },
          { ...c, proofNodes: b64encode(dropped) },
          // the same proof text for another key or root than it was verified with
          { ...c, key: o.key },
          { ...c, key: typeof o.key === 'string' ? new TextEncoder().encode(o.key) : new TextDecoder().decode(o.key) },
          { ...c, rootHash: otherRoot },
          { ...c, rootHash: o.rootHash.slice(1) },
        ];
        for (const v of variants) expect(outcome(kept, v), JSON.stringify(v)).to.equal(outcome(direct, v));
      }),
      { numRuns: 200 },
    );
  });

  it('keeps a key given as bytes apart from the same text given as a string only when their bytes differ', async () => {
    const [c] = await proofs();
    const memo = new ProvenValues();
    const key = typeof c!.key === 'string' ? new TextEncoder().encode(c!.key) : c!.key;
    const asBytes = { ...c!, key };
    expect(outcome((x) => memo.verify(x), c!)).to.equal(outcome((x) => verifyTrieProof(x), asBytes));
    expect(outcome((x) => memo.verify(x), asBytes)).to.equal(outcome((x) => verifyTrieProof(x), asBytes));
  });

  it('keeps at most its bound of entries, no proof longer than PROVEN_MAX_PROOF_CHARS and no failed proof', async () => {
    const all = await proofs();
    const memo = new ProvenValues(2);
    for (const c of all) memo.verify(c);
    expect(memo.size).to.equal(2);
    memo.clear();
    const c = all[0]!;
    const bad = { ...c, proofNodes: b64encode(Uint8Array.from(b64decode(c.proofNodes), (b, i) => (i === 3 ? b ^ 1 : b))) };
    expect(codeOf(() => memo.verify(bad))).to.not.equal(undefined);
    expect(memo.size).to.equal(0);
    // a proof padded with a node of its own past the bound is verified (or refused) but not kept
    const nodes = rlpDecode(b64decode(c.proofNodes)) as RlpItem[];
    const padded = { ...c, proofNodes: b64encode(rlpEncode([...nodes, rlpEncode([new Uint8Array(PROVEN_MAX_PROOF_CHARS)])])) };
    expect(outcome((x) => memo.verify(x), padded)).to.equal(outcome((x) => verifyTrieProof(x), padded));
    expect(memo.size).to.equal(0);
  });

  it('hands out a value the next reads of the proof do not see changed by the first caller', async () => {
    const [c] = await proofs();
    const memo = new ProvenValues();
    const first = memo.verify(c!);
    expect(first).to.not.equal(null);
    const expected = b64encode(first!);
    first!.fill(0);
    expect(b64encode(memo.verify(c!)!)).to.equal(expected);
  });
});
