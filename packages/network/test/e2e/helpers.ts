import { b58encode } from '@quire/common';
import { libp2pPrivateKeyFromSeed } from '@quire/crypto';
import { waitUntil } from '@quire/testing';
import type { ValidatorInfo } from '../../src/index.js';

/** The development seed of node `i` ('000…000Node<i>', 32 bytes). */
export function nodeSeed(i: number): Uint8Array {
  return new TextEncoder().encode(`Node${i}`.padStart(32, '0'));
}

/** base58 verkey (NODE.dest) of a seed. */
export async function destOf(seed: Uint8Array): Promise<string> {
  return b58encode((await libp2pPrivateKeyFromSeed(seed)).publicKey.raw);
}

/** Waits until `cond` holds (@quire/testing's waitUntil, polling every 20 ms); fails with `what` after `timeoutMs`. */
export function waitFor(cond: () => boolean, what: string, timeoutMs = 8000): Promise<void> {
  return waitUntil(what, cond, timeoutMs, 20);
}

export function validatorInfo(name: string, dest: string, port: number): ValidatorInfo {
  return { name, dest, host: '127.0.0.1', port };
}
