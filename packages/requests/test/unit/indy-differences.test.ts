// The deliberate differences from Indy kept by issue #21 (docs/indy-differences.md), pinned so that a change is a
// decision: a CLAIM_DEF without `tag` is accepted and stored under the default tag `tag`; a NODE with Indy's BN254
// BLS key and proof of possession (128 bytes each) is refused, BLS12-381 sizes (48 / 96 bytes) are required.
import { b58encode } from '@quire/common';
import { Ed25519Signer, blsKeyFromSeed, blsProofOfPossession } from '@quire/crypto';
import { expect } from 'chai';
import { claimDefKey } from '../../src/state-keys.js';
import { STEWARDS, TRUSTEE, accept, createHarness, read, signed, staticCheck, staticRefuses, type Harness } from './domain-helpers.js';

describe('deliberate differences from Indy', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness();
  });
  afterEach(() => h.close());

  it('CLAIM_DEF without tag is accepted, stored and read under the default tag "tag"', async () => {
    const issuer = STEWARDS[0]!;
    const schema = await accept(h, signed(issuer, { type: '101', data: { name: 'degree', version: '1.0', attr_names: ['name'] } }));
    const ref = schema.txnMetadata.seqNo;
    const txn = await accept(h, signed(issuer, { type: '102', ref, signature_type: 'CL', data: { primary: { n: '1' } } }));
    expect(txn.txnMetadata.txnId).to.equal(`${issuer.did}:3:CL:${ref}:tag`);
    expect(h.stores.states[1].get(claimDefKey(issuer.did, ref!, 'CL', 'tag'))).to.not.equal(undefined);
    const got = await read(h, { type: '108', origin: issuer.did, ref, signature_type: 'CL' });
    expect(got.result.data).to.deep.equal({ primary: { n: '1' } });
  });

  it("NODE blskey / blskey_pop: Indy's 128-byte BN254 values are refused, BLS12-381 ones accepted", () => {
    const node = Ed25519Signer.fromSeed(`${'0'.repeat(27)}Node9`);
    const bls = blsKeyFromSeed(`${'0'.repeat(27)}Node9`);
    const data = { alias: 'Node9', node_ip: '10.0.0.9', node_port: 9709, client_ip: '10.0.0.9', client_port: 9710, services: ['VALIDATOR'] };
    const good = { blskey: b58encode(bls.publicKey), blskey_pop: b58encode(blsProofOfPossession(bls)) };
    staticCheck(h, signed(TRUSTEE, { type: '0', dest: node.fullVerkey, data: { ...data, ...good } }));
    const bn254 = b58encode(new Uint8Array(128).fill(7));
    staticRefuses(h, { type: '0', dest: node.fullVerkey, data: { ...data, ...good, blskey: bn254 } }, 'FIELD_BASE58_LENGTH');
    staticRefuses(h, { type: '0', dest: node.fullVerkey, data: { ...data, ...good, blskey_pop: bn254 } }, 'FIELD_BASE58_LENGTH');
  });
});
