import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  StorageError,
  StorageErrorCode,
  bucketPrefix,
  decodeSeqNoKey,
  openLevelKvStore,
  openMemoryKvStore,
  seqNoKey,
  writeBufferBytes,
  type KvStore,
} from '../../src/index.js';
import { expectCodeAsync } from '@quire/testing';

const b = (s: string): Uint8Array => new TextEncoder().encode(s);
const s = (u: Uint8Array): string => new TextDecoder().decode(u);

async function collect(it: AsyncIterable<[Uint8Array, Uint8Array]>): Promise<[string, string][]> {
  const out: [string, string][] = [];
  for await (const [k, v] of it) out.push([s(k), s(v)]);
  return out;
}

describe('seqNoKey', () => {
  it('is 8-byte big-endian and sorts numerically', () => {
    expect(Buffer.from(seqNoKey(0)).toString('hex')).to.equal('0000000000000000');
    expect(Buffer.from(seqNoKey(1)).toString('hex')).to.equal('0000000000000001');
    expect(Buffer.from(seqNoKey(256)).toString('hex')).to.equal('0000000000000100');
    expect(Buffer.from(seqNoKey(2 ** 32 + 5)).toString('hex')).to.equal('0000000100000005');
    expect(Buffer.from(seqNoKey(Number.MAX_SAFE_INTEGER)).toString('hex')).to.equal('001fffffffffffff');
    for (const n of [0, 1, 255, 256, 65535, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER]) {
      expect(decodeSeqNoKey(seqNoKey(n))).to.equal(n);
    }
    expect(Buffer.compare(seqNoKey(255), seqNoKey(256))).to.equal(-1);
    expect(Buffer.compare(seqNoKey(2 ** 32 - 1), seqNoKey(2 ** 32))).to.equal(-1);
  });

  it('rejects values that are not safe non-negative integers', async () => {
    for (const bad of [-1, 1.5, NaN, Infinity, 2 ** 53, '1' as unknown as number]) {
      await expectCodeAsync(() => seqNoKey(bad), StorageError, StorageErrorCode.INVALID_SEQ_NO);
    }
    await expectCodeAsync(() => decodeSeqNoKey(new Uint8Array(7)), StorageError, StorageErrorCode.INVALID_SEQ_NO);
    await expectCodeAsync(() => decodeSeqNoKey(Uint8Array.from([0xff, 0, 0, 0, 0, 0, 0, 0])), StorageError, StorageErrorCode.INVALID_SEQ_NO);
  });
});

describe('writeBufferBytes', () => {
  const MiB = 1024 * 1024;
  it('draws the memtable size from size x [1, 1 + jitter]', () => {
    expect(writeBufferBytes(64 * MiB, 0.75, () => 0)).to.equal(64 * MiB);
    expect(writeBufferBytes(64 * MiB, 0.75, () => 0.5)).to.equal(Math.round(64 * MiB * 1.375));
    expect(writeBufferBytes(64 * MiB, 0.75, () => 0.999999)).to.be.within(Math.round(64 * MiB * 1.75) - 100, Math.round(64 * MiB * 1.75));
    for (let i = 0; i < 200; i++) expect(writeBufferBytes(64 * MiB, 0.75)).to.be.within(64 * MiB, Math.round(64 * MiB * 1.75));
  });

  it('keeps the size exactly without jitter', () => {
    expect(writeBufferBytes(16 * 1024, 0)).to.equal(16 * 1024);
    expect(writeBufferBytes(1, 1, () => 0)).to.equal(1);
  });

  it('refuses a size or a jitter outside its range with INVALID_OPTION', async () => {
    for (const size of [0, -1, 1.5, Number.NaN, 2 ** 60])
      await expectCodeAsync(() => writeBufferBytes(size, 0.4), StorageError, StorageErrorCode.INVALID_OPTION);
    for (const jitter of [-0.1, 1.01, 2, Number.NaN]) await expectCodeAsync(() => writeBufferBytes(MiB, jitter), StorageError, StorageErrorCode.INVALID_OPTION);
    await expectCodeAsync(openLevelKvStore(join(tmpdir(), 'quire-never-created'), { writeBufferJitter: 2 }), StorageError, StorageErrorCode.INVALID_OPTION);
  });
});

describe('bucketPrefix', () => {
  it('ends every bucket name with a NUL so that no prefix is another prefix', () => {
    const names = ['a', 'ab', 'a/b', 'txn/1', 'txn/10', 'é'];
    const prefixes = names.map((n) => Buffer.from(bucketPrefix(n)));
    for (let i = 0; i < prefixes.length; i++) {
      for (let j = 0; j < prefixes.length; j++) {
        if (i !== j) expect(prefixes[j]!.subarray(0, prefixes[i]!.length).equals(prefixes[i]!), `${names[i]} vs ${names[j]}`).to.equal(false);
      }
    }
  });

  it('rejects empty, NUL-holding and over-long names', async () => {
    for (const bad of ['', 'a\u0000b', 'x'.repeat(256), 7 as unknown as string]) {
      await expectCodeAsync(() => bucketPrefix(bad), StorageError, StorageErrorCode.INVALID_BUCKET);
    }
  });
});

