/**
 * `signingVerkey`, verkey resolution (formats.md 2.1) for signature checks: the `resolveVerkey` of @quire/common
 * (abbreviated `~` key appended to the 16-byte DID, full 32-byte key, or, without a verkey, the
 * DID itself when it is a 32-byte cryptonym), except that every DID or verkey that gives no usable
 * key — guardianship, or a malformed value from state or request — yields null instead of an
 * exception, since the caller answers all of them with the same "verkey cannot be found" refusal.
 */
import { resolveVerkey as resolveCommon } from '@quire/common';

export function signingVerkey(did: string, verkey: string | null | undefined): Uint8Array | null {
  try {
    return resolveCommon(did, verkey);
  } catch {
    return null;
  }
}
