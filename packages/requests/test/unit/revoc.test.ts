import { expect } from 'chai';
import { revocRegAccumKey, revocRegDefKey, revocRegEntryKey } from '../../src/state-keys.js';
import { type Harness, STEWARDS, TRUSTEE, accept, createHarness, onLedger, refuse, signed, staticCheck, staticRefuses } from './domain-helpers.js';

const ISSUER = STEWARDS[0]!;

/** A registry definition operation for a credential definition id. */
function defOp(credDefId: string, issuanceType = 'ISSUANCE_BY_DEFAULT', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: '113',
    id: 'placeholder',
    credDefId,
    revocDefType: 'CL_ACCUM',
    tag: 'r1',
    value: { issuanceType, maxCredNum: 100, publicKeys: { accumKey: { z: '1' } }, tailsHash: 'th', tailsLocation: 'https://t' },
    ...extra,
  };
}

function entryOp(revocRegDefId: string, value: Record<string, unknown>): Record<string, unknown> {
  return { type: '114', revocRegDefId, revocDefType: 'CL_ACCUM', value };
}

const text = (b: Uint8Array | undefined): string => Buffer.from(b!).toString();

describe('revocation registries', () => {
  let h: Harness;
  let credDefId: string;
  beforeEach(async () => {
    h = await createHarness();
    const schema = await accept(h, signed(ISSUER, { type: '101', data: { name: 's', version: '1.0', attr_names: ['a'] } }));
    await accept(h, signed(ISSUER, { type: '102', ref: schema.txnMetadata.seqNo, signature_type: 'CL', data: { primary: {} } }));
    credDefId = `${ISSUER.did}:3:CL:${schema.txnMetadata.seqNo}:tag`;
  });
  afterEach(() => h.close());

  /** Writes a definition and returns its state key (the id entries use). */
  async function definition(issuanceType: string): Promise<string> {
    const key = revocRegDefKey(ISSUER.did, credDefId, 'CL_ACCUM', issuanceType === 'ISSUANCE_BY_DEFAULT' ? 'r1' : 'r2');
    await accept(h, signed(ISSUER, defOp(credDefId, issuanceType, { id: key, tag: issuanceType === 'ISSUANCE_BY_DEFAULT' ? 'r1' : 'r2' })));
    return key;
  }

  describe('REVOC_REG_DEF', () => {
    it('accepts the documented shapes', () => {
      for (const o of [defOp('a:3:CL:1'), defOp('a:3:CL:1:tag', 'ISSUANCE_ON_DEMAND')]) staticCheck(h, signed(TRUSTEE, o));
    });

    const rejected: [string, Record<string, unknown>, string][] = [
      ['credDefId with 3 parts', defOp('a:3:CL'), 'REVOC_CRED_DEF_ID_FORMAT'],
      ['credDefId with 6 parts', defOp('a:3:CL:1:t:x'), 'REVOC_CRED_DEF_ID_FORMAT'],
      ['revocDefType other than CL_ACCUM', defOp('a:3:CL:1', undefined, { revocDefType: 'OTHER' }), 'FIELD_ENUM'],
      ['unknown issuanceType', defOp('a:3:CL:1', 'SOMETIMES'), 'FIELD_ENUM'],
      ['id empty', defOp('a:3:CL:1', undefined, { id: '' }), 'FIELD_EMPTY'],
      ['tag over 256', defOp('a:3:CL:1', undefined, { tag: 't'.repeat(257) }), 'FIELD_TOO_LONG'],
      ['maxCredNum not an integer', { ...defOp('a:3:CL:1'), value: { ...(defOp('a:3:CL:1').value as object), maxCredNum: 'x' } }, 'FIELD_TYPE'],
      ['tailsHash empty', { ...defOp('a:3:CL:1'), value: { ...(defOp('a:3:CL:1').value as object), tailsHash: '' } }, 'FIELD_EMPTY'],
      ['value missing', { type: '113', id: 'i', credDefId: 'a:3:CL:1', revocDefType: 'CL_ACCUM', tag: 't' }, 'FIELD_MISSING'],
    ];
    for (const [name, o, code] of rejected) it(`rejects ${name} (${code})`, () => staticRefuses(h, o, code));

    it('stores W(txn.data) under the computed key and lets the issuer edit it', async () => {
      const t = await accept(h, signed(ISSUER, defOp(credDefId)));
      const key = revocRegDefKey(ISSUER.did, credDefId, 'CL_ACCUM', 'r1');
      expect(t.txnMetadata.txnId).to.equal(key);
      const stored = JSON.parse(text(h.stores.states[1].get(key)));
      expect(stored.val).to.deep.equal({ id: 'placeholder', credDefId, revocDefType: 'CL_ACCUM', tag: 'r1', value: defOp(credDefId).value as object });
      await accept(
        h,
        signed(ISSUER, defOp(credDefId, 'ISSUANCE_BY_DEFAULT', { value: { ...(defOp(credDefId).value as object), tailsLocation: 'https://u' } })),
      );
      expect(JSON.parse(text(h.stores.states[1].get(key))).val.value.tailsLocation).to.equal('https://u');
    });

    it('refuses a definition for a credential definition that does not exist', async () => {
      await refuse(h, signed(ISSUER, defOp(`${ISSUER.did}:3:CL:99:tag`)), 'REVOC_CRED_DEF_UNKNOWN');
    });

    it('refuses an identity owner without an endorser', async () => {
      const user = await onLedger(h);
      await refuse(h, signed(user, defOp(credDefId)), 'AUTH_OR_FAILED');
    });
  });

  describe('REVOC_REG_ENTRY', () => {
    it('accepts the documented shapes', () => {
      for (const v of [{ accum: 'a' }, { accum: 'a', prevAccum: 'p', issued: [], revoked: [1, 2] }, { accum: 'a', issued: [3] }])
        staticCheck(h, signed(TRUSTEE, entryOp('x', v)));
    });

    const rejected: [string, Record<string, unknown>, string][] = [
      ['accum missing', entryOp('x', { revoked: [1] }), 'FIELD_MISSING'],
      ['accum empty', entryOp('x', { accum: '' }), 'FIELD_EMPTY'],
      ['prevAccum empty', entryOp('x', { accum: 'a', prevAccum: '' }), 'FIELD_EMPTY'],
      ['issued not integers', entryOp('x', { accum: 'a', issued: ['1'] }), 'FIELD_TYPE'],
      ['revoked not a list', entryOp('x', { accum: 'a', revoked: 1 }), 'FIELD_TYPE'],
      ['revocDefType other than CL_ACCUM', { ...entryOp('x', { accum: 'a' }), revocDefType: 'X' }, 'FIELD_ENUM'],
      ['revocRegDefId empty', entryOp('', { accum: 'a' }), 'FIELD_EMPTY'],
    ];
    for (const [name, o, code] of rejected) it(`rejects ${name} (${code})`, () => staticRefuses(h, o, code));

    it('ISSUANCE_BY_DEFAULT: accumulates revoked indices and checks prevAccum and the index rules', async () => {
      const id = await definition('ISSUANCE_BY_DEFAULT');
      const first = await accept(h, signed(ISSUER, entryOp(id, { accum: 'a1', revoked: [5, 3] })));
      expect(first.txnMetadata.txnId).to.equal(revocRegEntryKey(id));
      expect(JSON.parse(text(h.stores.states[1].get(revocRegEntryKey(id)))).val.value).to.deep.equal({ accum: 'a1', revoked: [5, 3] });
      expect(JSON.parse(text(h.stores.states[1].get(revocRegAccumKey(id))))).to.deep.equal({
        lsn: first.txnMetadata.seqNo,
        lut: first.txnMetadata.txnTime,
        val: { revocRegDefId: id, revocDefType: 'CL_ACCUM', value: { accum: 'a1' }, seqNo: first.txnMetadata.seqNo, txnTime: first.txnMetadata.txnTime },
      });

      await refuse(h, signed(ISSUER, entryOp(id, { accum: 'a2', prevAccum: 'wrong', revoked: [7] })), 'REVOC_ACCUM_MISMATCH');
      await refuse(h, signed(ISSUER, entryOp(id, { accum: 'a2', revoked: [7] })), 'REVOC_ACCUM_MISMATCH');
      await refuse(h, signed(ISSUER, entryOp(id, { accum: 'a2', prevAccum: 'a1' })), 'REVOC_LISTS_EMPTY');
      await refuse(h, signed(ISSUER, entryOp(id, { accum: 'a1', prevAccum: 'a1', revoked: [7] })), 'REVOC_ACCUM_UNCHANGED');
      await refuse(h, signed(ISSUER, entryOp(id, { accum: 'a2', prevAccum: 'a1', issued: [4] })), 'REVOC_ISSUED_NOT_REVOKED');
      await refuse(h, signed(ISSUER, entryOp(id, { accum: 'a2', prevAccum: 'a1', revoked: [3] })), 'REVOC_ALREADY_REVOKED');
      await refuse(h, signed(ISSUER, entryOp(id, { accum: 'a2', prevAccum: 'a1', issued: [3], revoked: [3] })), 'REVOC_INDEX_IN_BOTH');

      await accept(h, signed(ISSUER, entryOp(id, { accum: 'a2', prevAccum: 'a1', issued: [3], revoked: [9, 1] })));
      expect(JSON.parse(text(h.stores.states[1].get(revocRegEntryKey(id)))).val.value).to.deep.equal({
        accum: 'a2',
        prevAccum: 'a1',
        issued: [],
        revoked: [1, 5, 9],
      });
    });

    it('ISSUANCE_ON_DEMAND: accumulates issued indices and checks the index rules', async () => {
      const id = await definition('ISSUANCE_ON_DEMAND');
      await accept(h, signed(ISSUER, entryOp(id, { accum: 'a1', issued: [4, 2] })));
      await refuse(h, signed(ISSUER, entryOp(id, { accum: 'a2', prevAccum: 'a1', revoked: [7] })), 'REVOC_REVOKED_NOT_ISSUED');
      await refuse(h, signed(ISSUER, entryOp(id, { accum: 'a2', prevAccum: 'a1', issued: [2] })), 'REVOC_ALREADY_ISSUED');
      await accept(h, signed(ISSUER, entryOp(id, { accum: 'a2', prevAccum: 'a1', issued: [7], revoked: [2] })));
      expect(JSON.parse(text(h.stores.states[1].get(revocRegEntryKey(id)))).val.value).to.deep.equal({
        accum: 'a2',
        prevAccum: 'a1',
        issued: [4, 7],
        revoked: [],
      });
      expect(JSON.parse(text(h.stores.states[1].get(revocRegAccumKey(id)))).val.value).to.deep.equal({ accum: 'a2' });
    });

    it('refuses an entry for a definition that does not exist', async () => {
      await refuse(h, signed(ISSUER, entryOp(`${ISSUER.did}:4:nothing`, { accum: 'a' })), 'REVOC_DEF_UNKNOWN');
    });

    it('refuses prevAccum on the first entry', async () => {
      const id = await definition('ISSUANCE_BY_DEFAULT');
      await refuse(h, signed(ISSUER, entryOp(id, { accum: 'a1', prevAccum: 'a0' })), 'REVOC_PREV_ACCUM_WITHOUT_ENTRY');
    });

    it('refuses an index in both lists on the first entry', async () => {
      const id = await definition('ISSUANCE_ON_DEMAND');
      await refuse(h, signed(ISSUER, entryOp(id, { accum: 'a1', issued: [1], revoked: [1] })), 'REVOC_INDEX_IN_BOTH');
    });

    it('lets only the registry owner write entries', async () => {
      const id = await definition('ISSUANCE_BY_DEFAULT');
      await refuse(h, signed(TRUSTEE, entryOp(id, { accum: 'a1' })), 'AUTH_OR_FAILED');
      await accept(h, signed(ISSUER, entryOp(id, { accum: 'a1' })));
      await refuse(h, signed(TRUSTEE, entryOp(id, { accum: 'a2', prevAccum: 'a1', revoked: [1] })), 'AUTH_NOT_OWNER');
    });
  });
});
