import { expect } from 'chai';
import { schemaKey } from '../../src/state-keys.js';
import { type Harness, STEWARDS, TRUSTEE, accept, createHarness, onLedger, refuse, signed, staticCheck, staticRefuses } from './domain-helpers.js';

const op = (name = 'degree', version = '1.0', attrNames: unknown = ['name', 'age']): Record<string, unknown> => ({
  type: '101',
  data: { name, version, attr_names: attrNames },
});

describe('SCHEMA', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness();
  });
  afterEach(() => h.close());

  it('accepts the documented shapes', () => {
    for (const o of [
      op(),
      op('n', '1.2.3'),
      op(
        'x'.repeat(256),
        '0.1',
        Array.from({ length: 125 }, (_, i) => `a${i}`),
      ),
    ])
      staticCheck(h, signed(TRUSTEE, o));
  });

  const rejected: [string, Record<string, unknown>, string][] = [
    ['data missing', { type: '101' }, 'FIELD_MISSING'],
    ['name missing', { type: '101', data: { version: '1.0', attr_names: ['a'] } }, 'FIELD_MISSING'],
    ['name over 256', op('x'.repeat(257)), 'FIELD_TOO_LONG'],
    ['name empty', op(''), 'FIELD_EMPTY'],
    ['version with one part', op('n', '1'), 'FIELD_VERSION_PARTS'],
    ['version with letters', op('n', '1.a'), 'FIELD_VERSION_CHARS'],
    ['no attribute names', op('n', '1.0', []), 'FIELD_EMPTY'],
    [
      '126 attribute names',
      op(
        'n',
        '1.0',
        Array.from({ length: 126 }, (_, i) => `a${i}`),
      ),
      'FIELD_TOO_LONG',
    ],
    ['an attribute name over 256', op('n', '1.0', ['y'.repeat(257)]), 'FIELD_TOO_LONG'],
    ['attr_names not a list', op('n', '1.0', 'a'), 'FIELD_TYPE'],
  ];
  for (const [name, o, code] of rejected) it(`rejects ${name} (${code})`, () => staticRefuses(h, o, code));

  it('stores W({attr_names}) under <author>:2:<name>:<version>', async () => {
    const txn = await accept(h, signed(STEWARDS[0]!, op()));
    const key = schemaKey(STEWARDS[0]!.did, 'degree', '1.0');
    expect(txn.txnMetadata.txnId).to.equal(key);
    expect(Buffer.from(h.stores.states[1].get(key)!).toString()).to.equal(
      `{"lsn":${txn.txnMetadata.seqNo},"lut":${txn.txnMetadata.txnTime},"val":{"attr_names":["name","age"]}}`,
    );
  });

  it('lets trustees, stewards and endorsers write schemas; different authors may reuse name and version', async () => {
    const endorser = await onLedger(h, '101');
    for (const s of [TRUSTEE, STEWARDS[0]!, endorser]) await accept(h, signed(s, op()));
  });

  it('refuses an identity owner without an endorser', async () => {
    const user = await onLedger(h);
    await refuse(h, signed(user, op()), 'AUTH_OR_FAILED');
  });

  it('accepts an identity owner endorsed by an endorser', async () => {
    const user = await onLedger(h);
    const endorser = await onLedger(h, '101');
    await accept(h, signed([user, endorser], op(), { identifier: user.did, endorser: endorser.did }));
  });

  it('never updates an existing schema, even when the EDIT rule is overridden', async () => {
    await accept(h, signed(TRUSTEE, op()));
    await refuse(h, signed(TRUSTEE, op('degree', '1.0', ['other'])), 'AUTH_FORBIDDEN');
    const rule = {
      type: '120',
      auth_type: '101',
      auth_action: 'EDIT',
      field: '*',
      old_value: '*',
      new_value: '*',
      constraint: { constraint_id: 'ROLE', role: '*', sig_count: 1, need_to_be_owner: false, metadata: {} },
    };
    const r = await h.order(2, [signed(TRUSTEE, rule)]);
    expect(r.results[0]!.valid, (r.results[0] as { reason?: string }).reason).to.equal(true);
    await refuse(h, signed(TRUSTEE, op('degree', '1.0', ['other'])), 'SCHEMA_IMMUTABLE');
  });
});
