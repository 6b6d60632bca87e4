// A pure-JavaScript Ed25519 verifier (@noble/ed25519) for code that cannot rely on node's OpenSSL
// (browser builds of the client, cross-checks). It runs with zip215: false, the strict RFC 8032
// branch, which rejects the non-canonical encodings that OpenSSL rejects.
import { createHash } from 'node:crypto';
import { hashes, verify, verifyAsync } from '@noble/ed25519';
import { ED25519_PUBLIC_KEY_LENGTH, ED25519_SIGNATURE_LENGTH } from './ed25519.js';

function wellFormed(publicKey: Uint8Array, msg: Uint8Array, signature: Uint8Array): boolean {
  return (
    publicKey instanceof Uint8Array &&
    publicKey.length === ED25519_PUBLIC_KEY_LENGTH &&
    signature instanceof Uint8Array &&
    signature.length === ED25519_SIGNATURE_LENGTH &&
    msg instanceof Uint8Array
  );
}

function ensureSyncSha512(): void {
  if (hashes.sha512 === undefined) {
    hashes.sha512 = (m: Uint8Array) => new Uint8Array(createHash('sha512').update(m).digest());
  }
}

/** Synchronous portable verification (SHA-512 from node:crypto). Returns false on any malformed input. */
export function ed25519VerifyPortable(publicKey: Uint8Array, msg: Uint8Array, signature: Uint8Array): boolean {
  if (!wellFormed(publicKey, msg, signature)) return false;
  ensureSyncSha512();
  try {
    return verify(signature, msg, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

/** Asynchronous portable verification (SHA-512 from WebCrypto): runs wherever WebCrypto exists. */
export async function ed25519VerifyPortableAsync(publicKey: Uint8Array, msg: Uint8Array, signature: Uint8Array): Promise<boolean> {
  if (!wellFormed(publicKey, msg, signature)) return false;
  try {
    return await verifyAsync(signature, msg, publicKey, { zip215: false });
  } catch {
    return false;
  }
}
