import { expect } from 'chai';
import fc from 'fast-check';
import { EncodingError, EncodingErrorCode as C, JsonFloat, parseJson, receivedKeys, stringifyJson } from '@quire/common';
import { acceptedJsonValue, expectCode } from './helpers.js';

describe('parseJson / stringifyJson (formats 1.4)', () => {
  it('keeps reqId above 2^53 exact (bigint) and writes it back as a bare number', () => {
    const text =
      '{"identifier":"V4SGRU86Z58d6TV7PBUe6f","operation":{"dest":"VsKV7grR1BUE29mG2Fm2kX","type":"1"},"protocolVersion":2,"reqId":1585221529670242337}';
    const v = parseJson(text) as Record<string, unknown>;
    expect(v.reqId).to.equal(1585221529670242337n);
    expect(v.protocolVersion).to.equal(2);
    expect(stringifyJson(v)).to.equal(text);
  });

  it('returns safe integers as numbers, others as bigint, at the exact boundaries', () => {
    expect(parseJson('9007199254740991')).to.equal(9007199254740991);
    expect(parseJson('9007199254740992')).to.equal(9007199254740992n);
    expect(parseJson('-9007199254740991')).to.equal(-9007199254740991);
    expect(parseJson('-9007199254740992')).to.equal(-9007199254740992n);
    expect(parseJson('18446744073709551615')).to.equal(18446744073709551615n);
    expect(parseJson('-9223372036854775808')).to.equal(-9223372036854775808n);
    expect(parseJson('-0')).to.equal(0);
    expect(Object.is(parseJson('-0'), 0)).to.equal(true);
    expect(parseJson('0000000000000000000'.replace(/^0+/, '0'))).to.equal(0);
  });

  it('rejects integers outside [-2^63, 2^64-1]', () => {
    expectCode(() => parseJson('18446744073709551616'), EncodingError, C.INTEGER_OUT_OF_RANGE);
    expectCode(() => parseJson('{"reqId":-9223372036854775809}'), EncodingError, C.INTEGER_OUT_OF_RANGE);
  });

  it('keeps float tokens as floats, integral ones as JsonFloat', () => {
    expect(parseJson('14.8639')).to.equal(14.8639);
    const one = parseJson('1.0');
    expect(one).to.be.instanceOf(JsonFloat);
    expect((one as JsonFloat).value).to.equal(1);
    expect(parseJson('1e2')).to.deep.equal(new JsonFloat(100));
    expect(Object.is((parseJson('-0.0') as JsonFloat).value, -0)).to.equal(true);
    expect(parseJson('1E300')).to.equal(1e300);
    expect(stringifyJson(parseJson('[1.0,1e2,-0.0,0.5,1e300,1E-7]'))).to.equal('[1.0,100.0,-0.0,0.5,1e+300,1e-07]');
  });

  it('rejects NaN, Infinity and float overflow', () => {
    for (const t of ['NaN', 'Infinity', '-Infinity', '[1,NaN]', '1e400', '-1e400']) {
      expectCode(() => parseJson(t), EncodingError, C.NON_FINITE_NUMBER);
    }
  });

  it('rejects duplicate keys, also when only escapes differ', () => {
    const e = expectCode(() => parseJson('{"a":1,"b":2,"a":3}'), EncodingError, C.DUPLICATE_KEY);
    expect(e.data.key).to.equal('a');
    expectCode(() => parseJson('{"a":1,"\\u0061":2}'), EncodingError, C.DUPLICATE_KEY);
    expectCode(() => parseJson('{"x":{"1":1,"1":2}}'), EncodingError, C.DUPLICATE_KEY);
  });

  it('rejects lone surrogates, raw or escaped, and accepts pairs', () => {
    expectCode(() => parseJson('"\\ud800"'), EncodingError, C.LONE_SURROGATE);
    expectCode(() => parseJson('"a\\udc00b"'), EncodingError, C.LONE_SURROGATE);
    expectCode(() => parseJson('{"\\ud83d":1}'), EncodingError, C.LONE_SURROGATE);
    expectCode(() => parseJson('"\ud800"'), EncodingError, C.LONE_SURROGATE);
    expect(parseJson('"\\ud83d\\ude00"')).to.equal('😀');
    expect(parseJson('"😀"')).to.equal('😀');
    expectCode(() => stringifyJson('\ud800'), EncodingError, C.LONE_SURROGATE);
    // keys too, of objects and of Maps alike: what parseJson would refuse is never written
    expectCode(() => stringifyJson({ ['\udc00']: 1 }), EncodingError, C.LONE_SURROGATE);
    expectCode(() => stringifyJson(new Map([['\ud800', 1]])), EncodingError, C.LONE_SURROGATE);
  });

  it('decodes escapes', () => {
    expect(parseJson('"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u20AC"')).to.equal('"\\/\b\f\n\r\té€');
  });

  it('rejects malformed JSON with INVALID_JSON and a position', () => {
    const bad = [
      '',
      ' ',
      '{',
      '}',
      '[1,]',
      '{"a":1,}',
      '{"a" 1}',
      '{a:1}',
      "'a'",
      '01',
      '1.',
      '.5',
      '1e',
      '+1',
      '-',
      'tru',
      'nul',
      'true false',
      '"abc',
      '"a\u0001b"',
      '"\\x"',
      '"\\u12g4"',
      '[1 2]',
      '{"a":1}x',
      '\ufeff{}',
      '[',
      '{"a"',
      '{"a":',
    ];
    for (const t of bad) {
      const e = expectCode(() => parseJson(t), EncodingError, C.INVALID_JSON);
      expect(e.data.position, t).to.be.a('number');
    }
  });

  it('accepts UTF-8 bytes and rejects invalid UTF-8', () => {
    expect(parseJson(Buffer.from('{"name":"Zoë"}'))).to.deep.equal({ name: 'Zoë' });
    expectCode(() => parseJson(new Uint8Array([0x22, 0xc3, 0x22])), EncodingError, C.INVALID_UTF8);
    expectCode(() => parseJson(new Uint8Array([0x22, 0xed, 0xa0, 0x80, 0x22])), EncodingError, C.INVALID_UTF8);
  });

  it('enforces the depth limit', () => {
    expect(parseJson('['.repeat(128) + ']'.repeat(128))).to.be.an('array');
    expectCode(() => parseJson('['.repeat(129) + ']'.repeat(129)), EncodingError, C.TOO_DEEP);
    expectCode(() => parseJson('{"a":'.repeat(5) + '1' + '}'.repeat(5), { maxDepth: 4 }), EncodingError, C.TOO_DEEP);
    expectCode(() => parseJson('['.repeat(100000)), EncodingError, C.TOO_DEEP);
  });

  it('makes the received key order retrievable when integer-like keys reorder a plain object', () => {
    const v = parseJson('{"b":1,"10":2,"2":3,"a":{"z":1,"1":2}}') as Record<string, unknown>;
    expect(Object.keys(v)).to.deep.equal(['2', '10', 'b', 'a']);
    expect(receivedKeys(v)).to.deep.equal(['b', '10', '2', 'a']);
    expect(receivedKeys(v.a as object)).to.deep.equal(['z', '1']);
    expect(stringifyJson(v)).to.equal('{"b":1,"10":2,"2":3,"a":{"z":1,"1":2}}');
    delete v['10'];
    (v as Record<string, unknown>).c = 4;
    expect(receivedKeys(v)).to.deep.equal(['b', '2', 'a', 'c']);
  });

  it('treats __proto__ as an ordinary key', () => {
    const v = parseJson('{"__proto__":{"polluted":1}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).to.equal(Object.prototype);
    expect(Object.keys(v)).to.deep.equal(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
    expect(stringifyJson(v)).to.equal('{"__proto__":{"polluted":1}}');
  });

  it('stringifyJson rejects values JSON cannot hold', () => {
    expectCode(() => stringifyJson(undefined), EncodingError, C.UNSUPPORTED_VALUE);
    expectCode(() => stringifyJson([undefined]), EncodingError, C.UNSUPPORTED_VALUE);
    expectCode(() => stringifyJson(new Uint8Array(2)), EncodingError, C.UNSUPPORTED_VALUE);
    expectCode(() => stringifyJson(() => 1), EncodingError, C.UNSUPPORTED_VALUE);
    expectCode(() => stringifyJson(NaN), EncodingError, C.NON_FINITE_NUMBER);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expectCode(() => stringifyJson(cyclic), EncodingError, C.TOO_DEEP);
    expect(stringifyJson({ a: undefined, b: 1 })).to.equal('{"b":1}');
    expect(
      stringifyJson(
        new Map([
          [1, 'x'],
          [0, 'y'],
        ]),
      ),
    ).to.equal('{"1":"x","0":"y"}');
  });

  describe('properties', () => {
    const bigInt64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n });
    it('round-trips every integer of [-2^63, 2^64-1] exactly', () => {
      fc.assert(
        fc.property(bigInt64, (n) => {
          const text = `{"reqId":${n}}`;
          const v = parseJson(text) as { reqId: number | bigint };
          expect(BigInt(v.reqId)).to.equal(n);
          expect(typeof v.reqId).to.equal(n >= -(2n ** 53n) + 1n && n <= 2n ** 53n - 1n ? 'number' : 'bigint');
          expect(stringifyJson(v)).to.equal(text);
        }),
        { numRuns: 300 },
      );
    });

    it('agrees with JSON.parse on JSON without big numbers, and round-trips text', () => {
      const value = acceptedJsonValue(3);
      fc.assert(
        fc.property(value, (v) => {
          const text = JSON.stringify(v);
          const parsed = parseJson(text);
          expect(JSON.parse(stringifyJson(parsed))).to.deep.equal(JSON.parse(text));
          expect(stringifyJson(parseJson(stringifyJson(parsed)))).to.equal(stringifyJson(parsed));
        }),
        { numRuns: 200 },
      );
    });

    it('never throws anything but an EncodingError on arbitrary text', () => {
      fc.assert(
        fc.property(fc.string({ maxLength: 40 }), (s) => {
          try {
            parseJson(s);
          } catch (e) {
            expect(e).to.be.instanceOf(EncodingError);
          }
        }),
        { numRuns: 300 },
      );
    });
  });
});
