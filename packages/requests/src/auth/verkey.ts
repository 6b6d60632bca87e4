/**
 * Verkey resolution (formats.md 2.1): the 32-byte Ed25519 key of a DID from its NYM verkey:
 * abbreviated (`~` + 16 bytes, appended to the 16-byte DID), full (32 bytes), or none (a 32-byte
 * DID is a cryptonym: the DID is the key; a 16-byte DID without verkey is under guardianship and
 * cannot sign). Returns null when there is no usable key; never throws.
 */
import { b58decodeOrUndefined } from '@quire/common';

export function resolveVerkey(did: string, verkey: string | null | undefined): Uint8Array | null {
  if (typeof verkey === 'string' && verkey.startsWith('~')) {
    const d = b58decodeOrUndefined(did);
    const a = b58decodeOrUndefined(verkey.slice(1));
    if (!d || !a || d.length !== 16 || a.length !== 16) return null;
    const out = new Uint8Array(32);
    out.set(d, 0);
    out.set(a, 16);
    return out;
  }
  if (typeof verkey === 'string' && verkey.length > 0) {
    const k = b58decodeOrUndefined(verkey);
    return k && k.length === 32 ? k : null;
  }
  const d = b58decodeOrUndefined(did);
  return d && d.length === 32 ? d : null;
}
