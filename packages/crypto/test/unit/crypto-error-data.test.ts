// CryptoError's table of each code's data (CryptoErrorData): a `new CryptoError` is checked at compile time to carry
// its code's data (the @ts-expect-error lines fail the tests' typecheck once such a mistake compiles), and every raiser
// reports a length as a number, -1 for a value that is not bytes.
import { expect } from 'chai';
import { expectCode } from '@quire/testing';
import {
  BlsSecretKey,
  CryptoError,
  CryptoErrorCode,
  blsAggregateSignatures,
  blsKeygen,
  blsPublicKeyFromBytes,
  blsSignatureFromBytes,
  ed25519KeyPairFromSeed,
  seedBytes,
} from '../../src/index.js';

describe('CryptoError: data typed per code', () => {
  it('refuses, at compile time, a code without its data or with the data of another code', () => {
    const made: unknown[] = [
      // @ts-expect-error ED25519_SEED_LENGTH requires { length }
      () => new CryptoError(CryptoErrorCode.ED25519_SEED_LENGTH),
      // @ts-expect-error a length is a number, never undefined or text
      () => new CryptoError(CryptoErrorCode.BLS_PUBLIC_KEY_LENGTH, { length: '47' }),
      // @ts-expect-error BLS_SIGNATURE_INVALID carries a reason, not a length
      () => new CryptoError(CryptoErrorCode.BLS_SIGNATURE_INVALID, { length: 95 }),
      // @ts-expect-error BASE58_INVALID names one of the two kinds of text
      () => new CryptoError(CryptoErrorCode.BASE58_INVALID, { what: 'key' }),
      // @ts-expect-error BLS_AGGREGATE_EMPTY carries nothing
      () => new CryptoError(CryptoErrorCode.BLS_AGGREGATE_EMPTY, { length: 0 }),
    ];
    expect(made).to.have.length(5);
  });

  it('reports the length of a value that is not bytes as -1, in the data and the message', () => {
    const notBytes = 'not bytes' as unknown as Uint8Array;
    for (const [fn, code] of [
      [() => ed25519KeyPairFromSeed(notBytes), CryptoErrorCode.ED25519_SEED_LENGTH],
      [() => blsKeygen(notBytes), CryptoErrorCode.BLS_SEED_LENGTH],
      [() => blsPublicKeyFromBytes(notBytes), CryptoErrorCode.BLS_PUBLIC_KEY_LENGTH],
      [() => blsSignatureFromBytes(notBytes), CryptoErrorCode.BLS_SIGNATURE_LENGTH],
      [() => seedBytes(5 as unknown as string), CryptoErrorCode.ED25519_SEED_LENGTH],
    ] as const) {
      const e = expectCode(fn, CryptoError, code, { length: -1 });
      expect(e.message).to.match(/got a value that is not bytes$/);
    }
    expectCode(() => blsKeygen(new Uint8Array(31)), CryptoError, CryptoErrorCode.BLS_SEED_LENGTH, { length: 31 });
  });

  it('names the index of the bad signature of an aggregation, verified or not, and no index otherwise', () => {
    const good = BlsSecretKey.fromSeed('0'.repeat(32)).sign(new Uint8Array([1]));
    for (const verified of [false, true]) {
      const short = expectCode(() => blsAggregateSignatures([good, good.subarray(1)], { verified }), CryptoError, CryptoErrorCode.BLS_SIGNATURE_LENGTH);
      expect(short.data).to.deep.equal({ length: 95, index: 1 });
      const bad = expectCode(
        () => blsAggregateSignatures([good, good, new Uint8Array(96).fill(7)], { verified }),
        CryptoError,
        CryptoErrorCode.BLS_SIGNATURE_INVALID,
      );
      expect(bad.data.index).to.equal(2);
    }
    expect(expectCode(() => blsSignatureFromBytes(new Uint8Array(95)), CryptoError, CryptoErrorCode.BLS_SIGNATURE_LENGTH).data).to.deep.equal({ length: 95 });
  });
});
