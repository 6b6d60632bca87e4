import { expect } from 'chai';
import fc from 'fast-check';
import { EncodingError, EncodingErrorCode as C, b58decode, b58encode, b64decode, b64encode, fromHex, sha256, sha256Hex, sha3_256, toHex } from '@quire/common';
import bs58 from 'bs58';
import { expectCode } from './helpers.js';

describe('base58 (formats 1.1)', () => {
  it('encodes leading zero bytes as 1s and round-trips', () => {
    expect(b58encode(new Uint8Array([0, 0, 1]))).to.equal('112');
    expect(Array.from(b58decode('112'))).to.deep.equal([0, 0, 1]);
    expect(b58encode(new Uint8Array(0))).to.equal('');
    expect(b58decode('')).to.have.length(0);
    expect(toHex(b58decode('V4SGRU86Z58d6TV7PBUe6f'))).to.equal('e33aaf381fffa6109ad591fdc3871794');
  });

  it('rejects characters outside the alphabet with INVALID_BASE58 and the position', () => {
    for (const [s, p] of [
      ['0abc', 0],
      ['abcI', 3],
      ['aOb', 1],
      ['abl', 2],
      ['ab c', 2],
      ['~abc', 0],
      ['abc+', 3],
    ] as const) {
      const e = expectCode(() => b58decode(s), EncodingError, C.INVALID_BASE58);
      expect(e.data.position).to.equal(p);
    }
    expectCode(() => b58decode(5 as unknown as string), EncodingError, C.INVALID_BASE58);
  });

  it('round-trips any bytes, and decoded lengths match formats 1.1', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (b) => {
        expect(toHex(b58decode(b58encode(b)))).to.equal(toHex(b));
      }),
      { numRuns: 200 },
    );
    for (const [n, hi] of [
      [16, 22],
      [32, 44],
      [48, 66],
      [96, 132],
    ] as const) {
      expect(b58encode(new Uint8Array(n).fill(0xff))).to.have.length(hi);
    }
  });
});

describe('base58 against the reference algorithm (bs58)', () => {
  const withZeros = fc.tuple(fc.nat({ max: 4 }), fc.uint8Array({ maxLength: 140 })).map(([z, b]) => Uint8Array.from([...new Uint8Array(z), ...b]));

  it('encodes exactly as bs58 does, and decodes its output to the same bytes', () => {
    fc.assert(
      fc.property(withZeros, (b) => {
        const text = bs58.encode(b);
        expect(b58encode(b)).to.equal(text);
        expect(toHex(b58decode(text))).to.equal(toHex(b));
      }),
      { numRuns: 2000 },
    );
    for (const n of [1, 2, 3, 4, 16, 31, 32, 33, 48, 64, 96]) {
      for (const b of [new Uint8Array(n), new Uint8Array(n).fill(0xff), Uint8Array.from({ length: n }, (_, i) => (i === n - 1 ? 1 : 0))]) {
        expect(b58encode(b)).to.equal(bs58.encode(b));
      }
    }
  });

  it('accepts and refuses the same strings as bs58', () => {
    const alphabetOrNot = fc.string({ unit: fc.constantFrom(...'123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0OIl+/é'), maxLength: 60 });
    fc.assert(
      fc.property(alphabetOrNot, (s) => {
        const ref = bs58.decodeUnsafe(s);
        if (ref === undefined) expect(() => b58decode(s)).to.throw(EncodingError);
        else expect(toHex(b58decode(s))).to.equal(toHex(ref));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('base64 (formats 1.2)', () => {
  it('round-trips with padding', () => {
    for (const s of ['', 'f', 'fo', 'foo', 'foob', 'fooba', 'foobar']) {
      const e = b64encode(Buffer.from(s));
      expect(Buffer.from(b64decode(e)).toString()).to.equal(s);
    }
    expect(b64encode(Buffer.from('foob'))).to.equal('Zm9vYg==');
    expect(toHex(b64decode('wYA='))).to.equal('c180');
  });

  it('rejects URL-safe, unpadded, whitespace and non-canonical input', () => {
    for (const s of ['Zm9vYg', 'Zm9vYg=', 'Zm9v Yg==', '-_-_', 'Zm9vYh==', 'Zm9=', '====', 'Z===', 'Zm9vYg==\n', 'ab*d']) {
      expectCode(() => b64decode(s), EncodingError, C.INVALID_BASE64);
    }
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (b) => {
        expect(toHex(b64decode(b64encode(b)))).to.equal(toHex(b));
      }),
      { numRuns: 100 },
    );
    // whatever it accepts is the one canonical encoding of what it returns
    const chars = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ \n*'.split(''));
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 24 }), (cs) => {
        const s = cs.join('');
        let out: Uint8Array | undefined;
        try {
          out = b64decode(s);
        } catch (e) {
          expect((e as EncodingError).code).to.equal(C.INVALID_BASE64);
        }
        if (out !== undefined) expect(b64encode(out)).to.equal(s);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('hashes (formats 1.3)', () => {
  it('SHA3-256, not Keccak-256', () => {
    expect(toHex(sha3_256(new Uint8Array(0)))).to.equal('a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a');
    expect(toHex(sha3_256(''))).to.not.equal('c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
  });

  it('SHA-256 of strings is over their UTF-8 bytes', () => {
    expect(sha256Hex('cool hash')).to.equal('46aa0c92129b33ee72ee1478d2ae62fa6e756869dedc6c858af3214a6fcf1904');
    expect(sha256Hex('string for hash')).to.equal('1dcd0759ce38f57049344a6b3c5fc18144fca1724713090c2ceeffa788c02711');
    expect(toHex(sha256('é'))).to.equal(sha256Hex(Buffer.from('é', 'utf8')));
    expect(sha256(new Uint8Array(0))).to.have.length(32);
  });

  it('hex helpers validate input', () => {
    expect(toHex(fromHex('00ffAB'))).to.equal('00ffab');
    expectCode(() => fromHex('abc'), EncodingError, C.INVALID_HEX);
    expectCode(() => fromHex('zz'), EncodingError, C.INVALID_HEX);
  });
});
