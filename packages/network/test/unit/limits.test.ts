import { expect } from 'chai';
import fc from 'fast-check';
import { publicKeyFromRaw } from '@libp2p/crypto/keys';
import { peerIdFromPublicKey } from '@libp2p/peer-id';
import { b58encode, peerIdOfNodeDest } from '@quire/common';
import {
  ClientRefusalCode,
  ClientWireError,
  ClientWireErrorCode,
  EnvelopeKind,
  NetworkError,
  NetworkErrorCode,
  TokenBucket,
  decodeEnvelope,
  decodeErrorPayload,
  encodeEnvelope,
  encodeErrorPayload,
  peerIdFromSeed,
  peerIdFromVerkey,
} from '../../src/index.js';

describe('token bucket', () => {
  it('allows the burst, then the rate', () => {
    let now = 0;
    const b = new TokenBucket(10, 5, () => now);
    for (let i = 0; i < 5; i++) expect(b.take()).to.equal(true);
    expect(b.take()).to.equal(false);
    now += 100; // 10/s -> one token per 100 ms
    expect(b.take()).to.equal(true);
    expect(b.take()).to.equal(false);
    now += 10_000;
    expect(b.available).to.equal(5);
  });
});

describe('client envelopes', () => {
  it('round-trip kind, id and payload', () => {
    const e = encodeEnvelope(EnvelopeKind.REQUEST, 300, Uint8Array.of(1, 2, 3));
    expect([...e.subarray(0, 3)]).to.deep.equal([1, 0xac, 0x02]);
    const d = decodeEnvelope(e);
    expect(d.kind).to.equal(EnvelopeKind.REQUEST);
    expect(d.id).to.equal(300);
    expect([...d.payload]).to.deep.equal([1, 2, 3]);
  });

  it('reject unknown kinds and truncated ids with MALFORMED_ENVELOPE', () => {
    for (const bad of [Uint8Array.of(), Uint8Array.of(0), Uint8Array.of(9, 1), Uint8Array.of(1), Uint8Array.of(1, 0x80)]) {
      try {
        decodeEnvelope(bad);
        expect.fail('accepted');
      } catch (err) {
        expect(err).to.be.instanceOf(ClientWireError);
        expect((err as ClientWireError).code).to.equal(ClientWireErrorCode.MALFORMED_ENVELOPE);
      }
    }
  });

  it('error payloads carry code and reason', () => {
    expect(decodeErrorPayload(encodeErrorPayload(ClientRefusalCode.RATE_LIMITED, 'rate limited'))).to.deep.equal({
      code: 'RATE_LIMITED',
      reason: 'rate limited',
    });
    expect(decodeErrorPayload(Uint8Array.of(0xff)).code).to.equal(ClientRefusalCode.MALFORMED_ENVELOPE);
  });
});

describe('identity', () => {
  it('derives the PeerId of Node1 from its verkey alone, equal to the one from its seed', async () => {
    const fromDest = peerIdFromVerkey('Gw6pDLhcBcoQesN72qfotTgFa7cbuqZpkX3Xo6pLhPhv');
    expect(fromDest).to.equal('12D3KooWRkTyxUHKNX4u4ksXfSR9fFm64SfEwXeJi7QZB5yEbLRr');
    expect(await peerIdFromSeed(new TextEncoder().encode('000000000000000000000000000Node1'))).to.equal(fromDest);
  });

  it("common's rule (shared with the client SDK) gives libp2p's own PeerId of every 32-byte key", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (raw) => {
        const dest = b58encode(raw);
        expect(peerIdOfNodeDest(dest)).to.equal(peerIdFromPublicKey(publicKeyFromRaw(raw)).toString());
        expect(peerIdFromVerkey(dest)).to.equal(peerIdOfNodeDest(dest));
      }),
      { numRuns: 200 },
    );
  });

  it('rejects verkeys that are not base58 of 32 bytes', () => {
    for (const bad of ['', '0OIl', 'Gw6pDLhcBcoQesN72qfotT', 'Gw6pDLhcBcoQesN72qfotTgFa7cbuqZpkX3Xo6pLhPhvGw6p']) {
      try {
        peerIdFromVerkey(bad);
        expect.fail(`accepted ${bad}`);
      } catch (err) {
        expect((err as NetworkError).code).to.equal(NetworkErrorCode.INVALID_VERKEY);
      }
    }
  });

  it('rejects seeds that are not 32 bytes', async () => {
    try {
      await peerIdFromSeed(new Uint8Array(31));
      expect.fail('accepted');
    } catch (err) {
      expect((err as NetworkError).code).to.equal(NetworkErrorCode.INVALID_SEED);
    }
  });
});
