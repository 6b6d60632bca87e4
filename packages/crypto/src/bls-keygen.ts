// IETF BLS KeyGen (draft-irtf-cfrg-bls-signature-04+, section 2.3) with empty key_info, as formats.md
// 9.1 fixes it. Implemented here (node:crypto HKDF) so the derived key does not depend on a backend.
import { createHash, hkdfSync } from 'node:crypto';
import { CryptoError, CryptoErrorCode, byteLengthOf } from './errors.js';

/** Order r of the BLS12-381 prime-order subgroups. */
export const BLS12_381_R = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001n;

const INITIAL_SALT = Buffer.from('BLS-SIG-KEYGEN-SALT-', 'ascii');
const L = 48; // ceil((3 * ceil(log2(r))) / 16)
const KEY_INFO_AND_L = Buffer.from([0x00, L]); // key_info (empty) || I2OSP(L, 2)

/** Derives the 32-byte big-endian BLS secret scalar of `ikm` (at least 32 bytes). */
export function blsKeygen(ikm: Uint8Array): Uint8Array {
  if (!(ikm instanceof Uint8Array) || ikm.length < 32) {
    throw new CryptoError(CryptoErrorCode.BLS_SEED_LENGTH, { length: byteLengthOf(ikm) });
  }
  const ikmWithZero = Buffer.concat([ikm, Buffer.from([0x00])]); // IKM || I2OSP(0, 1)
  let salt: Buffer = INITIAL_SALT;
  for (;;) {
    salt = createHash('sha256').update(salt).digest();
    const okm = Buffer.from(hkdfSync('sha256', ikmWithZero, salt, KEY_INFO_AND_L, L));
    const sk = BigInt('0x' + okm.toString('hex')) % BLS12_381_R;
    if (sk !== 0n) return new Uint8Array(Buffer.from(sk.toString(16).padStart(64, '0'), 'hex'));
  }
}
