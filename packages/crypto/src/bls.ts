// BLS12-381 multi-signatures with @chainsafe/blst (formats.md 9.1): public keys in G1 (48 bytes
// compressed), signatures in G2 (96 bytes compressed), ciphersuite
// BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_, proof of possession = signature over the 48
// compressed public-key bytes with that same DST. Decoding is strict: exact compressed lengths,
// public keys validated (not identity, in the subgroup), signatures group-checked.
import {
  PublicKey,
  SecretKey,
  Signature,
  aggregatePublicKeys,
  aggregateSignatures,
  fastAggregateVerify,
  verify,
  verifyMultipleAggregateSignatures,
} from '@chainsafe/blst';
import { b58decode } from '@quire/common';
import { CryptoError, CryptoErrorCode, byteLengthOf, type CryptoErrorData } from './errors.js';
import { blsKeygen } from './bls-keygen.js';
import { LruCache } from './lru.js';

export const BLS_SECRET_KEY_LENGTH = 32;
export const BLS_PUBLIC_KEY_LENGTH = 48;
export const BLS_SIGNATURE_LENGTH = 96;
/** The domain separation tag every signature and proof of possession is made with. */
export const BLS_DST = 'BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_';

type BlstPublicKey = PublicKey;
type BlstSignature = Signature;

function hexKey(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('hex');
}

function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// Validating a G1 point costs about as much as a pairing's worth of hashing; validators' keys are
// few and reused on every batch, so decoded keys are kept.
const publicKeyCache = new LruCache<string, BlstPublicKey>(4096);

/** Strictly decodes a 48-byte compressed G1 public key. Throws CryptoError (BLS_PUBLIC_KEY_*). */
export function blsPublicKeyFromBytes(bytes: Uint8Array): BlstPublicKey {
  if (!(bytes instanceof Uint8Array) || bytes.length !== BLS_PUBLIC_KEY_LENGTH) {
    throw new CryptoError(CryptoErrorCode.BLS_PUBLIC_KEY_LENGTH, { length: byteLengthOf(bytes) });
  }
  const k = hexKey(bytes);
  const hit = publicKeyCache.get(k);
  if (hit !== undefined) return hit;
  let pk: BlstPublicKey;
  try {
    pk = PublicKey.fromBytes(bytes, true);
  } catch (err) {
    throw new CryptoError(CryptoErrorCode.BLS_PUBLIC_KEY_INVALID, { reason: reasonOf(err) });
  }
  publicKeyCache.set(k, pk);
  return pk;
}

/** Strictly decodes a 96-byte compressed G2 signature (group-checked). Throws CryptoError (BLS_SIGNATURE_*). */
export function blsSignatureFromBytes(bytes: Uint8Array): BlstSignature {
  return signatureFromBytes(bytes, true);
}

/**
 * A 96-byte compressed G2 signature, group-checked when `groupCheck`; the errors name `index` when one is given (the
 * place of the signature in an aggregation).
 */
function signatureFromBytes(bytes: Uint8Array, groupCheck: boolean, index?: number): BlstSignature {
  const at = index === undefined ? {} : { index };
  if (!(bytes instanceof Uint8Array) || bytes.length !== BLS_SIGNATURE_LENGTH) {
    throw new CryptoError(CryptoErrorCode.BLS_SIGNATURE_LENGTH, { length: byteLengthOf(bytes), ...at });
  }
  try {
    return groupCheck ? Signature.fromBytes(bytes, true) : Signature.fromBytes(bytes, false, false);
  } catch (err) {
    throw new CryptoError(CryptoErrorCode.BLS_SIGNATURE_INVALID, { reason: reasonOf(err), ...at });
  }
}

function fromBase58(text: string, what: CryptoErrorData['BASE58_INVALID']['what']): Uint8Array {
  try {
    return b58decode(text);
  } catch {
    throw new CryptoError(CryptoErrorCode.BASE58_INVALID, { what });
  }
}

/** Decodes and validates a base58 `blskey`; returns its 48 bytes. Throws CryptoError. */
export function decodeBlsPublicKey(b58: string): Uint8Array {
  const bytes = fromBase58(b58, 'BLS public key');
  blsPublicKeyFromBytes(bytes);
  return bytes;
}

/** Decodes and validates a base58 BLS signature (`blskey_pop`, multi-signature); returns its 96 bytes. Throws CryptoError. */
export function decodeBlsSignature(b58: string): Uint8Array {
  const bytes = fromBase58(b58, 'BLS signature');
  blsSignatureFromBytes(bytes);
  return bytes;
}

/** A BLS secret key with its public key. */
export class BlsSecretKey {
  readonly #sk: SecretKey;
  /** The 48-byte compressed G1 public key. */
  readonly publicKey: Uint8Array;

  private constructor(sk: SecretKey) {
    this.#sk = sk;
    this.publicKey = sk.toPublicKey().toBytes(true);
  }

  /** The key of a 32-byte big-endian scalar (non-zero, below r). Throws CryptoError. */
  static fromBytes(bytes: Uint8Array): BlsSecretKey {
    if (!(bytes instanceof Uint8Array) || bytes.length !== BLS_SECRET_KEY_LENGTH) {
      throw new CryptoError(CryptoErrorCode.BLS_SECRET_KEY_INVALID, { reason: `length ${bytes instanceof Uint8Array ? bytes.length : 'unknown'}` });
    }
    try {
      return new BlsSecretKey(SecretKey.fromBytes(bytes));
    } catch (err) {
      throw new CryptoError(CryptoErrorCode.BLS_SECRET_KEY_INVALID, { reason: reasonOf(err) });
    }
  }

