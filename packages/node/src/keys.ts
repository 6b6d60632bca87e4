// The node's keys: one 32-byte ed25519 seed, kept in a JSON key file readable by the owner only
// (0600). Everything else follows from the seed: the node identity (NODE.dest, the libp2p PeerId)
// and the BLS key (IETF KeyGen over the seed, formats.md §9.1).
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { b58encode, fromHex, decodeSeed, toHex } from '@quire/common';
import { BlsSecretKey, Ed25519Signer } from '@quire/crypto';
import { NodeError, NodeErrorCode, reasonOf } from './errors.js';

export const KEY_FILE_VERSION = 1;

/** What `quire-node init` prints and the pool genesis needs. */
export interface NodePublicKeys {
  name: string;
  /** base58 32-byte ed25519 verkey: NODE.dest */
  dest: string;
  /** the DID and abbreviated verkey of the same key */
  did: string;
  verkey: string;
  /** base58 48-byte BLS public key */
  blskey: string;
  /** base58 96-byte proof of possession */
  blskey_pop: string;
}

export interface NodeKeys extends NodePublicKeys {
  seed: Uint8Array;
  signer: Ed25519Signer;
  bls: BlsSecretKey;
}

/**
 * A seed given on the command line: 32 ASCII characters (the development seeds, formats.md §2.3), 64 hex digits
 * (common's decodeSeed), or the word `random`.
 */
export function parseSeedArgument(text: string): Uint8Array {
  if (text === 'random') return new Uint8Array(randomBytes(32));
  const bytes = decodeSeed(text);
  if (typeof bytes === 'number')
    throw new NodeError(NodeErrorCode.SEED_INVALID, { reason: `expected 32 characters, 64 hex digits or "random", got ${bytes} bytes` });
  return bytes;
}

/** The keys of a seed. */
export function deriveNodeKeys(name: string, seed: Uint8Array): NodeKeys {
  if (!(seed instanceof Uint8Array) || seed.length !== 32) throw new NodeError(NodeErrorCode.SEED_INVALID, { reason: 'expected 32 bytes' });
  const signer = Ed25519Signer.fromSeed(seed);
  const bls = BlsSecretKey.fromSeed(seed);
  return {
    name,
    seed: Uint8Array.from(seed),
    signer,
    bls,
    dest: signer.fullVerkey,
    did: signer.did,
    verkey: signer.verkey,
    blskey: b58encode(bls.publicKey),
    blskey_pop: b58encode(bls.proofOfPossession()),
  };
}

export function publicKeys(k: NodePublicKeys): NodePublicKeys {
  return { name: k.name, dest: k.dest, did: k.did, verkey: k.verkey, blskey: k.blskey, blskey_pop: k.blskey_pop };
}

/** Writes a new key file (refuses to overwrite one) with mode 0600; returns the keys. */
export async function writeKeyFile(file: string, name: string, seed: Uint8Array): Promise<NodeKeys> {
  if (typeof name !== 'string' || name.length === 0 || name.length > 256)
    throw new NodeError(NodeErrorCode.KEYS_INVALID, { file, reason: 'the node name must have 1..256 characters' });
  const keys = deriveNodeKeys(name, seed);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  let fh;
  try {
    fh = await open(file, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new NodeError(NodeErrorCode.KEYS_EXIST, { file });
    throw new NodeError(NodeErrorCode.KEYS_INVALID, { file, reason: reasonOf(e) });
  }
  try {
    const body = { version: KEY_FILE_VERSION, ...publicKeys(keys), seed: toHex(seed) };
    await fh.writeFile(JSON.stringify(body, null, 2) + '\n', 'utf8');
    await fh.sync();
  } finally {
    await fh.close();
  }
  return keys;
}

/** Reads and checks a key file: the public keys written in it must follow from its seed. */
export async function readKeyFile(file: string): Promise<NodeKeys> {
  let text: string;
  try {
    const st = await stat(file);
    if ((st.mode & 0o077) !== 0 && process.platform !== 'win32') {
      throw new NodeError(NodeErrorCode.KEYS_INVALID, { file, reason: `permissions ${(st.mode & 0o777).toString(8)} are too open (expected 600)` });
    }
    text = await readFile(file, 'utf8');
  } catch (e) {
    if (e instanceof NodeError) throw e;
    throw new NodeError(NodeErrorCode.KEYS_INVALID, {
      file,
      reason: (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found (run quire-node init first)' : reasonOf(e),
    });
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new NodeError(NodeErrorCode.KEYS_INVALID, { file, reason: `not JSON: ${reasonOf(e)}` });
  }
  const o = v as Record<string, unknown>;
  if (o === null || typeof o !== 'object' || o.version !== KEY_FILE_VERSION)
    throw new NodeError(NodeErrorCode.KEYS_INVALID, { file, reason: `expected a version ${KEY_FILE_VERSION} key file` });
  if (typeof o.name !== 'string' || o.name.length === 0) throw new NodeError(NodeErrorCode.KEYS_INVALID, { file, reason: 'missing name' });
  if (typeof o.seed !== 'string' || !/^[0-9a-f]{64}$/.test(o.seed))
    throw new NodeError(NodeErrorCode.KEYS_INVALID, { file, reason: 'seed must be 64 lowercase hex digits' });
  const keys = deriveNodeKeys(o.name, fromHex(o.seed));
  for (const f of ['dest', 'blskey', 'blskey_pop'] as const) {
    if (o[f] !== undefined && o[f] !== keys[f]) throw new NodeError(NodeErrorCode.KEYS_INVALID, { file, reason: `${f} does not match the seed` });
  }
  return keys;
}
