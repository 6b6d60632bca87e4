import { expect } from 'chai';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { b58encode } from '@quire/common';
import {
  BLANK_ROOT,
  StateTrie,
  StorageError,
  StorageErrorCode,
  openLevelKvStore,
  openMemoryKvStore,
  rlpEncode,
  type KvStore,
  type RlpItem,
} from '@quire/storage';
import { expectCodeAsync } from '@quire/testing';

const vectors = JSON.parse(readFileSync(new URL('../../../../test/vectors/state_trie.json', import.meta.url), 'utf8')) as {
  blank_root: { hex: string; base58: string };
  hash_check: { sha3_256_empty_hex: string };
  cases: { name: string; trie_contents: { key: string; key_hex: string; value: string; stored_rlp_hex: string }[]; root_hex: string; root_base58: string }[];
};

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const sha3 = (b: Uint8Array): Uint8Array => new Uint8Array(createHash('sha3-256').update(b).digest());

// ---------------------------------------------------------------------------------------------
// An independent oracle: the canonical trie built directly from the sorted set of pairs, encoded
// with the generic RLP encoder (none of the trie code is used).

function nibbles(b: Uint8Array): number[] {
  const out: number[] = [];
  for (const x of b) out.push(x >> 4, x & 15);
  return out;
}

