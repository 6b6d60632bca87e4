// Identities of a simulated pool: the standard development seeds (formats.md §2.3) for Trustee1,
// Steward1..N and Node1..N (node i owned by steward i, as in the devnet), BLS keys per rotation
// generation, and the genesis files of a pool of any size: the pool genesis of genesis-gen.ts and
// the standard domain genesis plus the NYMs of Steward5..N for larger pools (the devnet's shape).
// Keys are derived once per process (a BLS key and its proof of possession cost milliseconds).
import { b58encode } from '@quire/common';
import { BlsSecretKey, Ed25519Signer } from '@quire/crypto';
import { type GenesisNodeSpec, TRUSTEE_SEED, nodeSeed, poolGenesis, standardDomainGenesis, stewardSeed } from '../genesis-gen.js';
import { type NodeKeys, deriveNodeKeys } from '../keys.js';
import { ConsensusError, ConsensusErrorCode } from '@quire/consensus';

const signers = new Map<string, Ed25519Signer>();
const nodeKeysCache = new Map<string, NodeKeys>();
const blsKeys = new Map<string, { secret: BlsSecretKey; blskey: string; blskey_pop: string }>();

function signer(seed: string): Ed25519Signer {
  let s = signers.get(seed);
  if (s === undefined) {
    s = Ed25519Signer.fromSeed(seed);
    signers.set(seed, s);
  }
  return s;
}

export function trusteeSigner(): Ed25519Signer {
  return signer(TRUSTEE_SEED);
}

export function stewardSigner(i: number): Ed25519Signer {
  return signer(stewardSeed(i));
}

/** `NodeK` -> K (the index of its steward). */
export function nodeIndex(alias: string): number {
  const m = /^Node([1-9][0-9]*)$/.exec(alias);
  if (m === null) throw new ConsensusError(ConsensusErrorCode.SIMULATION, { reason: `simulated node aliases are Node1..NodeN, got ${alias}` });
  return Number(m[1]);
}

/** The steward that owns a simulated node (NodeK is Steward K's). */
export function ownerOf(alias: string): Ed25519Signer {
  return stewardSigner(nodeIndex(alias));
}

export function simNodeKeys(alias: string): NodeKeys {
  let k = nodeKeysCache.get(alias);
  if (k === undefined) {
    k = deriveNodeKeys(alias, new Uint8Array(Buffer.from(nodeSeed(alias), 'utf8')));
    nodeKeysCache.set(alias, k);
  }
  return k;
}

/** The BLS key of `alias` after `generation` rotations (generation 0: the key of its node seed). */
export function simBlsKey(alias: string, generation: number): { secret: BlsSecretKey; blskey: string; blskey_pop: string } {
  const id = `${alias}#${generation}`;
  let k = blsKeys.get(id);
  if (k === undefined) {
    if (generation === 0) {
      const n = simNodeKeys(alias);
      k = { secret: n.bls, blskey: n.blskey, blskey_pop: n.blskey_pop };
    } else {
      const secret = BlsSecretKey.fromSeed(`${alias}-bls-${generation}`.padStart(32, '0'));
      k = { secret, blskey: b58encode(secret.publicKey), blskey_pop: b58encode(secret.proofOfPossession()) };
    }
    blsKeys.set(id, k);
  }
  return k;
}

/** Node and client address of a simulated node (distinct per node, as NODE uniqueness requires). */
export function simNodeAddress(alias: string): { nodeIp: string; nodePort: number; clientIp: string; clientPort: number } {
  const i = nodeIndex(alias);
  return { nodeIp: '127.0.0.1', nodePort: 9700 + 2 * i - 1, clientIp: '127.0.0.1', clientPort: 9700 + 2 * i };
}

/** The pool genesis of the validators `aliases` (NodeK owned by Steward K). */
export function simPoolGenesis(aliases: readonly string[]): string {
  const specs: GenesisNodeSpec[] = aliases.map((alias) => ({ alias, keys: simNodeKeys(alias), steward: ownerOf(alias).did, ...simNodeAddress(alias) }));
  return poolGenesis(specs);
}

/** The standard domain genesis, plus the NYMs of Steward5..`stewards` (the devnet's shape for larger pools). */
export function simDomainGenesis(stewards: number): string {
  return standardDomainGenesis(stewards);
}
