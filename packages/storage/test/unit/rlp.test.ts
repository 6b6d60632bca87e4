import { expect } from 'chai';
import fc from 'fast-check';
import { StorageError, StorageErrorCode, rlpDecode, rlpEncode, type RlpItem } from '@quire/storage';
import { expectCode } from '@quire/testing';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
const str = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('RLP (formats 7.1)', () => {
  describe('encode', () => {
    const cases: [string, RlpItem, string][] = [
      ['empty string', new Uint8Array(0), '80'],
      ['single byte below 0x80 is itself', Uint8Array.of(0x00), '00'],
      ['single byte 0x7f is itself', Uint8Array.of(0x7f), '7f'],
      ['single byte 0x80 gets a prefix', Uint8Array.of(0x80), '8180'],
      ['short string', str('dog'), '83646f67'],
      ['55-byte string uses the short form', new Uint8Array(55).fill(0x61), 'b7' + '61'.repeat(55)],
      ['56-byte string uses the long form', new Uint8Array(56).fill(0x61), 'b838' + '61'.repeat(56)],
      ['1024-byte string has a 2-byte length', new Uint8Array(1024), 'b90400' + '00'.repeat(1024)],
      ['empty list', [], 'c0'],
      ['list of strings', [str('cat'), str('dog')], 'c88363617483646f67'],
      ['set-theoretic nesting', [[], [[]], [[], [[]]]], 'c7c0c1c0c3c0c1c0'],
      ['stored state value v1', [str('v1')], 'c3827631'],
      ['blank proof', [new Uint8Array(0)], 'c180'],
      ['long list', Array.from({ length: 60 }, () => Uint8Array.of(1)), 'f83c' + '01'.repeat(60)],
    ];
    for (const [name, item, expected] of cases) {
      it(name, () => {
        expect(hex(rlpEncode(item))).to.equal(expected);
        expect(rlpDecode(unhex(expected))).to.deep.equal(item);
      });
    }

    it('rejects values that are neither bytes nor lists', () => {
      expectCode(() => rlpEncode('dog' as unknown as RlpItem), StorageError, StorageErrorCode.RLP_UNSUPPORTED_VALUE);
      expectCode(() => rlpEncode([null as unknown as RlpItem]), StorageError, StorageErrorCode.RLP_UNSUPPORTED_VALUE);
    });
  });

  describe('decode rejects every non-canonical form', () => {
    const bad: [string, string, string][] = [
      ['single byte < 0x80 with a prefix', '8105', StorageErrorCode.RLP_NON_CANONICAL],
      ['single byte 0x00 with a prefix', '8100', StorageErrorCode.RLP_NON_CANONICAL],
      ['long form string for a short length', 'b80548656c6c6f', StorageErrorCode.RLP_NON_CANONICAL],
      ['long form string for length 55', 'b837' + '61'.repeat(55), StorageErrorCode.RLP_NON_CANONICAL],
      ['long form list for a short length', 'f803c0c0c0', StorageErrorCode.RLP_NON_CANONICAL],
      ['leading zero length byte (string)', 'b90038' + '61'.repeat(56), StorageErrorCode.RLP_NON_CANONICAL],
      ['leading zero length byte (list)', 'f9003c' + '01'.repeat(60), StorageErrorCode.RLP_NON_CANONICAL],
      ['non-canonical item inside a list', 'c28105', StorageErrorCode.RLP_NON_CANONICAL],
      ['trailing bytes', '830102030405', StorageErrorCode.RLP_TRAILING_BYTES],
      ['trailing bytes after a list', 'c0c0', StorageErrorCode.RLP_TRAILING_BYTES],
      ['empty input', '', StorageErrorCode.RLP_TRUNCATED],
      ['string shorter than its header', '83646f', StorageErrorCode.RLP_TRUNCATED],
      ['list shorter than its header', 'c3c0c0', StorageErrorCode.RLP_TRUNCATED],
      ['item overrunning its list', 'c283646f67', StorageErrorCode.RLP_TRUNCATED],
      ['missing length bytes', 'b9', StorageErrorCode.RLP_TRUNCATED],
      ['huge declared length', 'bfffffffffffffffff', StorageErrorCode.RLP_TRUNCATED],
      ['prefix without its byte', '81', StorageErrorCode.RLP_TRUNCATED],
    ];
    for (const [name, input, code] of bad) {
      it(name, () => expectCode(() => rlpDecode(unhex(input)), StorageError, code));
    }

    it('rejects nesting deeper than the limit', () => {
      // 80 nested one-item lists; the default limit is 64
      let item: RlpItem = [];
      for (let i = 0; i < 80; i++) item = [item];
      const enc = rlpEncode(item);
      expectCode(() => rlpDecode(enc), StorageError, StorageErrorCode.RLP_TOO_DEEP);
      expect(rlpDecode(enc, { maxDepth: 100 })).to.deep.equal(item);
    });

    it('rejects a non-byte input', () => {
      expectCode(() => rlpDecode('c0' as unknown as Uint8Array), StorageError, StorageErrorCode.RLP_UNSUPPORTED_VALUE);
    });
  });

  describe('properties', () => {
    const item: fc.Arbitrary<RlpItem> = fc.letrec<{ item: RlpItem }>((tie) => ({
      item: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.uint8Array({ maxLength: 70 }), fc.array(tie('item'), { maxLength: 5 })),
    })).item;

    it('decode(encode(x)) = x', () => {
      fc.assert(
        fc.property(item, (x) => {
          expect(rlpDecode(rlpEncode(x), { maxDepth: 1000 })).to.deep.equal(x);
        }),
        { numRuns: 300 },
      );
    });

    it('any byte string decodes to an item whose encoding is that byte string, or fails with a code', () => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
          let decoded: RlpItem;
          try {
            decoded = rlpDecode(bytes);
          } catch (e) {
            expect(e).to.be.instanceOf(StorageError);
            return;
          }
          // canonical: exactly one encoding per value
          expect(hex(rlpEncode(decoded))).to.equal(hex(bytes));
        }),
        { numRuns: 2000 },
      );
    });
  });
});
