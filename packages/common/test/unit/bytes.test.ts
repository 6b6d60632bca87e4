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
  });
});
