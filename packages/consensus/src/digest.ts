// Multi-signature values (formats.md §9.2) and discarded lists. The batch digest (formats.md §10.2)
// has one definition, in @quire/common, re-exported here.
import type { MultiSignatureValue } from './messages.js';
import type { SignedLedgerRoots } from './interfaces.js';

export { batchDigest } from '@quire/common';

export function multiSigValue(roots: SignedLedgerRoots, poolStateRoot: string, ppTime: number): MultiSignatureValue {
  return {
    ledger_id: roots.ledgerId,
    pool_state_root_hash: poolStateRoot,
    state_root_hash: roots.stateRoot,
    timestamp: ppTime,
    txn_root_hash: roots.txnRoot,
  };
}

/** Canonical JSON of an ascending index list ("[]", "[1,3]"). */
export function encodeDiscarded(indices: readonly number[]): string {
  return `[${indices.join(',')}]`;
}

export function decodeDiscarded(s: string): number[] {
  return JSON.parse(s) as number[];
}
