// The read path's replies (client-replies.ts, #16).
import { expect } from 'chai';
import fc from 'fast-check';
import { b58encode, parseJson, setReceivedKeys, stringifyJson, type MultiSignature } from '@quire/common';
import { SIGNED_PROOFS, attachMultiSignatures, encodeReadReply, encodeReply, rootText, signedStateProof, type ReplyStores } from '../../src/client-replies.js';

describe('rootText (the base58 of read roots, remembered)', () => {
  it('is b58encode of the root for any sequence of roots, repeated or not, and keeps no alias of the bytes given', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 60 }), fc.uint8Array({ minLength: 32, maxLength: 32 }), (picks, seed) => {
        const roots = Array.from({ length: 7 }, (_, i) => seed.map((b) => (b + i * 37) & 0xff));
        for (const i of picks) {
          const r = roots[i]!.slice();
          expect(rootText(r)).to.equal(b58encode(roots[i]!));
          r.fill(0); // a caller that reuses its buffer does not change what is remembered
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("signedStateProof (a read's state proof written once per proof, root and multi-signature)", () => {
  const msOf = (root: string, sig: string): MultiSignature => ({
    signature: sig,
    participants: ['Node1', 'Node2', 'Node3'],
    value: { ledger_id: 1, pool_state_root_hash: 'P', state_root_hash: root, timestamp: 1_700_000_000, txn_root_hash: 'T' },
  });
  const reply = (sp: unknown): string => new TextDecoder().decode(encodeReply({ op: 'REPLY', result: { type: '105', data: null, state_proof: sp } }));

  it('the reply is written as with {...proof, multi_signature} for any sequence of proofs, roots and multi-signatures', () => {
    const roots = ['R1', 'R2', 'R3'];
    const sigs = roots.map((r) => [msOf(r, 'S1'), msOf(r, 'S2')]);
    const texts = ['AAAA', 'BBBB', 'A'.repeat(700), 'C'.repeat(20_000)];
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(2), fc.nat(1), fc.nat(3), fc.nat(2)), { minLength: 1, maxLength: 60 }), (picks) => {
        for (const [r, m, t, shape] of picks) {
          // a fresh proof object as the read context gives, another key order, or one with a key more
          const proof: Record<string, unknown> =
            shape === 0
              ? { root_hash: roots[r], proof_nodes: texts[t] }
              : shape === 1
                ? { proof_nodes: texts[t], root_hash: roots[r] }
                : { root_hash: roots[r], proof_nodes: texts[t], extra: r };
          const ms = sigs[r]![m]!;
          const want = reply({ ...proof, multi_signature: ms });
          expect(reply(signedStateProof({ ...proof }, ms))).to.equal(want);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('answers a different multi-signature object of the same root with its own text, and a parsed proof as before', () => {
    const a = msOf('R', 'S1');
    const b = msOf('R', 'S2');
    signedStateProof({ root_hash: 'R', proof_nodes: 'XYZ' }, a);
    expect(stringifyJson(signedStateProof({ root_hash: 'R', proof_nodes: 'XYZ' }, b))).to.include('"S2"');
    signedStateProof({ root_hash: 'R', proof_nodes: 'XYZ' }, a);
    expect(stringifyJson(signedStateProof({ root_hash: 'R2', proof_nodes: 'XYZ' }, a))).to.include('"R2"');
    expect(parseJson(stringifyJson(signedStateProof({ root_hash: 'R', proof_nodes: 'XYZ' }, a)))).to.deep.equal({
      root_hash: 'R',
      proof_nodes: 'XYZ',
      multi_signature: a,
    });
    expect(stringifyJson(signedStateProof({ root_hash: 'R', proof_nodes: 'XYZ' }, b))).to.include('"S2"');
    const ordered = { root_hash: 'R', proof_nodes: 'XYZ' };
    setReceivedKeys(ordered, ['proof_nodes', 'root_hash']);
    expect(stringifyJson(signedStateProof(ordered, a))).to.equal(stringifyJson({ ...ordered, multi_signature: a }));
  });

  it('stays right past the number of proofs it keeps', () => {
    const ms = msOf('R', 'S');
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < SIGNED_PROOFS + 10; i++) {
        const proof = { root_hash: 'R', proof_nodes: `N${i}` };
        expect(reply(signedStateProof(proof, ms))).to.equal(reply({ ...proof, multi_signature: ms }));
      }
  });
});

describe('encodeReadReply', () => {
  it('writes the bytes encodeReply writes after attachMultiSignatures, read after read of the same root', () => {
    const root = new Uint8Array(32).fill(5);
    const ms: MultiSignature = {
      signature: 'S',
      participants: ['Node1', 'Node2', 'Node3'],
      value: { ledger_id: 1, pool_state_root_hash: 'P', state_root_hash: b58encode(root), timestamp: 1, txn_root_hash: 'T' },
    };
    const stored = new Map([[b58encode(root), ms]]);
    const stores = { bls: { getSync: (r: string) => stored.get(r) } } as unknown as ReplyStores;
    const proof = { root_hash: b58encode(root), proof_nodes: 'Q'.repeat(900) };
    for (const dest of ['A', 'B', 'A']) {
      const reply = { result: { type: '105', dest, reqId: 1, data: null, state_proof: { ...proof } }, stateRoot: { ledgerId: 1 as const, root } };
      const old = { ...reply.result };
      attachMultiSignatures(stores, old, reply, '105', { type: '105', dest });
      expect(old.state_proof).to.deep.equal({ ...proof, multi_signature: ms });
      expect(Buffer.from(encodeReadReply(stores, reply, '105', { type: '105', dest })).toString()).to.equal(
        Buffer.from(encodeReply({ op: 'REPLY', result: old })).toString(),
      );
      // the reply's result is left as it was
      expect(reply.result.state_proof).to.deep.equal(proof);
    }
  });

  it('writes the same bytes for any result around the state proof (other fields, their order, non-ASCII text)', () => {
    const root = new Uint8Array(32).fill(6);
    const ms: MultiSignature = {
      signature: 'S',
      participants: ['Node1', 'Node2', 'Node3'],
      value: { ledger_id: 1, pool_state_root_hash: 'P', state_root_hash: b58encode(root), timestamp: 1, txn_root_hash: 'T' },
    };
    const stores = { bls: { getSync: (r: string) => (r === b58encode(root) ? ms : undefined) } } as unknown as ReplyStores;
    const proof = { root_hash: b58encode(root), proof_nodes: 'Z'.repeat(700) };
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer(), fc.constant(undefined), fc.constant(null))), fc.nat(), (fields, at) => {
        const entries: [string, unknown][] = Object.entries(fields);
        entries.splice(at % (entries.length + 1), 0, ['state_proof', { ...proof }]);
        const result = Object.fromEntries(entries) as Record<string, unknown>;
        const reply = { result, stateRoot: { ledgerId: 1 as const, root } };
        const old = { ...result };
        attachMultiSignatures(stores, old, reply, '105', {});
        expect(Buffer.from(encodeReadReply(stores, reply, '105', {})).toString('hex')).to.equal(
          Buffer.from(encodeReply({ op: 'REPLY', result: old })).toString('hex'),
        );
      }),
      { numRuns: 300 },
    );
  });
});
