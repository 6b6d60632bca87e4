// The node's store of INSTANCE_CHANGE votes (#15, F4): a flood of vote sets costs a bounded
// number of synced writes (one in flight, the latest set pending), and the last set is the one
// that stays.
import { expect } from 'chai';
import type { StoredInstanceChangeVote } from '@quire/consensus';
import { type KvStore, openMemoryKvStore } from '@quire/storage';
import { KvVoteStore } from '../../src/node-setup.js';

/** Wraps a store to count the batches written through it. */
function countingKv(inner: KvStore): { kv: KvStore; writes: () => number } {
  let writes = 0;
  const kv = {
    getSync: (bucket: string, key: Uint8Array) => inner.getSync(bucket, key),
    get closed() {
      return inner.closed;
    },
    batch: () => {
      const b = inner.batch();
      const write = b.write.bind(b);
      b.write = (opts) => {
        writes++;
        return write(opts);
      };
      return b;
    },
  } as KvStore;
  return { kv, writes: () => writes };
}

const set = (i: number): StoredInstanceChangeVote[] => [{ viewNo: 1 + (i % 2), voter: 'Node3', utc: 1_700_000_000 + i }];

describe('KvVoteStore (#15, F4)', () => {
  it('coalesces a flood of saves into at most one write in flight and one pending', async () => {
    const mem = await openMemoryKvStore();
    const { kv, writes } = countingKv(mem);
    const store = new KvVoteStore(kv);
    const FLOOD = 10_000;
    for (let i = 0; i < FLOOD; i++) store.save(set(i));
    await store.flush();
    // bound: the first set is written at once, every later one replaced the pending set
    expect(writes()).to.equal(2);
    expect(new KvVoteStore(mem).load()).to.deep.equal(set(FLOOD - 1));
    // a save while a write is in flight waits for it, and flush() covers it too
    store.save(set(7));
    const first = store.flush();
    store.save(set(8));
    store.save(set(9));
    await first;
    expect(writes()).to.equal(4);
    expect(new KvVoteStore(mem).load()).to.deep.equal(set(9));
    await mem.close();
  });

  it('writes nothing once the key-value store is closed', async () => {
    const mem = await openMemoryKvStore();
    const { kv, writes } = countingKv(mem);
    const store = new KvVoteStore(kv);
    await mem.close();
    store.save(set(1));
    await store.flush();
    expect(writes()).to.equal(0);
  });
});
