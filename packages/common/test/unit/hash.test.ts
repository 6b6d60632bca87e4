// sha256, sha256Hex and sha3_256 (one crypto.hash call each) give createHash's digest of the same bytes: strings as
// their UTF-8, byte arrays of any length, views into a larger buffer at an offset.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { fnv1a32, sha256, sha256Hex, sha3_256 } from '../../src/index.js';

const ref = (alg: string, data: Uint8Array | string): Buffer =>
  createHash(alg)
    .update(typeof data === 'string' ? Buffer.from(data, 'utf8') : data)
    .digest();

describe('hash functions', () => {
  it('equal createHash over strings (UTF-8) and byte arrays, views included', () => {
    const bytes = fc
      .tuple(fc.uint8Array({ maxLength: 2048 }), fc.nat({ max: 16 }), fc.nat({ max: 16 }))
      .map(([b, from, cut]) => b.subarray(Math.min(from, b.length), Math.max(Math.min(from, b.length), b.length - cut)));
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 300 }), bytes), (data) => {
        expect(Buffer.from(sha256(data)).equals(ref('sha256', data))).to.equal(true);
        expect(sha256Hex(data)).to.equal(ref('sha256', data).toString('hex'));
        expect(Buffer.from(sha3_256(data)).equals(ref('sha3-256', data))).to.equal(true);
        expect(sha256(data)).to.be.instanceOf(Uint8Array).and.have.length(32);
      }),
      { numRuns: 500 },
    );
  });

  it('fnv1a32 gives the published FNV-1a 32-bit values, unsigned', () => {
    expect(fnv1a32('')).to.equal(0x811c9dc5);
    expect(fnv1a32('a')).to.equal(0xe40c292c);
    expect(fnv1a32('foobar')).to.equal(0xbf9cf968);
  });
});
