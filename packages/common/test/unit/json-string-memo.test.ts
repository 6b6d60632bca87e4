// stringifyJson's long strings (their literals are remembered, a few hundred of them): the same text as written
// afresh, the same refusal of a lone surrogate each time, across more distinct strings than are remembered.
import { expect } from 'chai';
import fc from 'fast-check';
import { EncodingError, EncodingErrorCode as C, stringifyJson } from '@quire/common';

function written(v: unknown): string {
  try {
    return stringifyJson(v);
  } catch (e) {
    expect(e).to.be.instanceOf(EncodingError);
    return `error ${(e as EncodingError).code}`;
  }
}

describe('stringifyJson: long strings, remembered', () => {
  const ch = fc.oneof(
    { weight: 20, arbitrary: fc.constantFrom(...'ABCxyz019+/=é€'.split('')) },
    { weight: 1, arbitrary: fc.constantFrom('"', '\\', '\n', '\u0001', '\u007f', '\u2028', '\ud83d\ude00') },
    { weight: 1, arbitrary: fc.constantFrom('\ud800', '\udfff') },
  );
  // around the remembered lengths (512 to 16,384 characters)
  const long = fc
    .tuple(fc.array(ch, { minLength: 1, maxLength: 40, size: 'max' }), fc.integer({ min: 0, max: 20_000 }))
    .map(([cs, n]) => (cs.join('') + 'p'.repeat(n)).slice(0, Math.max(n, 1)) + cs.join(''));

  it('writes what JSON.stringify writes, or refuses a lone surrogate, the first time and again', () => {
    fc.assert(
      fc.property(fc.array(long, { minLength: 1, maxLength: 12 }), (strings) => {
        for (let round = 0; round < 2; round++)
          for (const s of strings) {
            const want = (s as unknown as { isWellFormed(): boolean }).isWellFormed() ? JSON.stringify({ proof_nodes: s }) : `error ${C.LONE_SURROGATE}`;
            expect(written({ proof_nodes: s })).to.equal(want);
          }
      }),
      { numRuns: 150 },
    );
  });

  it('stays right after more distinct strings than are remembered', () => {
    const base = 'Q'.repeat(600);
    const strings = Array.from({ length: 700 }, (_, i) => `${base}${i}"\n`);
    for (let round = 0; round < 2; round++) for (const s of strings) expect(stringifyJson(s)).to.equal(JSON.stringify(s));
  });
});
