import { expect } from 'chai';
import { SecretKey } from '@chainsafe/blst';
import { b58encode } from '@quire/common';
import {
  BlsSecretKey,
  CryptoError,
  CryptoErrorCode,
  blsAggregateSignatures,
  blsKeyFromSeed,
  blsKeygen,
  blsProofOfPossession,
  blsPublicKeyFromBytes,
  blsSign,
  blsSignatureFromBytes,
  blsVerify,
  blsVerifyAggregate,
  blsVerifyAggregateBatch,
  blsVerifyPop,
  decodeBlsPublicKey,
  decodeBlsSignature,
} from '../../src/index.js';
import { expectCode } from '@quire/testing';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const nodeSeed = (i: number): string => `Node${i}`.padStart(32, '0');
const keys = [1, 2, 3, 4].map((i) => blsKeyFromSeed(nodeSeed(i)));
const msg = enc('{"ledger_id":1,"state_root_hash":"H2bJv6zHfGgTHp6XNchN7gVsZvMvXUojdb5CJ55Fo8y5"} as msgpack');

describe('bls', () => {
  it('derives secret keys from seeds with IETF KeyGen, as blst keygen does', () => {
    for (let i = 1; i <= 4; i++) {
      const ikm = enc(nodeSeed(i));
      expect(Buffer.from(blsKeygen(ikm)).toString('hex')).to.equal(Buffer.from(SecretKey.fromKeygen(ikm).toBytes()).toString('hex'));
    }
    // fixed value so a change of derivation cannot pass unnoticed
    expect(Buffer.from(keys[0]!.toBytes()).toString('hex')).to.equal('739b5f67a587f37f94fa38c4d06ddd5544cb2f67d8c4c8c1201c3c3d570d575a');
    expect(keys[0]!.publicKey.length).to.equal(48);
    expect(() => blsKeygen(new Uint8Array(31)))
      .to.throw(CryptoError)
      .with.property('code', CryptoErrorCode.BLS_SEED_LENGTH);
  });

  it('round-trips secret keys and rejects invalid scalars', () => {
    const sk = BlsSecretKey.fromBytes(keys[1]!.toBytes());
    expect(Buffer.from(sk.publicKey).equals(Buffer.from(keys[1]!.publicKey))).to.equal(true);
    expectCode(() => BlsSecretKey.fromBytes(new Uint8Array(32)), CryptoError, CryptoErrorCode.BLS_SECRET_KEY_INVALID);
    expectCode(() => BlsSecretKey.fromBytes(new Uint8Array(32).fill(0xff)), CryptoError, CryptoErrorCode.BLS_SECRET_KEY_INVALID);
    expectCode(() => BlsSecretKey.fromBytes(new Uint8Array(31)), CryptoError, CryptoErrorCode.BLS_SECRET_KEY_INVALID);
  });

  it('signs and verifies; a tampered message or signature or another key fails', () => {
    const sig = blsSign(keys[0]!, msg);
    expect(sig.length).to.equal(96);
    expect(blsVerify(keys[0]!.publicKey, msg, sig)).to.equal(true);
    expect(blsVerify(keys[1]!.publicKey, msg, sig)).to.equal(false);
    expect(blsVerify(keys[0]!.publicKey, enc('other'), sig)).to.equal(false);
    const bad = Uint8Array.from(sig);
    bad[50]! ^= 1;
    expect(blsVerify(keys[0]!.publicKey, msg, bad)).to.equal(false);
  });

  it('proof of possession verifies for its own key only', () => {
    const pop = blsProofOfPossession(keys[0]!);
    expect(blsVerifyPop(keys[0]!.publicKey, pop)).to.equal(true);
    expect(blsVerifyPop(keys[1]!.publicKey, pop)).to.equal(false);
    // the PoP is the signature over the 48 compressed public-key bytes (formats 9.1)
    expect(blsVerify(keys[0]!.publicKey, keys[0]!.publicKey, pop)).to.equal(true);
    expect(blsVerifyPop(keys[0]!.publicKey, new Uint8Array(96))).to.equal(false);
  });

  it('aggregates signatures and verifies the aggregate over n public keys', () => {
    const sigs = keys.map((k) => k.sign(msg));
    const agg = blsAggregateSignatures(sigs);
    const pks = keys.map((k) => k.publicKey);
    expect(blsVerifyAggregate(pks, msg, agg)).to.equal(true);
    expect(blsVerifyAggregate([...pks].reverse(), msg, agg)).to.equal(true); // participant order is irrelevant
    // 3 of 4 (n - f)
    const agg3 = blsAggregateSignatures(sigs.slice(0, 3));
    expect(blsVerifyAggregate(pks.slice(0, 3), msg, agg3)).to.equal(true);
    expect(blsVerifyAggregate(pks, msg, agg3)).to.equal(false);
  });

  it('an aggregate checked against a wrong key set or message fails', () => {
    const agg = blsAggregateSignatures(keys.slice(0, 3).map((k) => k.sign(msg)));
    const wrongSet = [keys[0]!, keys[1]!, keys[3]!].map((k) => k.publicKey);
    expect(blsVerifyAggregate(wrongSet, msg, agg)).to.equal(false);
    expect(
      blsVerifyAggregate(
        keys.slice(0, 3).map((k) => k.publicKey),
        enc('x'),
        agg,
      ),
    ).to.equal(false);
    expect(blsVerifyAggregate([], msg, agg)).to.equal(false);
    const stranger = BlsSecretKey.fromSeed('0000000000000000000000000Stranger');
    const forged = blsAggregateSignatures([keys[0]!.sign(msg), keys[1]!.sign(msg), stranger.sign(msg)]);
    expect(
      blsVerifyAggregate(
        keys.slice(0, 3).map((k) => k.publicKey),
        msg,
        forged,
      ),
    ).to.equal(false);
  });

  it('decodes keys and signatures strictly with stable codes', () => {
    expectCode(() => blsPublicKeyFromBytes(new Uint8Array(47)), CryptoError, CryptoErrorCode.BLS_PUBLIC_KEY_LENGTH);
    expectCode(() => blsPublicKeyFromBytes(keys[0]!.toBytes()), CryptoError, CryptoErrorCode.BLS_PUBLIC_KEY_LENGTH);
    const identity = new Uint8Array(48);
    identity[0] = 0xc0;
    expectCode(() => blsPublicKeyFromBytes(identity), CryptoError, CryptoErrorCode.BLS_PUBLIC_KEY_INVALID);
    expectCode(() => blsPublicKeyFromBytes(new Uint8Array(48).fill(7)), CryptoError, CryptoErrorCode.BLS_PUBLIC_KEY_INVALID);
    expectCode(() => blsSignatureFromBytes(new Uint8Array(95)), CryptoError, CryptoErrorCode.BLS_SIGNATURE_LENGTH);
    expectCode(() => blsSignatureFromBytes(new Uint8Array(96).fill(7)), CryptoError, CryptoErrorCode.BLS_SIGNATURE_INVALID);
    // uncompressed forms are not accepted where compressed bytes are required
    expectCode(() => blsSignatureFromBytes(new Uint8Array(192)), CryptoError, CryptoErrorCode.BLS_SIGNATURE_LENGTH);
    expectCode(() => blsAggregateSignatures([]), CryptoError, CryptoErrorCode.BLS_AGGREGATE_EMPTY);
    try {
      blsAggregateSignatures([keys[0]!.sign(msg), new Uint8Array(96).fill(7)]);
      expect.fail('aggregate accepted a bad signature');
    } catch (err) {
      expect(err).to.be.instanceOf(CryptoError);
      expect((err as CryptoError).code).to.equal(CryptoErrorCode.BLS_SIGNATURE_INVALID);
      expect((err as CryptoError).data.index).to.equal(1);
    }
  });

  it('decodes base58 blskey and blskey_pop, rejecting 128-byte BN254 keys', () => {
    const pkB58 = b58encode(keys[2]!.publicKey);
    const popB58 = b58encode(keys[2]!.proofOfPossession());
    expect(Buffer.from(decodeBlsPublicKey(pkB58)).equals(Buffer.from(keys[2]!.publicKey))).to.equal(true);
    expect(decodeBlsSignature(popB58).length).to.equal(96);
    const bn254 = b58encode(new Uint8Array(128).fill(3));
    expectCode(() => decodeBlsPublicKey(bn254), CryptoError, CryptoErrorCode.BLS_PUBLIC_KEY_LENGTH);
    expectCode(() => decodeBlsPublicKey('0OIl'), CryptoError, CryptoErrorCode.BASE58_INVALID);
    expectCode(() => decodeBlsSignature('not-base58!'), CryptoError, CryptoErrorCode.BASE58_INVALID);
  });

  it('verification never throws on malformed input', () => {
    const sig = keys[0]!.sign(msg);
    expect(blsVerify(new Uint8Array(48), msg, sig)).to.equal(false);
    expect(blsVerify(keys[0]!.publicKey, msg, new Uint8Array(3))).to.equal(false);
    expect(blsVerify('x' as unknown as Uint8Array, msg, sig)).to.equal(false);
    expect(blsVerifyAggregate([keys[0]!.publicKey, new Uint8Array(48)], msg, sig)).to.equal(false);
    expect(blsVerifyPop(new Uint8Array(10), new Uint8Array(10))).to.equal(false);
  });
});

