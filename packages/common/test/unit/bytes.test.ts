import { expect } from 'chai';
import { concatBytes, equalBytes } from '../../src/index.js';

describe('byte helpers', () => {
  it('concatBytes joins parts in order, with or without their total, and returns a single part as is', () => {
    const a = Uint8Array.of(1, 2);
    const b = Uint8Array.of();
    const c = Uint8Array.of(3, 4, 5);
    expect([...concatBytes([a, b, c])]).to.deep.equal([1, 2, 3, 4, 5]);
    expect([...concatBytes([a, b, c], 5)]).to.deep.equal([1, 2, 3, 4, 5]);
    expect(concatBytes([c])).to.equal(c);
    expect(concatBytes([]).length).to.equal(0);
  });

  it('equalBytes compares contents, not identity', () => {
    expect(equalBytes(Uint8Array.of(1, 2), Uint8Array.of(1, 2))).to.equal(true);
    expect(equalBytes(Uint8Array.of(1, 2), Uint8Array.of(1, 3))).to.equal(false);
    expect(equalBytes(Uint8Array.of(1), Uint8Array.of(1, 0))).to.equal(false);
    // long arrays (compared by memcmp), also views into larger buffers at an offset
    const long = new Uint8Array(600).map((_, i) => i % 251);
    const inside = new Uint8Array(700);
    inside.set(long, 50);
    expect(equalBytes(long, inside.subarray(50, 650))).to.equal(true);
    const other = long.slice();
    other[599] ^= 1;
    expect(equalBytes(long, other)).to.equal(false);
    expect(equalBytes(inside.subarray(49, 649), long)).to.equal(false);
  });
});
