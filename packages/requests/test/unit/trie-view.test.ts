import { StateTrie, openMemoryKvStore } from '@quire/storage';
import { expect } from 'chai';
import fc from 'fast-check';
import { TrieView } from '../../src/executor/stores.js';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined): string | undefined => (b === undefined ? undefined : Buffer.from(b).toString('utf8'));

describe('TrieView: a request undone restores every key it wrote', () => {
  it('restores the value a key had before a write, whether the handler read it first or not', async () => {
    const trie = await StateTrie.open({ name: 'domain' }, { kv: await openMemoryKvStore() });
    const written: string[] = [];
    const view = new TrieView(trie, (key) => written.push(typeof key === 'string' ? key : 'bytes'));
    const k1 = bytes('k1');
    view.set(k1, bytes('one'));
    view.set('k2', bytes('two'));
    const before = trie.headRoot;

    view.beginUndo();
    expect(text(view.get(k1))).to.equal('one');
    view.set(k1, bytes('changed')); // the key just read: its value read is what is restored
    expect(text(view.get('k2'))).to.equal('two');
    view.set('k3', bytes('new')); // another key than the one just read
    view.set('k2', bytes('changed too')); // read, but another key was written since
    view.remove(k1); // written twice in the request
    const got = view.get(k1);
    expect(got).to.equal(undefined);
    view.set(Uint8Array.from(k1), bytes('third')); // the same key as another object
    view.endUndo(true);

    expect(text(view.get(k1))).to.equal('one');
    expect(text(view.get('k2'))).to.equal('two');
    expect(view.get('k3')).to.equal(undefined);
    expect(Buffer.from(trie.headRoot).equals(Buffer.from(before))).to.equal(true);
    expect(written.length).to.be.greaterThan(0);
  });

  it('a read value changed by its reader does not change what is restored', async () => {
    const trie = await StateTrie.open({ name: 'domain' }, { kv: await openMemoryKvStore() });
    const view = new TrieView(trie);
    view.set('k', bytes('kept'));
    view.beginUndo();
    const v = view.get('k');
    if (v === undefined) throw new Error('k is set');
    v.fill(0);
    view.set('k', bytes('other'));
    view.endUndo(true);
    expect(text(view.get('k'))).to.equal('kept');
  });

  it('any sequence of reads and writes, undone, gives back the root before it (property)', async () => {
    const keys = ['a', 'b', 'c', 'd'];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('get', 'set', 'remove'), fc.constantFrom(...keys), fc.string({ maxLength: 3 })), { maxLength: 20 }),
        async (ops) => {
          const trie = await StateTrie.open({ name: 'domain' }, { kv: await openMemoryKvStore() });
          const view = new TrieView(trie);
          view.set('a', bytes('A'));
          view.set('c', bytes('C'));
          const before = trie.headRoot;
          view.beginUndo();
          for (const [op, key, value] of ops) {
            if (op === 'get') view.get(key);
            else if (op === 'set') view.set(key, bytes(value));
            else view.remove(key);
          }
          view.endUndo(true);
          expect(Buffer.from(trie.headRoot).equals(Buffer.from(before))).to.equal(true);
          expect(text(view.get('a'))).to.equal('A');
          expect(text(view.get('c'))).to.equal('C');
        },
      ),
      { numRuns: 300 },
    );
  });
});
