import { expect } from 'chai';
import { type Harness, STEWARDS, TRUSTEE, accept, createHarness, onLedger, refuse, signed, staticCheck, staticRefuses } from './domain-helpers.js';

const TYPE: Record<string, string> = { ctx: '200', sch: '201', enc: '202', map: '203', cdf: '204', pdf: '205' };

function rs(rsType: string, id: string, content: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: TYPE[rsType],
    id,
    rsType,
    rsName: `${rsType}-name`,
    rsVersion: '1.0',
    content: typeof content === 'string' ? content : JSON.stringify(content),
    ...extra,
  };
}

const ENCODING = {
  input: { id: 'DateRFC3339', type: 'string' },
  output: { id: 'UnixTime', type: 'integer' },
  algorithm: { description: 'd', documentation: 'https://doc', implementation: 'https://impl' },
  testVectors: 'https://tv',
};
const sch = (id: string): Record<string, unknown> => ({ '@id': id, '@type': 'rdfs:Class', '@context': { x: 'https://x' } });
const mapping = (id: string, schema: string, enc: string, extraAttrs: Record<string, unknown> = {}): Record<string, unknown> => ({
  '@id': id,
  '@type': 'rdfs:Class',
  schema,
  attributes: { issuer: [{ enc, rank: 1 }], issuanceDate: [{ enc, rank: 2 }], ...extraAttrs },
});
const credDef = (schema: string, mappingId: string): Record<string, unknown> => ({
  signatureType: 'CL',
  mapping: mappingId,
  schema,
  publicKey: { primary: { n: '1' } },
});

