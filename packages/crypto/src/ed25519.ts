// Ed25519 on node's native crypto (OpenSSL). Keys enter as raw bytes: a 32-byte seed (the RFC 8032
// private key) or a 32-byte public key. Importing a raw key into a KeyObject costs more than the
// verification itself, so public KeyObjects are kept in a bounded LRU keyed by the key bytes.
import { createPrivateKey, createPublicKey, randomBytes, sign as nodeSign, verify as nodeVerify, type KeyObject } from 'node:crypto';
import { CryptoError, CryptoErrorCode, byteLengthOf } from './errors.js';
import { LruCache } from './lru.js';

export const ED25519_SEED_LENGTH = 32;
export const ED25519_PUBLIC_KEY_LENGTH = 32;
export const ED25519_SIGNATURE_LENGTH = 64;

// PKCS#8 DER of an Ed25519 private key is this fixed 16-byte prefix followed by the 32-byte seed.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** An Ed25519 key pair held as native KeyObjects. */
export interface Ed25519KeyPair {
  readonly seed: Uint8Array;
  readonly publicKey: Uint8Array;
  readonly privateKeyObject: KeyObject;
  readonly publicKeyObject: KeyObject;
}

/** Derives the key pair of a 32-byte seed (RFC 8032 private key). Throws CryptoError on a wrong length. */
export function ed25519KeyPairFromSeed(seed: Uint8Array): Ed25519KeyPair {
  if (!(seed instanceof Uint8Array) || seed.length !== ED25519_SEED_LENGTH) {
    throw new CryptoError(CryptoErrorCode.ED25519_SEED_LENGTH, { length: byteLengthOf(seed) });
  }
  const privateKeyObject = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const publicKeyObject = createPublicKey(privateKeyObject);
  // SPKI DER of an Ed25519 public key (RFC 8410): a fixed 12-byte prefix, then the 32-byte key
  const spki = publicKeyObject.export({ format: 'der', type: 'spki' });
  const publicKey = new Uint8Array(spki.subarray(spki.length - ED25519_PUBLIC_KEY_LENGTH));
  return { seed: Uint8Array.from(seed), publicKey, privateKeyObject, publicKeyObject };
}

/** A fresh random 32-byte seed from the system CSPRNG. */
export function ed25519RandomSeed(): Uint8Array {
  return new Uint8Array(randomBytes(ED25519_SEED_LENGTH));
}

/** The 32-byte public key of a seed. */
export function ed25519PublicKeyFromSeed(seed: Uint8Array): Uint8Array {
  return ed25519KeyPairFromSeed(seed).publicKey;
}

/** Signs `msg` with a private KeyObject (from {@link ed25519KeyPairFromSeed}); returns the 64-byte signature. */
export function ed25519Sign(privateKey: KeyObject, msg: Uint8Array): Uint8Array {
  return new Uint8Array(nodeSign(null, msg, privateKey));
}

export interface Ed25519VerifierOptions {
  /** Public keys whose KeyObjects are kept. Default 10,000 (about 3 MB). */
  cacheSize?: number;
}

export const defaultEd25519VerifierOptions: Required<Ed25519VerifierOptions> = { cacheSize: 10_000 };

/**
 * Verifies Ed25519 signatures with native crypto and a bounded cache of imported public keys.
 * Verification never throws on untrusted input: any malformed key or signature yields false.
 */
export class Ed25519Verifier {
  readonly #cache: LruCache<string, KeyObject>;

  constructor(opts: Ed25519VerifierOptions = {}) {
    this.#cache = new LruCache(opts.cacheSize ?? defaultEd25519VerifierOptions.cacheSize);
  }

  /** Number of public keys currently cached. */
  get cachedKeys(): number {
    return this.#cache.size;
  }

  /** The native KeyObject of a 32-byte public key, imported once and then served from the cache. */
  publicKeyObject(publicKey: Uint8Array): KeyObject {
    if (!(publicKey instanceof Uint8Array) || publicKey.length !== ED25519_PUBLIC_KEY_LENGTH) {
      throw new CryptoError(CryptoErrorCode.ED25519_PUBLIC_KEY_LENGTH, { length: byteLengthOf(publicKey) });
    }
    const x = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.length).toString('base64url');
    let key = this.#cache.get(x);
    if (key === undefined) {
      key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
      this.#cache.set(x, key);
    }
    return key;
  }

  verify(publicKey: Uint8Array, msg: Uint8Array, signature: Uint8Array): boolean {
    if (!(publicKey instanceof Uint8Array) || publicKey.length !== ED25519_PUBLIC_KEY_LENGTH) return false;
    if (!(signature instanceof Uint8Array) || signature.length !== ED25519_SIGNATURE_LENGTH) return false;
    if (!(msg instanceof Uint8Array)) return false;
    try {
      return nodeVerify(null, msg, this.publicKeyObject(publicKey), signature);
    } catch {
      // A key OpenSSL refuses to import, or a signature it cannot parse: not a valid signature.
      return false;
    }
  }

  clear(): void {
    this.#cache.clear();
  }
}

const defaultVerifier = new Ed25519Verifier();

/**
 * Verifies a 64-byte Ed25519 signature over `msg` by a 32-byte public key (native crypto, RFC 8032
 * checks, cached key import). Returns false, never throws, on any malformed input.
 */
export function ed25519Verify(publicKey: Uint8Array, msg: Uint8Array, signature: Uint8Array): boolean {
  return defaultVerifier.verify(publicKey, msg, signature);
}
