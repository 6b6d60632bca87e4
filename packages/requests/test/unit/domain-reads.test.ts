import { b58decode, b58encode, b64decode, canonicalJson, canonicalJsonBytes, parseJson, sha256Hex } from '@quire/common';
import { verifyTrieProofAt } from '@quire/storage';
import { expect } from 'chai';
import { attribKey, claimDefKey, nymKey, revocRegAccumKey, revocRegDefKey, revocRegEntryKey, richSchemaMetadataKey, schemaKey } from '../../src/state-keys.js';
import { type Harness, STEWARDS, TRUSTEE, accept, createHarness, newSigner, nymOp, read, signed, verifyRead, wrappedFromResult } from './domain-helpers.js';

const ISSUER = STEWARDS[0]!;
const T0 = 1_800_000_000;
const at = (k: number): number => T0 + k * 100;

/** Expects a read to fail its static validation with `code`. */
async function readRefused(h: Harness, op: Record<string, unknown>, code: string): Promise<void> {
  try {
    await read(h, op);
  } catch (e) {
    expect((e as { code?: string }).code).to.equal(code);
    return;
  }
  expect.fail(`expected ${code}`);
}

describe('domain reads with state proofs', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness();
  });
  afterEach(() => h.close());

  describe('GET_NYM', () => {
    it('proves a present NYM (data = CJ(record + dest)) and an absent one', async () => {
      const user = newSigner();
      const t = await accept(h, signed(TRUSTEE, nymOp(user, '101')), at(1));
      const out = await read(h, { type: '105', dest: user.did });
      const data = parseJson(out.result.data as string) as Record<string, unknown>;
      expect(data).to.include({ dest: user.did, role: '101', verkey: user.verkey, identifier: TRUSTEE.did, seqNo: t.txnMetadata.seqNo });
      expect(out.result).to.include({ seqNo: t.txnMetadata.seqNo, txnTime: at(1), type: '105', dest: user.did });
      delete data.dest;
      verifyRead(out, nymKey(user.did), canonicalJsonBytes(data));

      const missing = newSigner().did;
      const none = await read(h, { type: '105', dest: missing });
      expect(none.result).to.include({ data: null, seqNo: null, txnTime: null });
      verifyRead(none, nymKey(missing), null);
    });

    it('reads the NYM as of a timestamp or of the txnTime of a seqNo', async () => {
      const user = newSigner();
      const created = await accept(h, signed(TRUSTEE, nymOp(user, '101')), at(1));
      await accept(h, signed(TRUSTEE, { type: '1', dest: user.did, role: null }), at(2));
      const now = await read(h, { type: '105', dest: user.did });
      expect(parseJson(now.result.data as string)).to.include({ role: null });
      for (const op of [{ timestamp: at(1) + 50 }, { seqNo: created.txnMetadata.seqNo }]) {
        const then = await read(h, { type: '105', dest: user.did, ...op });
        const data = parseJson(then.result.data as string) as Record<string, unknown>;
        expect(data).to.include({ role: '101' });
        delete data.dest;
        verifyRead(then, nymKey(user.did), canonicalJsonBytes(data));
      }
      const before = await read(h, { type: '105', dest: user.did, timestamp: at(0) });
      expect(before.result.data).to.equal(null);
      const unknownSeqNo = await read(h, { type: '105', dest: user.did, seqNo: 999 });
      expect(unknownSeqNo.result.data).to.equal(null);
      await readRefused(h, { type: '105', dest: user.did, seqNo: 1, timestamp: at(1) }, 'READ_SEQNO_AND_TIMESTAMP');
      await readRefused(h, { type: '105', dest: 'bad!' }, 'FIELD_BASE58_CHARS');
    });
  });

  describe('GET_ATTR', () => {
    it('proves raw, enc and hash attributes and an absent one', async () => {
      const user = newSigner();
      await accept(h, signed(TRUSTEE, nymOp(user)), at(1));
      await accept(h, signed(user, { type: '100', dest: user.did, raw: '{"endpoint": {"ha": "127.0.0.1:5555"}}' }), at(2));
      await accept(h, signed(user, { type: '100', dest: user.did, enc: 'ciphertext' }), at(3));
      const hash = 'cd'.repeat(32);
      await accept(h, signed(user, { type: '100', dest: user.did, hash }), at(4));

      const raw = await read(h, { type: '104', dest: user.did, raw: 'endpoint' });
      expect(raw.result.data).to.equal('{"endpoint":{"ha":"127.0.0.1:5555"}}');
      verifyRead(raw, attribKey(user.did, 'raw', 'endpoint'), wrappedFromResult(sha256Hex(raw.result.data as string), raw.result));

      const enc = await read(h, { type: '104', dest: user.did, enc: 'ciphertext' });
      expect(enc.result.data).to.equal('ciphertext');
      verifyRead(enc, attribKey(user.did, 'enc', 'ciphertext'), wrappedFromResult(sha256Hex('ciphertext'), enc.result));

      const byHash = await read(h, { type: '104', dest: user.did, hash });
      expect(byHash.result.data).to.equal(hash);
      verifyRead(byHash, attribKey(user.did, 'hash', hash), wrappedFromResult('', byHash.result));

      const none = await read(h, { type: '104', dest: user.did, raw: 'missing' });
      expect(none.result.data).to.equal(null);
      verifyRead(none, attribKey(user.did, 'raw', 'missing'), null);

      const old = await read(h, { type: '104', dest: user.did, raw: 'endpoint', timestamp: at(1) });
      expect(old.result.data).to.equal(null);
      verifyRead(old, attribKey(user.did, 'raw', 'endpoint'), null);

      await readRefused(h, { type: '104', dest: user.did }, 'GET_ATTR_SELECTOR');
      await readRefused(h, { type: '104', dest: user.did, raw: 'a', hash }, 'GET_ATTR_SELECTOR');
    });
  });

  describe('GET_SCHEMA and GET_CLAIM_DEF', () => {
    it('proves present and absent schemas and credential definitions', async () => {
      const s = await accept(h, signed(ISSUER, { type: '101', data: { name: 'degree', version: '1.0', attr_names: ['name'] } }), at(1));
      const seqNo = s.txnMetadata.seqNo!;
      await accept(h, signed(ISSUER, { type: '102', ref: seqNo, signature_type: 'CL', data: { primary: { n: '1' } } }), at(2));

      const schema = await read(h, { type: '107', dest: ISSUER.did, data: { name: 'degree', version: '1.0', origin: 'ignored' } });
      expect(schema.result.data).to.deep.equal({ attr_names: ['name'], name: 'degree', version: '1.0' });
      verifyRead(schema, schemaKey(ISSUER.did, 'degree', '1.0'), wrappedFromResult({ attr_names: ['name'] }, schema.result));
      const noSchema = await read(h, { type: '107', dest: ISSUER.did, data: { name: 'degree', version: '2.0' } });
      expect(noSchema.result).to.deep.include({ data: { name: 'degree', version: '2.0' }, seqNo: null });
      verifyRead(noSchema, schemaKey(ISSUER.did, 'degree', '2.0'), null);

      const cd = await read(h, { type: '108', origin: ISSUER.did, ref: seqNo, signature_type: 'CL' });
      expect(cd.result).to.deep.include({ data: { primary: { n: '1' } }, signature_type: 'CL' });
      verifyRead(cd, claimDefKey(ISSUER.did, seqNo, 'CL', 'tag'), wrappedFromResult({ primary: { n: '1' } }, cd.result));
      const noCd = await read(h, { type: '108', origin: ISSUER.did, ref: seqNo, signature_type: 'CL', tag: 'other' });
      expect(noCd.result.data).to.equal(null);
      verifyRead(noCd, claimDefKey(ISSUER.did, seqNo, 'CL', 'other'), null);
    });
  });

  describe('revocation reads', () => {
    let defId: string;
    beforeEach(async () => {
      const s = await accept(h, signed(ISSUER, { type: '101', data: { name: 's', version: '1.0', attr_names: ['a'] } }), at(1));
      await accept(h, signed(ISSUER, { type: '102', ref: s.txnMetadata.seqNo, signature_type: 'CL', data: { primary: {} } }), at(2));
      const credDefId = `${ISSUER.did}:3:CL:${s.txnMetadata.seqNo}:tag`;
      defId = revocRegDefKey(ISSUER.did, credDefId, 'CL_ACCUM', 'r');
      const value = { issuanceType: 'ISSUANCE_BY_DEFAULT', maxCredNum: 10, publicKeys: {}, tailsHash: 'h', tailsLocation: 'l' };
      await accept(h, signed(ISSUER, { type: '113', id: defId, credDefId, revocDefType: 'CL_ACCUM', tag: 'r', value }), at(3));
      await accept(h, signed(ISSUER, { type: '114', revocRegDefId: defId, revocDefType: 'CL_ACCUM', value: { accum: 'a1', revoked: [2, 1] } }), at(4));
      await accept(
        h,
        signed(ISSUER, { type: '114', revocRegDefId: defId, revocDefType: 'CL_ACCUM', value: { accum: 'a2', prevAccum: 'a1', issued: [1], revoked: [3] } }),
        at(5),
      );
    });

    it('GET_REVOC_REG_DEF proves the definition and an absent one', async () => {
      const out = await read(h, { type: '115', id: defId });
      expect((out.result.data as Record<string, unknown>).id).to.equal(defId);
      verifyRead(out, defId, wrappedFromResult(out.result.data, out.result));
      const none = await read(h, { type: '115', id: `${defId}x` });
      expect(none.result.data).to.equal(null);
      verifyRead(none, `${defId}x`, null);
    });

    it('GET_REVOC_REG proves the accumulator as of a timestamp, and its absence before the first entry', async () => {
      const now = await read(h, { type: '116', revocRegDefId: defId, timestamp: at(5) + 10 });
      expect(now.result.data).to.deep.include({ revocRegDefId: defId, value: { accum: 'a2' } });
      verifyRead(now, revocRegAccumKey(defId), wrappedFromResult(now.result.data, now.result));
      const then = await read(h, { type: '116', revocRegDefId: defId, timestamp: at(4) });
      expect((then.result.data as Record<string, unknown>).value).to.deep.equal({ accum: 'a1' });
      verifyRead(then, revocRegAccumKey(defId), wrappedFromResult(then.result.data, then.result));
      const before = await read(h, { type: '116', revocRegDefId: defId, timestamp: at(3) });
      expect(before.result.data).to.equal(null);
      verifyRead(before, revocRegAccumKey(defId), null);
      const noRoot = await read(h, { type: '116', revocRegDefId: defId, timestamp: at(0) });
      expect(noRoot.result).to.include({ data: null }).and.not.have.property('state_proof');
      await readRefused(h, { type: '116', revocRegDefId: defId }, 'FIELD_MISSING');
    });

    it('GET_REVOC_REG_DELTA with only `to`: the full entry and its lists', async () => {
      const out = await read(h, { type: '117', revocRegDefId: defId, to: at(5) });
      const data = out.result.data as { value: Record<string, unknown>; revocDefType: string };
      expect(data.revocDefType).to.equal('CL_ACCUM');
      expect(data.value.issued).to.deep.equal([]);
      expect(data.value.revoked).to.deep.equal([2, 3]);
      expect(data).to.not.have.property('stateProofFrom');
      expect(out.reply).to.not.have.property('stateRootFrom');
      verifyRead(out, revocRegEntryKey(defId), wrappedFromResult(data.value.accum_to, out.result));
    });

    it('GET_REVOC_REG_DELTA from..to: the delta, accum_to and accum_from, both proved', async () => {
      const out = await read(h, { type: '117', revocRegDefId: defId, from: at(4), to: at(5) });
      const data = out.result.data as { value: Record<string, unknown>; stateProofFrom: { root_hash: string; proof_nodes: string } };
      expect(data.value.issued).to.deep.equal([1]);
      expect(data.value.revoked).to.deep.equal([3]);
      expect((data.value.accum_to as Record<string, unknown>).value).to.deep.equal({ accum: 'a2' });
      verifyRead(out, revocRegAccumKey(defId), wrappedFromResult(data.value.accum_to, out.result));
      const from = data.value.accum_from as Record<string, unknown>;
      expect(from.value).to.deep.equal({ accum: 'a1' });
      const proven = verifyTrieProofAt(b58decode(data.stateProofFrom.root_hash), revocRegAccumKey(defId), b64decode(data.stateProofFrom.proof_nodes));
      expect(Buffer.from(proven!).toString()).to.equal(canonicalJson({ lsn: from.seqNo, lut: from.txnTime, val: from }));
      // the node is told both roots: `state_proof` is the `to` root, `stateProofFrom` the `from` root
      expect(b58encode(out.reply.stateRoot!.root)).to.equal(out.result.state_proof && (out.result.state_proof as { root_hash: string }).root_hash);
      expect(out.reply.stateRootFrom).to.deep.equal({ ledgerId: 1, root: b58decode(data.stateProofFrom.root_hash) });
      expect(b58encode(out.reply.stateRootFrom!.root)).to.not.equal(b58encode(out.reply.stateRoot!.root));
    });

    it('GET_REVOC_REG_DELTA with no entry at `from`: full lists, accum_from null proved absent', async () => {
      const out = await read(h, { type: '117', revocRegDefId: defId, from: at(3), to: at(5) });
      const data = out.result.data as { value: Record<string, unknown>; stateProofFrom: { root_hash: string; proof_nodes: string } };
      expect(data.value.accum_from).to.equal(null);
      expect(data.value.revoked).to.deep.equal([2, 3]);
      verifyRead(out, revocRegEntryKey(defId), wrappedFromResult(data.value.accum_to, out.result));
      expect(verifyTrieProofAt(b58decode(data.stateProofFrom.root_hash), revocRegAccumKey(defId), b64decode(data.stateProofFrom.proof_nodes))).to.equal(null);
      expect(out.reply.stateRootFrom).to.deep.equal({ ledgerId: 1, root: b58decode(data.stateProofFrom.root_hash) });
    });

    it('GET_REVOC_REG_DELTA with no entry at `to`: null data, absence proved; `from` > `to` refused', async () => {
      const out = await read(h, { type: '117', revocRegDefId: defId, to: at(3) });
      expect(out.result).to.include({ data: null, seqNo: null, txnTime: null });
      verifyRead(out, revocRegEntryKey(defId), null);
      const withFrom = await read(h, { type: '117', revocRegDefId: defId, from: at(3), to: at(3) });
      expect(withFrom.result.data).to.deep.include({ value: { accum_to: null, accum_from: null } });
      await readRefused(h, { type: '117', revocRegDefId: defId, from: at(5), to: at(4) }, 'GET_REVOC_DELTA_RANGE');
    });
  });

  describe('GET_RICH_SCHEMA_OBJECT_BY_ID / _BY_METADATA', () => {
    it('proves a present object by id and by metadata, and absent ones', async () => {
      const content = JSON.stringify({ '@context': { a: 'https://a' } });
      const t = await accept(h, signed(TRUSTEE, { type: '200', id: 'did:sov:ctx1', rsType: 'ctx', rsName: 'c', rsVersion: '1.0', content }), at(1));
      const expected = { id: 'did:sov:ctx1', rsType: 'ctx', rsName: 'c', rsVersion: '1.0', content, from: TRUSTEE.did, endorser: null, ver: null };
      const byId = await read(h, { type: '300', id: 'did:sov:ctx1' });
      expect(byId.result).to.deep.include({ data: expected, seqNo: t.txnMetadata.seqNo, txnTime: at(1) });
      verifyRead(byId, 'did:sov:ctx1', wrappedFromResult(expected, byId.result));
      const byMeta = await read(h, { type: '301', rsType: 'ctx', rsName: 'c', rsVersion: '1.0' });
      expect(byMeta.result.data).to.deep.equal(expected);
      verifyRead(byMeta, 'did:sov:ctx1', wrappedFromResult(expected, byMeta.result));

      const none = await read(h, { type: '300', id: 'did:sov:none' });
      expect(none.result.data).to.equal(null);
      verifyRead(none, 'did:sov:none', null);
      const noMeta = await read(h, { type: '301', rsType: 'ctx', rsName: 'c', rsVersion: '2.0' });
      expect(noMeta.result.data).to.equal(null);
      verifyRead(noMeta, richSchemaMetadataKey('ctx', 'c', '2.0'), null);
      await readRefused(h, { type: '301', rsType: 'ctx', rsName: 'c', rsVersion: 'x' }, 'FIELD_VERSION_PARTS');
      await readRefused(h, { type: '301', rsType: '5', rsName: 'c', rsVersion: '1.0' }, 'FIELD_ENUM');
      await readRefused(h, { type: '300', id: `6:${TRUSTEE.did}` }, 'RS_ID_RESERVED');
    });
  });
});