describe('rich schema objects', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness();
  });
  afterEach(() => h.close());

  describe('static validation', () => {
    it('accepts the documented shapes', () => {
      const ok = [
        rs('ctx', 'did:sov:c1', { '@context': { a: 'https://a' } }),
        rs('ctx', 'did:sov:c2', { '@context': 'https://www.w3.org/2018/credentials/v1' }),
        rs('ctx', 'did:sov:c3', { '@context': ['did:sov:abc', { b: 1 }, 'http://ex.org/path/x'] }),
        rs('sch', 'did:sov:s1', sch('did:sov:s1'), { ver: '1' }),
        rs('enc', 'did:sov:e1', ENCODING),
        rs('map', 'did:sov:m1', mapping('did:sov:m1', 'did:sov:s1', 'did:sov:e1')),
        rs('cdf', 'did:sov:d1', credDef('did:sov:s1', 'did:sov:m1')),
        rs('pdf', 'did:sov:p1', { '@id': 'did:sov:p1', '@type': 'x' }),
      ];
      for (const o of ok) staticCheck(h, signed(TRUSTEE, o));
    });

    const rejected: [string, Record<string, unknown>, string][] = [
      ['id empty', rs('ctx', '', { '@context': {} }), 'FIELD_EMPTY'],
      ['rsType of another type', { ...rs('ctx', 'did:sov:c', { '@context': {} }), rsType: 'sch' }, 'FIELD_ENUM'],
      ['rsName over 256', rs('ctx', 'did:sov:c', { '@context': {} }, { rsName: 'n'.repeat(257) }), 'FIELD_TOO_LONG'],
      ['rsVersion not a version', rs('ctx', 'did:sov:c', { '@context': {} }, { rsVersion: '1' }), 'FIELD_VERSION_PARTS'],
      ['content empty', rs('ctx', 'did:sov:c', ''), 'FIELD_EMPTY'],
      ['ver over 256', rs('ctx', 'did:sov:c', { '@context': {} }, { ver: 'v'.repeat(257) }), 'FIELD_TOO_LONG'],
      ['content not JSON', rs('ctx', 'did:sov:c', '{nope'), 'RS_CONTENT_NOT_JSON'],
      ['an id shaped like a revocation key', rs('ctx', '5:x', { '@context': {} }), 'RS_ID_RESERVED'],
      ['an id shaped like a metadata key', rs('ctx', 'sch:a:1.0', { '@context': {} }), 'RS_ID_RESERVED'],
      ['an id shaped like a schema key', rs('ctx', `${TRUSTEE.did}:2:a:1.0`, { '@context': {} }), 'RS_ID_RESERVED'],
      ['context without @context', rs('ctx', 'did:sov:c', { a: 1 }), 'RS_CONTEXT_MISSING'],
      ['context with a number', rs('ctx', 'did:sov:c', { '@context': 5 }), 'RS_CONTEXT_TYPE'],
      ['context with a bad URI', rs('ctx', 'did:sov:c', { '@context': 'no uri here' }), 'RS_CONTEXT_URI'],
      ['context array with a bad URI', rs('ctx', 'did:sov:c', { '@context': [{}, '://x'] }), 'RS_CONTEXT_URI'],
      ['schema without @id', rs('sch', 'did:sov:s', { '@type': 'x' }), 'RS_JSONLD_FIELD'],
      ['schema without @type', rs('sch', 'did:sov:s', { '@id': 'did:sov:s' }), 'RS_JSONLD_FIELD'],
      ['schema whose @id is not id', rs('sch', 'did:sov:s', sch('did:sov:other')), 'RS_ID_MISMATCH'],
      ['pres def without @type', rs('pdf', 'did:sov:p', { '@id': 'did:sov:p' }), 'RS_JSONLD_FIELD'],
      ['encoding without testVectors', rs('enc', 'did:sov:e', { ...ENCODING, testVectors: '' }), 'RS_CONTENT_MEMBERS'],
      ['encoding input without type', rs('enc', 'did:sov:e', { ...ENCODING, input: { id: 'x' } }), 'RS_CONTENT_MEMBERS'],
      [
        'encoding algorithm without implementation',
        rs('enc', 'did:sov:e', { ...ENCODING, algorithm: { description: 'd', documentation: 'x' } }),
        'RS_CONTENT_MEMBERS',
      ],
      ['mapping without attributes', rs('map', 'did:sov:m', { '@id': 'did:sov:m', '@type': 'x', schema: 's' }), 'RS_CONTENT_MEMBERS'],
      [
        'mapping without issuanceDate',
        rs('map', 'did:sov:m', { '@id': 'did:sov:m', '@type': 'x', schema: 's', attributes: { issuer: [{ enc: 'e', rank: 1 }] } }),
        'RS_MAPPING_DEFAULT_ATTRIBUTES',
      ],
      ['cred def without publicKey', rs('cdf', 'did:sov:d', { signatureType: 'CL', mapping: 'm', schema: 's' }), 'RS_CONTENT_MEMBERS'],
      ['cred def with another signature type', rs('cdf', 'did:sov:d', { ...credDef('s', 'm'), signatureType: 'BBS' }), 'FIELD_ENUM'],
    ];
    for (const [name, o, code] of rejected) it(`rejects ${name} (${code})`, () => staticRefuses(h, o, code));
  });

  describe('dynamic validation and state', () => {
    /** Writes ctx, sch, enc, map (by the trustee); returns their ids. */
    async function basics(): Promise<{ sch: string; enc: string; map: string }> {
      await accept(h, signed(TRUSTEE, rs('ctx', 'did:sov:ctx', { '@context': { a: 'https://a' } })));
      await accept(h, signed(TRUSTEE, rs('sch', 'did:sov:sch', sch('did:sov:sch'))));
      await accept(h, signed(TRUSTEE, rs('enc', 'did:sov:enc', ENCODING)));
      await accept(h, signed(TRUSTEE, rs('map', 'did:sov:map', mapping('did:sov:map', 'did:sov:sch', 'did:sov:enc'))));
      return { sch: 'did:sov:sch', enc: 'did:sov:enc', map: 'did:sov:map' };
    }

    it('stores every type under its id and its (rsType, rsName, rsVersion) index', async () => {
      const ids = await basics();
      const t = await accept(h, signed(STEWARDS[0]!, rs('cdf', 'did:sov:cdf', credDef(ids.sch, ids.map), { ver: '1' })));
      await accept(h, signed(TRUSTEE, rs('pdf', 'did:sov:pdf', { '@id': 'did:sov:pdf', '@type': 'x' })));
      expect(t.txnMetadata.txnId).to.equal('did:sov:cdf');
      const content = JSON.stringify(credDef(ids.sch, ids.map));
      expect(Buffer.from(h.stores.states[1].get('did:sov:cdf')!).toString()).to.equal(
        JSON.stringify({
          lsn: t.txnMetadata.seqNo,
          lut: t.txnMetadata.txnTime,
          val: { content, endorser: null, from: STEWARDS[0]!.did, id: 'did:sov:cdf', rsName: 'cdf-name', rsType: 'cdf', rsVersion: '1.0', ver: '1' },
        }),
      );
      expect(Buffer.from(h.stores.states[1].get('cdf:cdf-name:1.0')!).toString()).to.equal('did:sov:cdf');
    });

    it('refuses a second object with the same rsType, rsName and rsVersion', async () => {
      await accept(h, signed(TRUSTEE, rs('ctx', 'did:sov:c1', { '@context': {} })));
      await refuse(h, signed(TRUSTEE, rs('ctx', 'did:sov:c2', { '@context': {} })), 'RS_DUPLICATE_METADATA');
      await accept(h, signed(TRUSTEE, rs('ctx', 'did:sov:c3', { '@context': {} }, { rsVersion: '1.1' })));
    });

    it('never updates immutable objects, even when their EDIT rule is overridden', async () => {
      await basics();
      const again = rs('sch', 'did:sov:sch', sch('did:sov:sch'));
      await refuse(h, signed(TRUSTEE, again), 'AUTH_FORBIDDEN');
      const rule = {
        type: '120',
        auth_type: '201',
        auth_action: 'EDIT',
        field: '*',
        old_value: '*',
        new_value: '*',
        constraint: { constraint_id: 'ROLE', role: '*', sig_count: 1, need_to_be_owner: false, metadata: {} },
      };
      const r = await h.order(2, [signed(TRUSTEE, rule)]);
      expect(r.results[0]!.valid).to.equal(true);
      await refuse(h, signed(TRUSTEE, again), 'RS_IMMUTABLE');
      for (const t of ['ctx', 'enc', 'map']) {
        const id = `did:sov:${t}`;
        const content = Buffer.from(h.stores.states[1].get(id)!).toString();
        await refuse(h, signed(TRUSTEE, rs(t, id, JSON.parse(content).val.content)), 'AUTH_FORBIDDEN');
      }
    });

    it('lets the owner update a cred def or pres def, keeping rsName and rsVersion', async () => {
      const ids = await basics();
      const owner = STEWARDS[0]!;
      await accept(h, signed(owner, rs('cdf', 'did:sov:cdf', credDef(ids.sch, ids.map))));
      const rotated = { ...credDef(ids.sch, ids.map), publicKey: { primary: { n: '2' } } };
      await refuse(h, signed(TRUSTEE, rs('cdf', 'did:sov:cdf', rotated)), 'AUTH_NOT_OWNER');
      await refuse(h, signed(owner, rs('cdf', 'did:sov:cdf', rotated, { rsVersion: '2.0' })), 'RS_NAME_VERSION_CHANGE');
      await accept(h, signed(owner, rs('cdf', 'did:sov:cdf', rotated)));
      expect(JSON.parse(Buffer.from(h.stores.states[1].get('did:sov:cdf')!).toString()).val.content).to.equal(JSON.stringify(rotated));
      await accept(h, signed(owner, rs('pdf', 'did:sov:pdf', { '@id': 'did:sov:pdf', '@type': 'x' })));
      await accept(h, signed(owner, rs('pdf', 'did:sov:pdf', { '@id': 'did:sov:pdf', '@type': 'y' })));
    });

    it('refuses an id already used by an object of another type', async () => {
      const ids = await basics();
      await refuse(h, signed(TRUSTEE, rs('cdf', ids.sch, credDef(ids.sch, ids.map))), 'RS_ID_TAKEN');
    });

    it('refuses an identity owner without an endorser', async () => {
      const user = await onLedger(h);
      await refuse(h, signed(user, rs('ctx', 'did:sov:c', { '@context': {} })), 'AUTH_OR_FAILED');
    });

    const mappingRefusals: [string, (ids: { sch: string; enc: string; map: string }) => Record<string, unknown>, string][] = [
      ['a schema that does not exist', (i) => mapping('did:sov:m2', 'did:sov:none', i.enc), 'RS_REFERENCE_MISSING'],
      ['a schema that is not a schema', (i) => mapping('did:sov:m2', i.enc, i.enc), 'RS_REFERENCE_WRONG_TYPE'],
      ['a leaf without rank', (i) => mapping('did:sov:m2', i.sch, i.enc, { name: { enc: i.enc } }), 'RS_MAPPING_ENC_RANK'],
      ['a leaf without enc and rank', (i) => mapping('did:sov:m2', i.sch, i.enc, { name: 'x' }), 'RS_MAPPING_ENC_RANK'],
      ['ranks that are not 1..N', (i) => mapping('did:sov:m2', i.sch, i.enc, { name: [{ enc: i.enc, rank: 4 }] }), 'RS_MAPPING_RANKS'],
      ['an enc that does not exist', (i) => mapping('did:sov:m2', i.sch, 'did:sov:none'), 'RS_REFERENCE_MISSING'],
      ['an enc that is not an encoding', (i) => mapping('did:sov:m2', i.sch, i.sch), 'RS_REFERENCE_WRONG_TYPE'],
    ];
    for (const [name, content, code] of mappingRefusals) {
      it(`refuses a mapping with ${name} (${code})`, async () => {
        const ids = await basics();
        await refuse(h, signed(TRUSTEE, rs('map', 'did:sov:m2', content(ids), { rsName: 'm2' })), code);
      });
    }

    it('accepts a mapping with nested attributes ranked 1..N', async () => {
      const ids = await basics();
      const nested = mapping('did:sov:m3', ids.sch, ids.enc, { address: { street: [{ enc: ids.enc, rank: 3 }], city: [{ enc: ids.enc, rank: 4 }] } });
      await accept(h, signed(TRUSTEE, rs('map', 'did:sov:m3', nested, { rsName: 'm3' })));
    });

    const credDefRefusals: [string, (ids: { sch: string; enc: string; map: string }) => Record<string, unknown>, string][] = [
      ['a schema that does not exist', (i) => credDef('did:sov:none', i.map), 'RS_REFERENCE_MISSING'],
      ['a mapping that does not exist', (i) => credDef(i.sch, 'did:sov:none'), 'RS_REFERENCE_MISSING'],
      ['a schema that is not a schema', (i) => credDef(i.enc, i.map), 'RS_REFERENCE_WRONG_TYPE'],
      ['a mapping that is not a mapping', (i) => credDef(i.sch, i.enc), 'RS_REFERENCE_WRONG_TYPE'],
    ];
    for (const [name, content, code] of credDefRefusals) {
      it(`refuses a cred def with ${name} (${code})`, async () => {
        const ids = await basics();
        await refuse(h, signed(TRUSTEE, rs('cdf', 'did:sov:d', content(ids))), code);
      });
    }

    it('refuses a cred def whose mapping names another schema (transactions.md §7)', async () => {
      const ids = await basics();
      await accept(h, signed(TRUSTEE, rs('sch', 'did:sov:sch2', sch('did:sov:sch2'), { rsName: 'other' })));
      await refuse(h, signed(TRUSTEE, rs('cdf', 'did:sov:d', credDef('did:sov:sch2', ids.map))), 'RS_CRED_DEF_MAPPING_SCHEMA');
    });
  });
});
