/**
 * DIDs and verkeys (formats.md 2.1-2.2): derivations from an Ed25519 public key, validation on the
 * decoded bytes, verkey resolution, and the NYM `version` binding checks.
 */
import { b58decode, b58decodeOrUndefined, b58encode } from './base58.js';
import { IdentifierError, IdentifierErrorCode } from './errors.js';
import { sha256 } from './hash.js';

function checkKey(vk: Uint8Array): void {
  if (!(vk instanceof Uint8Array) || vk.length !== 32) {
    throw new IdentifierError(
      IdentifierErrorCode.INVALID_KEY_LENGTH,
      { expected: 32, length: vk instanceof Uint8Array ? vk.length : -1 },
      'an Ed25519 public key is 32 bytes',
    );
  }
}

/**
 * The libp2p PeerId (as text, `12D3KooW...`) of a node whose `NODE.dest` is `dest`: base58 of the identity multihash
 * of its public key in libp2p's protobuf form (key type Ed25519 = 1, 32 data bytes). Validators dial and admit each
 * other, and clients authenticate a node, by this PeerId, computed from the pool ledger alone; one definition for
 * the node's network layer and the client SDK. Throws IdentifierError INVALID_VERKEY for a dest that is not base58
 * of 32 bytes.
 */
export function peerIdOfNodeDest(dest: string): string {
  const raw = typeof dest === 'string' ? b58decodeOrUndefined(dest) : undefined;
  if (raw?.length !== 32)
    throw new IdentifierError(
      IdentifierErrorCode.INVALID_VERKEY,
      { verkey: dest, length: raw?.length ?? -1 },
      'a node dest is base58 of a 32-byte Ed25519 key',
    );
  return b58encode(concatPeerIdBytes(raw));
}

/** identity multihash (code 0x00, length 36) of the protobuf PublicKey { Type: Ed25519 (1), Data: 32 bytes } */
const PEER_ID_ED25519_PREFIX = Uint8Array.of(0x00, 0x24, 0x08, 0x01, 0x12, 0x20);

function concatPeerIdBytes(key: Uint8Array): Uint8Array {
  const out = new Uint8Array(PEER_ID_ED25519_PREFIX.length + key.length);
  out.set(PEER_ID_ED25519_PREFIX, 0);
  out.set(key, PEER_ID_ED25519_PREFIX.length);
  return out;
}

/** DID of an Ed25519 public key: base58 of its first 16 bytes. */
export function didFromVerkey(vk: Uint8Array): string {
  checkKey(vk);
  return b58encode(vk.subarray(0, 16));
}

/** Abbreviated verkey: `~` + base58 of the last 16 bytes of the key. */
export function abbreviatedVerkey(vk: Uint8Array): string {
  checkKey(vk);
  return '~' + b58encode(vk.subarray(16, 32));
}

/** Full verkey: base58 of the 32-byte key. */
export function fullVerkey(vk: Uint8Array): string {
  checkKey(vk);
  return b58encode(vk);
}

/** The did:indy self-certifying id (NYM version 2): base58 of the first 16 bytes of SHA-256(key). */
export function didIndyV2Id(vk: Uint8Array): string {
  checkKey(vk);
  return b58encode(sha256(vk).subarray(0, 16));
}

/** The bytes of a DID when it is base58 of 16 or 32 bytes, else `undefined`. */
export function decodeDid(did: unknown): Uint8Array | undefined {
  if (typeof did !== 'string' || did.length === 0) return undefined;
  const b = b58decodeOrUndefined(did);
  return b !== undefined && (b.length === 16 || b.length === 32) ? b : undefined;
}

/** True for an unqualified DID: base58 decoding to 16 bytes, or 32 bytes (cryptonym). */
export function isValidDid(did: unknown): did is string {
  return decodeDid(did) !== undefined;
}

/** True for a full verkey (base58 of 32 bytes). */
export function isFullVerkey(v: unknown): v is string {
  if (typeof v !== 'string' || v.length === 0 || v.charCodeAt(0) === 126) return false;
  return b58decodeOrUndefined(v)?.length === 32;
}

/** True for an abbreviated verkey (`~` + base58 of 16 bytes). */
export function isAbbreviatedVerkey(v: unknown): v is string {
  if (typeof v !== 'string' || v.length < 2 || v.charCodeAt(0) !== 126) return false;
  return b58decodeOrUndefined(v.slice(1))?.length === 16;
}

/** True for a full or abbreviated verkey. */
export function isValidVerkey(v: unknown): v is string {
  return isFullVerkey(v) || isAbbreviatedVerkey(v);
}

