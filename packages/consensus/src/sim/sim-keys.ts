// BLS keys of simulated nodes: deterministic per (alias, generation) so that a key rotation is a new
// generation, and the ConsensusCrypto of each simulated node looks keys up in its own executor's
// pool state at the root inside the signed value (consensus.md §8), exactly as a node does.
import { b58decode, b58encode } from '@quire/common';
import { type BlsSecretKey, LruCache, blsKeyFromSeed } from '@quire/crypto';
import { createBlsConsensusCrypto } from '../bls-crypto.js';
import type { ConsensusCrypto } from '../interfaces.js';
import type { StandInExecutor } from './standin-executor.js';

const secretKeys = new Map<string, BlsSecretKey>();
const publicKeys = new Map<string, string>();
const decodedKeys = new Map<string, Uint8Array>();
/** shared by every simulated node of the process: a verification is a pure function */
export const simVerifyCache = new LruCache<string, boolean>(1 << 16);

/** The secret key of `alias` after `generation` rotations. */
export function simBlsKey(alias: string, generation = 0): BlsSecretKey {
  const id = `${alias}#${generation}`;
  let k = secretKeys.get(id);
  if (k === undefined) {
    const seed = generation === 0 ? `quire-sim-bls-${alias}` : `quire-sim-bls-${alias}-g${generation}`;
    k = blsKeyFromSeed(seed.padEnd(32, '0'));
    secretKeys.set(id, k);
    publicKeys.set(id, b58encode(k.publicKey));
  }
  return k;
}

/** base58 `blskey` of `alias` after `generation` rotations. */
export function simBlsPublicKey(alias: string, generation = 0): string {
  const id = `${alias}#${generation}`;
  const known = publicKeys.get(id);
  if (known !== undefined) return known;
  const pk = b58encode(simBlsKey(alias, generation).publicKey);
  publicKeys.set(id, pk);
  return pk;
}

function decoded(b58: string): Uint8Array {
  let d = decodedKeys.get(b58);
  if (d === undefined) {
    d = b58decode(b58);
    decodedKeys.set(b58, d);
  }
  return d;
}

/**
 * ConsensusCrypto of one simulated node: its secret key is the generation registered for it at the
 * value's pool state root; peers' public keys come from its executor at that root.
 */
export function simConsensusCrypto(alias: string, executor: () => StandInExecutor, maxGeneration: () => number): ConsensusCrypto {
  return createBlsConsensusCrypto({
    secretKeyAt: (poolStateRoot) => {
      const registered = executor().blsKeyAt(alias, poolStateRoot);
      for (let g = maxGeneration(); g > 0; g--) if (simBlsPublicKey(alias, g) === registered) return simBlsKey(alias, g);
      return simBlsKey(alias, 0);
    },
    publicKeyAt: (peer, poolStateRoot) => {
      const k = executor().blsKeyAt(peer, poolStateRoot);
      return k === undefined ? undefined : decoded(k);
    },
    verifyCache: simVerifyCache,
  });
}
