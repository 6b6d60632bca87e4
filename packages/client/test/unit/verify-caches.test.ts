// What the read verification remembers between replies (multi-signatures by root, decoded roots, decoded trie
// nodes by hash) never makes it accept a reply it would refuse without them: replies verified again after good ones
// of the same root, with a proof byte changed, a node dropped or another root, are refused as a first reply is.
import { expect } from 'chai';
import fc from 'fast-check';
import { b58encode, b64decode, b64encode, parseJson, stringifyJson } from '@quire/common';
import { ProofNodeCache, rlpDecode, rlpEncode, type RlpItem } from '@quire/storage';
import { encodeNymRecord, nymKey, nymReadData, type NymRecord } from '@quire/requests';
import { ClientErrorCode, MultiSignatureCache, verifyReadReply, verifyTrieProof, buildGetNymRequest } from '../../src/index.js';
import { codeOf, poolLedger, stateProof, stateWith } from './fixtures.js';

const NOW = 1_700_000_300;
const TS = 1_700_000_000;
const pool = poolLedger.blsKeys();
const DESTS = ['VsKV7grR1BUE29mG2Fm2kX', 'Th7MpTaRZVRYnPiabds81Y', 'EbP4aYNeTHL6q385GuVpRV', '4cU41vWW82ArfxJxHkzXPG'];
const rec = (i: number): NymRecord => ({ identifier: 'V4SGRU86Z58d6TV7PBUe6f', role: '101', verkey: '~CoRER63DVYnWZtK8uAzNbx', seqNo: 40 + i, txnTime: TS });

async function replies(): Promise<{ request: ReturnType<typeof buildGetNymRequest>; reply: Record<string, unknown> }[]> {
  const trie = await stateWith(DESTS.map((d, i) => [nymKey(d), encodeNymRecord(rec(i))]));
  return DESTS.map((dest, i) => {
    const request = buildGetNymRequest({ dest, reqId: 7 + i });
    const result = {
      ...request.operation,
      identifier: request.identifier,
      reqId: request.reqId,
      data: nymReadData(rec(i), dest),
      seqNo: 40 + i,
      txnTime: TS,
      state_proof: stateProof(trie, nymKey(dest), 1, TS),
    };
    return { request, reply: parseJson(stringifyJson({ op: 'REPLY', result })) as Record<string, unknown> };
  });
}

const withProof = (reply: Record<string, unknown>, change: Record<string, unknown>): Record<string, unknown> => {
  const result = reply.result as Record<string, unknown>;
  return { op: 'REPLY', result: { ...result, state_proof: { ...(result.state_proof as Record<string, unknown>), ...change } } };
};

describe('read verification: what it remembers between replies', () => {
  it('refuses a tampered proof after good replies of the same root filled the caches, as it refuses it first', async () => {
    const all = await replies();
    const cache = new MultiSignatureCache();
    for (const { request, reply } of all) verifyReadReply({ reply, request, pool, now: NOW, cache });
    await fc.assert(
      fc.property(fc.nat(), fc.nat(), fc.integer({ min: 1, max: 255 }), (which, at, mask) => {
        const { request, reply } = all[which % all.length]!;
        const sp = (reply.result as Record<string, unknown>).state_proof as { proof_nodes: string; root_hash: string };
        const bytes = b64decode(sp.proof_nodes);
        const flipped = Uint8Array.from(bytes);
        flipped[at % flipped.length] ^= mask;
        const nodes = rlpDecode(bytes) as RlpItem[];
        const dropped = rlpEncode(nodes.filter((_, i) => i !== at % nodes.length));
        for (const bad of [flipped, dropped]) {
          const tampered = withProof(reply, { proof_nodes: b64encode(bad) });
          // the code without a multi-signature cache, then with the one that holds this root's multi-signature
          const fresh = codeOf(() => verifyReadReply({ reply: tampered, request, pool, now: NOW }));
          expect(fresh).to.not.equal(undefined);
          expect(codeOf(() => verifyReadReply({ reply: tampered, request, pool, now: NOW, cache }))).to.equal(fresh);
          // both used the process's node cache, which holds this root's nodes: the trie proof alone answers with it as
          // with a cache of its own that holds nothing yet
          const key = nymKey(request.operation.dest as string);
          const trieOutcome = (nodeCache?: ProofNodeCache): string => {
            const code = codeOf(() => verifyTrieProof({ rootHash: sp.root_hash, key, proofNodes: b64encode(bad), nodeCache }));
            if (code !== undefined) return code;
            const v = verifyTrieProof({ rootHash: sp.root_hash, key, proofNodes: b64encode(bad), nodeCache });
            return v === null ? 'absent' : b64encode(v);
          };
          expect(trieOutcome()).to.equal(trieOutcome(new ProofNodeCache()));
        }
        // the genuine reply still verifies
        expect(verifyReadReply({ reply, request, pool, now: NOW, cache }).root).to.equal(sp.root_hash);
      }),
      { numRuns: 150 },
    );
  });

  it('a root remembered from earlier replies does not stand in for another root or a malformed one', async () => {
    const [{ request, reply }] = await replies();
    verifyReadReply({ reply, request, pool, now: NOW });
    const sp = (reply.result as Record<string, unknown>).state_proof as { proof_nodes: string; root_hash: string };
    const other = b58encode(new Uint8Array(32).fill(9));
    expect(codeOf(() => verifyReadReply({ reply: withProof(reply, { root_hash: other }), request, pool, now: NOW }))).to.equal(
      ClientErrorCode.MULTISIG_ROOT_MISMATCH,
    );
    // the trie proof alone, against another root and a root that is not base58 of 32 bytes
    expect(codeOf(() => verifyTrieProof({ rootHash: other, key: nymKey(request.operation.dest as string), proofNodes: sp.proof_nodes }))).to.equal(
      'PROOF_ROOT_MISMATCH',
    );
    for (const bad of [b58encode(new Uint8Array(31).fill(3)), `${sp.root_hash}0`, 'not-base58-0OIl'])
      expect(codeOf(() => verifyTrieProof({ rootHash: bad, key: 'k', proofNodes: sp.proof_nodes }))).to.equal('PROOF_MALFORMED');
  });

  it('a pool of its own cache of nodes answers as the shared one', async () => {
    const all = await replies();
    const own = new ProofNodeCache(2);
    for (const { request, reply } of all) {
      const sp = (reply.result as Record<string, unknown>).state_proof as { proof_nodes: string; root_hash: string };
      const key = nymKey(request.operation.dest as string);
      const shared = verifyTrieProof({ rootHash: sp.root_hash, key, proofNodes: sp.proof_nodes });
      expect(verifyTrieProof({ rootHash: sp.root_hash, key, proofNodes: sp.proof_nodes, nodeCache: own })).to.deep.equal(shared);
      expect(own.size).to.be.at.most(2);
    }
  });
});
