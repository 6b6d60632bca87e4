// The libp2p key of a seed: the public key is the seed's Ed25519 key, so the PeerId a host authenticates with is the
// one every node computes from NODE.dest alone (common's peerIdOfNodeDest).
import { expect } from 'chai';
import fc from 'fast-check';
import { b58encode, peerIdOfNodeDest } from '@quire/common';
import { expectCodeAsync } from '@quire/testing';
import { CryptoError, CryptoErrorCode, ed25519PublicKeyFromSeed, libp2pPrivateKeyFromSeed } from '../../src/index.js';

describe('libp2pPrivateKeyFromSeed', () => {
  it("is the seed's Ed25519 key, its PeerId common's PeerId of that dest (Node1's known PeerId)", async () => {
    const key = await libp2pPrivateKeyFromSeed(new TextEncoder().encode('000000000000000000000000000Node1'));
    expect(key.publicKey.toString()).to.equal(peerIdOfNodeDest('Gw6pDLhcBcoQesN72qfotTgFa7cbuqZpkX3Xo6pLhPhv'));
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 32, maxLength: 32 }), async (seed) => {
        const k = await libp2pPrivateKeyFromSeed(seed);
        expect(k.type).to.equal('Ed25519');
        expect([...k.publicKey.raw]).to.deep.equal([...ed25519PublicKeyFromSeed(seed)]);
        expect(k.publicKey.toString()).to.equal(peerIdOfNodeDest(b58encode(ed25519PublicKeyFromSeed(seed))));
        expect((await libp2pPrivateKeyFromSeed(Uint8Array.from(seed))).equals(k)).to.equal(true);
      }),
      { numRuns: 50 },
    );
  });

  it('refuses a seed that is not 32 bytes with ED25519_SEED_LENGTH and its length', async () => {
    for (const [bad, length] of [
      [new Uint8Array(31), 31],
      [new Uint8Array(33), 33],
      ['000000000000000000000000000Node1', -1],
    ] as const) {
      const e = await expectCodeAsync(libp2pPrivateKeyFromSeed(bad as Uint8Array), CryptoError, CryptoErrorCode.ED25519_SEED_LENGTH);
      expect(e.data.length).to.equal(length);
    }
  });
});
