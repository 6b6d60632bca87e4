// W(v, n, t), the state value the write handlers store and the light client recomputes from a reply (formats.md
// §8.2): canonical JSON of {lsn, lut, val}, big integers exact, key order canonical whatever the value's.
import { expect } from 'chai';
import fc from 'fast-check';
import { canonicalJson, parseJson, wrappedStateValue } from '@quire/common';

const dec = new TextDecoder();

describe('wrappedStateValue', () => {
  it('is CJ({"lsn": n, "lut": t, "val": v}) as UTF-8', () => {
    expect(dec.decode(wrappedStateValue({ b: 1, a: 'x' }, 7, 1700000000))).to.equal('{"lsn":7,"lut":1700000000,"val":{"a":"x","b":1}}');
    expect(dec.decode(wrappedStateValue('text', 1, null))).to.equal('{"lsn":1,"lut":null,"val":"text"}');
    expect(dec.decode(wrappedStateValue([], 18446744073709551615n, null))).to.equal('{"lsn":18446744073709551615,"lut":null,"val":[]}');
  });

  it('for any value, seqNo and txnTime: the canonical JSON of the three, which parses back to them', () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 3 }).filter((v) => !/\d{16,}/.test(JSON.stringify(v) ?? '')),
        fc.nat(),
        fc.option(fc.nat()),
        (val, n, t) => {
          const text = dec.decode(wrappedStateValue(val, n, t));
          expect(text).to.equal(canonicalJson({ lsn: n, lut: t, val }));
          expect(parseJson(text)).to.deep.equal(parseJson(canonicalJson({ val, lut: t, lsn: n })));
        },
      ),
    );
  });
});