/** Strips `did:sov:` / `did:indy:<namespace>:` from a qualified DID; an unqualified one is returned as is. */
export function unqualifiedDid(did: string): string {
  if (did.startsWith('did:sov:')) return did.slice(8);
  if (did.startsWith('did:indy:')) return did.slice(did.lastIndexOf(':') + 1);
  return did;
}

function decodeOrThrow(s: string, what: 'did' | 'verkey'): Uint8Array {
  const b = typeof s === 'string' ? b58decodeOrUndefined(s) : undefined;
  if (b !== undefined) return b;
  const reason = 'not base58';
  throw what === 'did'
    ? new IdentifierError(IdentifierErrorCode.INVALID_DID, { did: s, reason }, 'did is not base58')
    : new IdentifierError(IdentifierErrorCode.INVALID_VERKEY, { verkey: s, reason }, 'verkey is not base58');
}

/**
 * The full 32-byte Ed25519 key that signs for `did` (formats.md 2.1):
 * - `~abbrev`: DID bytes (16) || abbreviation bytes (16);
 * - a full verkey: its 32 bytes;
 * - null / absent / empty: the DID itself when it is a 32-byte cryptonym, else `null` (guardianship:
 *   this DID cannot sign).
 * Throws IdentifierError INVALID_DID / INVALID_VERKEY / ABBREVIATED_VERKEY_NEEDS_16_BYTE_DID.
 */
export function resolveVerkey(did: string, verkey?: string | null): Uint8Array | null {
  if (typeof verkey === 'string' && verkey.length > 0) {
    if (verkey.charCodeAt(0) === 126) {
      const d = decodeOrThrow(did, 'did');
      const a = decodeOrThrow(verkey.slice(1), 'verkey');
      if (a.length !== 16) throw new IdentifierError(IdentifierErrorCode.INVALID_VERKEY, { verkey, length: a.length }, 'an abbreviated verkey is 16 bytes');
      if (d.length !== 16) throw new IdentifierError(IdentifierErrorCode.ABBREVIATED_VERKEY_NEEDS_16_BYTE_DID, { did, length: d.length });
      const out = new Uint8Array(32);
      out.set(d, 0);
      out.set(a, 16);
      return out;
    }
    const k = decodeOrThrow(verkey, 'verkey');
    if (k.length !== 32) throw new IdentifierError(IdentifierErrorCode.INVALID_VERKEY, { verkey, length: k.length }, 'a full verkey is 32 bytes');
    return k;
  }
  if (verkey !== undefined && verkey !== null && verkey !== '') {
    throw new IdentifierError(IdentifierErrorCode.INVALID_VERKEY, { type: typeof verkey }, 'a verkey is a string');
  }
  const d = decodeOrThrow(did, 'did');
  if (d.length === 32) return d;
  if (d.length !== 16) throw new IdentifierError(IdentifierErrorCode.INVALID_DID, { did, length: d.length }, 'a DID is 16 or 32 bytes');
  return null;
}

/** NYM versions (formats.md 2.2). */
export const NymVersion = {
  NONE: 0,
  CONVENTION: 1,
  SELF_CERTIFYING: 2,
} as const;

export const NYM_VERSION_1_MISMATCH = 'Identifier with version 1 must be first 16 bytes of verkey';
export const NYM_VERSION_2_MISMATCH = 'Identifier with version 2 must be first 16 bytes of SHA256 of verkey';
export const NYM_VERSION_ON_EXISTING = 'Cannot set version on existing nym';

function pyStr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v) ?? String(v);
}

/** Static check of a NYM `version` field: `null` when absent or one of 0, 1, 2, else the reason text. */
export function checkNymVersionValue(version: unknown): string | null {
  if (version === undefined || version === null) return null;
  if (version === 0 || version === 1 || version === 2 || version === 0n || version === 1n || version === 2n) return null;
  return `Version must be one of {0, 1, 2}, received ${pyStr(version)}`;
}

/**
 * The DID binding check made when a NYM is created (formats.md 2.2): `null` when `dest` satisfies
 * `version` with the request's `verkey`, else the exact reason text. Version 0 / absent always passes;
 * versions 1 and 2 need a full verkey (an abbreviated, absent or malformed one fails with the
 * version's text). Call {@link checkNymVersionValue} first for other values.
 */
export function checkNymDidBinding(dest: string, verkey: string | null | undefined, version: unknown): string | null {
  const v = typeof version === 'bigint' ? Number(version) : version;
  if (v === undefined || v === null || v === 0) return null;
  if (v !== 1 && v !== 2) return checkNymVersionValue(version);
  const message = v === 1 ? NYM_VERSION_1_MISMATCH : NYM_VERSION_2_MISMATCH;
  if (!isFullVerkey(verkey)) return message;
  const k = b58decode(verkey);
  const expected = b58encode((v === 1 ? k : sha256(k)).subarray(0, 16));
  return dest === expected ? null : message;
}
