import { createHash } from 'node:crypto';
import { expect } from 'chai';
import {
  EncodingError,
  EncodingErrorCode as C,
  JsonFloat,
  parseJson,
  pythonFloatRepr,
  signatureInput,
  signatureInputString,
  signingSerialization,
} from '@quire/common';
import { expectCode } from './helpers.js';

const ser = (json: string, opts?: Parameters<typeof signingSerialization>[1]) => signingSerialization(parseJson(json), opts);

describe('signingSerialization SER (formats 1.5)', () => {
  it('reproduces the examples of formats.md 1.5', () => {
    expect(ser('{"2":"b","1":"a"}')).to.equal('1:a|2:b');
    expect(ser('{"1":"a","2":"b","3":["1",{"2":"k"}]}')).to.equal('1:a|2:b|3:1,2:k');
    expect(ser('{"1":"a","2":{"3":"b","4":{"5":{"6":"c"}}}}')).to.equal('1:a|2:3:b|4:5:6:c');
    expect(ser('{"flag":true,"n":null,"x":[true,null,3]}')).to.equal('flag:True|n:|x:True,,3');
    expect(
      ser('{"identifier":"V4SGRU86Z58d6TV7PBUe6f","operation":{"dest":"VsKV7grR1BUE29mG2Fm2kX","type":"1"},"protocolVersion":2,"reqId":1585221529670242337}'),
    ).to.equal('identifier:V4SGRU86Z58d6TV7PBUe6f|operation:dest:VsKV7grR1BUE29mG2Fm2kX|type:1|protocolVersion:2|reqId:1585221529670242337');
  });

  it('orders keys by code point, not UTF-16 unit', () => {
    expect(ser('{"a":1,"Z":2,"_":3,"10":4,"9":5}')).to.equal('10:4|9:5|Z:2|_:3|a:1');
    expect(signingSerialization({ '\u{1F600}': 1, '\uE000': 2 })).to.equal('\uE000:2|\u{1F600}:1');
  });

  it('skips signature, signatures and fees only at the top level, and only when asked', () => {
    const v = { a: 1, signature: 's', signatures: { x: 'y' }, fees: 3, op: { signature: 'kept', fees: 'kept' } };
    expect(signingSerialization(v, { skipTopLevel: true })).to.equal('a:1|op:fees:kept|signature:kept');
    expect(signingSerialization(v)).to.equal('a:1|fees:3|op:fees:kept|signature:kept|signature:s|signatures:x:y');
  });

  it('renders floats as Python repr', () => {
    const cases: [number, string][] = [
      [14.8639, '14.8639'],
      [100, '100'],
      [0.0001, '0.0001'],
      [0.00001, '1e-05'],
      [1e16, '1e+16'],
      [1e15 + 0.5, '1000000000000000.5'],
      [123456789.125, '123456789.125'],
      [-2.5, '-2.5'],
      [1.5e-10, '1.5e-10'],
      [5e-324, '5e-324'],
      [1.7976931348623157e308, '1.7976931348623157e+308'],
      [2 ** 53 + 2, '9007199254740994.0'],
      [1e21, '1e+21'],
      [0.1 + 0.2, '0.30000000000000004'],
    ];
    for (const [v, s] of cases) expect(signingSerialization(v), String(v)).to.equal(s);
    expect(pythonFloatRepr(100)).to.equal('100.0');
    expect(pythonFloatRepr(-0)).to.equal('-0.0');
    expect(pythonFloatRepr(1e-4)).to.equal('0.0001');
    expect(pythonFloatRepr(9999999999999998)).to.equal('9999999999999998.0');
    expect(signingSerialization(new JsonFloat(1))).to.equal('1.0');
    expect(ser('[1.0,2.50,1e2,-0.0,1E-5]')).to.equal('1.0,2.5,100.0,-0.0,1e-05');
    expectCode(() => signingSerialization(Infinity), EncodingError, C.NON_FINITE_NUMBER);
  });

  it('writes integers exactly at any size', () => {
    expect(signingSerialization(18446744073709551615n)).to.equal('18446744073709551615');
    expect(signingSerialization(-9223372036854775808n)).to.equal('-9223372036854775808');
    expect(signingSerialization(-0)).to.equal('0');
  });

  it('applies the ATTRIB / GET_ATTR rule only when asked and only for types 100 and 104', () => {
    const raw = { identifier: 'X', operation: { type: '104', dest: 'D', raw: 'endpoint' } };
    const h = createHash('sha256').update('endpoint').digest('hex');
    expect(signingSerialization(raw, { attribRule: true })).to.equal(`identifier:X|operation:dest:D|raw:${h}|type:104`);
    expect(signingSerialization(raw)).to.equal('identifier:X|operation:dest:D|raw:endpoint|type:104');
    expect(signingSerialization({ operation: { type: '100', enc: 'e', raw: null } }, { attribRule: true })).to.equal(
      `operation:enc:${createHash('sha256').update('e').digest('hex')}|raw:|type:100`,
    );
    expect(signingSerialization({ operation: { type: '1', raw: 'x' } }, { attribRule: true })).to.equal('operation:raw:x|type:1');
    expectCode(() => signingSerialization({ operation: { type: '100', raw: 5 } }, { attribRule: true }), EncodingError, C.INVALID_ATTRIB_VALUE);
  });

  it('rejects values SER cannot render', () => {
    expectCode(() => signingSerialization(undefined), EncodingError, C.UNSUPPORTED_VALUE);
    expectCode(() => signingSerialization([1, undefined]), EncodingError, C.UNSUPPORTED_VALUE);
    expectCode(() => signingSerialization({ a: new Date(0) }), EncodingError, C.UNSUPPORTED_VALUE);
    expectCode(() => signingSerialization(Symbol('x')), EncodingError, C.UNSUPPORTED_VALUE);
    expectCode(
      () =>
        signingSerialization(
          new Map<unknown, unknown>([
            [1, 'a'],
            ['b', 2],
          ]),
        ),
      EncodingError,
      C.INVALID_MAP_KEY,
    );
    expect(
      signingSerialization(
        new Map([
          [10, 'a'],
          [2, 'b'],
        ]),
      ),
    ).to.equal('2:b|10:a');
  });
});

