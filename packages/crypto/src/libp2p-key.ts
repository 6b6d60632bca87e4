// The libp2p identity of a 32-byte Ed25519 seed: the one rule by which a validator's node and client hosts, an
// observer and an SDK client turn their seed into the key their libp2p stack authenticates with (Noise), hence into
// their PeerId. The PeerId of a node known only by its NODE.dest is common's `peerIdOfNodeDest`.
import type { PrivateKey } from '@libp2p/interface';
import { CryptoError, CryptoErrorCode, byteLengthOf } from './errors.js';
import { ED25519_SEED_LENGTH } from './ed25519.js';

/**
 * The libp2p Ed25519 private key of a 32-byte seed (the RFC 8032 private key, as `ed25519KeyPairFromSeed`): the same
 * seed always gives the same key, hence the same PeerId. Throws CryptoError ED25519_SEED_LENGTH (data `length`, -1
 * for a value that is not bytes). libp2p's key module is loaded on the first call only, so the packages that import
 * this one for signatures alone do not load it.
 */
export async function libp2pPrivateKeyFromSeed(seed: Uint8Array): Promise<PrivateKey> {
  if (!(seed instanceof Uint8Array) || seed.length !== ED25519_SEED_LENGTH) {
    throw new CryptoError(CryptoErrorCode.ED25519_SEED_LENGTH, { length: byteLengthOf(seed) });
  }
  const { generateKeyPairFromSeed } = await import('@libp2p/crypto/keys');
  return generateKeyPairFromSeed('Ed25519', seed);
}
