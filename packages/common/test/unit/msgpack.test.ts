import { expect } from 'chai';
import fc from 'fast-check';
import {
  EncodingError,
  EncodingErrorCode as C,
  JsonFloat,
  MsgpackEncoded,
  decodeMsgpack,
  encodeMsgpack,
  encodedMsgpackSize,
  multiSignatureMessage,
  parseJson,
  takeDecodedEncoding,
} from '@quire/common';
import { expectCode } from './helpers.js';

const hx = (v: unknown) => Buffer.from(encodeMsgpack(v)).toString('hex');
const fromHex = (h: string) => new Uint8Array(Buffer.from(h.replace(/\s+/g, ''), 'hex'));

describe('encodeMsgpack / decodeMsgpack MP (formats 1.7)', () => {
  it('reproduces the examples of formats.md 1.7', () => {
    expect(hx(0)).to.equal('00');
    expect(hx(127)).to.equal('7f');
    expect(hx(128)).to.equal('cc80');
    expect(hx(256)).to.equal('cd0100');
    expect(hx(65536)).to.equal('ce00010000');
    expect(hx(2 ** 32)).to.equal('cf0000000100000000');
    expect(hx(1585221529670242337n)).to.equal('cf15ffd695164bd021');
    expect(hx(-1)).to.equal('ff');
    expect(hx(-33)).to.equal('d0df');
    expect(hx(-129)).to.equal('d1ff7f');
    expect(hx('a'.repeat(32))).to.equal('d920' + '61'.repeat(32));
    expect(
      hx(
        new Map<number, unknown>([
          [2, 'b'],
          [0, 'a'],
          [1, null],
        ]),
      ),
    ).to.equal('8300a16101c002a162');
    expect(hx(14.8639)).to.equal('cb402dba5119ce075f');
  });

  it('uses the smallest integer encodings at every boundary', () => {
    const cases: [number | bigint, string][] = [
      [255, 'ccff'],
      [65535, 'cdffff'],
      [4294967295, 'ceffffffff'],
      [2 ** 53 - 1, 'cf001fffffffffffff'],
      [2n ** 64n - 1n, 'cfffffffffffffffff'],
      [-32, 'e0'],
      [-128, 'd080'],
      [-32768, 'd18000'],
      [-32769, 'd2ffff7fff'],
      [-(2 ** 31), 'd280000000'],
      [-(2 ** 31) - 1, 'd3ffffffff7fffffff'],
      [-(2 ** 53) + 1, 'd3ffe0000000000001'],
      [-(2n ** 63n), 'd38000000000000000'],
      [5n, '05'],
    ];
    for (const [v, h] of cases) {
      expect(hx(v), String(v)).to.equal(h);
      const back = decodeMsgpack(fromHex(h));
      expect(BigInt(back as number | bigint)).to.equal(BigInt(v));
    }
    expectCode(() => encodeMsgpack(2n ** 64n), EncodingError, C.INTEGER_OUT_OF_RANGE);
    expectCode(() => encodeMsgpack(-(2n ** 63n) - 1n), EncodingError, C.INTEGER_OUT_OF_RANGE);
  });

  it('decodes integers beyond 2^53 as bigint and safe ones as number', () => {
    expect(decodeMsgpack(fromHex('cf0020000000000000'))).to.equal(2n ** 53n);
    expect(decodeMsgpack(fromHex('cf001fffffffffffff'))).to.equal(2 ** 53 - 1);
    expect(decodeMsgpack(fromHex('d3ffdfffffffffffff'))).to.equal(-(2n ** 53n) - 1n);
    expect(decodeMsgpack(fromHex('cf15ffd695164bd021'))).to.equal(1585221529670242337n);
  });

  it('writes every float as float64 and keeps integral floats as floats', () => {
    expect(hx(new JsonFloat(1))).to.equal('cb3ff0000000000000');
    expect(hx(parseJson('1.0'))).to.equal('cb3ff0000000000000');
    expect(hx(0.5)).to.equal('cb3fe0000000000000');
    expect(hx(1e300)).to.equal('cb7e37e43c8800759c');
    expect(decodeMsgpack(fromHex('cb3ff0000000000000'))).to.deep.equal(new JsonFloat(1));
    expect(decodeMsgpack(fromHex('cb3fe0000000000000'))).to.equal(0.5);
    expectCode(() => encodeMsgpack(NaN), EncodingError, C.NON_FINITE_NUMBER);
    expectCode(() => decodeMsgpack(fromHex('cb7ff0000000000000')), EncodingError, C.NON_FINITE_NUMBER);
  });

  it('chooses fixstr / str8 / str16 / str32 on the UTF-8 byte length', () => {
    const check = (s: string, head: string) => {
      const h = hx(s);
      expect(h.startsWith(head), `${s.length} chars`).to.equal(true);
      expect(h.length / 2).to.equal(head.length / 2 + Buffer.byteLength(s));
      expect(decodeMsgpack(encodeMsgpack(s))).to.equal(s);
    };
    check('', 'a0');
    check('x'.repeat(31), 'bf');
    check('é'.repeat(15) + 'x', 'bf');
    check('é'.repeat(16), 'd920');
    check('x'.repeat(255), 'd9ff');
    check('x'.repeat(256), 'da0100');
    check('é'.repeat(128), 'da0100');
    check('x'.repeat(65535), 'daffff');
    check('x'.repeat(65536), 'db00010000');
    check('😀'.repeat(8), 'd920');
    expectCode(() => encodeMsgpack('a\ud800'), EncodingError, C.LONE_SURROGATE);
  });

  it('chooses array and map headers on the count', () => {
    expect(hx([])).to.equal('90');
    expect(hx(new Array(15).fill(0)).slice(0, 2)).to.equal('9f');
    expect(hx(new Array(16).fill(0)).slice(0, 6)).to.equal('dc0010');
    expect(hx(new Array(65536).fill(0)).slice(0, 10)).to.equal('dd00010000');
    const obj = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${String(i).padStart(5, '0')}`, 0]));
    expect(hx({})).to.equal('80');
    expect(hx(obj(15)).slice(0, 2)).to.equal('8f');
    expect(hx(obj(16)).slice(0, 6)).to.equal('de0010');
    const big = new Map(Array.from({ length: 65536 }, (_, i) => [i, 0]));
    expect(hx(big).slice(0, 10)).to.equal('df00010000');
    expect((decodeMsgpack(encodeMsgpack(big)) as Map<number, number>).size).to.equal(65536);
  });

  it('writes the BLS-signed value of formats.md 9.2 (216 bytes)', () => {
    const value = {
      ledger_id: 1,
      pool_state_root_hash: 'HNvueuQSgG8S19UR9YsVxNJBL4yd8c5MYsTyyi4QLwh1',
      state_root_hash: 'H2bJv6zHfGgTHp6XNchN7gVsZvMvXUojdb5CJ55Fo8y5',
      timestamp: 1700000000,
      txn_root_hash: 'C2t4zdcHiG3kekqEreK6vpvqwZDoKWRJcX3Q3ryPrPKa',
    };
    const b = Buffer.from(multiSignatureMessage(value));
    expect(b.length).to.equal(216);
    const expected = Buffer.concat([
      Buffer.from('85a9', 'hex'),
      Buffer.from('ledger_id'),
      Buffer.from('01b4', 'hex'),
      Buffer.from('pool_state_root_hash'),
      Buffer.from('d92c', 'hex'),
      Buffer.from(value.pool_state_root_hash),
      Buffer.from('af', 'hex'),
      Buffer.from('state_root_hash'),
      Buffer.from('d92c', 'hex'),
      Buffer.from(value.state_root_hash),
      Buffer.from('a9', 'hex'),
      Buffer.from('timestamp'),
      Buffer.from('ce6553f100ad', 'hex'),
      Buffer.from('txn_root_hash'),
      Buffer.from('d92c', 'hex'),
      Buffer.from(value.txn_root_hash),
    ]);
    expect(b.toString('hex')).to.equal(expected.toString('hex'));
    expect(hx({ r: 'x'.repeat(43) }).slice(0, 8)).to.equal('81a172d9');
  });

  describe('key ordering', () => {
    it('sorts the top-level map and maps that are its values, recursively', () => {
      expect(hx({ b: 1, a: { d: 1, c: 2 } })).to.equal(hx(parseJson('{"a":{"c":2,"d":1},"b":1}')));
      expect(hx({ b: 1, a: { d: 1, c: 2 } }).startsWith('82a161')).to.equal(true);
    });

    it('sorts maps that are direct elements of an array value, and below them', () => {
      const h = hx({ a: [{ d: 1, c: 2, x: [{ f: 1, e: 2 }] }] });
      expect(h).to.equal(hx({ a: [{ c: 2, d: 1, x: [{ e: 2, f: 1 }] }] }));
      expect(h).to.equal('81a16191' + '83a16302a16401a17891' + '82a16502a16601');
    });

    it('keeps the received order of a map inside an array inside an array, and below it', () => {
      const v = parseJson('{"a":[[{"d":{"z":1,"y":2},"c":2,"10":3}]]}');
      // 81 a161 91 91 83 a164 82 a17a01 a17902 a16302 a2313003
      expect(hx(v)).to.equal('81a1619191' + '83a16482a17a01a17902a16302a2313003');
      const back = decodeMsgpack(encodeMsgpack(v));
      expect(hx(back)).to.equal(hx(v));
    });

    it('does not sort anything below a top-level array', () => {
      expect(hx([{ b: 1, a: 2 }])).to.equal('9182a16201a16102');
    });

    it('sorts string keys by code point', () => {
      const h = hx({ '\u{1F600}': 1, '\uE000': 2, a: 3 });
      expect(h).to.equal('83a16103a3ee808002a4f09f988001');
    });

    it('encodes integer-keyed maps with integer keys sorted numerically, decodes them as Map', () => {
      const audit = {
        ledgerSize: new Map([
          [10, 5],
          [2, 7],
        ]),
        ledgerRoot: new Map([[1, 'r']]),
      };
      const h = hx(audit);
      expect(h).to.equal('82aa6c6564676572526f6f7481' + '01a172' + 'aa6c656467657253697a65820207' + '0a05');
      const back = decodeMsgpack(encodeMsgpack(audit)) as Record<string, unknown>;
      expect(back.ledgerSize).to.be.instanceOf(Map);
      expect([...(back.ledgerSize as Map<number, number>)]).to.deep.equal([
        [2, 7],
        [10, 5],
      ]);
      expectCode(
        () =>
          encodeMsgpack(
            new Map<unknown, unknown>([
              [1, 'a'],
              ['b', 2],
            ]),
          ),
        EncodingError,
        C.INVALID_MAP_KEY,
      );
      expectCode(() => encodeMsgpack(new Map([[1.5, 'a']])), EncodingError, C.INVALID_MAP_KEY);
    });
  });

  it('rejects values MP cannot hold', () => {
    for (const v of [undefined, () => 1, Symbol('s'), new Uint8Array(1), new Date(0), [undefined]]) {
      expectCode(() => encodeMsgpack(v), EncodingError, C.UNSUPPORTED_VALUE);
    }
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    expectCode(() => encodeMsgpack(cyclic), EncodingError, C.TOO_DEEP);
    expect(hx({ a: undefined, b: 1 })).to.equal('81a16201');
  });

  it('encodedMsgpackSize refuses what encodeMsgpack refuses, with the same codes', () => {
    for (const v of [undefined, () => 1, Symbol('s'), new Uint8Array(1), new Date(0), [undefined], { a: [undefined] }]) {
      expectCode(() => encodedMsgpackSize(v), EncodingError, C.UNSUPPORTED_VALUE);
    }
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    expectCode(() => encodedMsgpackSize(cyclic), EncodingError, C.TOO_DEEP);
    for (const v of [Infinity, NaN, new JsonFloat(Infinity), { a: -Infinity }]) expectCode(() => encodedMsgpackSize(v), EncodingError, C.NON_FINITE_NUMBER);
    for (const v of [2n ** 64n, -(2n ** 63n) - 1n]) expectCode(() => encodedMsgpackSize(v), EncodingError, C.INTEGER_OUT_OF_RANGE);
    expectCode(() => encodedMsgpackSize('a\ud800'), EncodingError, C.LONE_SURROGATE);
    expectCode(() => encodedMsgpackSize({ x: '\udfff é' }), EncodingError, C.LONE_SURROGATE);
    expectCode(() => encodedMsgpackSize(new Map<unknown, unknown>([[1.5, 'a']])), EncodingError, C.INVALID_MAP_KEY);
    expectCode(
      () =>
        encodedMsgpackSize(
          new Map<unknown, unknown>([
            [1, 'a'],
            ['b', 2],
          ]),
        ),
      EncodingError,
      C.INVALID_MAP_KEY,
    );
  });

  it('encodedMsgpackSize is the length of the encoding at every header and integer boundary', () => {
    const values: unknown[] = [{ a: undefined, b: 1 }, new Map([[1, undefined]]), new JsonFloat(3), -0, 2 ** 53 - 1, -(2 ** 53) + 1];
    for (const n of [0, 1, 15, 16, 31, 32, 255, 256, 65535, 65536]) {
      values.push('x'.repeat(n), 'é'.repeat(n), new Array<number>(n).fill(1));
      if (n <= 256) values.push(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])));
    }
    for (const b of [0, 127, 128, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32]) values.push(b, -b, BigInt(b), -BigInt(b));
    values.push(-32, -33, -128, -129, -32768, -32769, -2147483648, -2147483649, 2n ** 64n - 1n, -(2n ** 63n), 1.5, '😀✓');
    for (const v of values) expect(encodedMsgpackSize(v), String(v)).to.equal(encodeMsgpack(v).length);
  });

  it('rejects malformed or non-canonical-type input with stable codes', () => {
    const txn = encodeMsgpack({ a: [1, 'xyz', { b: 2n ** 60n }] });
    for (let n = 0; n < txn.length; n++) expectCode(() => decodeMsgpack(txn.subarray(0, n)), EncodingError, C.MSGPACK_TRUNCATED);
    expectCode(() => decodeMsgpack(fromHex('c0c0')), EncodingError, C.MSGPACK_TRAILING_BYTES);
    for (const b of ['c1', 'c40100', 'c5000100', 'c7010100', 'ca3f800000', 'd40100', 'd8' + '00'.repeat(17)]) {
      expectCode(() => decodeMsgpack(fromHex(b)), EncodingError, C.MSGPACK_UNSUPPORTED_TYPE);
    }
    expectCode(() => decodeMsgpack(fromHex('a2c328')), EncodingError, C.INVALID_UTF8);
    expectCode(() => decodeMsgpack(fromHex('a3eda080')), EncodingError, C.INVALID_UTF8);
    expectCode(() => decodeMsgpack(fromHex('82a16101a16102')), EncodingError, C.DUPLICATE_KEY);
    expectCode(() => decodeMsgpack(fromHex('8201020103')), EncodingError, C.DUPLICATE_KEY);
    expectCode(() => decodeMsgpack(fromHex('82a1610101c0')), EncodingError, C.INVALID_MAP_KEY);
    expectCode(() => decodeMsgpack(fromHex('8201c0a16101')), EncodingError, C.INVALID_MAP_KEY);
    expectCode(() => decodeMsgpack(fromHex('8190c0')), EncodingError, C.INVALID_MAP_KEY);
    expectCode(() => decodeMsgpack(fromHex('81cf0020000000000000c0')), EncodingError, C.INVALID_MAP_KEY);
    expectCode(() => decodeMsgpack(fromHex('ddffffffff')), EncodingError, C.MSGPACK_TRUNCATED);
    expectCode(() => decodeMsgpack(fromHex('dfffffffff')), EncodingError, C.MSGPACK_TRUNCATED);
    expectCode(() => decodeMsgpack(fromHex('91'.repeat(600) + 'c0')), EncodingError, C.TOO_DEEP);
    expectCode(() => decodeMsgpack('x' as unknown as Uint8Array), EncodingError, C.UNSUPPORTED_VALUE);
  });

  it('decodes map keys right whatever keys were decoded before (the short-key cache: collisions, lengths, non-ASCII)', () => {
    // far more distinct short keys than cache slots, each decoded twice, in maps next to keys that differ by a byte
    const keys: string[] = [];
    for (let i = 0; i < 5000; i++) keys.push(i.toString(36).padStart(1 + (i % 16), 'k'));
    keys.push('a'.repeat(16), 'a'.repeat(17), 'b'.repeat(31), 'é', 'éa', '\u007f', '__proto__', 'x');
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < keys.length; i += 7) {
        const obj: Record<string, unknown> = {};
        for (const k of keys.slice(i, i + 7)) obj[k] = k.length;
        const back = decodeMsgpack(encodeMsgpack(obj)) as Record<string, unknown>;
        expect(Object.keys(back).sort()).to.deep.equal(Object.keys(obj).sort());
        for (const k of Object.keys(obj)) expect(back[k], k).to.equal(k.length);
      }
    }
    expectCode(() => decodeMsgpack(fromHex('82a16101a16102')), EncodingError, C.DUPLICATE_KEY);
    expectCode(() => decodeMsgpack(fromHex('81a3616263')), EncodingError, C.MSGPACK_TRUNCATED);
    expectCode(() => decodeMsgpack(fromHex('81a2c328c0')), EncodingError, C.INVALID_UTF8);
  });

  it('keepMapsAtDepth: keeps a copy of the bytes of each map at that depth, given once, and of no other value', () => {
    const txn = (i: number) => ({ txn: { type: '1', data: { dest: `d${i}` } }, txnMetadata: { seqNo: i }, ver: '1' });
    const reply = { op: 'CATCHUP_REP', ledgerId: 1, txns: Object.fromEntries([7, 8, 9].map((i) => [String(i), txn(i)])), consProof: ['x'] };
    const bytes = encodeMsgpack(reply);
    const plain = decodeMsgpack(bytes) as typeof reply;
    expect(takeDecodedEncoding(plain.txns['7'] ?? {})).to.equal(undefined);
    const kept = decodeMsgpack(bytes, { keepMapsAtDepth: 2 }) as typeof reply;
    expect(kept).to.deep.equal(reply);
    for (const i of [7, 8, 9]) {
      const t = kept.txns[String(i)] ?? {};
      const got = takeDecodedEncoding(t);
      expect(got !== undefined && Buffer.from(got).equals(Buffer.from(encodeMsgpack(txn(i))))).to.equal(true);
      expect(takeDecodedEncoding(t)).to.equal(undefined);
    }
    // a copy: changing the input afterwards changes nothing kept
    const again = decodeMsgpack(bytes, { keepMapsAtDepth: 2 }) as typeof reply;
    bytes.fill(0);
    const got = takeDecodedEncoding(again.txns['8'] ?? {});
    expect(got !== undefined && Buffer.from(got).equals(Buffer.from(encodeMsgpack(txn(8))))).to.equal(true);
    // maps at other depths, and the next decoding without the option, keep nothing
    expect(takeDecodedEncoding(again)).to.equal(undefined);
    expect(takeDecodedEncoding(again.txns)).to.equal(undefined);
    expect(takeDecodedEncoding(again.txns['9']?.txn ?? {})).to.equal(undefined);
    const next = decodeMsgpack(encodeMsgpack(reply)) as typeof reply;
    expect(takeDecodedEncoding(next.txns['7'] ?? {})).to.equal(undefined);
  });

  it('decodes __proto__ keys as ordinary properties', () => {
    const v = decodeMsgpack(encodeMsgpack(parseJson('{"__proto__":{"x":1}}'))) as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).to.equal(Object.prototype);
    expect(Object.keys(v)).to.deep.equal(['__proto__']);
  });

  describe('properties', () => {
    const key = fc.oneof(fc.string({ maxLength: 4 }), fc.string({ unit: 'grapheme', maxLength: 3 }));
    const scalar = fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.integer({ min: -(2 ** 31), max: 2 ** 32 }),
      fc.maxSafeInteger().map((n) => (Object.is(n, -0) ? 0 : n)),
      fc.oneof(fc.bigInt({ min: 2n ** 53n, max: 2n ** 64n - 1n }), fc.bigInt({ min: -(2n ** 63n), max: -(2n ** 53n) })),
      fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isSafeInteger(d)),
      fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.constant(-0)).map((d) => new JsonFloat(d)),
      fc.string({ unit: 'grapheme', maxLength: 6 }),
      fc.tuple(fc.integer({ min: 28, max: 300 }), fc.constantFrom('x', 'é', '✓')).map(([n, c]) => c.repeat(n)),
    );
    const { value } = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        scalar,
        fc.array(tie('value'), { maxLength: 5 }),
        fc.dictionary(key, tie('value'), { maxKeys: 5, noNullPrototype: true }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 300 }), tie('value')), { minLength: 1, maxLength: 4 }).map((es) => new Map(es)),
      ),
    }));

    it('decodeMsgpack(encodeMsgpack(x)) gives x back, and re-encodes to the same bytes', () => {
      fc.assert(
        fc.property(value, (v) => {
          const bytes = encodeMsgpack(v);
          const back = decodeMsgpack(bytes);
          expect(back).to.deep.equal(v);
          expect(Buffer.from(encodeMsgpack(back)).equals(Buffer.from(bytes))).to.equal(true);
        }),
        { numRuns: 150 },
      );
    });

    it('encodedMsgpackSize(x) is encodeMsgpack(x).length', () => {
      fc.assert(
        fc.property(value, (v) => {
          expect(encodedMsgpackSize(v)).to.equal(encodeMsgpack(v).length);
        }),
        { numRuns: 300 },
      );
    });

    // values whose maps all sit in sorted positions: no array directly inside an array
    const { sortedValue } = fc.letrec<{ sortedValue: unknown; elem: unknown }>((tie) => ({
      sortedValue: fc.oneof(
        { depthSize: 'small' },
        scalar,
        fc.dictionary(key, tie('sortedValue'), { maxKeys: 5, noNullPrototype: true }),
        fc.array(tie('elem'), { maxLength: 4 }),
      ),
      elem: fc.oneof({ depthSize: 'small' }, scalar, fc.dictionary(key, tie('sortedValue'), { maxKeys: 5, noNullPrototype: true })),
    }));

    function reinsert(v: unknown, order: (keys: string[]) => string[]): unknown {
      if (Array.isArray(v)) return v.map((x) => reinsert(x, order));
      if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
        const o = v as Record<string, unknown>;
        const out: Record<string, unknown> = {};
        for (const k of order(Object.keys(o)))
          Object.defineProperty(out, k, { value: reinsert(o[k], order), enumerable: true, writable: true, configurable: true });
        return out;
      }
      return v;
    }

    it('key order is independent of insertion order wherever maps are sorted', () => {
      fc.assert(
        fc.property(fc.dictionary(key, sortedValue, { maxKeys: 5, noNullPrototype: true }), fc.integer(), (v, seed) => {
          const shuffle = (keys: string[]) => {
            const a = [...keys];
            let s = seed;
            for (let i = a.length - 1; i > 0; i--) {
              s = (s * 1103515245 + 12345) & 0x7fffffff;
              const j = s % (i + 1);
              [a[i], a[j]] = [a[j]!, a[i]!];
            }
            return a;
          };
          const h1 = hx(v);
          expect(hx(reinsert(v, (k) => [...k].reverse()))).to.equal(h1);
          expect(hx(reinsert(v, shuffle))).to.equal(h1);
        }),
        { numRuns: 100 },
      );
    });

    it('Map key order is independent of insertion order', () => {
      fc.assert(
        fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 8 }), (keys) => {
          const a = new Map(keys.map((k) => [k, k]));
          const b = new Map([...keys].reverse().map((k) => [k, k]));
          expect(hx({ m: a })).to.equal(hx({ m: b }));
        }),
        { numRuns: 100 },
      );
    });

    it('never throws anything but an EncodingError on arbitrary bytes', () => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 40 }), (b) => {
          try {
            decodeMsgpack(b);
          } catch (e) {
            expect(e).to.be.instanceOf(EncodingError);
          }
        }),
        { numRuns: 500 },
      );
    });
  });

  describe('MsgpackEncoded: a value written as its bytes', () => {
    const txn = { txn: { type: '1', data: { dest: 'V4SG', verkey: '~CoRE' }, metadata: {} }, txnMetadata: { seqNo: 7, txnTime: 1700000000 }, ver: '1' };

    it('a reply holding the stored bytes of its txns encodes to the bytes of the reply holding the txns', () => {
      const txns = { '7': txn, '8': { ...txn, txnMetadata: { seqNo: 8 } } };
      const rep = { op: 'CATCHUP_REP', ledgerId: 1, txns, consProof: ['abc'] };
      const raw = { ...rep, txns: { '7': new MsgpackEncoded(encodeMsgpack(txns['7'])), '8': new MsgpackEncoded(encodeMsgpack(txns['8'])) } };
      expect(encodeMsgpack(raw)).to.deep.equal(encodeMsgpack(rep));
      expect(encodedMsgpackSize(raw)).to.equal(encodeMsgpack(rep).length);
    });

    it('is written verbatim, unsorted and unchecked, wherever it stands', () => {
      const bytes = fromHex('82a162 01 a161 02'); // {b: 1, a: 2} in received order
      expect(hx([new MsgpackEncoded(bytes)])).to.equal('9182a16201a16102');
      expect(hx({ z: new MsgpackEncoded(bytes), a: 0 })).to.equal('82a16100a17a82a16201a16102');
      expect(encodeMsgpack(new MsgpackEncoded(bytes))).to.deep.equal(bytes);
      expect(encodedMsgpackSize({ z: new MsgpackEncoded(bytes) })).to.equal(10);
    });

    it('in a sorted place, the bytes of a value equal encoding the value there (property)', () => {
      const value = fc.dictionary(
        fc.string({ maxLength: 6 }),
        fc.oneof(fc.integer(), fc.string(), fc.boolean(), fc.array(fc.dictionary(fc.string({ maxLength: 3 }), fc.integer()), { maxLength: 3 })),
        {
          maxKeys: 6,
        },
      );
      fc.assert(
        fc.property(fc.array(value, { minLength: 1, maxLength: 5 }), (vs) => {
          const plain: Record<string, unknown> = {};
          const pre: Record<string, unknown> = {};
          vs.forEach((v, i) => {
            plain[String(i + 1)] = v;
            // the stored bytes of a txn: MP of the value decoded from them
            pre[String(i + 1)] = new MsgpackEncoded(encodeMsgpack(decodeMsgpack(encodeMsgpack(v))));
          });
          const a = encodeMsgpack({ op: 'X', txns: plain });
          expect(encodeMsgpack({ op: 'X', txns: pre })).to.deep.equal(a);
          expect(encodedMsgpackSize({ op: 'X', txns: pre })).to.equal(a.length);
        }),
      );
    });
  });
});
