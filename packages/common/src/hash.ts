/** Hash functions (formats.md 1.3), on node:crypto. Strings are hashed as their UTF-8 bytes. */
import { createHash } from 'node:crypto';

export type HashInput = Uint8Array | string;

function digest(alg: string, data: HashInput): Uint8Array {
  const h = createHash(alg);
  if (typeof data === 'string') h.update(data, 'utf8');
  else h.update(data);
  const b = h.digest();
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

export function sha256(data: HashInput): Uint8Array {
  return digest('sha256', data);
}

/** SHA-256 rendered as lowercase hex. */
export function sha256Hex(data: HashInput): string {
  const h = createHash('sha256');
  if (typeof data === 'string') h.update(data, 'utf8');
  else h.update(data);
  return h.digest('hex');
}

/** SHA3-256 (FIPS 202), never Keccak-256. */
export function sha3_256(data: HashInput): Uint8Array {
  return digest('sha3-256', data);
}
