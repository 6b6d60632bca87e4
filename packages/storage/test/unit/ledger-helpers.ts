// Shared helpers of the ledger tests.
import { expect } from 'chai';
import type { Txn } from '@quire/common';
import { StorageError } from '../../src/index.js';

export const mkTxn = (i: number, extra: Record<string, unknown> = {}): Txn => ({
  ver: '1',
  txn: { type: '1', data: { dest: `dest-${i}`, i, ...extra }, metadata: { from: 'V4SGRU86Z58d6TV7PBUe6f' } },
  txnMetadata: {},
  reqSignature: {},
});

export const mkTxns = (first: number, count: number): Txn[] => Array.from({ length: count }, (_, j) => mkTxn(first + j));

export async function expectCode(f: Promise<unknown> | (() => unknown), code: string, data?: Record<string, unknown>): Promise<StorageError> {
  try {
    if (typeof f === 'function') await f();
    else await f;
  } catch (e) {
    expect(e, String(e)).to.be.instanceOf(StorageError);
    expect((e as StorageError).code).to.equal(code);
    if (data !== undefined) expect((e as StorageError).data).to.include(data);
    return e as StorageError;
  }
  return expect.fail(`expected ${code}`);
}
