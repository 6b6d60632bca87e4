// Batch digest (consensus.md §3.4, formats.md §10.2) and multi-signature values (formats.md §9.2).
import { createHash } from 'node:crypto';
import type { MultiSigValue } from './messages.js';
import type { SignedLedgerRoots } from './interfaces.js';

/**
 * hex SHA-256 of the signing serialization of `[originalViewNo, ppTime, d1, ..., dk]`, i.e. of the
 * UTF-8 string `"<v>,<t>,<d1>,...,<dk>"` (integers in decimal, digests as lowercase hex).
 */
export function batchDigest(originalViewNo: number, ppTime: number, reqIdr: readonly string[]): string {
  const parts = [String(originalViewNo), String(ppTime), ...reqIdr];
  return createHash('sha256').update(parts.join(','), 'utf8').digest('hex');
}

export function multiSigValue(roots: SignedLedgerRoots, poolStateRoot: string, ppTime: number): MultiSigValue {
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
