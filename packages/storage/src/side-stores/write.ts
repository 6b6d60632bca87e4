import type { KvStore, WriteBatch } from '../kv/kv-store.js';

/**
 * Runs `fill` on the caller's batch (which the caller writes) or on a fresh batch that is written
 * at once. Lets every side-store write take an optional WriteBatch.
 */
export function withBatch(kv: KvStore, batch: WriteBatch | undefined, fill: (b: WriteBatch) => void): Promise<void> | undefined {
  if (batch !== undefined) {
    fill(batch);
    return undefined;
  }
  const own = kv.batch();
  fill(own);
  return own.write();
}
