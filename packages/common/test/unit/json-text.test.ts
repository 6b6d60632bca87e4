// JsonText: a value written once by stringifyJson and spliced into later messages as that text. A message holding it
// is written exactly as the message holding the value; canonical JSON (hashed, signed) refuses it.
import { expect } from 'chai';
import fc from 'fast-check';
import { EncodingError, EncodingErrorCode as C, JsonText, canonicalJson, stringifyJson } from '@quire/common';
import { expectCode } from './helpers.js';

describe('JsonText: a part written once', () => {
  it('writes a message holding it exactly as the message holding its value, at any depth and key order', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })), fc.string(), (part, msg, at) => {
        const value: unknown = part;
        const plain = { ...msg, [at]: { state_proof: value } };
        const spliced = { ...msg, [at]: { state_proof: JsonText.of(value) } };
        expect(stringifyJson(spliced)).to.equal(stringifyJson(plain));
        expect(stringifyJson([JsonText.of(value), 1])).to.equal(stringifyJson([value, 1]));
      }),
      { numRuns: 200 },
    );
  });

  it('refuses what stringifyJson refuses when made, and is refused by canonical JSON', () => {
    expectCode(() => JsonText.of({ s: 'a\ud800' }), EncodingError, C.LONE_SURROGATE);
    expectCode(() => JsonText.of({ f: () => 1 }), EncodingError, C.UNSUPPORTED_VALUE);
    expectCode(() => canonicalJson({ state_proof: JsonText.of({ a: 1 }) }), EncodingError, C.UNSUPPORTED_VALUE);
  });
});
