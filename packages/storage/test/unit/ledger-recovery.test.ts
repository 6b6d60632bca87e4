import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeMsgpack } from '@quire/common';
import {
  Ledger,
  StorageErrorCode,
  ledgerBuckets,
  merkleLeafHash,
  openLevelKvStore,
  openMemoryKvStore,
  seqNoKey,
  verifyConsistency,
  verifyInclusion,
  type KvStore,
} from '../../src/index.js';
import { HashStore, cutTile, tileEntries, tileKey } from '../../src/ledger/hash-store.js';
import { expectCode, mkTxns } from './ledger-helpers.js';
import { hex, mth, modelLeaf } from './merkle-model.js';

const B = ledgerBuckets(1);
const SIZE_KEY = new TextEncoder().encode('size');

async function deleteWhere(kv: KvStore, bucket: string, pred: (k: Uint8Array) => boolean): Promise<number> {
  const batch = kv.batch();
  for await (const [k] of kv.iterate(bucket)) if (pred(k)) batch.del(bucket, k);
  const n = batch.length;
  await batch.write();
  return n;
}

/** Cuts the hash store back to what a ledger of `size` leaves holds (as a torn copy might). */
async function truncateTiles(kv: KvStore, size: number, levels: (level: number) => boolean = () => true): Promise<void> {
  const batch = kv.batch();
  for await (const [k, v] of kv.iterate(B.tile)) {
    const level = k[0]!;
    if (!levels(level)) continue;
    const index = Buffer.from(k).readUIntBE(3, 6);
    const n = tileEntries(v)!;
    const valid = Math.max(0, Math.min(n, Math.floor(size / 16 ** level) - index * 16));
    if (valid === 0) batch.del(B.tile, k);
    else if (valid < n) batch.put(B.tile, k, cutTile(v, n, valid));
  }
  await batch.write();
}

