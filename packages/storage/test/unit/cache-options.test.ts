// The caches' sizes given to a state or a ledger: a size that cannot be one is refused as a bad option
// (INVALID_OPTION, with the option's name and value), never taken as some other mistake nor as an unbounded cache.
import { expect } from 'chai';
import { Ledger, StateTrie, StorageError, StorageErrorCode, openMemoryKvStore, type KvStore } from '@quire/storage';
import { expectCodeAsync } from '@quire/testing';

describe('cache sizes given to a state or a ledger', () => {
  const opened: KvStore[] = [];
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
  });
  async function kv(): Promise<KvStore> {
    const s = await openMemoryKvStore();
    opened.push(s);
    return s;
  }

  it('refuses a state node cache size below 2 or not an integer with INVALID_OPTION naming nodeCacheSize', async () => {
    const store = await kv();
    for (const bad of [1, 0, -4, 2.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expectCodeAsync(StateTrie.open({ name: 'domain', nodeCacheSize: bad }, { kv: store }), StorageError, StorageErrorCode.INVALID_OPTION, {
        option: 'nodeCacheSize',
        value: bad,
      });
    }
    const t = await StateTrie.open({ name: 'domain', nodeCacheSize: 2 }, { kv: store });
    expect(t).to.be.instanceOf(StateTrie);
  });

  it('refuses a ledger hash cache size that is not an integer with INVALID_OPTION naming hashCacheEntries', async () => {
    const store = await kv();
    for (const bad of [2.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expectCodeAsync(Ledger.open({ ledgerId: 1, hashCacheEntries: bad }, { kv: store }), StorageError, StorageErrorCode.INVALID_OPTION, {
        option: 'hashCacheEntries',
        value: bad,
      });
    }
    // a small one is raised to the floor of 16 entries, as before
    const ledger = await Ledger.open({ ledgerId: 1, hashCacheEntries: 1 }, { kv: store });
    expect(ledger.size).to.equal(0);
  });
});
