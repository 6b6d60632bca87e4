import { expect } from 'chai';
import { EncodingError, EncodingErrorCode as C, JsonFloat, canonicalJson, canonicalJsonBytes, parseJson } from '@quire/common';
import { expectCode } from './helpers.js';

describe('canonicalJson CJ (formats 1.6)', () => {
  it('reproduces the example of formats.md 1.6', () => {
    const v = parseJson('{"tailsLocation":"https://example.org/tails/abc","name":"Zoë ✓","b":null,"a":[{"z":1,"y":true}]}');
    expect(canonicalJson(v)).to.equal('{"a":[{"y":true,"z":1}],"b":null,"name":"Zoë ✓","tailsLocation":"https://example.org/tails/abc"}');
  });

  it('escapes exactly like Python json with ensure_ascii=False', () => {
    const s = '"\\/\b\f\n\r\t\u0000\u001f\u007f\u2028é😀';
    expect(canonicalJson(s)).to.equal('"\\"\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f\u007f\u2028é😀"');
    expect(Buffer.from(canonicalJsonBytes('é')).toString('hex')).to.equal('22c3a922');
  });

  it('writes integers exactly and floats as Python repr', () => {
    expect(canonicalJson({ b: 1585221529670242337n, a: -9223372036854775808n, c: 1.5, d: new JsonFloat(2), e: 1e-7, f: -0 })).to.equal(
      '{"a":-9223372036854775808,"b":1585221529670242337,"c":1.5,"d":2.0,"e":1e-07,"f":0}',
    );
  });

  it('writes integer map keys as decimal strings in numeric order', () => {
    expect(
      canonicalJson({
        ledgerSize: new Map([
          [10, 1],
          [2, 5],
          [0, 3],
        ]),
      }),
    ).to.equal('{"ledgerSize":{"0":3,"2":5,"10":1}}');
  });

  it('sorts keys at every depth including inside arrays of arrays', () => {
    expect(canonicalJson([[{ b: 1, a: 2 }], { d: { c: 1, b: 2 } }])).to.equal('[[{"a":2,"b":1}],{"d":{"b":2,"c":1}}]');
  });

  it('rejects lone surrogates, non-finite numbers and unsupported values', () => {
    expectCode(() => canonicalJson({ a: '\udc00' }), EncodingError, C.LONE_SURROGATE);
    expectCode(() => canonicalJson({ ['\ud800']: 1 }), EncodingError, C.LONE_SURROGATE);
    expectCode(() => canonicalJson([NaN]), EncodingError, C.NON_FINITE_NUMBER);
    expectCode(() => canonicalJson({ a: new Uint8Array(1) }), EncodingError, C.UNSUPPORTED_VALUE);
    expectCode(() => canonicalJson(undefined), EncodingError, C.UNSUPPORTED_VALUE);
    expect(canonicalJson({ a: undefined, b: null })).to.equal('{"b":null}');
  });
});