  /** The key derived from a seed by IETF KeyGen (formats.md 9.1); a string seed is taken as its UTF-8 bytes. */
  static fromSeed(seed: Uint8Array | string): BlsSecretKey {
    const ikm = typeof seed === 'string' ? new Uint8Array(Buffer.from(seed, 'utf8')) : seed;
    return BlsSecretKey.fromBytes(blsKeygen(ikm));
  }

  toBytes(): Uint8Array {
    return this.#sk.toBytes();
  }

  /** The 96-byte compressed signature of `msg`. */
  sign(msg: Uint8Array): Uint8Array {
    return this.#sk.sign(msg).toBytes(true);
  }

  /** The proof of possession: this key's signature over its own 48 compressed public-key bytes. */
  proofOfPossession(): Uint8Array {
    return this.sign(this.publicKey);
  }
}

/** The secret key of a development seed (formats.md 2.3, 9.1). */
export function blsKeyFromSeed(seed: Uint8Array | string): BlsSecretKey {
  return BlsSecretKey.fromSeed(seed);
}

export function blsSign(sk: BlsSecretKey, msg: Uint8Array): Uint8Array {
  return sk.sign(msg);
}

export function blsProofOfPossession(sk: BlsSecretKey): Uint8Array {
  return sk.proofOfPossession();
}

/** Verifies one signature. False, never an exception, on malformed key or signature bytes. */
export function blsVerify(publicKey: Uint8Array, msg: Uint8Array, signature: Uint8Array): boolean {
  try {
    return verify(msg, blsPublicKeyFromBytes(publicKey), blsSignatureFromBytes(signature));
  } catch {
    return false;
  }
}

/** Verifies a proof of possession of a public key. False on malformed input. */
export function blsVerifyPop(publicKey: Uint8Array, pop: Uint8Array): boolean {
  return blsVerify(publicKey, publicKey, pop);
}

export interface BlsAggregateOptions {
  /**
   * The signatures were each decoded strictly and verified before (as consensus does on receipt):
   * skip the subgroup check of every input, which costs far more than the aggregation itself.
   * Lengths are still checked, and the aggregate is checked when it is verified. Default false.
   */
  verified?: boolean;
}

/**
 * Sums signatures over one message into the 96-byte aggregate. Each input is strictly decoded
 * (unless `verified`); throws CryptoError naming the first bad one (`index` in the data) or on an
 * empty list.
 */
export function blsAggregateSignatures(signatures: readonly Uint8Array[], opts: BlsAggregateOptions = {}): Uint8Array {
  if (signatures.length === 0) throw new CryptoError(CryptoErrorCode.BLS_AGGREGATE_EMPTY);
  const decoded = signatures.map((s, index) => signatureFromBytes(s, opts.verified !== true, index));
  return aggregateSignatures(decoded, false).toBytes(true);
}

/**
 * FastAggregateVerify: checks an aggregate signature by all of `publicKeys` over one message.
 * Every key must have a verified proof of possession (the pool state guarantees it). False on an
 * empty key list or any malformed key or signature.
 */
export function blsVerifyAggregate(publicKeys: readonly Uint8Array[], msg: Uint8Array, aggregateSignature: Uint8Array): boolean {
  if (publicKeys.length === 0) return false;
  try {
    const pks = publicKeys.map(blsPublicKeyFromBytes);
    return fastAggregateVerify(msg, pks, blsSignatureFromBytes(aggregateSignature), false);
  } catch {
    return false;
  }
}

/** One aggregate signature of {@link blsVerifyAggregateBatch}: by all of `publicKeys` over `msg`. */
export interface BlsAggregateToVerify {
  publicKeys: readonly Uint8Array[];
  msg: Uint8Array;
  signature: Uint8Array;
}

/**
 * Verifies several aggregate signatures, each over its own message, at once (blst's verification of
 * multiple aggregate signatures: each set is weighted by a random 64-bit scalar and the pairings share one
 * final exponentiation, about half the cost of verifying them one by one). True when every one of them
 * verifies, except with probability about 2^-64; false when at least one does not, or any key or
 * signature is malformed, or the list is empty or has a set without keys: the caller then verifies
 * them one by one ({@link blsVerifyAggregate}) to find which. The same key rules as blsVerifyAggregate
 * (every key with a verified proof of possession); signatures are strictly decoded.
 */
export function blsVerifyAggregateBatch(items: readonly BlsAggregateToVerify[]): boolean {
  if (items.length === 0) return false;
  try {
    const sets = items.map((it) => {
      if (it.publicKeys.length === 0) throw new CryptoError(CryptoErrorCode.BLS_AGGREGATE_EMPTY);
      return { msg: it.msg, pk: aggregatePublicKeys(it.publicKeys.map(blsPublicKeyFromBytes), false), sig: blsSignatureFromBytes(it.signature) };
    });
    return verifyMultipleAggregateSignatures(sets, false, false);
  } catch {
    return false;
  }
}
