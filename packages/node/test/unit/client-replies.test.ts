// The read path's replies (client-replies.ts, #16).
import { expect } from 'chai';
import fc from 'fast-check';
import { b58encode } from '@quire/common';
import { rootText } from '../../src/client-replies.js';

describe('rootText (the base58 of read roots, remembered)', () => {
  it('is b58encode of the root for any sequence of roots, repeated or not, and keeps no alias of the bytes given', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 60 }), fc.uint8Array({ minLength: 32, maxLength: 32 }), (picks, seed) => {
        const roots = Array.from({ length: 7 }, (_, i) => seed.map((b) => (b + i * 37) & 0xff));
        for (const i of picks) {
          const r = roots[i]!.slice();
          expect(rootText(r)).to.equal(b58encode(roots[i]!));
          r.fill(0); // a caller that reuses its buffer does not change what is remembered
        }
      }),
      { numRuns: 200 },
    );
  });
});
