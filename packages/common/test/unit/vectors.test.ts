import { expect } from 'chai';
import { canonicalJson, canonicalJsonBytes, decodeMsgpack, encodeMsgpack, parseJson, signingSerialization, stringifyJson } from '@quire/common';
import { hex, loadVectors } from './vectors.js';

interface CjCase {
  name: string;
  input_json: string;
  expected: string;
  expected_utf8_hex: string;
}
interface MpCase {
  name: string;
  input_json: string;
  expected_hex: string;
  expected_length: number;
}
interface SerCase {
  name: string;
  input_json: string;
  skip_top_level: string[];
  expected: string;
}

describe('spec vectors', () => {
  describe('canonical_json.json (formats 1.6)', () => {
    const v = loadVectors<{ cases: CjCase[] }>('canonical_json.json');
    for (const c of v.cases) {
      it(c.name, () => {
        const value = parseJson(c.input_json);
        expect(canonicalJson(value)).to.equal(c.expected);
        expect(hex(canonicalJsonBytes(value))).to.equal(c.expected_utf8_hex);
      });
    }
  });

  describe('msgpack.json (formats 1.7)', () => {
    const v = loadVectors<{ cases: MpCase[] }>('msgpack.json');
    for (const c of v.cases) {
      it(c.name, () => {
        const value = parseJson(c.input_json);
        const bytes = encodeMsgpack(value);
        expect(bytes.length).to.equal(c.expected_length);
        expect(hex(bytes)).to.equal(c.expected_hex);
        const back = decodeMsgpack(bytes);
        expect(back).to.deep.equal(value);
        expect(stringifyJson(back)).to.equal(c.input_json);
      });
    }
  });

  describe('signing_serialization.json (formats 1.5, 3.2)', () => {
    const v = loadVectors<{ cases: SerCase[] }>('signing_serialization.json');
    for (const c of v.cases) {
      it(c.name, () => {
        expect(c.skip_top_level).to.deep.equal(['signature', 'signatures', 'fees']);
        const value = parseJson(c.input_json);
        expect(signingSerialization(value, { skipTopLevel: true, attribRule: true })).to.equal(c.expected);
      });
    }
  });
});
