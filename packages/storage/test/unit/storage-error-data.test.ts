// StorageError's table of each code's data (StorageErrorData): a `new StorageError` (or ProofError...) is checked at
// compile time to carry its code's data (the @ts-expect-error lines fail the tests' typecheck once such a mistake
// compiles), the cause is kept, and the raisers give what the table says.
import { expect } from 'chai';
import { expectCode } from '@quire/testing';
import {
  GenesisError,
  GenesisErrorCode,
  ProofError,
  SideStoreError,
  SideStoreErrorCode,
  SnapshotError,
  SnapshotErrorCode,
  StorageError,
  StorageErrorCode,
  ValueError,
  merkleLeafHash,
  verifyInclusion,
} from '@quire/storage';

describe('StorageError: data typed per code', () => {
  it('refuses, at compile time, a code without its data or with the data of another code', () => {
    const made: unknown[] = [
      // @ts-expect-error LOG_GAP requires { ledgerId, seqNo }
      () => new StorageError(StorageErrorCode.LOG_GAP, { ledgerId: 1 }),
      // @ts-expect-error a ledger's id is a number
      () => new StorageError(StorageErrorCode.CORRUPT_TXN, { ledgerId: '1', seqNo: 2, reason: 'r' }),
      // @ts-expect-error PROOF_TOO_LONG carries { expected, length }, not a root
      () => new ProofError(StorageErrorCode.PROOF_TOO_LONG, { root: 'ab' }),
      // @ts-expect-error BATCH_ALREADY_WRITTEN carries nothing
      () => new StorageError(StorageErrorCode.BATCH_ALREADY_WRITTEN, { op: 'write' }),
      // @ts-expect-error a genesis line's error names its line
      () => new GenesisError(GenesisErrorCode.INVALID_TXN, { file: 'f', field: 'ver', reason: 'r' }),
      // @ts-expect-error a side store's corrupt record names its key, not a field
      () => new SideStoreError(SideStoreErrorCode.CORRUPT_RECORD, { store: 's', field: 'f', reason: 'r' }),
      // @ts-expect-error UNSTABLE counts its attempts
      () => new SnapshotError(SnapshotErrorCode.UNSTABLE, { path: 'p', reason: 'r' }),
    ];
    expect(made).to.have.length(7);
  });

  it("builds a genesis error's message from its file, line and data", () => {
    const e = new GenesisError(GenesisErrorCode.SEQ_NO_OUT_OF_ORDER, { file: 'pool_genesis', line: 3, expected: 3, actual: 5 });
    expect(e.message).to.equal('pool_genesis:3: seqNo 5 out of order, expected 3');
    expect(new GenesisError(GenesisErrorCode.EMPTY, { file: 'g' }).message).to.equal('g: genesis file holds no transaction');
  });

  it('holds the code, the data and the cause it was given', () => {
    const cause = new Error('disk');
    const e = new StorageError(StorageErrorCode.KV_IO_FAILED, { op: 'get', reason: 'disk' }, undefined, { cause });
    expect([e.code, e.data, e.cause]).to.deep.equal([StorageErrorCode.KV_IO_FAILED, { op: 'get', reason: 'disk' }, cause]);
    expect(new StorageError(StorageErrorCode.KV_CLOSED).data).to.deep.equal({});
  });

  it('names a malformed proof element by what it is, its length and its index in the path', () => {
    const leaf = merkleLeafHash(new Uint8Array([1]));
    const e = expectCode(() => verifyInclusion(leaf, 0, 2, [new Uint8Array(31)], leaf), ProofError, StorageErrorCode.PROOF_MALFORMED);
    expect(e.data).to.deep.equal({ what: 'path', length: 31, index: 0 });
    const root = expectCode(() => verifyInclusion(leaf, 0, 1, [], new Uint8Array(3)), ProofError, StorageErrorCode.PROOF_MALFORMED);
    expect(root.data).to.deep.equal({ what: 'root', length: 3 });
    expectCode(() => verifyInclusion(leaf, 2, 2, [], leaf), ValueError, StorageErrorCode.INVALID_PROOF_ARGUMENT, { what: 'leafIndex', value: 2, treeSize: 2 });
  });
});
