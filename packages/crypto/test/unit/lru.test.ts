import { expect } from 'chai';
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
