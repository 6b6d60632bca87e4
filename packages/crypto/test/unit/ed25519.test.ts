import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import fc from 'fast-check';
import { b58decode, resolveVerkey } from '@quire/common';
import {
  CryptoError,
  CryptoErrorCode,
  Ed25519Signer,
  Ed25519Verifier,
  ed25519KeyPairFromSeed,
  ed25519Sign,
  ed25519Verify,
  ed25519VerifyPortable,
  ed25519VerifyPortableAsync,
} from '../../src/index.js';

interface Identity {
  name: string;
  seed_ascii: string;
  seed_hex: string;
  verkey_hex: string;
  verkey_base58: string;
  did: string;
  abbreviated_verkey: string;
}
const identities = (JSON.parse(readFileSync(new URL('../../../../test/vectors/identities.json', import.meta.url), 'utf8')) as { identities: Identity[] })
  .identities;

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('ed25519', () => {
  describe('identities.json vectors (seed -> verkey -> DID -> abbreviated verkey)', () => {
    for (const id of identities) {
      it(id.name, () => {
        const signer = Ed25519Signer.fromSeed(id.seed_ascii);
        expect(Buffer.from(signer.publicKey).toString('hex')).to.equal(id.verkey_hex);
        expect(signer.fullVerkey).to.equal(id.verkey_base58);
        expect(signer.did).to.equal(id.did);
        expect(signer.verkey).to.equal(id.abbreviated_verkey);
        // the same key from raw seed bytes
        const fromHex = Ed25519Signer.fromSeed(new Uint8Array(Buffer.from(id.seed_hex, 'hex')));
        expect(fromHex.fullVerkey).to.equal(id.verkey_base58);
        // DID + abbreviated verkey resolve back to the full key
        expect(Buffer.from(resolveVerkey(signer.did, signer.verkey)!).toString('hex')).to.equal(id.verkey_hex);
      });
    }
  });

  it('node verkeys of the standard development pool (formats 2.3)', () => {
    const expected = [
      'Gw6pDLhcBcoQesN72qfotTgFa7cbuqZpkX3Xo6pLhPhv',
      '8ECVSk179mjsjKRLWiQtssMLgp6EPhWXtaYyStWPSGAb',
      'DKVxG2fXXTU8yT5N7hGEbXB3dfdAnYv1JczDUHpmDxya',
      '4PS3EDQ3dW1tci1Bp6543CfuuebjFrg36kLAUcskGfaA',
    ];
    expected.forEach((vk, i) => expect(Ed25519Signer.fromSeed(`Node${i + 1}`.padStart(32, '0')).fullVerkey).to.equal(vk));
  });

  it('rejects seeds that are not 32 bytes with a stable code', () => {
    for (const bad of [new Uint8Array(31), new Uint8Array(33), 'short seed']) {
      expect(() => Ed25519Signer.fromSeed(bad))
        .to.throw(CryptoError)
        .with.property('code', CryptoErrorCode.ED25519_SEED_LENGTH);
    }
    expect(() => ed25519KeyPairFromSeed(new Uint8Array(0))).to.throw(CryptoError);
  });

  it('RFC 8032 test vector 1 (empty message)', () => {
    const seed = new Uint8Array(Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex'));
    const pair = ed25519KeyPairFromSeed(seed);
    expect(Buffer.from(pair.publicKey).toString('hex')).to.equal('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
    const sig = ed25519Sign(pair.privateKeyObject, new Uint8Array(0));
    expect(Buffer.from(sig).toString('hex')).to.equal(
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
    );
  });

  it('sign/verify round trips; tampered message, signature or key fail', () => {
    const signer = Ed25519Signer.fromSeed('000000000000000000000000Trustee1');
    const other = Ed25519Signer.fromSeed('000000000000000000000000Steward1');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(), (msg, pos) => {
        const sig = signer.sign(msg);
        expect(sig.length).to.equal(64);
        expect(ed25519Verify(signer.publicKey, msg, sig)).to.equal(true);
        const badSig = Uint8Array.from(sig);
        badSig[pos % 64]! ^= 1 << (pos % 8);
        expect(ed25519Verify(signer.publicKey, msg, badSig)).to.equal(false);
        expect(ed25519Verify(other.publicKey, msg, sig)).to.equal(false);
        if (msg.length > 0) {
          const badMsg = Uint8Array.from(msg);
          badMsg[pos % msg.length]! ^= 1;
          expect(ed25519Verify(signer.publicKey, badMsg, sig)).to.equal(false);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('signs strings as UTF-8 and base58 signatures decode to the same bytes', () => {
    const signer = Ed25519Signer.fromSeed('000000000000000000000000Trustee1');
    const text = 'identifier:V4SGRU86Z58d6TV7PBUe6f|operation:dest:VsKV7grR1BUE29mG2Fm2kX|type:1|reqId:1';
    expect(ed25519Verify(signer.publicKey, enc(text), signer.sign(text))).to.equal(true);
    expect(Buffer.from(b58decode(signer.signBase58(text))).equals(Buffer.from(signer.sign(text)))).to.equal(true);
  });

  it('never throws on malformed untrusted input', () => {
    const signer = Ed25519Signer.fromSeed('000000000000000000000000Trustee1');
    const msg = enc('hello');
    const sig = signer.sign(msg);
    const cases: [unknown, unknown, unknown][] = [
      [new Uint8Array(31), msg, sig],
      [new Uint8Array(33), msg, sig],
      [signer.publicKey, msg, new Uint8Array(63)],
      [signer.publicKey, msg, new Uint8Array(65)],
      [new Uint8Array(32).fill(0xff), msg, sig], // not a point encoding
      [signer.publicKey, msg, new Uint8Array(64).fill(0xff)], // S >= L
      ['not bytes', msg, sig],
      [signer.publicKey, 'not bytes', sig],
      [null, null, null],
    ];
    for (const [pk, m, s] of cases) {
      expect(ed25519Verify(pk as Uint8Array, m as Uint8Array, s as Uint8Array)).to.equal(false);
      expect(ed25519VerifyPortable(pk as Uint8Array, m as Uint8Array, s as Uint8Array)).to.equal(false);
    }
  });

  it('native and @noble/ed25519 (zip215: false) agree on valid and tampered signatures', async () => {
    const signer = Ed25519Signer.fromSeed('000000000000000000000000Steward2');
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), fc.nat(), fc.boolean(), async (msg, pos, tamper) => {
        const sig = signer.sign(msg);
        if (tamper) sig[pos % 64]! ^= 1 << (pos % 8);
        const native = ed25519Verify(signer.publicKey, msg, sig);
        expect(native).to.equal(!tamper);
        expect(ed25519VerifyPortable(signer.publicKey, msg, sig)).to.equal(native);
        expect(await ed25519VerifyPortableAsync(signer.publicKey, msg, sig)).to.equal(native);
      }),
      { numRuns: 40 },
    );
  });

  it('caches imported public keys in a bounded LRU', () => {
    const verifier = new Ed25519Verifier({ cacheSize: 2 });
    const signers = ['Trustee1', 'Steward1', 'Steward2'].map((n) => Ed25519Signer.fromSeed(n.padStart(32, '0')));
    const msg = enc('m');
    for (const s of signers) expect(verifier.verify(s.publicKey, msg, s.sign(msg))).to.equal(true);
    expect(verifier.cachedKeys).to.equal(2);
    // a key evicted from the cache still verifies (it is re-imported)
    expect(verifier.verify(signers[0]!.publicKey, msg, signers[0]!.sign(msg))).to.equal(true);
    expect(verifier.publicKeyObject(signers[0]!.publicKey)).to.equal(verifier.publicKeyObject(signers[0]!.publicKey));
    expect(() => verifier.publicKeyObject(new Uint8Array(5)))
      .to.throw(CryptoError)
      .with.property('code', CryptoErrorCode.ED25519_PUBLIC_KEY_LENGTH);
  });

  it('random signers produce distinct keys that verify', () => {
    const a = Ed25519Signer.generate();
    const b = Ed25519Signer.generate();
    expect(a.fullVerkey).to.not.equal(b.fullVerkey);
    expect(ed25519Verify(a.publicKey, enc('x'), a.sign('x'))).to.equal(true);
  });
});
