// The simulator's crash at the instant a node's flush resolves (issue #15, the mutation gate's
// `ex-reply-before-write`): once armed, writes land a macrotask after they start, and the first
// flush that follows a batch write is the crash point: what is still in flight then is lost.
import { expect } from 'chai';
import { openMemoryKvStore } from '@quire/storage';
import { TearableKvStore } from '../../src/sim/tearable-kv.js';

const k = (s: string): Uint8Array => new TextEncoder().encode(s);

async function store(): Promise<TearableKvStore> {
  return new TearableKvStore(await openMemoryKvStore());
}

describe('sim: TearableKvStore, crash at flush', () => {
  it('keeps a write that landed before the flush resolved, and loses every later one', async () => {
    const kv = await store();
    kv.armCrashAtFlush();
    await kv.batch().put('b', k('a'), k('1')).write();
    kv.flushed();
    expect(kv.torn).to.equal(true);
    expect(kv.tornAtFlush).to.equal(true);
    expect(kv.getSync('b', k('a'))).to.deep.equal(k('1'));
    await kv.batch().put('b', k('b'), k('2')).write();
    expect(kv.getSync('b', k('b'))).to.equal(undefined);
  });

  it('loses a write still in flight when the flush resolves (a flush that did not wait for it)', async () => {
    const kv = await store();
    kv.armCrashAtFlush();
    let told: unknown = 'not yet';
    const inFlight = kv
      .batch()
      .put('b', k('a'), k('1'))
      .afterWrite((e) => (told = e))
      .write();
    // a write started now lands a macrotask later, not within the microtasks that follow
    await Promise.resolve();
    expect(kv.getSync('b', k('a'))).to.equal(undefined);
    kv.flushed();
    await inFlight;
    expect(kv.getSync('b', k('a'))).to.equal(undefined);
    expect(told).to.equal(undefined);
    expect(kv.lostWrites).to.equal(1);
  });

  it('does not crash at a flush with no batch written since it was armed, and a restart disarms it', async () => {
    const kv = await store();
    kv.armCrashAtFlush();
    kv.flushed();
    expect(kv.torn).to.equal(false);
    kv.armTear(undefined);
    expect(kv.slowWrites).to.equal(false);
    await kv.batch().put('b', k('a'), k('1')).write();
    kv.flushed();
    expect(kv.torn).to.equal(false);
    expect(kv.getSync('b', k('a'))).to.deep.equal(k('1'));
  });
});
