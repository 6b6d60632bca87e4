import { expect } from 'chai';
import { b58encode, sha256Hex } from '@quire/common';
import {
  AttributeStore,
  BlsStore,
  SeqNoIndex,
  SideStoreError,
  SideStoreErrorCode,
  TimestampStore,
  openMemoryKvStore,
  type KvStore,
  type MultiSignature,
} from '../../src/index.js';
import { expectCode, expectCodeAsync } from '@quire/testing';

const root = (n: number): Uint8Array => new Uint8Array(32).fill(n);
const digest = (s: string): string => sha256Hex(s);
const enc = new TextEncoder();

function multiSig(stateRoot: Uint8Array, timestamp = 1700000000): MultiSignature {
  return {
    signature: b58encode(new Uint8Array(96).fill(9)),
    participants: ['Node1', 'Node2', 'Node3'],
    value: {
      ledger_id: 1,
      pool_state_root_hash: b58encode(root(1)),
      state_root_hash: b58encode(stateRoot),
      timestamp,
      txn_root_hash: b58encode(root(3)),
    },
  };
}

describe('side stores', () => {
  let kv: KvStore;
  beforeEach(async () => {
    kv = await openMemoryKvStore();
  });
  afterEach(async () => {
    await kv.close();
  });

  describe('BlsStore', () => {
    it('stores CJ of the multi-signature under the base58 state root', async () => {
      const store = new BlsStore(kv);
      const ms = multiSig(root(7));
      await store.put(ms);
      expect(await store.get(root(7))).to.deep.equal(ms);
      expect(store.getSync(ms.value.state_root_hash)).to.deep.equal(ms);
      const raw = new TextDecoder().decode(await store.getEncoded(root(7)));
      expect(raw).to.equal(
        `{"participants":["Node1","Node2","Node3"],"signature":"${ms.signature}","value":{"ledger_id":1,"pool_state_root_hash":"${ms.value.pool_state_root_hash}","state_root_hash":"${ms.value.state_root_hash}","timestamp":1700000000,"txn_root_hash":"${ms.value.txn_root_hash}"}}`,
      );
      expect(await store.get(root(8))).to.equal(undefined);
    });

    it('joins a caller batch and writes nothing until the batch is written', async () => {
      const store = new BlsStore(kv);
      const batch = kv.batch();
      store.put(multiSig(root(5)), batch);
      expect(await store.get(root(5))).to.equal(undefined);
      await batch.write();
      expect((await store.get(root(5)))?.participants).to.deep.equal(['Node1', 'Node2', 'Node3']);
      await store.remove(root(5));
      expect(await store.get(root(5))).to.equal(undefined);
    });

    it('rejects malformed multi-signatures and state roots', () => {
      const store = new BlsStore(kv);
      const bad: [string, (m: MultiSignature) => void][] = [
        ['signature', (m) => (m.signature = b58encode(new Uint8Array(48)))],
        ['participants', (m) => (m.participants = [])],
        ['value.state_root_hash', (m) => (m.value.state_root_hash = 'abc')],
        ['value.timestamp', (m) => (m.value.timestamp = -1)],
        ['value.ledger_id', (m) => (m.value.ledger_id = 1.5)],
      ];
      for (const [field, mutate] of bad) {
        const m = multiSig(root(2));
        mutate(m);
        try {
          void store.put(m);
          expect.fail(`accepted bad ${field}`);
        } catch (e) {
          expect((e as SideStoreError).code).to.equal(SideStoreErrorCode.INVALID_VALUE);
          expect((e as SideStoreError).data.field).to.equal(field);
        }
      }
      expectCode(() => store.getSync(new Uint8Array(31)), SideStoreError, SideStoreErrorCode.INVALID_VALUE);
      expectCode(() => store.getSync('0OIl'), SideStoreError, SideStoreErrorCode.INVALID_VALUE);
    });

    it('keeps recent multi-signatures in memory, frozen, and never serves one that was replaced', async () => {
      const store = new BlsStore(kv);
      const key = b58encode(root(11));
      await store.put(multiSig(root(11), 1700000000));
      const first = store.getSync(key)!;
      expect(Object.isFrozen(first) && Object.isFrozen(first.value) && Object.isFrozen(first.participants)).to.equal(true);
      expect(store.getSync(key)).to.equal(first);
      // a freshness batch signs the same state root again: a read while its batch is pending sees the old record,
      // a read after the write sees the new one
      const batch = kv.batch();
      store.put(multiSig(root(11), 1700000300), batch);
      expect(store.getSync(key)!.value.timestamp).to.equal(1700000000);
      await batch.write();
      expect(store.getSync(key)!.value.timestamp).to.equal(1700000300);
      expect((await store.get(key))!.value.timestamp).to.equal(1700000300);
      await store.remove(key);
      expect(store.getSync(key)).to.equal(undefined);
    });

    it('reports a corrupt record with a stable code', async () => {
      const store = new BlsStore(kv);
      const key = b58encode(root(4));
      await kv.batch().put('bls', enc.encode(key), enc.encode('{"not":"a multisig"}')).write();
      await expectCodeAsync(store.get(key), SideStoreError, SideStoreErrorCode.CORRUPT_RECORD);
      // stored under a root other than the one it signs
      await kv
        .batch()
        .put('bls', enc.encode(key), enc.encode(JSON.stringify(multiSig(root(6)))))
        .write();
      await expectCodeAsync(store.get(key), SideStoreError, SideStoreErrorCode.CORRUPT_RECORD);
    });
  });

  describe('SeqNoIndex', () => {
    it('maps payloadDigest -> ledgerId~seqNo and digest -> payloadDigest', async () => {
      const index = new SeqNoIndex(kv);
      const pd = digest('payload'),
        d = digest('full');
      await index.add({ payloadDigest: pd, digest: d, ledgerId: 1, seqNo: 42 });
      expect(await index.getByPayloadDigest(pd)).to.deep.equal({ ledgerId: 1, seqNo: 42 });
      expect(index.getByPayloadDigestSync(pd)).to.deep.equal({ ledgerId: 1, seqNo: 42 });
      expect(await index.getPayloadDigest(d)).to.equal(pd);
      expect(await index.getByDigest(d)).to.deep.equal({ ledgerId: 1, seqNo: 42, payloadDigest: pd });
      expect(index.getByDigestSync(d)).to.deep.equal({ ledgerId: 1, seqNo: 42, payloadDigest: pd });
      expect(new TextDecoder().decode(await kv.get('seqno-index', enc.encode(pd)))).to.equal('1~42');
      expect(await index.getByDigest(digest('unknown'))).to.equal(undefined);
    });

    it('writes into a caller batch; remove deletes both entries', async () => {
      const index = new SeqNoIndex(kv);
      const pd = digest('p2'),
        d = digest('d2');
      const batch = kv.batch();
      index.add({ payloadDigest: pd, digest: d, ledgerId: 2, seqNo: 9_007_199_254_740_991 }, batch);
      expect(batch.length).to.equal(2);
      expect(await index.getByPayloadDigest(pd)).to.equal(undefined);
      await batch.write();
      expect(await index.getByPayloadDigest(pd)).to.deep.equal({ ledgerId: 2, seqNo: 9_007_199_254_740_991 });
      await index.remove({ payloadDigest: pd, digest: d });
      expect(await index.getByPayloadDigest(pd)).to.equal(undefined);
      expect(await index.getPayloadDigest(d)).to.equal(undefined);
    });

    it('rejects bad entries and detects corrupt records', async () => {
      const index = new SeqNoIndex(kv);
      const pd = digest('x');
      expectCode(() => index.add({ payloadDigest: pd.toUpperCase(), ledgerId: 1, seqNo: 1 }), SideStoreError, SideStoreErrorCode.INVALID_VALUE);
      expectCode(() => index.add({ payloadDigest: pd, ledgerId: 1, seqNo: 0 }), SideStoreError, SideStoreErrorCode.INVALID_VALUE);
      expectCode(() => index.add({ payloadDigest: pd, ledgerId: -1, seqNo: 1 }), SideStoreError, SideStoreErrorCode.INVALID_VALUE);
      expectCode(() => index.add({ payloadDigest: pd, digest: 'abc', ledgerId: 1, seqNo: 1 }), SideStoreError, SideStoreErrorCode.INVALID_VALUE);
      await kv.batch().put('seqno-index', enc.encode(pd), enc.encode('1-2')).write();
      await expectCodeAsync(index.getByPayloadDigest(pd), SideStoreError, SideStoreErrorCode.CORRUPT_RECORD);
    });
  });

  describe('TimestampStore', () => {
    it('getEqualOrPrevious returns the root under the greatest time <= T', async () => {
      const ts = new TimestampStore(kv);
      await ts.set(1, 100, root(1));
      await ts.set(1, 200, root(2));
      await ts.set(1, 2 ** 40, root(3)); // beyond 32 bits: key order must stay numeric
      await ts.set(2, 150, root(9)); // another ledger does not interfere
      expect(await ts.getEqualOrPrevious(1, 99)).to.equal(undefined);
      expect(await ts.getEqualOrPrevious(1, 100)).to.deep.equal(root(1));
      expect(await ts.getEqualOrPrevious(1, 150)).to.deep.equal(root(1));
      expect(await ts.getEqualOrPrevious(1, 200)).to.deep.equal(root(2));
      expect(await ts.getEqualOrPrevious(1, 2 ** 40 - 1)).to.deep.equal(root(2));
      expect(await ts.getEqualOrPreviousEntry(1, 2 ** 41)).to.deep.equal({ time: 2 ** 40, root: root(3) });
      expect(await ts.getEqualOrPrevious(2, 1000)).to.deep.equal(root(9));
      expect(await ts.getEqualOrPrevious(0, 1000)).to.equal(undefined);
      expect(await ts.get(1, 200)).to.deep.equal(root(2));
      expect(await ts.get(1, 201)).to.equal(undefined);
      expect(await ts.getLatest(1)).to.deep.equal({ time: 2 ** 40, root: root(3) });
    });

    it('joins a caller batch; a later write for the same time replaces the root', async () => {
      const ts = new TimestampStore(kv);
      const batch = kv.batch();
      ts.set(1, 500, root(5), batch);
      expect(await ts.getEqualOrPrevious(1, 600)).to.equal(undefined);
      await batch.write();
      expect(await ts.getEqualOrPrevious(1, 600)).to.deep.equal(root(5));
      await ts.set(1, 500, root(6));
      expect(await ts.get(1, 500)).to.deep.equal(root(6));
      await ts.remove(1, 500);
      expect(await ts.get(1, 500)).to.equal(undefined);
    });

    it('rejects bad times, ledger ids and roots', () => {
      const ts = new TimestampStore(kv);
      expectCode(() => ts.set(1, -1, root(1)), SideStoreError, SideStoreErrorCode.INVALID_VALUE);
      expectCode(() => ts.set(1, 1.5, root(1)), SideStoreError, SideStoreErrorCode.INVALID_VALUE);
      expectCode(() => ts.set(-1, 1, root(1)), SideStoreError, SideStoreErrorCode.INVALID_VALUE);
      expectCode(() => ts.set(1, 1, new Uint8Array(31)), SideStoreError, SideStoreErrorCode.INVALID_VALUE);
    });
  });

  describe('AttributeStore', () => {
    it('stores CJ(raw) under the hex SHA-256 that ATTRIB puts in the ledger', async () => {
      const attrs = new AttributeStore(kv);
      const rawJson = '{"endpoint":{"ha":"127.0.0.1:5555","b":1}}';
      const hash = await attrs.putRaw(rawJson);
      const cj = '{"endpoint":{"b":1,"ha":"127.0.0.1:5555"}}';
      expect(hash).to.equal(sha256Hex(cj));
      expect(await attrs.get(hash)).to.equal(cj);
      expect(attrs.getSync(hash)).to.equal(cj);
      // the parsed object gives the same hash
      expect(await attrs.putRaw({ endpoint: { ha: '127.0.0.1:5555', b: 1 } })).to.equal(hash);
    });

    it('stores enc strings under their hash, in a caller batch when given', async () => {
      const attrs = new AttributeStore(kv);
      const batch = kv.batch();
      const hash = attrs.putEnc('aes-encrypted-bytes', batch);
      expect(hash).to.equal(sha256Hex('aes-encrypted-bytes'));
      expect(await attrs.get(hash)).to.equal(undefined);
      await batch.write();
      expect(await attrs.get(hash)).to.equal('aes-encrypted-bytes');
      await attrs.remove(hash);
      expect(await attrs.get(hash)).to.equal(undefined);
    });

    it('rejects bad input and detects a record that does not match its key', async () => {
      const attrs = new AttributeStore(kv);
      expectCode(() => attrs.putRaw('not json'), SideStoreError, SideStoreErrorCode.INVALID_VALUE);
      expectCode(() => attrs.putRaw('[1,2]'), SideStoreError, SideStoreErrorCode.INVALID_VALUE);
      expectCode(() => attrs.getSync('XYZ'), SideStoreError, SideStoreErrorCode.INVALID_VALUE);
      const h = sha256Hex('a');
      await kv.batch().put('attr', enc.encode(h), enc.encode('b')).write();
      await expectCodeAsync(attrs.get(h), SideStoreError, SideStoreErrorCode.CORRUPT_RECORD);
    });
  });
});