describe('bls aggregation of already verified signatures', () => {
  it('gives the same aggregate as strict decoding and still checks lengths', () => {
    const sigs = keys.map((k) => k.sign(msg));
    const strict = blsAggregateSignatures(sigs);
    const fast = blsAggregateSignatures(sigs, { verified: true });
    expect(Buffer.from(fast).equals(Buffer.from(strict))).to.equal(true);
    expect(
      blsVerifyAggregate(
        keys.map((k) => k.publicKey),
        msg,
        fast,
      ),
    ).to.equal(true);
    expect(() => blsAggregateSignatures([sigs[0]!, new Uint8Array(95)], { verified: true }))
      .to.throw(CryptoError)
      .with.property('code', CryptoErrorCode.BLS_SIGNATURE_LENGTH);
    // a non-subgroup input slipped in makes the aggregate fail verification
    const junk = new Uint8Array(96).fill(7);
    let agg: Uint8Array | undefined;
    try {
      agg = blsAggregateSignatures([sigs[0]!, junk], { verified: true });
    } catch (e) {
      expect(e).to.be.instanceOf(CryptoError);
    }
    if (agg !== undefined)
      expect(
        blsVerifyAggregate(
          keys.slice(0, 2).map((k) => k.publicKey),
          msg,
          agg,
        ),
      ).to.equal(false);
  });
});

