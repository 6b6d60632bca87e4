// The seed of an Ed25519 / BLS key pair (formats.md §2.3), one rule for the node's keys and the SDK's DID keys.
import { fromHex } from './hex.js';

/**
 * The 32 bytes of a seed: 32 raw bytes (the same array), 64 hex digits, or a string of 32 UTF-8 bytes (the
 * development seeds, such as `000000000000000000000000Trustee1`). When `seed` is none of these, the byte length
 * found instead (-1 for a value that is neither bytes nor a string), for the caller's error.
 */
export function decodeSeed(seed: unknown): Uint8Array | number {
  if (seed instanceof Uint8Array) return seed.length === 32 ? seed : seed.length;
  if (typeof seed !== 'string') return -1;
  if (/^[0-9a-fA-F]{64}$/.test(seed)) return fromHex(seed);
  const bytes = new TextEncoder().encode(seed);
  return bytes.length === 32 ? bytes : bytes.length;
}