describe('Ledger recovery at open', () => {
  let kv: KvStore;
  let leaves: Uint8Array[];
  let root100: Uint8Array;

  beforeEach(async () => {
    kv = await openMemoryKvStore();
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    for (let s = 1; s <= 100; s += 10) {
      ledger.append(mkTxns(s, 10));
      await ledger.commit();
    }
    leaves = [];
    for (let i = 1; i <= 100; i++) leaves.push(merkleLeafHash((await ledger.getEncoded(i))!));
    root100 = ledger.root;
    expect(hex(root100)).to.equal(hex(mth(leaves)));
  });
  afterEach(() => kv.close());

  async function expectSound(ledger: Ledger, size: number): Promise<void> {
    expect(ledger.size).to.equal(size);
    expect(hex(ledger.root)).to.equal(hex(mth(leaves.slice(0, size))));
    for (const m of [1, Math.ceil(size / 3), size]) {
      verifyInclusion(leaves[m - 1]!, m - 1, size, await ledger.inclusionProof(m), ledger.root);
      verifyConsistency(m, size, await ledger.rootAt(m), ledger.root, await ledger.consistencyProof(m, size));
    }
    const checked = await Ledger.open({ ledgerId: 1, verify: true }, { kv });
    expect(checked.recovery.repairedRecords, 'hash store agrees with the log').to.equal(0);
  }

  it('reloads an intact store without rebuilding', async () => {
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    expect(ledger.recovery).to.deep.equal({ storedSize: 100, size: 100, rebuiltFrom: undefined, rebuiltLeaves: 0, removedRecords: 0, repairedRecords: 0 });
    await expectSound(ledger, 100);
  });

  it('rebuilds a truncated hash store from the log', async () => {
    await truncateTiles(kv, 60);
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    expect(ledger.recovery).to.deep.include({ storedSize: 100, size: 100, rebuiltFrom: 60, rebuiltLeaves: 40 });
    await expectSound(ledger, 100);
  });

  it('rebuilds everything when the subtree hashes are gone', async () => {
    await deleteWhere(kv, B.tile, (k) => k[0]! >= 1);
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    expect(ledger.recovery).to.deep.include({ rebuiltFrom: 0, rebuiltLeaves: 100 });
    await expectSound(ledger, 100);
  });

  it('rewrites a missing or torn committed-size record', async () => {
    await kv.batch().del(B.meta, SIZE_KEY).write();
    let ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    expect(ledger.recovery).to.deep.include({ storedSize: undefined, size: 100, rebuiltLeaves: 0 });
    await expectSound(ledger, 100);
    await kv
      .batch()
      .put(B.meta, SIZE_KEY, Uint8Array.of(1, 2, 3))
      .write();
    ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    expect(ledger.recovery).to.deep.include({ storedSize: undefined, size: 100 });
    await expectSound(ledger, 100);
  });

  it('follows the log when it is shorter than the committed size, and continues from there', async () => {
    await deleteWhere(kv, B.txn, (k) => Buffer.from(k).readUIntBE(2, 6) > 90);
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    expect(ledger.recovery).to.deep.include({ storedSize: 100, size: 90 });
    expect(ledger.recovery.removedRecords).to.be.greaterThan(0);
    await expectSound(ledger, 90);
    const txns = mkTxns(91, 10);
    ledger.append(txns);
    await ledger.commit();
    expect(hex(ledger.root)).to.equal(hex(root100)); // same txns again, same root
    expect(txns[0]!.txnMetadata.seqNo).to.equal(91);
    await expectSound(await Ledger.open({ ledgerId: 1 }, { kv }), 100);
  });

  it('follows the log when it is longer than the committed size', async () => {
    await kv.batch().put(B.meta, SIZE_KEY, seqNoKey(80)).write();
    await truncateTiles(kv, 80);
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    expect(ledger.recovery).to.deep.include({ storedSize: 80, size: 100, rebuiltFrom: 80 });
    await expectSound(ledger, 100);
  });

  it('removes stale hash records beyond the log', async () => {
    // leaves 96..99 are in tile 6 of level 0; give it a fifth, and add a tile far beyond
    const tile6 = tileKey(0, 6);
    const stored = kv.getSync(B.tile, tile6)!;
    expect(tileEntries(stored)).to.equal(4);
    const longer = new Uint8Array(stored.length + 32); // 5 leaves + 2 + 1 above them: one more hash
    longer.set(stored.subarray(0, 4 * 32));
    longer.set(stored.subarray(4 * 32), 5 * 32);
    expect(tileEntries(longer)).to.equal(5);
    await kv
      .batch()
      .put(B.tile, tile6, longer)
      .put(B.tile, tileKey(0, 20), new Uint8Array(3 * 32))
      .write();
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    expect(ledger.recovery.removedRecords).to.equal(2);
    expect(kv.getSync(B.tile, tile6)).to.deep.equal(stored);
    await expectSound(ledger, 100);
  });

  it('passes over a key among the level-0 tiles that is not a tile key', async () => {
    // 10 bytes that sort after the key of tile 6 (leaves 96..99) and before level 1: no tile key has this length
    const stray = new Uint8Array(10);
    stray.set(tileKey(0, 6));
    await kv
      .batch()
      .put(B.tile, stray, new Uint8Array(4 * 32 + 2 * 32 + 32))
      .write();
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    expect(ledger.recovery).to.deep.equal({ storedSize: 100, size: 100, rebuiltFrom: undefined, rebuiltLeaves: 0, removedRecords: 0, repairedRecords: 0 });
    await expectSound(ledger, 100);
    // a tile beyond the log is still found behind it, and the pass that removes it removes the stray key too
    await kv
      .batch()
      .put(B.tile, tileKey(0, 20), new Uint8Array(3 * 32))
      .write();
    expect((await Ledger.open({ ledgerId: 1 }, { kv })).recovery.removedRecords).to.equal(2);
    expect(kv.getSync(B.tile, stray)).to.equal(undefined);
  });

  it('reports a tile record of no tile length when a hash is read from it', async () => {
    // tile 0 of level 0 (leaves 0..15) is not read by the frontier of 100 leaves: the store opens, and reads fail
    await kv.batch().put(B.tile, tileKey(0, 0), new Uint8Array(5)).write();
    const store = new HashStore(kv, 1, 100);
    for (const [h, i] of [
      [0, 3],
      [2, 1],
    ] as const) {
      await expectCode(() => store.node(h, i), StorageErrorCode.CORRUPT_HASH_STORE, { ledgerId: 1, what: 'tile 0/0', length: 5 });
    }
    expect(hex(store.node(6, 0))).to.equal(hex(mth(leaves.slice(0, 64))));
  });

  it('reports a gap in the log instead of skipping it', async () => {
    await kv.batch().del(B.txn, seqNoKey(50)).write();
    // the quick open checks the ends of the log; reads and a full check find the hole
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    await expectCode(ledger.get(50), StorageErrorCode.LOG_GAP, { ledgerId: 1, seqNo: 50 });
    await expectCode(
      async () => {
        for await (const _ of ledger.range(45, 55)) void _;
      },
      StorageErrorCode.LOG_GAP,
      { seqNo: 50 },
    );
    await expectCode(Ledger.open({ ledgerId: 1, verify: true }, { kv }), StorageErrorCode.LOG_GAP, { ledgerId: 1, seqNo: 50 });
    // when the ends disagree too, the quick open scans the log and finds it
    await kv.batch().del(B.meta, SIZE_KEY).write();
    await expectCode(Ledger.open({ ledgerId: 1 }, { kv }), StorageErrorCode.LOG_GAP, { ledgerId: 1, seqNo: 50 });
  });

  it('repairs a wrong hash record when asked to verify', async () => {
    const tile0 = kv.getSync(B.tile, tileKey(0, 0))!;
    const damaged = Uint8Array.from(tile0);
    damaged.fill(0, 9 * 32, 10 * 32); // leaf 9
    await kv.batch().put(B.tile, tileKey(0, 0), damaged).write();
    const ledger = await Ledger.open({ ledgerId: 1, verify: true }, { kv });
    expect(ledger.recovery).to.deep.include({ repairedRecords: 1, rebuiltFrom: 0 });
    await expectSound(ledger, 100);
  });

  it('stops at batches written out of commit order, and recovers at the next open', async () => {
    const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
    ledger.append(mkTxns(101, 4));
    const first = kv.batch();
    const second = kv.batch();
    ledger.commit(2, first);
    ledger.commit(2, second);
    await second.write();
    await first.write(); // leaves older versions of the committed size and of a tile on disk
    await expectCode(() => ledger.append(mkTxns(105, 1)), StorageErrorCode.LEDGER_WRITE_ORDER, { ledgerId: 1, written: 104, pending: 102 });
    await expectCode(ledger.commit(), StorageErrorCode.LEDGER_WRITE_ORDER);
    const reopened = await Ledger.open({ ledgerId: 1 }, { kv });
    expect(reopened.recovery).to.deep.include({ storedSize: 102, size: 104 });
    expect(hex(reopened.root)).to.equal(hex(ledger.root));
    expect((await Ledger.open({ ledgerId: 1, verify: true }, { kv })).recovery.repairedRecords).to.equal(0);
  });

  describe('corrupt txns', () => {
    it('names the ledger and seqNo when a stored txn is not msgpack', async () => {
      await kv.batch().put(B.txn, seqNoKey(7), Uint8Array.of(0x81, 0xc1)).write();
      const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
      await expectCode(ledger.get(7), StorageErrorCode.CORRUPT_TXN, { ledgerId: 1, seqNo: 7 });
      await expectCode(
        async () => {
          for await (const _ of ledger.range(1, 10)) void _;
        },
        StorageErrorCode.CORRUPT_TXN,
        { seqNo: 7 },
      );
      // a rebuild decodes every txn it hashes: no root is computed over corrupt bytes
      await deleteWhere(kv, B.tile, () => true);
      await expectCode(Ledger.open({ ledgerId: 1 }, { kv }), StorageErrorCode.CORRUPT_TXN, { ledgerId: 1, seqNo: 7 });
      await expectCode(Ledger.open({ ledgerId: 1, verify: true }, { kv }), StorageErrorCode.CORRUPT_TXN, { seqNo: 7 });
    });

    it('names the seqNo when a stored txn is well-formed msgpack of something else', async () => {
      const eighth = kv.getSync(B.txn, seqNoKey(8))!;
      await kv
        .batch()
        .put(B.txn, seqNoKey(7), eighth)
        .put(B.txn, seqNoKey(9), encodeMsgpack([1, 2]))
        .write();
      const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
      await expectCode(ledger.get(7), StorageErrorCode.CORRUPT_TXN, { seqNo: 7, reason: 'holds seqNo 8' });
      await expectCode(ledger.get(9), StorageErrorCode.CORRUPT_TXN, { seqNo: 9 });
      await expectCode(Ledger.open({ ledgerId: 1, verify: true }, { kv }), StorageErrorCode.CORRUPT_TXN, { seqNo: 7 });
    });
  });
});

