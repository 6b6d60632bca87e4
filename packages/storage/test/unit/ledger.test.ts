import { expect } from 'chai';
import { decodeMsgpack, encodeMsgpack } from '@quire/common';
import {
  EMPTY_ROOT,
  Ledger,
  StorageErrorCode,
  ledgerBuckets,
  merkleLeafHash,
  openMemoryKvStore,
  seqNoKey,
  verifyConsistency,
  verifyInclusion,
  type KvStore,
} from '../../src/index.js';
import { expectCode, mkTxn, mkTxns } from './ledger-helpers.js';
import { hex, mth } from './merkle-model.js';

describe('Ledger', () => {
  let kv: KvStore;
  beforeEach(async () => {
    kv = await openMemoryKvStore();
  });
  afterEach(() => kv.close());

  async function leavesOf(ledger: Ledger, n: number): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    for (let i = 1; i <= n; i++) out.push(merkleLeafHash((await ledger.getEncoded(i))!));
    return out;
  }

  it('starts empty', async () => {
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    expect(ledger.size).to.equal(0);
    expect(ledger.uncommittedSize).to.equal(0);
    expect(hex(ledger.root)).to.equal(hex(EMPTY_ROOT));
    expect(hex(ledger.uncommittedRoot)).to.equal(hex(EMPTY_ROOT));
    expect(hex(await ledger.rootAt(0))).to.equal(hex(EMPTY_ROOT));
    expect(await ledger.get(1)).to.equal(undefined);
    expect(ledger.recovery).to.deep.include({ storedSize: undefined, size: 0, rebuiltLeaves: 0 });
  });

  describe('txns decoded from a CATCHUP_REP with their bytes kept (takeDecodedEncoding)', () => {
    /** `txns` (with their seqNos) inside a reply-like map, decoded as a node decodes a CATCHUP_REP */
    const received = (bytes: Uint8Array[]): Record<string, unknown>[] => {
      const parts = bytes.map((b, i) => Buffer.concat([encodeMsgpack(String(i + 1)), b]));
      const map = Buffer.concat([Buffer.from([0x80 | bytes.length]), ...parts]);
      const reply = Buffer.concat([Buffer.from([0x81, 0xa4, ...Buffer.from('txns')]), map]);
      const value = decodeMsgpack(reply, { keepMapsAtDepth: 2 }) as { txns: Record<string, Record<string, unknown>> };
      return bytes.map((_, i) => value.txns[String(i + 1)] ?? {});
    };

    it('canonical bytes: the same leaves, root and stored bytes as the txns encoded here', async () => {
      const txns = mkTxns(1, 3).map((t, i) => ({ ...t, txnMetadata: { seqNo: i + 1 } }));
      const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
      const r = ledger.append(received(txns.map((t) => encodeMsgpack(t))) as never);
      const fresh = await Ledger.open({ ledgerId: 2 }, { kv });
      expect(hex(r.root)).to.equal(hex(fresh.append(txns).root));
      for (let i = 1; i <= 3; i++) expect(hex((await ledger.getEncoded(i)) ?? new Uint8Array())).to.equal(hex(encodeMsgpack(txns[i - 1])));
    });

    it('bytes that are not canonical are what is hashed and stored, so they do not prove against the root of MP(txn)', async () => {
      const t = { ...mkTxn(1), txnMetadata: { seqNo: 1 } };
      const canonical = encodeMsgpack(t);
      // "ver" then "1" as a str8 (d9 01 31) instead of a fixstr (a1 31): the same value, another encoding
      const at = Buffer.from(canonical).indexOf(Buffer.from([0xa3, 0x76, 0x65, 0x72, 0xa1, 0x31]));
      expect(at).to.be.greaterThan(0);
      const other = Buffer.concat([canonical.subarray(0, at + 4), Buffer.from([0xd9, 0x01, 0x31]), canonical.subarray(at + 6)]);
      const [txn] = received([other]);
      expect(txn).to.deep.equal(t);
      const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
      const r = ledger.append([txn] as never);
      expect(hex(r.root)).to.equal(hex(merkleLeafHash(other)));
      expect(hex(r.root)).to.not.equal(hex(merkleLeafHash(canonical)));
      ledger.discard();
      // the bytes are given once: appended again, the txn is encoded
      expect(hex(ledger.append([txn] as never).root)).to.equal(hex(merkleLeafHash(canonical)));
    });

    it('a txn without its seqNo gets it and is encoded: the bytes received are not used', async () => {
      const t = mkTxn(1);
      const [txn] = received([encodeMsgpack(t)]);
      const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
      const r = ledger.append([txn] as never);
      expect(hex(r.root)).to.equal(hex(merkleLeafHash(encodeMsgpack({ ...t, txnMetadata: { seqNo: 1 } }))));
    });
  });

  it('appends to the uncommitted tail, setting seqNos, and stores MP(txn) as the leaf data', async () => {
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    const txns = mkTxns(1, 3);
    const r = ledger.append(txns);
    expect(r.first).to.equal(1);
    expect(r.last).to.equal(3);
    expect(txns.map((t) => t.txnMetadata.seqNo)).to.deep.equal([1, 2, 3]);
    expect(ledger.size).to.equal(0);
    expect(ledger.uncommittedSize).to.equal(3);
    expect(hex(ledger.root)).to.equal(hex(EMPTY_ROOT));
    const leaves = await leavesOf(ledger, 3);
    expect(hex(r.root)).to.equal(hex(mth(leaves)));
    expect(hex(ledger.uncommittedRoot)).to.equal(hex(r.root));
    expect(await ledger.get(2)).to.deep.equal(txns[1]);
    expect(decodeMsgpack((await ledger.getEncoded(3))!)).to.deep.equal(txns[2]);
    expect(hex(ledger.leafHash(1))).to.equal(hex(leaves[0]!));
    const empty = ledger.append([]);
    expect(empty).to.deep.include({ first: 4, last: 3 });
  });

  it('checks given seqNos and appends all or nothing', async () => {
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    const good = mkTxn(1);
    const wrong = mkTxn(2);
    wrong.txnMetadata.seqNo = 7;
    await expectCode(() => ledger.append([good, wrong]), StorageErrorCode.SEQ_NO_MISMATCH, { expected: 2, actual: '7', index: 1 });
    expect(ledger.uncommittedSize).to.equal(0);
    expect(good.txnMetadata.seqNo, 'seqNo set on an earlier txn is undone').to.equal(undefined);
    const given = mkTxn(1);
    given.txnMetadata.seqNo = 1;
    ledger.append([given]);
    expect(ledger.uncommittedSize).to.equal(1);
    await expectCode(() => ledger.append([{ txn: 5 } as never]), StorageErrorCode.INVALID_TXN, { index: 0 });
    await expectCode(() => ledger.append(['x' as never]), StorageErrorCode.INVALID_TXN);
    await expectCode(() => ledger.append({} as never), StorageErrorCode.INVALID_TXN);
    const unencodable = mkTxn(2, { f: () => 1 });
    await expectCode(() => ledger.append([unencodable]), StorageErrorCode.INVALID_TXN);
    expect(unencodable.txnMetadata).to.deep.equal({});
    expect(ledger.uncommittedSize).to.equal(1);
  });

  it('commits into a caller batch: visible at once, durable when the batch is written', async () => {
    const ledger = await Ledger.open({ ledgerId: 2 }, { kv });
    ledger.append(mkTxns(1, 5));
    const root5 = ledger.uncommittedRoot;
    const batch = kv.batch();
    batch.put('state-head/test', new Uint8Array([1]), new Uint8Array([42]));
    ledger.commit(3, batch);
    expect(ledger.size).to.equal(3);
    expect(ledger.uncommittedSize).to.equal(5);
    const leaves = await leavesOf(ledger, 5);
    expect(hex(ledger.root)).to.equal(hex(mth(leaves.slice(0, 3))));
    expect(hex(ledger.uncommittedRoot)).to.equal(hex(root5));
    // not yet on disk, but readable and provable
    expect(kv.getSync(ledgerBuckets(2).txn, seqNoKey(1))).to.equal(undefined);
    expect((await ledger.get(1))!.txnMetadata.seqNo).to.equal(1);
    verifyInclusion(leaves[1]!, 1, 3, await ledger.inclusionProof(2), ledger.root);
    await batch.write();
    expect(kv.getSync(ledgerBuckets(2).txn, seqNoKey(3))).to.not.equal(undefined);
    expect(kv.getSync(ledgerBuckets(2).txn, seqNoKey(4))).to.equal(undefined);
    expect(kv.getSync('state-head/test', new Uint8Array([1]))).to.deep.equal(new Uint8Array([42]));
    verifyInclusion(leaves[1]!, 1, 3, await ledger.inclusionProof(2), ledger.root);
    verifyConsistency(3, 5, ledger.root, ledger.uncommittedRoot, await ledger.consistencyProof(3, 5));
    // the rest with its own batch
    await ledger.commit();
    expect(ledger.size).to.equal(5);
    expect(hex(ledger.root)).to.equal(hex(root5));
    const reopened = await Ledger.open({ ledgerId: 2 }, { kv });
    expect(reopened.size).to.equal(5);
    expect(hex(reopened.root)).to.equal(hex(root5));
    expect(reopened.recovery).to.deep.include({ storedSize: 5, size: 5, rebuiltFrom: undefined, removedRecords: 0 });
  });

  it('keeps several batches in flight: commit the oldest, discard the newest', async () => {
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    const a = ledger.append(mkTxns(1, 4));
    const b = ledger.append(mkTxns(5, 3));
    const c = ledger.append(mkTxns(8, 2));
    expect([a.last, b.last, c.last]).to.deep.equal([4, 7, 9]);
    ledger.discard(2); // revert c
    expect(ledger.uncommittedSize).to.equal(7);
    expect(hex(ledger.uncommittedRoot)).to.equal(hex(b.root));
    expect(await ledger.get(8)).to.equal(undefined);
    const batchA = kv.batch();
    ledger.commit(4, batchA);
    const batchB = kv.batch();
    ledger.commit(3, batchB);
    expect(hex(ledger.root)).to.equal(hex(b.root));
    // re-append after a revert gives the same seqNos again
    const c2 = ledger.append(mkTxns(8, 2));
    expect(hex(c2.root)).to.equal(hex(c.root));
    ledger.discard();
    expect(ledger.uncommittedSize).to.equal(7);
    await batchA.write();
    await batchB.write();
    const reopened = await Ledger.open({ ledgerId: 1 }, { kv });
    expect(hex(reopened.root)).to.equal(hex(b.root));
    expect(reopened.uncommittedSize).to.equal(7);
  });

  it('iterates ranges over stored, pending and uncommitted txns', async () => {
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    ledger.append(mkTxns(1, 10));
    await ledger.commit(4);
    const pending = kv.batch();
    ledger.commit(3, pending); // 5..7 committed, not yet written; 8..10 uncommitted
    const seen: number[] = [];
    for await (const [seqNo, txn] of ledger.range(2, 9)) {
      expect(txn.txnMetadata.seqNo).to.equal(seqNo);
      seen.push(seqNo);
    }
    expect(seen).to.deep.equal([2, 3, 4, 5, 6, 7, 8, 9]);
    const all: number[] = [];
    for await (const [seqNo] of ledger.range(1, 100)) all.push(seqNo);
    expect(all).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const none: number[] = [];
    for await (const [seqNo] of ledger.range(5, 4)) none.push(seqNo);
    expect(none).to.deep.equal([]);
    await pending.write();
    const after: number[] = [];
    for await (const [seqNo] of ledger.range(6, 8)) after.push(seqNo);
    expect(after).to.deep.equal([6, 7, 8]);
    await expectCode(async () => {
      for await (const _ of ledger.range(0, 3)) void _;
    }, StorageErrorCode.OUT_OF_RANGE);
  });

  it('rejects out-of-range counts, sizes and seqNos', async () => {
    await expectCode(Ledger.open({ ledgerId: -1 }, { kv }), StorageErrorCode.INVALID_LEDGER_ID);
    await expectCode(Ledger.open({ ledgerId: 1.5 }, { kv }), StorageErrorCode.INVALID_LEDGER_ID);
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    ledger.append(mkTxns(1, 5));
    await ledger.commit(2);
    await expectCode(ledger.commit(4), StorageErrorCode.OUT_OF_RANGE, { what: 'count', max: 3 });
    await expectCode(() => ledger.commit(-1, kv.batch()), StorageErrorCode.OUT_OF_RANGE);
    await expectCode(() => ledger.discard(4), StorageErrorCode.OUT_OF_RANGE);
    await expectCode(ledger.rootAt(6), StorageErrorCode.OUT_OF_RANGE);
    await expectCode(ledger.rootAt(-1), StorageErrorCode.OUT_OF_RANGE);
    await expectCode(ledger.inclusionProof(0), StorageErrorCode.OUT_OF_RANGE);
    await expectCode(ledger.inclusionProof(3), StorageErrorCode.OUT_OF_RANGE, { what: 'seqNo', max: 2 }); // default size is the committed size
    await expectCode(ledger.inclusionProof(1, 6), StorageErrorCode.OUT_OF_RANGE);
    await expectCode(ledger.consistencyProof(4, 3), StorageErrorCode.OUT_OF_RANGE);
    await expectCode(ledger.get(1.5), StorageErrorCode.INVALID_SEQ_NO);
    expect(await ledger.get(0)).to.equal(undefined);
    expect(await ledger.get(6)).to.equal(undefined);
    // uncommitted sizes are provable too
    const leaves = await leavesOf(ledger, 5);
    verifyInclusion(leaves[4]!, 4, 5, await ledger.inclusionProof(5, 5), ledger.uncommittedRoot);
    ledger.commit(0, kv.batch());
    ledger.discard(0);
    expect(ledger.uncommittedSize).to.equal(5);
  });

  it('refuses changes after a batch carrying its txns failed to write', async () => {
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    ledger.append(mkTxns(1, 2));
    const batch = kv.batch();
    ledger.commit(undefined, batch);
    await kv.close();
    await expectCode(batch.write(), StorageErrorCode.KV_CLOSED);
    await expectCode(() => ledger.append([mkTxn(3)]), StorageErrorCode.LEDGER_WRITE_FAILED, { ledgerId: 1 });
    await expectCode(ledger.commit(), StorageErrorCode.LEDGER_WRITE_FAILED);
    // what was committed in memory is still readable
    expect((await ledger.get(2))!.txnMetadata.seqNo).to.equal(2);
  });

  it('keeps ledgers apart in one store', async () => {
    const l1 = await Ledger.open({ ledgerId: 1 }, { kv });
    const l2 = await Ledger.open({ ledgerId: 2 }, { kv });
    l1.append(mkTxns(1, 3));
    l2.append([mkTxn(100)]);
    const batch = kv.batch();
    l1.commit(undefined, batch);
    l2.commit(undefined, batch);
    await batch.write();
    expect((await Ledger.open({ ledgerId: 1 }, { kv })).size).to.equal(3);
    expect((await Ledger.open({ ledgerId: 2 }, { kv })).size).to.equal(1);
    expect((await Ledger.open({ ledgerId: 3 }, { kv })).size).to.equal(0);
  });
});
