// A GET_NYM reply's state value (CJ of the record without dest) is remembered by dest with the data text it came from:
// any sequence of replies gets the value computed afresh, a changed text or another dest is computed again, a
// malformed text is refused after a good one, and a caller changing a target's value changes nothing remembered.
import { expect } from 'chai';
import fc from 'fast-check';
import { canonicalJsonBytes, parseJson, stringifyJson } from '@quire/common';
import { ClientErrorCode, readTargets } from '../../src/index.js';
import { NYM_VALUES } from '../../src/verify/read-targets.js';
import { codeOf } from './fixtures.js';

const DESTS = ['VsKV7grR1BUE29mG2Fm2kX', 'Th7MpTaRZVRYnPiabds81Y', 'EbP4aYNeTHL6q385GuVpRV'];

/** the value as readTargets computed it before it remembered anything */
function reference(data: string): { value: string; seqNo: unknown } {
  const rec = parseJson(data) as Record<string, unknown>;
  delete rec.dest;
  return { value: Buffer.from(canonicalJsonBytes(rec)).toString('hex'), seqNo: rec.seqNo };
}

describe('readTargets: GET_NYM values remembered by dest and data text', () => {
  it('gives the value of the text it is given, for any sequence of dests and texts', () => {
    const record = fc.record({
      identifier: fc.constantFrom('V4SGRU86Z58d6TV7PBUe6f', 'Th7MpTaRZVRYnPiabds81Y'),
      role: fc.constantFrom(null, '0', '101'),
      seqNo: fc.oneof(fc.nat(1000), fc.constant(null)),
      txnTime: fc.nat(2_000_000_000),
      verkey: fc.constantFrom('~CoRER63DVYnWZtK8uAzNbx', null),
    });
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(DESTS.length - 1), record, fc.boolean()), { minLength: 1, maxLength: 40 }), (reads) => {
        for (const [d, rec, withDest] of reads) {
          const dest = DESTS[d]!;
          const data = stringifyJson(withDest ? { dest, ...rec } : rec);
          const t = readTargets({ type: '105', dest, data }, { type: '105', dest }).targets[0]!;
          const want = reference(data);
          expect(Buffer.from(t.value!).toString('hex')).to.equal(want.value);
          expect(t.recordSeqNo).to.equal(typeof want.seqNo === 'number' ? want.seqNo : null);
          t.value!.fill(0); // the caller's copy
        }
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a text that names another dest or is not JSON after the dest was read', () => {
    const dest = DESTS[0]!;
    const good = stringifyJson({ dest, identifier: 'V4SGRU86Z58d6TV7PBUe6f', role: null, seqNo: 5, txnTime: 9, verkey: null });
    readTargets({ type: '105', dest, data: good }, { type: '105', dest });
    expect(codeOf(() => readTargets({ type: '105', dest, data: good.replace(dest, DESTS[1]!) }, { type: '105', dest }))).to.equal(
      ClientErrorCode.REPLY_MALFORMED,
    );
    expect(codeOf(() => readTargets({ type: '105', dest, data: good.slice(1) }, { type: '105', dest }))).to.equal(ClientErrorCode.REPLY_MALFORMED);
    // another dest with the text remembered for this one
    expect(codeOf(() => readTargets({ type: '105', dest: DESTS[2]!, data: good }, { type: '105', dest: DESTS[2]! }))).to.equal(ClientErrorCode.REPLY_MALFORMED);
  });

  it('hands out a copy of the value: a caller changing it changes nothing the next read of the text gets', () => {
    const dest = DESTS[1]!;
    const data = stringifyJson({ identifier: 'V4SGRU86Z58d6TV7PBUe6f', role: '101', seqNo: 7, txnTime: 9, verkey: null });
    for (let i = 0; i < 3; i++) {
      const t = readTargets({ type: '105', dest, data }, { type: '105', dest }).targets[0]!;
      expect(Buffer.from(t.value!).toString('hex')).to.equal(reference(data).value);
      t.value!.fill(0);
    }
  });

  it('stays right past the number of dests it keeps', () => {
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < NYM_VALUES + 8; i++) {
        const dest = `D${i}`;
        const data = stringifyJson({ identifier: 'V4SGRU86Z58d6TV7PBUe6f', role: null, seqNo: i + round, txnTime: 9, verkey: null });
        const t = readTargets({ type: '105', dest, data }, { type: '105', dest }).targets[0]!;
        expect(Buffer.from(t.value!).toString('hex')).to.equal(reference(data).value);
      }
  });
});