describe('signatureInput (formats 3.2)', () => {
  const request = {
    identifier: 'V4SGRU86Z58d6TV7PBUe6f',
    operation: { dest: 'VsKV7grR1BUE29mG2Fm2kX', type: '1' },
    protocolVersion: 2,
    reqId: 1585221529670242337n,
  };
  const expected = 'identifier:V4SGRU86Z58d6TV7PBUe6f|operation:dest:VsKV7grR1BUE29mG2Fm2kX|type:1|protocolVersion:2|reqId:1585221529670242337';

  it('is the UTF-8 of SER over the kept fields', () => {
    expect(Buffer.from(signatureInput(request)).toString('utf8')).to.equal(expected);
    expect(signatureInputString(request)).to.equal(expected);
  });

  it('leaves out signature(s), fees, digest and unknown fields, keeps endorser and taaAcceptance', () => {
    const signed = { ...request, signature: 'sig', signatures: { a: 'b' }, fees: [1], digest: 'd', extra: 1 };
    expect(signatureInputString(signed)).to.equal(expected);
    const withTaa = { ...request, endorser: 'E', taaAcceptance: { mechanism: 'm', taaDigest: 'ab', time: 1562284800 } };
    expect(signatureInputString(withTaa)).to.equal(
      'endorser:E|identifier:V4SGRU86Z58d6TV7PBUe6f|operation:dest:VsKV7grR1BUE29mG2Fm2kX|type:1|protocolVersion:2|reqId:1585221529670242337|taaAcceptance:mechanism:m|taaDigest:ab|time:1562284800',
    );
  });

  it('hashes ATTRIB raw/enc/hash (sha256 of "cool hash" from the vectors)', () => {
    const r = { identifier: 'X', reqId: 1, protocolVersion: 2, operation: { type: '100', dest: 'D', hash: 'cool hash' } };
    expect(signatureInputString(r)).to.equal(
      'identifier:X|operation:dest:D|hash:46aa0c92129b33ee72ee1478d2ae62fa6e756869dedc6c858af3214a6fcf1904|type:100|protocolVersion:2|reqId:1',
    );
    expect(r.operation.hash).to.equal('cool hash');
  });

  it('signs without identifier when the request has none', () => {
    expect(signatureInputString({ reqId: 1, operation: { type: '105', dest: 'D' }, signatures: { A: 's' } })).to.equal('operation:dest:D|type:105|reqId:1');
  });
});
