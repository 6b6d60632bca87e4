import { JsonFloat, canonicalJson, canonicalJsonBytes, parseJson, sha256, sha256Hex } from '@quire/common';
import { expect } from 'chai';
import fc from 'fast-check';
import { RequestError } from '../../src/errors.js';
import {
  IssuanceType,
  accumulateRevocEntry,
  attribKey,
  attribStoredHash,
  claimDefKey,
  decodeNymRecord,
  decodeWrapped,
  encodeNymRecord,
  encodeRevocEntry,
  encodeWrapped,
  indexDifference,
  indexUnion,
  mergeNymRecord,
  nymKey,
  nymReadData,
  nymTxnId,
  revocAccumRecord,
  revocRegAccumKey,
  revocRegDefKey,
  revocRegEntryKey,
  richSchemaMetadataKey,
  schemaKey,
} from '../../src/state-keys.js';

const DID = 'V4SGRU86Z58d6TV7PBUe6f';
const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');

describe('state keys and values (formats.md 8.2)', () => {
  it('builds every domain key shape exactly', () => {
    const cases: [string, string | Uint8Array, string | Uint8Array][] = [
      ['NYM', nymKey(DID), sha256(DID)],
      ['ATTRIB raw', attribKey(DID, 'raw', 'endpoint'), `${DID}:1:${sha256Hex('endpoint')}`],
      ['ATTRIB enc', attribKey(DID, 'enc', 'ciphertext'), `${DID}:1:${sha256Hex('ciphertext')}`],
      ['ATTRIB hash', attribKey(DID, 'hash', 'ab'.repeat(32)), `${DID}:1:${'ab'.repeat(32)}`],
      ['SCHEMA', schemaKey(DID, 'degree', '1.0'), `${DID}:2:degree:1.0`],
      ['CLAIM_DEF', claimDefKey(DID, 12, 'CL', 'tag1'), `${DID}:3:CL:12:tag1`],
      ['CLAIM_DEF defaults', claimDefKey(DID, 12n), `${DID}:3:CL:12:tag`],
      ['REVOC_REG_DEF', revocRegDefKey(DID, `${DID}:3:CL:12:tag`, 'CL_ACCUM', 't'), `${DID}:4:${DID}:3:CL:12:tag:CL_ACCUM:t`],
      ['REVOC_REG_ENTRY', revocRegEntryKey('R1'), '5:R1'],
      ['accumulator', revocRegAccumKey('R1'), '6:R1'],
      ['rich schema secondary', richSchemaMetadataKey('sch', 'Degree', '1.0'), 'sch:Degree:1.0'],
    ];
    for (const [name, got, want] of cases)
      expect(typeof got === 'string' ? got : Buffer.from(got).toString('hex'), name).to.equal(
        typeof want === 'string' ? want : Buffer.from(want).toString('hex'),
      );
    expect(nymKey(DID)).to.have.length(32);
    expect(nymTxnId(DID)).to.equal(sha256Hex(DID));
  });

  it('encodes W(v, n, t) as the canonical JSON vector', () => {
    const bytes = encodeWrapped({ attr_names: ['name', 'age'] }, 7, 1700000000);
    expect(Buffer.from(bytes).toString('hex')).to.equal(
      '7b226c736e223a372c226c7574223a313730303030303030302c2276616c223a7b22617474725f6e616d6573223a5b226e616d65222c22616765225d7d7d',
    );
    expect(decodeWrapped(bytes, 'k')).to.deep.equal({ lsn: 7, lut: 1700000000, val: { attr_names: ['name', 'age'] } });
    expect(text(encodeWrapped('', 3, null))).to.equal('{"lsn":3,"lut":null,"val":""}');
  });

  it('reports malformed state values as STATE_CORRUPT', () => {
    for (const bad of ['not json', '[1]', '{"lsn":"x","lut":1,"val":1}', '{"lsn":1,"lut":1}']) {
      expect(() => decodeWrapped(new TextEncoder().encode(bad), 'k'))
        .to.throw(RequestError)
        .with.property('code', 'STATE_CORRUPT');
    }
    expect(() => decodeNymRecord(new TextEncoder().encode('{"role":5}'), DID))
      .to.throw(RequestError)
      .with.property('code', 'STATE_CORRUPT');
  });

  it('merges NYM records by the formats.md rule', () => {
    const created = mergeNymRecord(undefined, { dest: 'X', role: '101', verkey: '~abc', alias: 'a' }, DID, 6, 1700000000);
    expect(text(encodeNymRecord(created))).to.equal(`{"identifier":"${DID}","role":"101","seqNo":6,"txnTime":1700000000,"verkey":"~abc"}`);
    const updated = mergeNymRecord(created, { dest: 'X', verkey: null, diddocContent: '{}' }, 'Other', 9, 1700000100);
    expect(updated).to.deep.equal({ identifier: DID, role: '101', verkey: null, seqNo: 9, txnTime: 1700000100, diddocContent: '{}' });
    const genesis = mergeNymRecord(undefined, { dest: 'X', role: '0' }, null, 1, null);
    expect(text(encodeNymRecord(genesis))).to.equal('{"identifier":null,"role":"0","seqNo":1,"txnTime":null,"verkey":null}');
    expect(decodeNymRecord(encodeNymRecord(updated), 'X')).to.deep.equal(updated);
    expect(nymReadData(genesis, 'X')).to.equal('{"dest":"X","identifier":null,"role":"0","seqNo":1,"txnTime":null,"verkey":null}');
  });

  it('encodes every NYM record as CJ does, byte for byte, also those it writes without sorting or escaping', () => {
    // the values NYM records hold, and values beside them that CJ must escape, sort or write otherwise
    const str = fc.oneof(
      fc.string(),
      fc.string({ unit: 'grapheme' }),
      fc.constantFrom('', '"', '\\', 'a"b', '~abc', '\u007f', '\u0080', 'é', '\u2028', '\n', '\ud800', '\ud83d\ude00', DID),
    );
    const value = fc.oneof(
      fc.constant(null),
      fc.constant(undefined),
      str,
      fc.integer(),
      fc.constantFrom(0, -0, 2 ** 53, 1.5, -1, Number.MAX_SAFE_INTEGER),
      fc.bigInt(),
      fc.constant(new JsonFloat(2)),
      fc.constant({ b: 1, a: '"' }),
      fc.constant([1, 'x']),
    );
    const field = fc.constantFrom('identifier', 'role', 'verkey', 'seqNo', 'txnTime', 'diddocContent', 'version', 'alias', 'dest', 'a', 'zz', 'Role');
    fc.assert(
      fc.property(fc.dictionary(field, value), (fields) => {
        let expected: Uint8Array | undefined;
        let expectedError: unknown;
        try {
          expected = canonicalJsonBytes(fields);
        } catch (e) {
          expectedError = e;
        }
        if (expectedError !== undefined) {
          expect(() => encodeNymRecord(fields as never))
            .to.throw()
            .with.property('code', (expectedError as { code: string }).code);
          return;
        }
        expect(Buffer.from(encodeNymRecord(fields as never)).equals(Buffer.from(expected as Uint8Array))).to.equal(true);
      }),
      { numRuns: 3000 },
    );
    const created = mergeNymRecord(undefined, { dest: DID, role: null, verkey: '~abc', version: 2 }, DID, 7, 1700000000);
    expect(text(encodeNymRecord(created))).to.equal(`{"identifier":"${DID}","role":null,"seqNo":7,"txnTime":1700000000,"verkey":"~abc","version":2}`);
  });

  it('hashes ATTRIB contents as stored', () => {
    const raw = parseJson('{"endpoint":{"ha":"127.0.0.1:5555"}}');
    expect(attribStoredHash('raw', raw)).to.equal(sha256Hex(canonicalJson(raw)));
    expect(attribStoredHash('enc', 'abc')).to.equal(sha256Hex('abc'));
    expect(attribStoredHash('hash', 'ff'.repeat(32))).to.equal('');
  });

  it('accumulates revocation entries per issuance type, sorted ascending', () => {
    const first = { revocRegDefId: 'R', revocDefType: 'CL_ACCUM', value: { accum: 'a1', revoked: [5, 3] } };
    expect(accumulateRevocEntry(undefined, first, IssuanceType.ISSUANCE_BY_DEFAULT)).to.deep.equal(first);
    const next = { revocRegDefId: 'R', revocDefType: 'CL_ACCUM', value: { accum: 'a2', prevAccum: 'a1', issued: [3], revoked: [9, 1] } };
    expect(accumulateRevocEntry(first, next, IssuanceType.ISSUANCE_BY_DEFAULT).value).to.deep.equal({
      accum: 'a2',
      prevAccum: 'a1',
      issued: [],
      revoked: [1, 5, 9],
    });
    const onDemand = { revocRegDefId: 'R', revocDefType: 'CL_ACCUM', value: { accum: 'a1', issued: [4, 2] } };
    const later = { revocRegDefId: 'R', revocDefType: 'CL_ACCUM', value: { accum: 'a2', prevAccum: 'a1', issued: [7], revoked: [2] } };
    expect(accumulateRevocEntry(onDemand, later, IssuanceType.ISSUANCE_ON_DEMAND).value).to.deep.equal({
      accum: 'a2',
      prevAccum: 'a1',
      issued: [4, 7],
      revoked: [],
    });
    expect(text(encodeRevocEntry(first, 4, 10))).to.equal(
      '{"lsn":4,"lut":10,"val":{"revocDefType":"CL_ACCUM","revocRegDefId":"R","seqNo":4,"txnTime":10,"value":{"accum":"a1","revoked":[5,3]}}}',
    );
    expect(revocAccumRecord(next, 'a2', 4, 10)).to.deep.equal({ revocRegDefId: 'R', revocDefType: 'CL_ACCUM', value: { accum: 'a2' }, seqNo: 4, txnTime: 10 });
  });

  it('index set operations treat number and bigint alike and sort numerically', () => {
    expect(indexUnion([10, 2n], [2, 1])).to.deep.equal([1, 2, 10]);
    expect(indexDifference([2n ** 60n, 3], [3n])).to.deep.equal([2n ** 60n]);
    fc.assert(
      fc.property(fc.array(fc.nat(50)), fc.array(fc.nat(50)), (a, b) => {
        const u = indexUnion(a, b) as number[];
        expect(u).to.deep.equal([...new Set([...a, ...b])].sort((x, y) => x - y));
        const d = indexDifference(a, b) as number[];
        expect(d).to.deep.equal([...new Set(a)].filter((x) => !b.includes(x)).sort((x, y) => x - y));
      }),
      { numRuns: 100 },
    );
  });
});
