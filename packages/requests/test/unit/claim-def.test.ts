import { expect } from 'chai';
import { claimDefKey } from '../../src/state-keys.js';
import { type Harness, STEWARDS, TRUSTEE, accept, createHarness, onLedger, refuse, signed, staticCheck, staticRefuses } from './domain-helpers.js';

const cd = (ref: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: '102',
  ref,
  signature_type: 'CL',
  data: { primary: { n: '1' }, revocation: { g: '2' } },
  ...extra,
});

describe('CLAIM_DEF', () => {
  let h: Harness;
  let schemaSeqNo: number;
  beforeEach(async () => {
    h = await createHarness();
    const t = await accept(h, signed(TRUSTEE, { type: '101', data: { name: 's', version: '1.0', attr_names: ['a'] } }));
    schemaSeqNo = t.txnMetadata.seqNo!;
  });
  afterEach(() => h.close());

  it('accepts the documented shapes', () => {
    for (const o of [cd(6), cd('6'), cd(6, { tag: 't1' }), cd(6, { data: { primary: {} } })]) staticCheck(h, signed(TRUSTEE, o));
  });

  const rejected: [string, Record<string, unknown>, string][] = [
    ['ref missing', { type: '102', signature_type: 'CL', data: { primary: {} } }, 'FIELD_MISSING'],
    ['ref 0', cd(0), 'FIELD_TOO_SMALL'],
    ['ref not a number', cd('x1'), 'FIELD_TYPE'],
    ['signature_type other than CL', cd(6, { signature_type: 'BBS' }), 'FIELD_ENUM'],
    ['signature_type over 16', cd(6, { signature_type: 'C'.repeat(17) }), 'FIELD_TOO_LONG'],
    ['tag over 256', cd(6, { tag: 't'.repeat(257) }), 'FIELD_TOO_LONG'],
    ['data without primary', cd(6, { data: { revocation: {} } }), 'FIELD_MISSING'],
    ['primary not an object', cd(6, { data: { primary: 'x' } }), 'FIELD_TYPE'],
  ];
  for (const [name, o, code] of rejected) it(`rejects ${name} (${code})`, () => staticRefuses(h, o, code));

  it('stores the keys under <author>:3:CL:<ref>:<tag> and lets the issuer rotate them', async () => {
    const issuer = STEWARDS[0]!;
    const t1 = await accept(h, signed(issuer, cd(String(schemaSeqNo))));
    const key = claimDefKey(issuer.did, schemaSeqNo, 'CL', 'tag');
    expect(t1.txnMetadata.txnId).to.equal(key);
    expect(Buffer.from(h.stores.states[1].get(key)!).toString()).to.equal(
      `{"lsn":${t1.txnMetadata.seqNo},"lut":${t1.txnMetadata.txnTime},"val":{"primary":{"n":"1"},"revocation":{"g":"2"}}}`,
    );
    const t2 = await accept(h, signed(issuer, cd(schemaSeqNo, { data: { primary: { n: '9' } } })));
    expect(Buffer.from(h.stores.states[1].get(key)!).toString()).to.equal(
      `{"lsn":${t2.txnMetadata.seqNo},"lut":${t2.txnMetadata.txnTime},"val":{"primary":{"n":"9"}}}`,
    );
    await accept(h, signed(issuer, cd(schemaSeqNo, { tag: 'other' })));
    expect(h.stores.states[1].get(claimDefKey(issuer.did, schemaSeqNo, 'CL', 'other'))).to.not.equal(undefined);
  });

  it('refuses a ref that is not on the ledger', async () => {
    await refuse(h, signed(TRUSTEE, cd(999)), 'CLAIM_DEF_REF_UNKNOWN');
  });

  it('refuses a ref that is not a SCHEMA', async () => {
    await refuse(h, signed(TRUSTEE, cd(1)), 'CLAIM_DEF_REF_NOT_SCHEMA');
  });

  it('refuses an identity owner without an endorser', async () => {
    const user = await onLedger(h);
    await refuse(h, signed(user, cd(schemaSeqNo)), 'AUTH_OR_FAILED');
  });

  it('sees a schema written earlier in the same batch', async () => {
    const size = h.stores.ledgers[1].size;
    const r = await h.order(1, [signed(TRUSTEE, { type: '101', data: { name: 'x', version: '2.0', attr_names: ['a'] } }), signed(TRUSTEE, cd(size + 1))]);
    expect(r.results.map((x) => x.valid)).to.deep.equal([true, true]);
  });
});
