// For the suites that run the SDK's dialer against the validators' client host of @quire/network: the development
// seed of a host and the dest (full verkey) the dialer authenticates it by.
import { Ed25519Signer } from '@quire/crypto';
import { nodeSeed } from '../unit/fixtures.js';

/** The development seed of Node<i> ('000…000Node<i>', 32 bytes), a host's libp2p key seed. */
export function hostSeed(i: number): Uint8Array {
  return new TextEncoder().encode(nodeSeed(`Node${i}`));
}

/** The dest of the host with that seed: the base58 of its ed25519 public key. */
export function hostDest(seed: Uint8Array): string {
  return Ed25519Signer.fromSeed(seed).fullVerkey;
}
