// Synchronous reads of a ledger (getSync / getEncodedSync): the same answers as get / getEncoded for
// durable, committed-but-unwritten and uncommitted txns, and for seqNos out of range; and the
// synchronous roots and proofs (rootAtSync, consistencyProofSync, inclusionProofSync) against a
// tree recomputed from every leaf.
import { expect } from 'chai';
import { decodeMsgpack, encodeMsgpack, type Txn } from '@quire/common';
import {
  Ledger,
  StorageErrorCode,
  merkleLeafHash,
  merkleRootOfLeafHashes,
  openMemoryKvStore,
  verifyConsistency,
  verifyInclusion,
  type KvStore,
} from '../../src/index.js';
import { expectCode, mkTxn, mkTxns } from './ledger-helpers.js';

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
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
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

  it('reads the txns made durable last from memory, older ones from the store, the same either way', async () => {
    // the store's synchronous reads of the txn log counted: a Proxy over the real store
    let txnReads = 0;
    const counting = new Proxy(kv, {
      get(target, prop, receiver): unknown {
        if (prop === 'getSync')
          return (bucket: string, key: Uint8Array) => {
            if (bucket === 'txn/1') txnReads++;
            return target.getSync(bucket, key);
          };
        const v: unknown = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const ledger = await Ledger.open({ ledgerId: 1, recentTxnEntries: 4 }, { kv: counting });
    const reference = await Ledger.open({ ledgerId: 2, recentTxnEntries: 0 }, { kv });
    for (const l of [ledger, reference]) {
      l.append(mkTxns(1, 3));
      await l.commit();
      l.append(mkTxns(4, 3));
      await l.commit();
    }
    txnReads = 0;
    // 3..6 kept (the last 4 made durable): no read of the store
    for (const n of [3, 4, 5, 6]) expect(ledger.getSync(n)?.txn.data.dest).to.equal(`dest-${n}`);
    expect(txnReads).to.equal(0);
    for (const n of [1, 2]) expect(ledger.getSync(n)?.txn.data.dest).to.equal(`dest-${n}`);
    expect(txnReads).to.equal(2);
    for (let n = 1; n <= 7; n++) {
      expect(ledger.getEncodedSync(n), `bytes ${n}`).to.deep.equal(reference.getEncodedSync(n));
      expect(await ledger.get(n), `txn ${n}`).to.deep.equal(await reference.get(n));
    }
    // a batch larger than the window keeps its last txns only
    ledger.append(mkTxns(7, 6));
    await ledger.commit();
    txnReads = 0;
    for (const n of [9, 10, 11, 12]) expect(ledger.getSync(n)?.txn.data.dest).to.equal(`dest-${n}`);
    expect(txnReads).to.equal(0);
    expect(ledger.getSync(8)?.txn.data.dest).to.equal('dest-8');
    expect(txnReads).to.equal(1);
  });

  it('refuses a recent txn window that is negative or not an integer with INVALID_OPTION', async () => {
    for (const bad of [-1, 2.5, Number.NaN]) {
      await expectCode(Ledger.open({ ledgerId: 1, recentTxnEntries: bad }, { kv }), StorageErrorCode.INVALID_OPTION, {
        option: 'recentTxnEntries',
        value: bad,
      });
      await expectCode(Ledger.open({ ledgerId: 1, recentTxnBytes: bad }, { kv }), StorageErrorCode.INVALID_OPTION, {
        option: 'recentTxnBytes',
        value: bad,
      });
    }
  });

  it('keeps the recent txns within their byte bound: the last ones that fit, the same bytes read', async () => {
    // txns of 1-4 KiB (their data padded), made durable in batches of 5
    const big = (i: number): Txn => mkTxn(i, { pad: 'x'.repeat(1024 * (1 + (i % 4))) });
    const bound = 10 * 1024;
    const ledger = await Ledger.open({ ledgerId: 1, recentTxnEntries: 1000, recentTxnBytes: bound }, { kv });
    const reference = await Ledger.open({ ledgerId: 2, recentTxnEntries: 0 }, { kv });
    const sizes: number[] = [];
    for (let b = 0; b < 6; b++) {
      for (const l of [ledger, reference]) {
        l.append(Array.from({ length: 5 }, (_, j) => big(b * 5 + j + 1)));
        await l.commit();
      }
      for (let j = 1; j <= 5; j++) sizes.push(reference.getEncodedSync(b * 5 + j)?.byteLength ?? 0);
      expect(ledger.recentTxnMemory, `after batch ${b}`).to.be.at.most(bound).and.above(0);
      // what it holds is the txns durable last that fit, no fewer
      let fit = 0;
      let n = 0;
      for (let k = sizes.length - 1; k >= 0 && fit + (sizes[k] ?? 0) <= bound; k--) {
        fit += sizes[k] ?? 0;
        n++;
      }
      expect(ledger.recentTxnMemory, `after batch ${b}`).to.equal(fit);
      expect(n).to.be.at.least(2);
    }
    for (let n = 1; n <= 30; n++) expect(ledger.getEncodedSync(n), `bytes ${n}`).to.deep.equal(reference.getEncodedSync(n));
    // a txn larger than the bound on its own: none kept, and still read right
    ledger.append([mkTxn(31, { pad: 'y'.repeat(bound) })]);
    await ledger.commit();
    expect(ledger.recentTxnMemory).to.equal(0);
    expect(ledger.getSync(31)?.txn.data.dest).to.equal('dest-31');
    expect(ledger.getSync(30)?.txn.data.dest).to.equal('dest-30');
  });

  it('keeps a copy of caught-up txn bytes that are views into a larger buffer, never the buffer', async () => {
    // a CATCHUP_REP-like frame: the txns' MP inside a 64 KiB network buffer, decoded keeping each txn's bytes (views)
    const txns = Array.from({ length: 3 }, (_, j) => mkTxn(j + 1, { pad: 'z'.repeat(100) }));
    txns.forEach((t, j) => (t.txnMetadata = { seqNo: j + 1 }));
    const encoded = txns.map((t) => encodeMsgpack(t));
    const frame = Buffer.alloc(64 * 1024);
    frame[0] = 0x90 | txns.length; // fixarray
    let at = 1;
    for (const e of encoded) {
      frame.set(e, at);
      at += e.length;
    }
    const received = decodeMsgpack(frame.subarray(0, at), { keepMapsAtDepth: 1 }) as Txn[];
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    ledger.append(received);
    await ledger.commit();
    const held = encoded.reduce((n, e) => n + e.length, 0);
    expect(ledger.recentTxnMemory).to.equal(held);
    for (let n = 1; n <= 3; n++) expect(ledger.getEncodedSync(n), `bytes ${n}`).to.deep.equal(encoded[n - 1]);
  });

  it('reads what an earlier instance wrote, after reopening', async () => {
    const first = await Ledger.open({ ledgerId: 2 }, { kv });
    first.append(mkTxns(1, 4));
    await first.commit();
    const again = await Ledger.open({ ledgerId: 2 }, { kv });
    expect(again.getSync(4)?.txn.data.dest).to.equal('dest-4');
    await expectSameAsAsync(again, [0, 1, 4, 5]);
  });

  it('answers undefined out of range and refuses a seqNo that is not an integer', async () => {
    const ledger = await Ledger.open({ ledgerId: 0 }, { kv });
    expect(ledger.getSync(1)).to.equal(undefined);
    expect(ledger.getSync(0)).to.equal(undefined);
    expect(ledger.getSync(-3)).to.equal(undefined);
    await expectCode(() => ledger.getSync(1.5), StorageErrorCode.INVALID_SEQ_NO);
    await expectCode(() => ledger.getEncodedSync(Number.NaN), StorageErrorCode.INVALID_SEQ_NO);
    await expectCode(() => ledger.getSync('1' as unknown as number), StorageErrorCode.INVALID_SEQ_NO);
  });

  it('gives a copy of the stored bytes', async () => {
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    ledger.append(mkTxns(1, 1));
    const bytes = ledger.getEncodedSync(1)!;
    bytes.fill(0);
    expect(ledger.getEncodedSync(1)).to.not.deep.equal(bytes);
  });

  describe('roots and proofs', () => {
    /** Leaf hashes recomputed from the stored bytes: the independent reference. */
    const leaves = (ledger: Ledger): Uint8Array[] => Array.from({ length: ledger.uncommittedSize }, (_, i) => merkleLeafHash(ledger.getEncodedSync(i + 1)!));
    const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

    function expectProofs(ledger: Ledger, sizes: number[]): void {
      const all = leaves(ledger);
      const roots = new Map<number, Uint8Array>();
      for (const n of sizes) {
        const want = merkleRootOfLeafHashes(all.slice(0, n));
        roots.set(n, want);
        expect(hex(ledger.rootAtSync(n)), `root ${n}`).to.equal(hex(want));
      }
      for (const m of sizes) {
        for (const n of sizes) {
          if (m > n) continue;
          const proof = ledger.consistencyProofSync(m, n);
          expect(() => verifyConsistency(m, n, roots.get(m)!, roots.get(n)!, proof), `${m} -> ${n}`).to.not.throw();
        }
      }
      for (const n of sizes.filter((x) => x > 0)) {
        for (const seqNo of [1, Math.ceil(n / 2), n]) {
          const path = ledger.inclusionProofSync(seqNo, n);
          expect(() => verifyInclusion(all[seqNo - 1]!, seqNo - 1, n, path, roots.get(n)!), `${seqNo} in ${n}`).to.not.throw();
        }
      }
    }

    it('match a tree recomputed from every leaf, for durable, committed-unwritten and uncommitted sizes, and after reopening', async () => {
      const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
      ledger.append(mkTxns(1, 37));
      await ledger.commit();
      ledger.append(mkTxns(38, 20));
      const wb = kv.batch();
      ledger.commit(20, wb); // committed, not written: served from memory
      ledger.append(mkTxns(58, 9)); // uncommitted tail
      const sizes = [0, 1, 2, 15, 16, 17, 31, 32, 33, 37, 38, 50, 57, 60, 66];
      expectProofs(ledger, sizes);
      await wb.write();
      expectProofs(ledger, sizes);
      ledger.discard();
      const again = await Ledger.open({ ledgerId: 1 }, { kv });
      expectProofs(again, [0, 1, 16, 33, 56, 57]);
      // the async forms give the same answers
      expect(hex(await again.rootAt(33))).to.equal(hex(again.rootAtSync(33)));
      expect((await again.consistencyProof(17, 57)).map(hex)).to.deep.equal(again.consistencyProofSync(17, 57).map(hex));
      expect((await again.inclusionProof(5)).map(hex)).to.deep.equal(again.inclusionProofSync(5).map(hex));
    });

    it("writeProofs: each txn's root and audit path at its own size, equal to rootAtSync and inclusionProofSync", async () => {
      const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
      ledger.append(mkTxns(1, 70));
      await ledger.commit(45);
      const all = leaves(ledger);
      for (const [from, to] of [
        [1, 1],
        [1, 70],
        [2, 9],
        [16, 17],
        [31, 46],
        [46, 70],
        [64, 64],
      ] as const) {
        const got = ledger.writeProofs(from, to);
        expect(got).to.have.length(to - from + 1);
        got.forEach((p, i) => {
          const s = from + i;
          expect(hex(p.root), `root ${s}`).to.equal(hex(ledger.rootAtSync(s)));
          expect(p.auditPath.map(hex), `path ${s}`).to.deep.equal(ledger.inclusionProofSync(s, s).map(hex));
          expect(() => verifyInclusion(all[s - 1]!, s - 1, s, p.auditPath, p.root)).to.not.throw();
        });
      }
      await expectCode(() => ledger.writeProofs(0, 3), StorageErrorCode.OUT_OF_RANGE);
      await expectCode(() => ledger.writeProofs(5, 4), StorageErrorCode.OUT_OF_RANGE);
      await expectCode(() => ledger.writeProofs(1, 71), StorageErrorCode.OUT_OF_RANGE);
    });

    it('give copies, and refuse sizes out of range with OUT_OF_RANGE', async () => {
      const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
      ledger.append(mkTxns(1, 16));
      await ledger.commit();
      const root = ledger.rootAtSync(16);
      root.fill(0);
      ledger.rootAtSync(8).fill(0);
      ledger.consistencyProofSync(3, 16).forEach((h) => h.fill(0));
      ledger.inclusionProofSync(1, 16).forEach((h) => h.fill(0));
      expectProofs(ledger, [0, 3, 8, 16]);
      await expectCode(() => ledger.rootAtSync(17), StorageErrorCode.OUT_OF_RANGE);
      await expectCode(() => ledger.rootAtSync(-1), StorageErrorCode.OUT_OF_RANGE);
      await expectCode(() => ledger.consistencyProofSync(5, 4), StorageErrorCode.OUT_OF_RANGE);
      await expectCode(() => ledger.consistencyProofSync(1, 17), StorageErrorCode.OUT_OF_RANGE);
      await expectCode(() => ledger.inclusionProofSync(0, 16), StorageErrorCode.OUT_OF_RANGE);
      await expectCode(() => ledger.inclusionProofSync(3, 2), StorageErrorCode.OUT_OF_RANGE);
      await expectCode(ledger.rootAt(1.5), StorageErrorCode.OUT_OF_RANGE);
    });
  });
});
