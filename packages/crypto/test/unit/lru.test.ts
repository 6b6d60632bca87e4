import { expect } from 'chai';
import { seededRandom } from '@quire/testing';
import { LruCache } from '../../src/index.js';

describe('LruCache', () => {
  it('evicts the least recently used entry', () => {
    const c = new LruCache<string, number>(2);
    c.set('a', 1);
    c.set('b', 2);
    expect(c.get('a')).to.equal(1); // a is now most recent
    c.set('c', 3);
    expect(c.get('b')).to.equal(undefined);
    expect(c.get('a')).to.equal(1);
    expect(c.get('c')).to.equal(3);
    c.set('a', 10);
    expect(c.size).to.equal(2);
    expect(c.get('a')).to.equal(10);
  });

  it('rejects a non-positive capacity', () => {
    expect(() => new LruCache(0)).to.throw(RangeError);
  });
});

describe('LruCache against a model (random operations)', () => {
  it('holds exactly the entries of a least-recently-used list, across many evictions, refreshes and clears', () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const rnd = seededRandom(seed);
      const capacity = 1 + Math.floor(rnd() * (seed % 2 === 0 ? 5 : 300));
      const keys = capacity * 3;
      const c = new LruCache<number, number>(capacity);
      /** the model: oldest first */
      let model: [number, number][] = [];
      for (let op = 0; op < 10_000; op++) {
        const key = Math.floor(rnd() * keys);
        const r = rnd();
        if (r < 0.45) {
          const value = op;
          c.set(key, value);
          const at = model.findIndex(([k]) => k === key);
          if (at >= 0) model.splice(at, 1);
          else if (model.length >= capacity) model.shift();
          model.push([key, value]);
        } else if (r < 0.999) {
          const at = model.findIndex(([k]) => k === key);
          const expected = at >= 0 ? model[at]?.[1] : undefined;
          expect(c.get(key), `seed ${seed}, op ${op}: get ${key}`).to.equal(expected);
          if (at >= 0) model.push(...model.splice(at, 1));
        } else {
          c.clear();
          model = [];
        }
        expect(c.size, `seed ${seed}, op ${op}: size`).to.equal(model.length);
      }
      for (const [k, v] of model) expect(c.get(k), `seed ${seed}: final ${k}`).to.equal(v);
    }
  });
});
