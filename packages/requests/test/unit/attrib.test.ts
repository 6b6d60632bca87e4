import { canonicalJson, parseJson, sha256Hex } from '@quire/common';
import { expect } from 'chai';
import { attribKey } from '../../src/state-keys.js';
import { type Harness, STEWARDS, TRUSTEE, accept, createHarness, newSigner, onLedger, refuse, signed, staticCheck, staticRefuses } from './domain-helpers.js';

const HASH = 'ab'.repeat(32);

describe('ATTRIB', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness();
  });
  afterEach(() => h.close());

  describe('static validation', () => {
    const dest = newSigner().did;
    it('accepts raw, enc or hash', () => {
      for (const op of [
        { type: '100', dest, raw: '{"name":"Alice"}' },
        { type: '100', dest, raw: '{"endpoint":{"ha":"127.0.0.1:5555"}}' },
        { type: '100', dest, raw: '{"endpoint":null}' },
        { type: '100', dest, raw: '{"endpoint":{"ha":null,"other":1}}' },
        { type: '100', dest, enc: 'x'.repeat(5120) },
        { type: '100', dest, hash: HASH },
      ])
        staticCheck(h, signed(TRUSTEE, op));
    });

    const rejected: [string, Record<string, unknown>, string][] = [
      ['none of raw, enc, hash', { type: '100', dest }, 'ATTRIB_NONE'],
      ['raw and hash together', { type: '100', dest, raw: '{"a":1}', hash: HASH }, 'ATTRIB_SEVERAL'],
      ['raw and enc together', { type: '100', dest, raw: '{"a":1}', enc: 'e' }, 'ATTRIB_SEVERAL'],
      ['dest missing', { type: '100', raw: '{"a":1}' }, 'FIELD_MISSING'],
      ['raw not JSON', { type: '100', dest, raw: 'nope' }, 'FIELD_INVALID'],
      ['raw not a dict', { type: '100', dest, raw: '[1]' }, 'FIELD_INVALID'],
      ['raw with two attributes', { type: '100', dest, raw: '{"a":1,"b":2}' }, 'FIELD_INVALID'],
      ['raw over 5120 characters', { type: '100', dest, raw: JSON.stringify({ a: 'x'.repeat(5120) }) }, 'FIELD_TOO_LONG'],
      ['enc over 5120 characters', { type: '100', dest, enc: 'x'.repeat(5121) }, 'FIELD_TOO_LONG'],
      ['hash not 64 hex digits', { type: '100', dest, hash: 'abc' }, 'FIELD_HASH'],
      ['endpoint ha without port', { type: '100', dest, raw: '{"endpoint":{"ha":"127.0.0.1"}}' }, 'ATTRIB_ENDPOINT_FORMAT'],
      ['endpoint ha with a bad address', { type: '100', dest, raw: '{"endpoint":{"ha":"300.0.0.1:80"}}' }, 'ATTRIB_ENDPOINT_ADDRESS'],
      ['endpoint ha with a bad port', { type: '100', dest, raw: '{"endpoint":{"ha":"127.0.0.1:70000"}}' }, 'ATTRIB_ENDPOINT_PORT'],
      ['endpoint not an object', { type: '100', dest, raw: '{"endpoint":"x"}' }, 'ATTRIB_ENDPOINT_FORMAT'],
    ];
    for (const [name, op, code] of rejected) it(`rejects ${name} (${code})`, () => staticRefuses(h, op, code));
  });

  describe('dynamic validation and state', () => {
    it('stores raw, enc and hash attributes under their keys, originals in the attribute store', async () => {
      const user = await onLedger(h);
      const raw = '{ "endpoint" : {"ha":"127.0.0.1:5555"} }';
      const t1 = await accept(h, signed(user, { type: '100', dest: user.did, raw }));
      const rawHash = sha256Hex(canonicalJson(parseJson(raw)));
      const rawKey = attribKey(user.did, 'raw', 'endpoint');
      expect(t1.txn.data.raw).to.equal(rawHash);
      expect(t1.txnMetadata.txnId).to.equal(rawKey);
      expect(Buffer.from(h.stores.states[1].get(rawKey)!).toString()).to.equal(
        `{"lsn":${t1.txnMetadata.seqNo},"lut":${t1.txnMetadata.txnTime},"val":"${rawHash}"}`,
      );
      expect(await h.stores.attributes.get(rawHash)).to.equal('{"endpoint":{"ha":"127.0.0.1:5555"}}');

      const t2 = await accept(h, signed(user, { type: '100', dest: user.did, enc: 'secret' }));
      const encKey = attribKey(user.did, 'enc', 'secret');
      expect(t2.txnMetadata.txnId).to.equal(encKey);
      expect(Buffer.from(h.stores.states[1].get(encKey)!).toString()).to.include(`"val":"${sha256Hex('secret')}"`);
      expect(await h.stores.attributes.get(sha256Hex('secret'))).to.equal('secret');

      const t3 = await accept(h, signed(user, { type: '100', dest: user.did, hash: HASH }));
      expect(Buffer.from(h.stores.states[1].get(`${user.did}:1:${HASH}`)!).toString()).to.equal(
        `{"lsn":${t3.txnMetadata.seqNo},"lut":${t3.txnMetadata.txnTime},"val":""}`,
      );
    });

    it('lets the owner edit an attribute and the creator of a ward set one', async () => {
      const user = await onLedger(h);
      await accept(h, signed(user, { type: '100', dest: user.did, raw: '{"name":"a"}' }));
      await accept(h, signed(user, { type: '100', dest: user.did, raw: '{"name":"b"}' }));
      const ward = newSigner();
      await accept(h, signed(TRUSTEE, { type: '1', dest: ward.did }));
      await accept(h, signed(TRUSTEE, { type: '100', dest: ward.did, raw: '{"name":"w"}' }));
    });

    it('refuses an attribute for a DID not on the ledger', async () => {
      await refuse(h, signed(TRUSTEE, { type: '100', dest: newSigner().did, raw: '{"a":1}' }), 'ATTRIB_DEST_UNKNOWN');
    });

    it('refuses an attribute set by someone else than the owner', async () => {
      const user = await onLedger(h);
      await refuse(h, signed(STEWARDS[0]!, { type: '100', dest: user.did, raw: '{"a":1}' }), 'AUTH_NOT_OWNER');
      await accept(h, signed(user, { type: '100', dest: user.did, raw: '{"a":1}' }));
      await refuse(h, signed(TRUSTEE, { type: '100', dest: user.did, raw: '{"a":2}' }), 'AUTH_NOT_OWNER');
    });

    it('rebuilds the same state from the ledger and the attribute store', async () => {
      const user = await onLedger(h);
      await accept(h, signed(user, { type: '100', dest: user.did, raw: '{"name":"a"}' }));
      await accept(h, signed(user, { type: '100', dest: user.did, enc: 'e1' }));
      await accept(h, signed(user, { type: '100', dest: user.did, hash: HASH }));
      const before = Buffer.from(h.stores.states[1].committedRoot).toString('hex');
      const rebuilt = await h.executor.rebuildState(1);
      expect(Buffer.from(rebuilt).toString('hex')).to.equal(before);
    });
  });
});
