import { IdentifierError, peerIdOfNodeDest } from '@quire/common';
import { CryptoError, libp2pPrivateKeyFromSeed } from '@quire/crypto';
import { peerIdFromPrivateKey, peerIdFromString } from '@libp2p/peer-id';
import type { PeerId, PrivateKey } from '@libp2p/interface';
import { NetworkError, NetworkErrorCode } from './errors.js';

/** Length of an ed25519 seed and of a raw ed25519 public key. */
export const ED25519_KEY_LENGTH = 32;

/**
 * The libp2p private key of a node: its ed25519 node key derived from its 32-byte seed (crypto's
 * `libp2pPrivateKeyFromSeed`, the rule the client SDK uses too). The same seed always gives the same key, hence the
 * same PeerId. Throws NetworkError INVALID_SEED (data `length`).
 */
export async function nodePrivateKeyFromSeed(seed: Uint8Array): Promise<PrivateKey> {
  try {
    return await libp2pPrivateKeyFromSeed(seed);
  } catch (e) {
    if (!(e instanceof CryptoError)) throw e;
    throw new NetworkError(NetworkErrorCode.INVALID_SEED, { length: lengthOf(e) });
  }
}

/** The PeerId (as a PeerId object) of the node whose `NODE.dest` is `dest` (base58 of a 32-byte verkey). */
export function peerIdObjectFromVerkey(dest: string): PeerId {
  return peerIdFromString(peerIdFromVerkey(dest));
}

/**
 * The PeerId string (`12D3KooW...`) of the node whose `NODE.dest` is `dest`: common's `peerIdOfNodeDest`, the rule
 * the client SDK uses too. Pure: every node computes every peer's PeerId from the pool ledger alone. Throws
 * NetworkError INVALID_VERKEY.
 */
export function peerIdFromVerkey(dest: string): string {
  try {
    return peerIdOfNodeDest(dest);
  } catch (e) {
    if (!(e instanceof IdentifierError)) throw e;
    throw new NetworkError(NetworkErrorCode.INVALID_VERKEY, { dest, length: lengthOf(e) });
  }
}

/** The PeerId string of the node key derived from `seed`. */
export async function peerIdFromSeed(seed: Uint8Array): Promise<string> {
  return peerIdFromPrivateKey(await nodePrivateKeyFromSeed(seed)).toString();
}

/** The `length` a coded error of crypto or common reports (-1 when it has none). */
function lengthOf(e: CryptoError | IdentifierError): number {
  return typeof e.data.length === 'number' ? e.data.length : -1;
}
