/** DID keys (formats.md 2.1, 2.3): an Ed25519 key from a 32-byte seed or a random one, with its DID and verkeys. */
import { randomBytes } from 'node:crypto';
import { b58encode, didIndyV2Id, decodeSeed } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { ClientError, ClientErrorCode } from '../errors.js';

/**
 * A seed as bytes: 32 raw bytes, a 32-character string (its UTF-8 bytes, the development seeds), or 64 hex digits.
 * Throws ClientError INVALID_SEED.
 */
export function parseSeed(seed: Uint8Array | string): Uint8Array {
  const bytes = decodeSeed(seed);
  if (typeof bytes === 'number') throw new ClientError(ClientErrorCode.INVALID_SEED, { length: bytes });
  return bytes;
}

/** An Ed25519 DID key. */
export class DidKey {
  readonly #signer: Ed25519Signer;
  readonly #seed: Uint8Array;

  private constructor(seed: Uint8Array) {
    this.#seed = seed;
    this.#signer = Ed25519Signer.fromSeed(seed);
  }

  /** From a seed (see {@link parseSeed}). */
  static fromSeed(seed: Uint8Array | string): DidKey {
    return new DidKey(parseSeed(seed));
  }

  /** A fresh random key. */
  static random(): DidKey {
    return new DidKey(new Uint8Array(randomBytes(32)));
  }

  /** Unqualified DID: base58 of the first 16 bytes of the verkey. */
  get did(): string {
    return this.#signer.did;
  }

  /** Abbreviated verkey `~` + base58 of the last 16 bytes (what a NYM for `did` carries). */
  get verkey(): string {
    return this.#signer.verkey;
  }

  /** Full verkey: base58 of the 32-byte public key. */
  get fullVerkey(): string {
    return this.#signer.fullVerkey;
  }

  get publicKey(): Uint8Array {
    return this.#signer.publicKey;
  }

  /** The did:indy self-certifying (version 2) identifier of this key. */
  get didIndyV2(): string {
    return didIndyV2Id(this.#signer.publicKey);
  }

  /** The seed in hex (to store the key; keep it secret). */
  get seedHex(): string {
    return Buffer.from(this.#seed).toString('hex');
  }

  /** base58 Ed25519 signature of `msg`. */
  signBase58(msg: Uint8Array): string {
    return b58encode(this.#signer.sign(msg));
  }
}