describe('bls: several aggregates verified at once', () => {
  const pks = keys.map((k) => k.publicKey);
  /** aggregates by the first 3 keys, by all 4 and by the last 3, each over its own message */
  const items = [0, 1, 2].map((i) => {
    const m = enc(`multi-signature value ${i}`);
    const signers = i === 0 ? keys.slice(0, 3) : i === 1 ? keys : keys.slice(1);
    return { publicKeys: signers.map((k) => k.publicKey), msg: m, signature: blsAggregateSignatures(signers.map((k) => k.sign(m))) };
  });

  it('true when every aggregate verifies, as each does on its own', () => {
    for (const it of items) expect(blsVerifyAggregate(it.publicKeys, it.msg, it.signature)).to.equal(true);
    expect(blsVerifyAggregateBatch(items)).to.equal(true);
    expect(blsVerifyAggregateBatch(items.slice(1))).to.equal(true);
    expect(blsVerifyAggregateBatch([items[0] ?? items[1]])).to.equal(true);
  });

  it('false when any one does not: another message, signature or key set, or two signatures swapped', () => {
    const [a, b, c] = items as [(typeof items)[0], (typeof items)[0], (typeof items)[0]];
    expect(blsVerifyAggregateBatch([a, { ...b, msg: enc('other') }, c])).to.equal(false);
    expect(blsVerifyAggregateBatch([a, b, { ...c, publicKeys: pks.slice(0, 3) }])).to.equal(false);
    expect(blsVerifyAggregateBatch([{ ...a, signature: b.signature }, { ...b, signature: a.signature }, c])).to.equal(false);
    const bad = Uint8Array.from(c.signature);
    bad[50] ^= 1;
    expect(blsVerifyAggregateBatch([a, b, { ...c, signature: bad }])).to.equal(false);
  });

  it('false, never an exception, on an empty list, an empty key set or malformed bytes', () => {
    const [a, b] = items as [(typeof items)[0], (typeof items)[0]];
    expect(blsVerifyAggregateBatch([])).to.equal(false);
    expect(blsVerifyAggregateBatch([a, { ...b, publicKeys: [] }])).to.equal(false);
    expect(blsVerifyAggregateBatch([a, { ...b, publicKeys: [new Uint8Array(48)] }])).to.equal(false);
    expect(blsVerifyAggregateBatch([a, { ...b, signature: new Uint8Array(95) }])).to.equal(false);
    expect(blsVerifyAggregateBatch([a, { ...b, signature: new Uint8Array(96) }])).to.equal(false);
  });
});
