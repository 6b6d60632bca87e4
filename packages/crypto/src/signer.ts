// A DID signer: an Ed25519 key pair with the identifiers Indy derives from it (formats.md 2.1).
import type { KeyObject } from 'node:crypto';
import { abbreviatedVerkey, b58encode, decodeSeed, didFromVerkey } from '@quire/common';
import { CryptoError, CryptoErrorCode } from './errors.js';
import { ed25519KeyPairFromSeed, ed25519RandomSeed, ed25519Sign } from './ed25519.js';

/** The 32 bytes of a seed given as bytes, 64 hex digits or a 32-character string (common's decodeSeed). */
export function seedBytes(seed: Uint8Array | string): Uint8Array {
  const bytes = decodeSeed(seed);
  if (typeof bytes === 'number') throw new CryptoError(CryptoErrorCode.ED25519_SEED_LENGTH, { length: bytes });
  return bytes;
}

export class Ed25519Signer {
  /** The 32-byte Ed25519 public key. */
  readonly publicKey: Uint8Array;
  /** Unqualified DID: base58 of the first 16 bytes of the public key. */
  readonly did: string;
  /** Abbreviated verkey: `~` + base58 of the last 16 bytes of the public key. */
  readonly verkey: string;
  /** Full verkey: base58 of the 32-byte public key. */
  readonly fullVerkey: string;
  readonly #privateKey: KeyObject;

  private constructor(seed: Uint8Array) {
    const pair = ed25519KeyPairFromSeed(seed);
    this.publicKey = pair.publicKey;
    this.#privateKey = pair.privateKeyObject;
    this.did = didFromVerkey(pair.publicKey);
    this.verkey = abbreviatedVerkey(pair.publicKey);
    this.fullVerkey = b58encode(pair.publicKey);
  }

  /** A signer from a 32-byte seed, 64 hex digits, or a 32-character seed string such as `000000000000000000000000Trustee1`. */
  static fromSeed(seed: Uint8Array | string): Ed25519Signer {
    return new Ed25519Signer(seedBytes(seed));
  }

  /** A signer with a fresh random seed. */
  static generate(): Ed25519Signer {
    return new Ed25519Signer(ed25519RandomSeed());
  }

  /** The 64-byte signature of `msg` (a string is signed as its UTF-8 bytes). */
  sign(msg: Uint8Array | string): Uint8Array {
    return ed25519Sign(this.#privateKey, typeof msg === 'string' ? Buffer.from(msg, 'utf8') : msg);
  }

  /** The signature of `msg` in base58, as requests carry it. */
  signBase58(msg: Uint8Array | string): string {
    return b58encode(this.sign(msg));
  }
}
