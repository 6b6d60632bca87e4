// Property tests: bad input always yields an error with a documented code, never a crash or a value.
import { expect } from 'chai';
import fc from 'fast-check';
import {
  EncodingError,
  EncodingErrorCode as C,
  IdentifierError,
  IdentifierErrorCode as I,
  b58decode,
  b58encode,
  b64decode,
  didFromVerkey,
  parseJson,
  resolveVerkey,
} from '@quire/common';
import { acceptedJsonValue, expectCode } from './helpers.js';

describe('bad input yields documented error codes', () => {
  it('every proper prefix of a JSON object or array is INVALID_JSON', () => {
    const container = fc.oneof(
      fc.dictionary(fc.string({ maxLength: 5 }), acceptedJsonValue(2), { minKeys: 1, maxKeys: 4 }),
      fc.array(acceptedJsonValue(2), { minLength: 1, maxLength: 4 }),
    );
    fc.assert(
      fc.property(container, fc.nat(), (v, cut) => {
        const text = JSON.stringify(v);
        const prefix = text.slice(0, cut % text.length);
        expectCode(() => parseJson(prefix), EncodingError, C.INVALID_JSON);
      }),
      { numRuns: 200 },
    );
  });

  it('a duplicated key anywhere is DUPLICATE_KEY', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 6 }), acceptedJsonValue(1), acceptedJsonValue(1), (k, a, b) => {
        const key = JSON.stringify(k);
        expectCode(() => parseJson(`{"x":[{${key}:${JSON.stringify(a)},${key}:${JSON.stringify(b)}}]}`), EncodingError, C.DUPLICATE_KEY);
      }),
      { numRuns: 100 },
    );
  });

  it('a character outside the base58 alphabet is INVALID_BASE58', () => {
    const bad = fc.constantFrom('0', 'O', 'I', 'l', '+', '/', ' ', '~', 'é', '=');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), bad, fc.nat(), (bytes, c, at) => {
        const s = b58encode(bytes);
        const i = s.length === 0 ? 0 : at % (s.length + 1);
        const e = expectCode(() => b58decode(s.slice(0, i) + c + s.slice(i)), EncodingError, C.INVALID_BASE58);
        expect(e.data.position).to.equal(i);
      }),
      { numRuns: 200 },
    );
  });

  it('a base64 string with a character outside the standard alphabet is INVALID_BASE64', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 30 }), fc.constantFrom('-', '_', ' ', '.', '\n'), fc.nat(), (bytes, c, at) => {
        const s = Buffer.from(bytes).toString('base64');
        const i = at % s.length;
        expectCode(() => b64decode(s.slice(0, i) + c + s.slice(i + 1)), EncodingError, C.INVALID_BASE64);
      }),
      { numRuns: 100 },
    );
  });

  it('keys and DIDs of the wrong decoded length are rejected', () => {
    const notLen = (...ls: number[]) => fc.uint8Array({ minLength: 1, maxLength: 64 }).filter((b) => !ls.includes(b.length));
    fc.assert(
      fc.property(notLen(32), notLen(16, 32), notLen(32), notLen(16), (key, did, full, abbr) => {
        expectCode(() => didFromVerkey(key), IdentifierError, I.INVALID_KEY_LENGTH);
        expectCode(() => resolveVerkey(b58encode(did)), IdentifierError, I.INVALID_DID);
        expectCode(() => resolveVerkey(b58encode(new Uint8Array(16).fill(1)), b58encode(full)), IdentifierError, I.INVALID_VERKEY);
        expectCode(() => resolveVerkey(b58encode(new Uint8Array(16).fill(1)), '~' + b58encode(abbr)), IdentifierError, I.INVALID_VERKEY);
      }),
      { numRuns: 100 },
    );
  });
});

describe('error messages', () => {
  it('render nested detail as JSON, not [object Object]', async () => {
    const { QuireError } = await import('../../src/index.js');
    const e = new QuireError('TIMEOUT', { errors: [{ node: 'Node1', code: 'RATE_LIMITED' }], n: 5n });
    if (!e.message.includes('"code":"RATE_LIMITED"') || e.message.includes('[object Object]')) throw new Error(e.message);
  });
});
