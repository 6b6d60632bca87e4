// The simulator's crash point inside a node's writes (issue #15): batches before the tear land,
// the one at the tear and every later one are lost, and each batch stays all-or-nothing.
import { expect } from 'chai';
import { openMemoryKvStore } from '@quire/storage';
import { TearableKvStore } from '../../src/sim/tearable-kv.js';

const k = (s: string): Uint8Array => new TextEncoder().encode(s);

async function store(): Promise<TearableKvStore> {
  return new TearableKvStore(await openMemoryKvStore());
}

describe('sim: TearableKvStore', () => {
  it('lets `writes` batches land, loses the next and every later one, and says it is torn', async () => {
    const kv = await store();
    kv.armTear(1);
    await kv.batch().put('b', k('a'), k('1')).write();
    expect(kv.torn).to.equal(false);
    await kv.batch().put('b', k('b'), k('2')).put('b', k('c'), k('3')).write();
    expect(kv.torn).to.equal(true);
    await kv.batch().put('b', k('d'), k('4')).write();
    expect(kv.getSync('b', k('a'))).to.deep.equal(k('1'));
    // the torn batch is lost whole, never in part
    expect(kv.getSync('b', k('b'))).to.equal(undefined);
    expect(kv.getSync('b', k('c'))).to.equal(undefined);
    expect(kv.getSync('b', k('d'))).to.equal(undefined);
    expect(kv.lostWrites).to.equal(2);
    // a restarted process writes again
    kv.armTear(undefined);
    await kv.batch().put('b', k('e'), k('5')).write();
    expect(kv.getSync('b', k('e'))).to.deep.equal(k('5'));
  });

  it('with afterLast, is torn right after the last batch that lands (between a commit and its reply)', async () => {
    const kv = await store();
    kv.armTear(2, true);
    await kv.batch().put('b', k('a'), k('1')).write();
    expect(kv.torn).to.equal(false);
    await kv.batch().put('b', k('b'), k('2')).write();
    expect(kv.torn).to.equal(true);
    expect(kv.getSync('b', k('b'))).to.deep.equal(k('2'));
  });

  it('runs the listeners of a lost batch (its process is about to die) and writes nothing', async () => {
    const kv = await store();
    kv.armTear(0);
    let told = false;
    await kv
      .batch()
      .put('b', k('a'), k('1'))
      .afterWrite(() => (told = true))
      .write();
    expect(told).to.equal(true);
    expect(kv.torn).to.equal(true);
    expect(kv.getSync('b', k('a'))).to.equal(undefined);
  });
});
