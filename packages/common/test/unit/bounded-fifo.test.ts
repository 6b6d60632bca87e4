import { expect } from 'chai';
import fc from 'fast-check';
import { BoundedFifo, BoundedFifoSet, LruCache } from '@quire/common';

/** The reference: an array of entries, oldest first, every operation by a linear scan. */
class ModelFifo {
  entries: [number, number][] = [];
  constructor(readonly capacity: number) {}
  at(k: number): number {
    return this.entries.findIndex(([key]) => key === k);
  }
  set(k: number, v: number, newest: boolean): void {
    const at = this.at(k);
    if (at >= 0 && !newest) {
      this.entries[at] = [k, v];
      return;
    }
    if (at >= 0) this.entries.splice(at, 1);
    else if (this.entries.length >= this.capacity) this.entries.shift();
    this.entries.push([k, v]);
  }
  delete(k: number): boolean {
    const at = this.at(k);
    if (at < 0) return false;
    this.entries.splice(at, 1);
    return true;
  }
}

type Op = { op: 'set' | 'setNewest'; k: number; v: number } | { op: 'get' | 'delete'; k: number } | { op: 'shift' } | { op: 'clear' };

const opsOn = (keys: number, clears: boolean): fc.Arbitrary<Op[]> =>
  fc.array<Op>(
    fc.oneof(
      { arbitrary: fc.record({ op: fc.constantFrom('set' as const, 'setNewest' as const), k: fc.nat(keys - 1), v: fc.integer() }), weight: 8 },
      { arbitrary: fc.record({ op: fc.constantFrom('get' as const, 'delete' as const), k: fc.nat(keys - 1) }), weight: 4 },
      { arbitrary: fc.constant({ op: 'shift' as const }), weight: 1 },
      { arbitrary: fc.constant({ op: clears ? ('clear' as const) : ('shift' as const) }), weight: 1 },
    ),
    { maxLength: 400 },
  );

describe('BoundedFifo against a model', () => {
  it('holds exactly the model entries in the model order, across sets in place and at the newest place, deletes, shifts and clears', () => {
    const cases = fc
      .tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 40 }), fc.boolean())
      .chain(([capacity, keySpan, clears]) => fc.tuple(fc.constant(capacity), opsOn(keySpan, clears)));
    fc.assert(
      fc.property(cases, ([capacity, ops]) => {
        const f = new BoundedFifo<number, number>(capacity);
        let m = new ModelFifo(capacity);
        for (const o of ops) {
          switch (o.op) {
            case 'set':
            case 'setNewest':
              if (o.op === 'set') f.set(o.k, o.v);
              else f.setNewest(o.k, o.v);
              m.set(o.k, o.v, o.op === 'setNewest');
              break;
            case 'get': {
              const at = m.at(o.k);
              expect(f.get(o.k)).to.equal(at >= 0 ? m.entries[at]?.[1] : undefined);
              expect(f.has(o.k)).to.equal(at >= 0);
              break;
            }
            case 'delete':
              expect(f.delete(o.k)).to.equal(m.delete(o.k));
              break;
            case 'shift':
              expect(f.shift()).to.deep.equal(m.entries.shift());
              break;
            case 'clear':
              f.clear();
              m = new ModelFifo(capacity);
              break;
          }
          expect(f.size).to.equal(m.entries.length);
          expect(f.size).to.be.at.most(capacity);
        }
        expect([...f]).to.deep.equal(m.entries);
        expect([...f.keys()]).to.deep.equal(m.entries.map(([k]) => k));
        expect([...f.values()]).to.deep.equal(m.entries.map(([, v]) => v));
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps a held key in its place with set and moves it with setNewest', () => {
    const f = new BoundedFifo<string, number>(2);
    f.set('a', 1);
    f.set('b', 2);
    f.set('a', 3); // stays oldest
    f.set('c', 4);
    expect([...f]).to.deep.equal([
      ['b', 2],
      ['c', 4],
    ]);
    f.setNewest('b', 5); // moves past c
    f.set('d', 6);
    expect([...f]).to.deep.equal([
      ['b', 5],
      ['d', 6],
    ]);
  });

  it('finds the oldest entry after its oldest were deleted many times, and after it was emptied by shifts', () => {
    const f = new BoundedFifo<number, number>(1000);
    for (let i = 0; i < 100_000; i++) f.set(i, i);
    expect(f.size).to.equal(1000);
    expect(f.shift()).to.deep.equal([99_000, 99_000]);
    while (f.shift() !== undefined);
    expect(f.size).to.equal(0);
    expect(f.shift()).to.equal(undefined);
    // an iterator run to its end would stay finished: the next evictions would then drop nothing
    for (let i = 0; i < 1001; i++) f.set(i, i);
    expect(f.size).to.equal(1000);
    expect(f.has(0)).to.equal(false);
    expect(f.shift()).to.deep.equal([1, 1]);
  });

  it('holds undefined values and keys as any other', () => {
    const f = new BoundedFifo<number | undefined, string | undefined>(2);
    f.set(undefined, 'u');
    f.set(1, undefined);
    f.set(2, 'two');
    expect([...f]).to.deep.equal([
      [1, undefined],
      [2, 'two'],
    ]);
    expect(f.shift()).to.deep.equal([1, undefined]);
  });

  it('rejects a capacity that is not a positive integer', () => {
    for (const c of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => new BoundedFifo(c), String(c)).to.throw(RangeError);
  });
});

