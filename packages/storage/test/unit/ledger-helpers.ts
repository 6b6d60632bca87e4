// Shared helpers of the ledger tests.
import type { Txn } from '@quire/common';
import { StorageError } from '../../src/index.js';
import { expectCodeAsync } from '@quire/testing';

export const mkTxn = (i: number, extra: Record<string, unknown> = {}): Txn => ({
  ver: '1',
  txn: { type: '1', data: { dest: `dest-${i}`, i, ...extra }, metadata: { from: 'V4SGRU86Z58d6TV7PBUe6f' } },
  txnMetadata: {},
  reqSignature: {},
});

export const mkTxns = (first: number, count: number): Txn[] => Array.from({ length: count }, (_, j) => mkTxn(first + j));

/** Asserts a StorageError with `code` (and `data` among its data): the shared assertion with the storage class bound. */
export const expectCode = (f: Promise<unknown> | (() => unknown), code: string, data?: Record<string, unknown>): Promise<StorageError> =>
  expectCodeAsync(f, StorageError, code, data);
