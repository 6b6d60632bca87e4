// Synchronous reads of a ledger (getSync / getEncodedSync): the same answers as get / getEncoded for
// durable, committed-but-unwritten and uncommitted txns, and for seqNos out of range.
import { expect } from 'chai';
import { encodeMsgpack } from '@quire/common';
import { Ledger, StorageErrorCode, openMemoryKvStore, type KvStore } from '../../src/index.js';
import { expectCode, mkTxns } from './ledger-helpers.js';

describe('Ledger synchronous reads', () => {
  let kv: KvStore;
  beforeEach(async () => {
    kv = await openMemoryKvStore();
  });
  afterEach(() => kv.close());

  async function expectSameAsAsync(ledger: Ledger, seqNos: number[]): Promise<void> {
    for (const n of seqNos) {
      expect(ledger.getSync(n), `txn ${n}`).to.deep.equal(await ledger.get(n));
      expect(ledger.getEncodedSync(n), `bytes ${n}`).to.deep.equal(await ledger.getEncoded(n));
    }
  }

  it('reads durable, committed-unwritten and uncommitted txns', async () => {
    const ledger = await Ledger.open(kv, 1);
    ledger.append(mkTxns(1, 3));
    await ledger.commit();
    // committed into a batch not written yet: served from memory
    ledger.append(mkTxns(4, 2));
    const wb = kv.batch();
    ledger.commit(2, wb);
    // uncommitted tail
    ledger.append(mkTxns(6, 2));
    expect(ledger.getSync(2)?.txn.data.dest).to.equal('dest-2');
    expect(ledger.getSync(5)?.txn.data.dest).to.equal('dest-5');
    expect(ledger.getSync(7)?.txnMetadata.seqNo).to.equal(7);
    expect(ledger.getEncodedSync(7)).to.deep.equal(encodeMsgpack(ledger.getSync(7)));
    await expectSameAsAsync(ledger, [1, 2, 3, 4, 5, 6, 7, 8]);
    await wb.write();
    await expectSameAsAsync(ledger, [4, 5]);
    ledger.discard();
    expect(ledger.getSync(6)).to.equal(undefined);
    expect(ledger.getEncodedSync(7)).to.equal(undefined);
  });

  it('reads what an earlier instance wrote, after reopening', async () => {
    const first = await Ledger.open(kv, 2);
    first.append(mkTxns(1, 4));
    await first.commit();
    const again = await Ledger.open(kv, 2);
    expect(again.getSync(4)?.txn.data.dest).to.equal('dest-4');
    await expectSameAsAsync(again, [0, 1, 4, 5]);
  });

  it('answers undefined out of range and refuses a seqNo that is not an integer', async () => {
    const ledger = await Ledger.open(kv, 0);
    expect(ledger.getSync(1)).to.equal(undefined);
    expect(ledger.getSync(0)).to.equal(undefined);
    expect(ledger.getSync(-3)).to.equal(undefined);
    await expectCode(() => ledger.getSync(1.5), StorageErrorCode.INVALID_SEQ_NO);
    await expectCode(() => ledger.getEncodedSync(Number.NaN), StorageErrorCode.INVALID_SEQ_NO);
    await expectCode(() => ledger.getSync('1' as unknown as number), StorageErrorCode.INVALID_SEQ_NO);
  });

  it('gives a copy of the stored bytes', async () => {
    const ledger = await Ledger.open(kv, 1);
    ledger.append(mkTxns(1, 1));
    const bytes = ledger.getEncodedSync(1)!;
    bytes.fill(0);
    expect(ledger.getEncodedSync(1)).to.not.deep.equal(bytes);
  });
});