const backends: [string, () => Promise<{ kv: KvStore; reopen?: () => Promise<KvStore>; cleanup: () => void }>][] = [
  ['memory-level', async () => ({ kv: await openMemoryKvStore(), cleanup: () => undefined })],
  [
    'classic-level',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'quire-kv-'));
      return { kv: await openLevelKvStore(dir), reopen: () => openLevelKvStore(dir), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
    },
  ],
];

for (const [name, make] of backends) {
  describe(`KvStore over ${name}`, () => {
    let kv: KvStore;
    let reopen: (() => Promise<KvStore>) | undefined;
    let cleanup: () => void;

    beforeEach(async () => {
      ({ kv, reopen, cleanup } = await make());
    });
    afterEach(async () => {
      await kv.close();
      cleanup();
    });

    it('puts, gets (async, sync, many) and deletes through batches', async () => {
      await kv.batch().put('one', b('k1'), b('v1')).put('one', b('k2'), b('v2')).write();
      expect(s((await kv.get('one', b('k1')))!)).to.equal('v1');
      expect(s(kv.getSync('one', b('k2'))!)).to.equal('v2');
      expect(await kv.get('one', b('nope'))).to.equal(undefined);
      expect(kv.getSync('one', b('nope'))).to.equal(undefined);
      const many = await kv.getMany('one', [b('k2'), b('x'), b('k1')]);
      expect(many.map((v) => (v === undefined ? undefined : s(v)))).to.deep.equal(['v2', undefined, 'v1']);
      expect(await kv.getMany('one', [])).to.deep.equal([]);
      await kv.batch().del('one', b('k1')).write();
      expect(kv.getSync('one', b('k1'))).to.equal(undefined);
    });

    it('keeps buckets apart, even when one name is a prefix of another', async () => {
      const batch = kv.batch();
      batch.put('a', b('x'), b('in a')).put('ab', b('x'), b('in ab')).put('a/b', b('x'), b('in a/b')).put('a', b(''), b('empty key'));
      batch.put('a', b('\u0000zz'), b('nul key')).put('b', b('x'), b('in b'));
      expect(batch.length).to.equal(6);
      await batch.write();
      expect(s(kv.getSync('a', b('x'))!)).to.equal('in a');
      expect(s(kv.getSync('ab', b('x'))!)).to.equal('in ab');
      expect(s(kv.getSync('a/b', b('x'))!)).to.equal('in a/b');
      expect(await collect(kv.iterate('a'))).to.deep.equal([
        ['', 'empty key'],
        ['\u0000zz', 'nul key'],
        ['x', 'in a'],
      ]);
      expect(await collect(kv.iterate('ab'))).to.deep.equal([['x', 'in ab']]);
      expect(await collect(kv.iterate('a', { reverse: true }))).to.deep.equal([
        ['x', 'in a'],
        ['\u0000zz', 'nul key'],
        ['', 'empty key'],
      ]);
      expect(await collect(kv.iterate('nothing'))).to.deep.equal([]);
    });

    it('iterates ranges with bounds, reverse, limit and keys only', async () => {
      const batch = kv.batch();
      for (let i = 1; i <= 300; i++) batch.put('seq', seqNoKey(i), b(String(i)));
      batch.put('seq0', seqNoKey(1), b('other'));
      await batch.write();
      const keys = async (r: Parameters<KvStore['iterate']>[1]): Promise<number[]> => {
        const out: number[] = [];
        for await (const [k] of kv.iterate('seq', r)) out.push(decodeSeqNoKey(k));
        return out;
      };
      expect((await keys({})).length).to.equal(300); // more than one internal chunk
      expect(await keys({ gte: seqNoKey(5), lte: seqNoKey(8) })).to.deep.equal([5, 6, 7, 8]);
      expect(await keys({ gt: seqNoKey(5), lt: seqNoKey(8) })).to.deep.equal([6, 7]);
      expect(await keys({ gt: seqNoKey(297) })).to.deep.equal([298, 299, 300]);
      expect(await keys({ lt: seqNoKey(3) })).to.deep.equal([1, 2]);
      expect(await keys({ reverse: true, limit: 2 })).to.deep.equal([300, 299]);
      expect(await keys({ reverse: true, lte: seqNoKey(10), limit: 3 })).to.deep.equal([10, 9, 8]);
      expect(await keys({ limit: 0 })).to.deep.equal([]);
      for await (const [, v] of kv.iterate('seq', { values: false, limit: 1 })) expect(v.length).to.equal(0);
      // breaking out of a loop closes the iterator
      let n = 0;
      for await (const _ of kv.iterate('seq')) if (++n === 3) break;
      expect(n).to.equal(3);
      await expectCodeAsync(() => kv.iterate('seq', { limit: -1 }), StorageError, StorageErrorCode.INVALID_KEY);
    });

    it('writes a batch over several buckets all at once, and only once', async () => {
      const batch = kv.batch().put('x', b('1'), b('a')).put('y', b('1'), b('b')).del('z', b('1'));
      const seen: (Error | undefined)[] = [];
      batch.afterWrite((e) => seen.push(e));
      expect(kv.getSync('x', b('1'))).to.equal(undefined);
      await batch.write({ sync: true });
      expect(seen).to.deep.equal([undefined]);
      expect(s(kv.getSync('x', b('1'))!)).to.equal('a');
      expect(s(kv.getSync('y', b('1'))!)).to.equal('b');
      await expectCodeAsync(batch.write(), StorageError, StorageErrorCode.BATCH_ALREADY_WRITTEN);
      await expectCodeAsync(() => batch.put('x', b('2'), b('c')), StorageError, StorageErrorCode.BATCH_ALREADY_WRITTEN);
      await kv.batch().write(); // empty batch is fine
    });

    it('rejects keys and values that are not bytes', async () => {
      await expectCodeAsync(() => kv.getSync('x', 'k' as unknown as Uint8Array), StorageError, StorageErrorCode.INVALID_KEY);
      await expectCodeAsync(kv.get('x', 5 as unknown as Uint8Array), StorageError, StorageErrorCode.INVALID_KEY);
      await expectCodeAsync(() => kv.batch().put('x', b('k'), 'v' as unknown as Uint8Array), StorageError, StorageErrorCode.INVALID_KEY);
      await expectCodeAsync(() => kv.batch().put('', b('k'), b('v')), StorageError, StorageErrorCode.INVALID_BUCKET);
    });

    it('closes idempotently and refuses work afterwards', async () => {
      const batch = kv.batch().put('x', b('1'), b('a'));
      let told: Error | undefined;
      batch.afterWrite((e) => {
        told = e;
      });
      await Promise.all([kv.close(), kv.close()]);
      expect(kv.closed).to.equal(true);
      await kv.close();
      await expectCodeAsync(kv.get('x', b('1')), StorageError, StorageErrorCode.KV_CLOSED);
      await expectCodeAsync(() => kv.getSync('x', b('1')), StorageError, StorageErrorCode.KV_CLOSED);
      await expectCodeAsync(() => kv.iterate('x'), StorageError, StorageErrorCode.KV_CLOSED);
      await expectCodeAsync(batch.write(), StorageError, StorageErrorCode.KV_CLOSED);
      expect((told as StorageError).code).to.equal(StorageErrorCode.KV_CLOSED);
      await expectCodeAsync(() => kv.engineProperty('leveldb.stats'), StorageError, StorageErrorCode.KV_CLOSED);
    });

    it('reports engine properties for diagnostics where the engine has them', async () => {
      await kv.batch().put('p', b('k'), b('v')).write();
      const stats = kv.engineProperty('leveldb.stats');
      if (name === 'classic-level') {
        expect(stats).to.be.a('string').and.to.include('Compactions');
        expect(kv.engineProperty('leveldb.num-files-at-level0')).to.match(/^\d+$/);
      } else {
        expect(stats).to.equal(undefined);
      }
    });

    if (name === 'classic-level') {
      it('keeps data across reopen and reports a locked database', async () => {
        await kv.batch().put('p', b('k'), b('v')).write();
        await expectCodeAsync(reopen!(), StorageError, StorageErrorCode.KV_OPEN_FAILED);
        await kv.close();
        kv = await reopen!();
        expect(s(kv.getSync('p', b('k'))!)).to.equal('v');
      });
    }
  });
}

describe('KvStore write order', () => {
  it('applies batches in the order write() is called, even when they are in flight together', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quire-kv-order-'));
    const kv = await openLevelKvStore(dir);
    try {
      const writes: Promise<void>[] = [];
      const done: number[] = [];
      for (let i = 0; i < 50; i++) {
        const batch = kv.batch();
        // a big batch followed by small ones: without ordering the small ones tend to land first
        for (let j = 0; j < (i % 10 === 0 ? 2000 : 1); j++) batch.put('order', b(`k${j}`), b(`v${i}`));
        batch.afterWrite(() => done.push(i));
        writes.push(batch.write());
      }
      await Promise.all(writes);
      expect(done).to.deep.equal(Array.from({ length: 50 }, (_, i) => i));
      expect(s(kv.getSync('order', b('k0'))!)).to.equal('v49');
      expect(s(kv.getSync('order', b('k1'))!)).to.equal('v40');
    } finally {
      await kv.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