describe('BoundedFifoSet against a model', () => {
  it('holds exactly the model values in the model order, across adds in place and at the newest place, deletes, shifts and clears', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 }), opsOn(25, true), (capacity, ops) => {
        const s = new BoundedFifoSet<number>(capacity);
        let m = new ModelFifo(capacity);
        for (const o of ops) {
          if (o.op === 'set') {
            s.add(o.k);
            m.set(o.k, 0, false);
          } else if (o.op === 'setNewest') {
            s.addNewest(o.k);
            m.set(o.k, 0, true);
          } else if (o.op === 'get') expect(s.has(o.k)).to.equal(m.at(o.k) >= 0);
          else if (o.op === 'delete') expect(s.delete(o.k)).to.equal(m.delete(o.k));
          else if (o.op === 'shift') expect(s.shift()).to.equal(m.entries.shift()?.[0]);
          else if (o.op === 'clear') {
            s.clear();
            m = new ModelFifo(capacity);
          }
          expect(s.size).to.equal(m.entries.length);
        }
        expect([...s]).to.deep.equal(m.entries.map(([k]) => k));
        expect([...s.values()]).to.deep.equal(m.entries.map(([k]) => k));
      }),
      { numRuns: 500 },
    );
  });

  it('rejects a capacity that is not a positive integer', () => {
    expect(() => new BoundedFifoSet(0)).to.throw(RangeError);
  });
});

describe('LruCache against a model', () => {
  it('holds exactly the entries of a least-recently-used list over sets, refreshing gets and clears', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), opsOn(20, true), (capacity, ops) => {
        const c = new LruCache<number, number>(capacity);
        let m = new ModelFifo(capacity);
        for (const o of ops) {
          if (o.op === 'set' || o.op === 'setNewest') {
            c.set(o.k, o.v);
            m.set(o.k, o.v, true);
          } else if (o.op === 'get' || o.op === 'delete') {
            const at = m.at(o.k);
            const held = m.entries[at];
            expect(c.get(o.k)).to.equal(held?.[1]);
            if (held !== undefined) m.set(held[0], held[1], true);
          } else if (o.op === 'clear') {
            c.clear();
            m = new ModelFifo(capacity);
          }
          expect(c.size).to.equal(m.entries.length);
        }
        for (const [k, v] of [...m.entries]) expect(c.get(k)).to.equal(v);
      }),
      { numRuns: 500 },
    );
  });
});
