// stringifyJson hands a value to the runtime's JSON.stringify when that writes the same text, and to the writer
// otherwise. Every value here is written by both routes and the texts (or the errors' codes) must agree.
import { expect } from 'chai';
import fc from 'fast-check';
import { EncodingError, EncodingErrorCode as C, JsonFloat, parseJson, receivedKeys, stringifyJson } from '../../src/index.js';
import { writeJson } from '../../src/json-writer.js';
import { expectCode } from './helpers.js';

/** The writer's text of `v`, or the code of what it threw. */
function written(v: unknown): string {
  try {
    return writeJson(v, false);
  } catch (e) {
    if (e instanceof EncodingError) return `error ${e.code}`;
    throw e;
  }
}

function stringified(v: unknown): string {
  try {
    return stringifyJson(v);
  } catch (e) {
    if (e instanceof EncodingError) return `error ${e.code}`;
    throw e;
  }
}

const leaf = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }), // lone surrogates included
  fc.integer(),
  fc.double(),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.constant(-0),
  fc.constant(Number.MAX_SAFE_INTEGER + 1),
  fc.double().map((x) => new JsonFloat(x)),
);

const value = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, leaf, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('0', '7', '__proto__', 'toJSON')), tie('value'), {
    maxKeys: 4,
  }),
})).value;

describe('stringifyJson: the runtime writer where it writes the same text', () => {
  it('writes every value as the writer does, or throws the code the writer throws', () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(stringified(v)).to.equal(written(v));
      }),
      { numRuns: 2000 },
    );
  });

  it('writes a NYM REPLY as the writer does', () => {
    const reply = {
      op: 'REPLY',
      result: {
        txn: {
          type: '1',
          data: { dest: 'VsKV7grR1BUE29mG2Fm2kX', verkey: '~CoRER63DVYnWZtK8uAzNbx' },
          metadata: { reqId: 1700000000123, from: 'V4SGRU86Z58d6TV7PBUe6f' },
        },
        txnMetadata: { seqNo: 1234, txnTime: 1700000000 },
        reqSignature: { type: 'ED25519', values: [{ from: 'V4SGRU86Z58d6TV7PBUe6f', value: '4X3skpoEK2DRgZxQ9PwuEvCJ' }] },
        ver: '1',
        rootHash: '7RJ5uP5QZ2fZuWcJ3VdoAJPw9SB8Nyz1tvCwzMo3kNWs',
        auditPath: ['Cdsoz17SVqPodKpe6xmY2ZgJ9UcywFDZTRgWSAYM96iA', '3phchUcMsnKFk2eZmcySAWm2T5rnzZdEypW7A5SKi1Qt'],
      },
    };
    expect(stringifyJson(reply)).to.equal(writeJson(reply, false));
    expect(JSON.parse(stringifyJson(reply))).to.deep.equal(reply);
  });

  it('keeps the received order of integer-like keys and the writer of floats and bigints', () => {
    const v = parseJson('{"b":1,"1":2,"a":[3,1.0,0.5,18446744073709551615]}') as Record<string, unknown>;
    expect(receivedKeys(v)).to.deep.equal(['b', '1', 'a']);
    expect(stringifyJson(v)).to.equal('{"b":1,"1":2,"a":[3,1.0,0.5,18446744073709551615]}');
    expect(stringifyJson({ x: [1e21, 1e-7] })).to.equal('{"x":[1e+21,1e-07]}');
  });

  it('refuses what the writer refuses: lone surrogates, undefined items, functions, an array with a toJSON, too deep', () => {
    expectCode(() => stringifyJson({ s: 'a\ud800' }), EncodingError, C.LONE_SURROGATE);
    expectCode(() => stringifyJson({ ['\udc00']: 1 }), EncodingError, C.LONE_SURROGATE);
    expectCode(() => stringifyJson([1, undefined]), EncodingError, C.UNSUPPORTED_VALUE);
    expectCode(() => stringifyJson({ toJSON: () => 1 }), EncodingError, C.UNSUPPORTED_VALUE);
    const withToJson = Object.assign([1], { toJSON: () => 'x' });
    expect(stringifyJson(withToJson)).to.equal('[1]');
    let deep: unknown = 1;
    for (let i = 0; i < 600; i++) deep = [deep];
    expectCode(() => stringifyJson(deep), EncodingError, C.TOO_DEEP);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expectCode(() => stringifyJson(cyclic), EncodingError, C.TOO_DEEP);
  });
});