describe('Ledger recovery of a ledger larger than one rebuild step', () => {
  it('verifies an intact store without rewriting anything, and rebuilds a lost one identically', async () => {
    const kv = await openMemoryKvStore();
    try {
      const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
      for (let s = 1; s <= 5000; s += 500) {
        ledger.append(mkTxns(s, 500));
        await ledger.commit();
      }
      const tiles = new Map<string, string>();
      for await (const [k, v] of kv.iterate(B.tile)) tiles.set(hex(k), hex(v));
      const verified = await Ledger.open({ ledgerId: 1, verify: true }, { kv });
      expect(verified.recovery).to.deep.include({ size: 5000, repairedRecords: 0 });
      await deleteWhere(kv, B.tile, () => true);
      const rebuilt = await Ledger.open({ ledgerId: 1 }, { kv });
      expect(rebuilt.recovery).to.deep.include({ rebuiltFrom: 0, rebuiltLeaves: 5000 });
      expect(hex(rebuilt.root)).to.equal(hex(ledger.root));
      const after = new Map<string, string>();
      for await (const [k, v] of kv.iterate(B.tile)) after.set(hex(k), hex(v));
      expect(after).to.deep.equal(tiles);
    } finally {
      await kv.close();
    }
  });
});

describe('Ledger on classic-level', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'quire-ledger-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reopens with the same root, size and proofs', async () => {
    let kv = await openLevelKvStore(dir);
    const ledger = await Ledger.open({ ledgerId: 3 }, { kv });
    const leaves: Uint8Array[] = [];
    for (let s = 1; s <= 300; s += 30) {
      const txns = mkTxns(s, 30);
      ledger.append(txns);
      for (const t of txns) leaves.push(modelLeaf(encodeMsgpack(t)));
      await ledger.commit();
    }
    ledger.append(mkTxns(301, 5)); // uncommitted: lost on reopen
    const root = ledger.root;
    const proof = await ledger.consistencyProof(77, 300);
    await kv.close();
    kv = await openLevelKvStore(dir);
    try {
      const reopened = await Ledger.open({ ledgerId: 3 }, { kv });
      expect(reopened.size).to.equal(300);
      expect(reopened.uncommittedSize).to.equal(300);
      expect(hex(reopened.root)).to.equal(hex(root));
      expect(hex(reopened.root)).to.equal(hex(mth(leaves)));
      expect((await reopened.consistencyProof(77, 300)).map(hex)).to.deep.equal(proof.map(hex));
      expect((await reopened.get(300))!.txnMetadata.seqNo).to.equal(300);
    } finally {
      await kv.close();
    }
  });
});
