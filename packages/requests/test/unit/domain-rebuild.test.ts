import { expect } from 'chai';
import { revocRegDefKey } from '../../src/state-keys.js';
import { STEWARDS, TRUSTEE, accept, createHarness, newSigner, nymOp, signed } from './domain-helpers.js';

describe('domain state rebuilt from the ledger', () => {
  it('gives the same root as execution for every domain write type', async () => {
    const h = await createHarness();
    try {
      const issuer = STEWARDS[0]!;
      const user = newSigner();
      await accept(h, signed(TRUSTEE, nymOp(user, '101')));
      await accept(h, signed(user, { type: '1', dest: user.did, diddocContent: '{"service":[]}' }));
      await accept(h, signed(user, { type: '100', dest: user.did, raw: '{"name":"x"}' }));
      await accept(h, signed(user, { type: '100', dest: user.did, enc: 'e' }));
      const s = await accept(h, signed(issuer, { type: '101', data: { name: 's', version: '1.0', attr_names: ['a'] } }));
      await accept(h, signed(issuer, { type: '102', ref: s.txnMetadata.seqNo, signature_type: 'CL', data: { primary: {} } }));
      const credDefId = `${issuer.did}:3:CL:${s.txnMetadata.seqNo}:tag`;
      const id = revocRegDefKey(issuer.did, credDefId, 'CL_ACCUM', 't');
      const value = { issuanceType: 'ISSUANCE_ON_DEMAND', maxCredNum: 5, publicKeys: {}, tailsHash: 'h', tailsLocation: 'l' };
      await accept(h, signed(issuer, { type: '113', id, credDefId, revocDefType: 'CL_ACCUM', tag: 't', value }));
      await accept(h, signed(issuer, { type: '114', revocRegDefId: id, revocDefType: 'CL_ACCUM', value: { accum: 'a1', issued: [3, 1] } }));
      await accept(
        h,
        signed(issuer, { type: '114', revocRegDefId: id, revocDefType: 'CL_ACCUM', value: { accum: 'a2', prevAccum: 'a1', issued: [2], revoked: [3] } }),
      );
      await accept(h, signed(TRUSTEE, { type: '200', id: 'did:sov:c', rsType: 'ctx', rsName: 'c', rsVersion: '1.0', content: '{"@context":{}}' }));
      const before = Buffer.from(h.stores.states[1].committedRoot).toString('hex');
      const rebuilt = await h.executor.rebuildState(1);
      expect(Buffer.from(rebuilt).toString('hex')).to.equal(before);
    } finally {
      await h.close();
    }
  });
});