function hp(path: number[], leaf: boolean): Uint8Array {
  const flag = (leaf ? 2 : 0) + (path.length % 2);
  const all = path.length % 2 ? [flag, ...path] : [flag, 0, ...path];
  const out = new Uint8Array(all.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = (all[2 * i]! << 4) | all[2 * i + 1]!;
  return out;
}

function oracleNode(pairs: [number[], Uint8Array][]): RlpItem {
  if (pairs.length === 0) return new Uint8Array(0);
  if (pairs.length === 1) return [hp(pairs[0]![0], true), pairs[0]![1]];
  let cp = 0;
  while (pairs.every(([p]) => p.length > cp && p[cp] === pairs[0]![0][cp])) cp++;
  if (cp > 0) return [hp(pairs[0]![0].slice(0, cp), false), oracleRef(oracleNode(pairs.map(([p, v]) => [p.slice(cp), v])))];
  const branch: RlpItem[] = [];
  for (let i = 0; i < 16; i++) {
    const group = pairs.filter(([p]) => p[0] === i).map(([p, v]): [number[], Uint8Array] => [p.slice(1), v]);
    branch.push(group.length === 0 ? new Uint8Array(0) : oracleRef(oracleNode(group)));
  }
  branch.push(pairs.find(([p]) => p.length === 0)?.[1] ?? new Uint8Array(0));
  return branch;
}

function oracleRef(node: RlpItem): RlpItem {
  const enc = rlpEncode(node);
  return enc.length < 32 ? node : sha3(enc);
}

function oracleRoot(model: Map<string, Uint8Array>): string {
  const pairs = [...model].map(([k, v]): [number[], Uint8Array] => [nibbles(unhex(k)), rlpEncode([v])]);
  return hex(sha3(rlpEncode(oracleNode(pairs))));
}

// ---------------------------------------------------------------------------------------------

describe('state trie (formats 7.2, 7.3)', () => {
  let kv: KvStore;
  beforeEach(async () => {
    kv = await openMemoryKvStore();
  });
  afterEach(async () => {
    await kv.close();
  });

  describe('vectors', () => {
    it('BLANK_ROOT = SHA3-256(0x80), in hex and base58', async () => {
      expect(hex(BLANK_ROOT)).to.equal(vectors.blank_root.hex);
      expect(b58encode(BLANK_ROOT)).to.equal(vectors.blank_root.base58);
      const t = await StateTrie.open({ name: 'domain' }, { kv });
      expect(hex(t.headRoot)).to.equal(vectors.blank_root.hex);
      expect(hex(t.committedRoot)).to.equal(vectors.blank_root.hex);
    });

    it('hashes with SHA3-256, not Keccak', () => {
      expect(hex(sha3(new Uint8Array(0)))).to.equal(vectors.hash_check.sha3_256_empty_hex);
      expect(hex(BLANK_ROOT)).to.equal(hex(sha3(Uint8Array.of(0x80))));
    });

    for (const c of vectors.cases) {
      it(`${c.name}: the full contents give the root in any insertion order`, async () => {
        const pairs = c.trie_contents;
        for (const p of pairs) expect(hex(rlpEncode([utf8(p.value)]))).to.equal(p.stored_rlp_hex);
        const orders = [pairs, [...pairs].reverse(), [...pairs].sort((a, b) => a.key_hex.localeCompare(b.key_hex))];
        fc.assert(
          fc.property(fc.shuffledSubarray(pairs, { minLength: pairs.length }), (shuffled) => {
            orders.push(shuffled);
          }),
          { numRuns: 20 },
        );
        for (const order of orders) {
          const t = await StateTrie.open({ name: 'domain' }, { kv });
          for (const p of order) t.set(unhex(p.key_hex), utf8(p.value));
          expect(hex(t.headRoot)).to.equal(c.root_hex);
          expect(b58encode(t.headRoot)).to.equal(c.root_base58);
          for (const p of pairs) expect(t.get(p.key)).to.deep.equal(utf8(p.value));
          expect(oracleRoot(new Map(pairs.map((p) => [p.key_hex, utf8(p.value)])))).to.equal(c.root_hex);
        }
      });
    }

    it('formats 7.5 example: the trie holding only 33 -> v1', async () => {
      const t = await StateTrie.open({ name: 'pool' }, { kv });
      t.set('33', utf8('v1'));
      expect(hex(t.headRoot)).to.equal('7c3fe8a8e45d3efab16866566676164b85b229318cf31b19069ef822c80e2f5a');
      expect(t.get('3')).to.equal(undefined);
      expect(t.get('333')).to.equal(undefined);
    });
  });

  describe('reads and writes', () => {
    it('stores RLP([v]) and returns v; a key that is a prefix of another is a separate key', async () => {
      const t = await StateTrie.open({ name: 'domain' }, { kv });
      t.set('3', utf8('short'));
      t.set('33', new Uint8Array(0));
      t.set('333', new Uint8Array(300).fill(7));
      expect(t.get('3')).to.deep.equal(utf8('short'));
      expect(t.get('33')).to.deep.equal(new Uint8Array(0));
      expect(t.get('333')).to.deep.equal(new Uint8Array(300).fill(7));
      expect(t.get('3333')).to.equal(undefined);
      expect(t.get(utf8('3'))).to.deep.equal(utf8('short'));
    });

    it('returns copies: changing a returned or given value does not change the state', async () => {
      const t = await StateTrie.open({ name: 'domain' }, { kv });
      const v = utf8('value');
      t.set('k', v);
      v[0] = 0;
      const got = t.get('k')!;
      expect(got).to.deep.equal(utf8('value'));
      got[0] = 0;
      expect(t.get('k')).to.deep.equal(utf8('value'));
    });

    it('setting the same value or removing an absent key keeps the root', async () => {
      const t = await StateTrie.open({ name: 'domain' }, { kv });
      t.set('a', utf8('1'));
      t.set('ab', utf8('2'));
      const r = hex(t.headRoot);
      t.set('a', utf8('1'));
      t.remove('abc');
      t.remove('b');
      t.remove('');
      expect(hex(t.headRoot)).to.equal(r);
    });

    it('the empty key is a key like any other', async () => {
      const t = await StateTrie.open({ name: 'domain' }, { kv });
      t.set('', utf8('root value'));
      t.set('x', utf8('x'));
      expect(t.get('')).to.deep.equal(utf8('root value'));
      t.remove('x');
      expect(t.get('')).to.deep.equal(utf8('root value'));
      t.remove('');
      expect(hex(t.headRoot)).to.equal(hex(BLANK_ROOT));
    });

    it('rejects keys and values of the wrong type with INVALID_KEY, and unknown state names', async () => {
      const t = await StateTrie.open({ name: 'domain' }, { kv });
      await expectCodeAsync(() => t.set(42 as unknown as string, utf8('v')), StorageError, StorageErrorCode.INVALID_KEY);
      await expectCodeAsync(() => t.set('k', 'v' as unknown as Uint8Array), StorageError, StorageErrorCode.INVALID_KEY);
      await expectCodeAsync(() => t.get(null as unknown as string), StorageError, StorageErrorCode.INVALID_KEY);
      await expectCodeAsync(() => t.remove({} as unknown as string), StorageError, StorageErrorCode.INVALID_KEY);
      await expectCodeAsync(() => t.setHead(new Uint8Array(31)), StorageError, StorageErrorCode.INVALID_KEY);
      await expectCodeAsync(() => StateTrie.open({ name: 'audit' as 'pool' }, { kv }), StorageError, StorageErrorCode.INVALID_STATE_NAME);
    });

    it('agrees with a Map model and with an independent oracle over random changes', async () => {
      const keyArb = fc.uint8Array({ minLength: 0, maxLength: 4 }).map((k) => k.map((b) => [0x00, 0x01, 0x10, 0x11, 0x3f, 0xf0][b % 6]!));
      const valueArb = fc.uint8Array({ maxLength: 48 });
      const opArb = fc.oneof(
        fc.record({ op: fc.constant('set' as const), key: keyArb, value: valueArb }),
        fc.record({ op: fc.constant('remove' as const), key: keyArb }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { maxLength: 60 }), async (ops) => {
          const t = await StateTrie.open({ name: 'config' }, { kv });
          const model = new Map<string, Uint8Array>();
          for (const o of ops) {
            if (o.op === 'set') {
              t.set(o.key, o.value);
              model.set(hex(o.key), o.value);
            } else {
              t.remove(o.key);
              model.delete(hex(o.key));
            }
          }
          expect(hex(t.headRoot)).to.equal(oracleRoot(model));
          for (const o of ops) {
            const want = model.get(hex(o.key));
            expect(t.get(o.key)).to.deep.equal(want);
          }
          const seen: [string, Uint8Array][] = [];
          t.forEach((k, v) => seen.push([hex(k), v]));
          expect(seen).to.deep.equal([...model].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
          // root depends only on the set: rebuild in reverse key order
          const fresh = await openMemoryKvStore();
          const u = await StateTrie.open({ name: 'config' }, { kv: fresh });
          for (const [k, v] of [...model].reverse()) u.set(unhex(k), v);
          expect(hex(u.headRoot)).to.equal(hex(t.headRoot));
          await fresh.close();
          for (const k of model.keys()) t.remove(unhex(k));
          expect(hex(t.headRoot)).to.equal(hex(BLANK_ROOT));
        }),
        { numRuns: 150 },
      );
    });
  });

  describe('heads, commits and historic roots', () => {
    it('commit, revert, setHead and getAt with a model, through a tiny node cache', async () => {
      const keyArb = fc.uint8Array({ minLength: 1, maxLength: 3 }).map((k) => k.map((b) => (b % 4 === 0 ? 0x20 : b)));
      const opArb = fc.oneof(
        { weight: 5, arbitrary: fc.record({ op: fc.constant('set' as const), key: keyArb, value: fc.uint8Array({ maxLength: 40 }) }) },
        { weight: 2, arbitrary: fc.record({ op: fc.constant('remove' as const), key: keyArb }) },
        { weight: 1, arbitrary: fc.constant({ op: 'commit' as const }) },
        { weight: 1, arbitrary: fc.constant({ op: 'revert' as const }) },
        { weight: 1, arbitrary: fc.constant({ op: 'mark' as const }) },
      );
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { maxLength: 50 }), async (ops) => {
          const store = await openMemoryKvStore();
          const t = await StateTrie.open({ name: 'domain', nodeCacheSize: 2 }, { kv: store });
          let head = new Map<string, Uint8Array>();
          let committed = new Map<string, Uint8Array>();
          const history: [Uint8Array, Map<string, Uint8Array>][] = [[BLANK_ROOT, new Map()]];
          for (const o of ops) {
            if (o.op === 'set') {
              t.set(o.key, o.value);
              head.set(hex(o.key), o.value);
            } else if (o.op === 'remove') {
              t.remove(o.key);
              head.delete(hex(o.key));
            } else if (o.op === 'commit') {
              await t.commit();
              committed = new Map(head);
              history.push([t.committedRoot, committed]);
            } else if (o.op === 'revert') {
              t.revertToCommitted();
              head = new Map(committed);
            } else {
              // an uncommitted head that setHead can come back to
              const root = t.headRoot;
              const snapshot = new Map(head);
              t.set('mark', utf8('m'));
              t.setHead(root);
              history.push([root, snapshot]);
              expect(hex(t.headRoot)).to.equal(hex(root));
            }
          }
          expect(hex(t.headRoot)).to.equal(oracleRoot(head));
          expect(hex(t.committedRoot)).to.equal(oracleRoot(committed));
          for (const [k, v] of head) expect(t.get(unhex(k))).to.deep.equal(v);
          for (const [k, v] of committed) expect(t.get(unhex(k), { committed: true })).to.deep.equal(v);
          // every committed root stays readable
          for (const [root, m] of history) {
            if (!t.hasRoot(root)) continue; // an uncommitted head dropped by revert
            for (const [k, v] of m) expect(t.getAt(root, unhex(k))).to.deep.equal(v);
          }
          // reopening finds the committed state
          const again = await StateTrie.open({ name: 'domain', nodeCacheSize: 2 }, { kv: store });
          expect(hex(again.committedRoot)).to.equal(hex(t.committedRoot));
          expect(hex(again.headRoot)).to.equal(hex(t.committedRoot));
          for (const [k, v] of committed) expect(again.get(unhex(k))).to.deep.equal(v);
          await store.close();
        }),
        { numRuns: 80 },
      );
    });

    it('commits into a caller batch that carries other writes atomically', async () => {
      const t = await StateTrie.open({ name: 'domain' }, { kv });
      t.set('a', new Uint8Array(100).fill(1));
      t.set('b', new Uint8Array(100).fill(2));
      const root = t.headRoot;
      const batch = kv.batch();
      batch.put('other', utf8('k'), utf8('v'));
      expect(t.commit(undefined, batch)).to.equal(undefined);
      expect(hex(t.committedRoot)).to.equal(hex(root));
      // readable from memory before the batch is written
      expect(t.get('a', { committed: true })).to.deep.equal(new Uint8Array(100).fill(1));
      expect(await kv.get('state-head/domain', utf8('root'))).to.equal(undefined);
      await batch.write();
      expect(await kv.get('state-head/domain', utf8('root'))).to.deep.equal(root);
      expect(await kv.get('other', utf8('k'))).to.deep.equal(utf8('v'));
      // every node of the committed trie is in the node store under its SHA3-256
      let nodes = 0;
      for await (const [h, enc] of kv.iterate('state/domain')) {
        expect(hex(h)).to.equal(hex(sha3(enc)));
        nodes++;
      }
      expect(nodes).to.be.greaterThan(0);
      const reopened = await StateTrie.open({ name: 'domain' }, { kv });
      expect(reopened.get('b')).to.deep.equal(new Uint8Array(100).fill(2));
    });

    it('commits an older uncommitted head while a newer one stays available', async () => {
      const t = await StateTrie.open({ name: 'domain' }, { kv });
      t.set('k1', utf8('batch 1'));
      const r1 = t.headRoot;
      t.set('k2', utf8('batch 2'));
      const r2 = t.headRoot;
      await t.commit(r1);
      expect(hex(t.committedRoot)).to.equal(hex(r1));
      expect(hex(t.headRoot)).to.equal(hex(r2));
      expect(t.get('k2', { committed: true })).to.equal(undefined);
      expect(t.get('k2')).to.deep.equal(utf8('batch 2'));
      t.setHead(r1);
      t.setHead(r2);
      await t.commit(r2);
      const reopened = await StateTrie.open({ name: 'domain' }, { kv });
      expect(hex(reopened.committedRoot)).to.equal(hex(r2));
      expect(reopened.getAt(r1, 'k1')).to.deep.equal(utf8('batch 1'));
      expect(reopened.getAt(r1, 'k2')).to.equal(undefined);
    });

    it('refuses roots it does not hold with UNKNOWN_STATE_ROOT; revert forgets uncommitted heads', async () => {
      const t = await StateTrie.open({ name: 'domain' }, { kv });
      t.set('x', utf8('1'));
      const r = t.headRoot;
      t.revertToCommitted();
      expect(hex(t.headRoot)).to.equal(hex(BLANK_ROOT));
      expect(t.hasRoot(r)).to.equal(false);
      await expectCodeAsync(() => t.setHead(r), StorageError, StorageErrorCode.UNKNOWN_STATE_ROOT);
      await expectCodeAsync(() => t.getAt(r, 'x'), StorageError, StorageErrorCode.UNKNOWN_STATE_ROOT);
      await expectCodeAsync(() => t.commit(r), StorageError, StorageErrorCode.UNKNOWN_STATE_ROOT);
      await expectCodeAsync(() => t.generateProof('x', r), StorageError, StorageErrorCode.UNKNOWN_STATE_ROOT);
      expect(t.getAt(BLANK_ROOT, 'x')).to.equal(undefined);
    });

    it('keeps states of different names apart in one store', async () => {
      const pool = await StateTrie.open({ name: 'pool' }, { kv });
      const domain = await StateTrie.open({ name: 'domain' }, { kv });
      pool.set('k', utf8('pool'));
      domain.set('k', utf8('domain'));
      await pool.commit();
      await domain.commit();
      expect((await StateTrie.open({ name: 'pool' }, { kv })).get('k')).to.deep.equal(utf8('pool'));
      expect((await StateTrie.open({ name: 'domain' }, { kv })).get('k')).to.deep.equal(utf8('domain'));
      expect(hex((await StateTrie.open({ name: 'config' }, { kv })).committedRoot)).to.equal(hex(BLANK_ROOT));
    });

    it('reports a missing node and a damaged root record with stable codes', async () => {
      const t = await StateTrie.open({ name: 'domain' }, { kv });
      t.set('a', new Uint8Array(64).fill(1));
      await t.commit();
      const root = t.committedRoot;
      await kv.batch().del('state/domain', root).write();
      await expectCodeAsync(() => StateTrie.open({ name: 'domain' }, { kv }), StorageError, StorageErrorCode.STATE_NODE_MISSING);
      await kv.batch().put('state/domain', root, utf8('not rlp')).write();
      await expectCodeAsync(() => StateTrie.open({ name: 'domain' }, { kv }), StorageError, StorageErrorCode.STATE_NODE_MALFORMED);
      await kv.batch().put('state-head/domain', utf8('root'), new Uint8Array(5)).write();
      await expectCodeAsync(() => StateTrie.open({ name: 'domain' }, { kv }), StorageError, StorageErrorCode.STATE_NODE_MALFORMED);
    });

    it('reads nodes of many commits whose batches are not written yet, in any order of writing', async () => {
      const store = await openMemoryKvStore();
      // a cache of two nodes: almost every read falls through to the batches in flight
      const t = await StateTrie.open({ name: 'domain', nodeCacheSize: 2 }, { kv: store });
      const batches = [];
      const states: [Uint8Array, Map<string, Uint8Array>][] = [];
      const model = new Map<string, Uint8Array>();
      for (let c = 0; c < 40; c++) {
        for (let i = 0; i < 8; i++) {
          const k = sha3(utf8(`key ${(c * 5 + i) % 60}`));
          // values repeat, so later batches hold nodes equal to earlier ones
          const v = utf8(`value ${(c + i) % 3}`);
          t.set(k, v);
          model.set(hex(k), v);
        }
        const b = store.batch();
        t.commit(undefined, b);
        batches.push(b);
        states.push([t.committedRoot, new Map(model)]);
      }
      const check = (): void => {
        for (const [root, m] of states) for (const [k, v] of m) expect(t.getAt(root, unhex(k))).to.deep.equal(v);
      };
      check();
      // written out of order, a few at a time: a node stays readable while any batch holding it is unwritten
      for (const i of [0, 5, 1, 39, 2, 3, 4]) await batches[i]!.write();
      check();
      for (let i = 6; i < 39; i++) await batches[i]!.write();
      check();
      const again = await StateTrie.open({ name: 'domain', nodeCacheSize: 2 }, { kv: store });
      for (const [root, m] of states) for (const [k, v] of m) expect(again.getAt(root, unhex(k))).to.deep.equal(v);
      await store.close();
    });

    it('persists to a LevelDB directory and reads every old root after reopening', async function () {
      this.timeout(20_000);
      const dir = mkdtempSync(join(tmpdir(), 'quire-trie-'));
      try {
        // tiny memtable and table files: the nodes go through flushes and compactions into many tables
        let store = await openLevelKvStore(dir, { writeBufferSize: 32 * 1024, maxFileSize: 16 * 1024 });
        let t = await StateTrie.open({ name: 'domain', nodeCacheSize: 16 }, { kv: store });
        const roots: Uint8Array[] = [];
        for (let batch = 0; batch < 10; batch++) {
          for (let i = 0; i < 50; i++) t.set(sha3(utf8(`key ${batch * 50 + i}`)), utf8(`{"seqNo":${batch * 50 + i}}`.padEnd(200, ' ')));
          if (batch % 3 === 2) t.remove(sha3(utf8(`key ${batch * 50 - 7}`)));
          const b = store.batch();
          t.commit(undefined, b);
          await b.write();
          roots.push(t.committedRoot);
        }
        await store.close();
        store = await openLevelKvStore(dir); // default options
        t = await StateTrie.open({ name: 'domain', nodeCacheSize: 16 }, { kv: store });
        expect(hex(t.committedRoot)).to.equal(hex(roots[9]!));
        expect(t.getAt(roots[0]!, sha3(utf8('key 49')))).to.deep.equal(utf8('{"seqNo":49}'.padEnd(200, ' ')));
        expect(t.getAt(roots[0]!, sha3(utf8('key 50')))).to.equal(undefined);
        expect(t.getAt(roots[1]!, sha3(utf8('key 93')))).to.deep.equal(utf8('{"seqNo":93}'.padEnd(200, ' ')));
        expect(t.getAt(roots[2]!, sha3(utf8('key 93')))).to.equal(undefined);
        expect(t.get(sha3(utf8('key 499')))).to.deep.equal(utf8('{"seqNo":499}'.padEnd(200, ' ')));
        let count = 0;
        t.forEach(() => count++);
        expect(count).to.equal(500 - 3);
        await store.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
