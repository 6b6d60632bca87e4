// @quire/crypto: Ed25519 (native on the hot path, portable verifier beside it), DID signers,
// BLS12-381 multi-signatures (blst), and the hashes of @quire/common.
export { CryptoError, CryptoErrorCode, type CryptoErrorData } from './errors.js';
export { LruCache } from './lru.js';
export {
  ED25519_PUBLIC_KEY_LENGTH,
  ED25519_SEED_LENGTH,
  ED25519_SIGNATURE_LENGTH,
  Ed25519Verifier,
  defaultEd25519VerifierOptions,
  ed25519KeyPairFromSeed,
  ed25519PublicKeyFromSeed,
  ed25519RandomSeed,
  ed25519Sign,
  ed25519Verify,
} from './ed25519.js';
export type { Ed25519KeyPair, Ed25519VerifierOptions } from './ed25519.js';
export { ed25519VerifyPortable, ed25519VerifyPortableAsync } from './ed25519-noble.js';
export { Ed25519Signer, seedBytes } from './signer.js';
export { libp2pPrivateKeyFromSeed } from './libp2p-key.js';
export { BLS12_381_R, blsKeygen } from './bls-keygen.js';
export {
  BLS_DST,
  BLS_PUBLIC_KEY_LENGTH,
  BLS_SECRET_KEY_LENGTH,
  BLS_SIGNATURE_LENGTH,
  BlsSecretKey,
  blsAggregateSignatures,
  blsKeyFromSeed,
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
} from './bls.js';
export type { BlsAggregateOptions, BlsAggregateToVerify } from './bls.js';
export { sha256, sha256Hex, sha3_256 } from '@quire/common';
