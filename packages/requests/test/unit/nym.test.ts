import { b58encode, didIndyV2Id, signatureInput, toHex } from '@quire/common';
import type { Ed25519Signer } from '@quire/crypto';
import { expect } from 'chai';
import { nymKey } from '../../src/state-keys.js';
import { nextReqId } from './helpers/harness.js';
import {
  type Harness,
  STEWARDS,
  TRUSTEE,
  accept,
  createHarness,
  newSigner,
  nymOp,
  onLedger,
  refuse,
  signed,
  staticCheck,
  staticRefuses,
} from './domain-helpers.js';

const STEWARD = STEWARDS[0]!;

/** A request multi-signed by `signers` without `identifier` (its author is the joined signer DIDs). */
function multiSignedWithoutIdentifier(signers: Ed25519Signer[], operation: Record<string, unknown>): Record<string, unknown> {
  const req: Record<string, unknown> = { reqId: nextReqId(), operation, protocolVersion: 2 };
  const input = signatureInput(req);
  req.signatures = Object.fromEntries(signers.map((s) => [s.did, s.signBase58(input)]));
  return req;
}

describe('NYM', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness();
  });
  afterEach(() => h.close());

  describe('static validation', () => {
    const user = newSigner();
    const base = { type: '1', dest: user.did };
    const bigDoc = JSON.stringify({ a: 'x'.repeat(10240 - 8) }); // exactly 10240 bytes

    it('accepts the documented shapes', () => {
      const accepted: Record<string, unknown>[] = [
        base,
        { ...base, verkey: user.verkey },
        { ...base, verkey: user.fullVerkey, role: null, alias: 'alice' },
        { ...base, verkey: null },
        ...['0', '2', '101', '201'].map((role) => ({ ...base, role })),
        { ...base, diddocContent: bigDoc },
        { ...base, diddocContent: '{"service":[{"id":"#agent","type":"A"}]}' },
        ...[0, 1, 2].map((version) => ({ ...base, version })),
      ];
      expect(Buffer.byteLength(bigDoc)).to.equal(10240);
      for (const op of accepted) staticCheck(h, signed(TRUSTEE, op));
    });

    const rejected: [string, Record<string, unknown>, string][] = [
      ['dest missing', { type: '1' }, 'FIELD_MISSING'],
      ['dest blank', { type: '1', dest: '' }, 'NYM_DEST_MISSING'],
      ['dest with bad characters', { type: '1', dest: 'O0lI000000000000000000' }, 'FIELD_BASE58_CHARS'],
      ['dest of the wrong length', { type: '1', dest: '3yZ' }, 'FIELD_BASE58_LENGTH'],
      ['verkey neither full nor abbreviated', { ...base, verkey: '~abc' }, 'FIELD_VERKEY'],
      ['verkey of 45 F', { ...base, verkey: 'F'.repeat(45) }, 'FIELD_VERKEY'],
      ['role empty string', { ...base, role: '' }, 'FIELD_ROLE'],
      ['role unknown', { ...base, role: '5' }, 'FIELD_ROLE'],
      ['alias over 256', { ...base, alias: 'a'.repeat(257) }, 'FIELD_TOO_LONG'],
      ['diddocContent not JSON', { ...base, diddocContent: '{nope' }, 'FIELD_INVALID'],
      ['diddocContent not an object', { ...base, diddocContent: '[1]' }, 'FIELD_INVALID'],
      ['diddocContent over 10 KiB of characters', { ...base, diddocContent: JSON.stringify({ a: 'x'.repeat(10240) }) }, 'FIELD_TOO_LONG'],
      ['diddocContent over 10 KiB of UTF-8 bytes', { ...base, diddocContent: JSON.stringify({ a: 'é'.repeat(5200) }) }, 'FIELD_TOO_LONG'],
      ['diddocContent with id at the root', { ...base, diddocContent: '{"id":"did:x"}' }, 'NYM_DIDDOC_ID'],
      ['diddocContent with a #verkey item', { ...base, diddocContent: '{"verificationMethod":[{"id":"did:x#verkey"}]}' }, 'NYM_DIDDOC_VERKEY_FRAGMENT'],
      ['version 3', { ...base, version: 3 }, 'NYM_VERSION_INVALID'],
      ['version as text', { ...base, version: '1' }, 'FIELD_TYPE'],
    ];
    for (const [name, op, code] of rejected) it(`rejects ${name} (${code})`, () => staticRefuses(h, op, code));
  });

  describe('create', () => {
    it('lets a trustee create every role and stores the record', async () => {
      for (const role of ['0', '2', '101', '201', null]) await onLedger(h, role);
      const user = newSigner();
      const txn = await accept(h, signed(TRUSTEE, { ...nymOp(user, '101'), alias: 'al', diddocContent: '{"a":1}' }));
      expect(txn.txnMetadata.txnId).to.equal(toHex(nymKey(user.did)));
      const stored = Buffer.from(h.stores.states[1].get(nymKey(user.did))!).toString();
      expect(stored).to.equal(
        `{"diddocContent":"{\\"a\\":1}","identifier":"${TRUSTEE.did}","role":"101","seqNo":${txn.txnMetadata.seqNo},"txnTime":${txn.txnMetadata.txnTime},"verkey":"${user.verkey}"}`,
      );
    });

    it('lets stewards create endorsers, network monitors and users', async () => {
      for (const role of ['101', '201', null]) await onLedger(h, role, STEWARD);
    });

    const denied: [string, string | null, string | null, string][] = [
      ['a steward creating a trustee', '2', '0', 'AUTH_NOT_ENOUGH_SIGNATURES'],
      ['a steward creating a steward', '2', '2', 'AUTH_NOT_ENOUGH_SIGNATURES'],
      ['an endorser creating an endorser', '101', '101', 'AUTH_OR_FAILED'],
      ['an identity owner creating a user', null, null, 'AUTH_OR_FAILED'],
      ['a network monitor creating a user', '201', null, 'AUTH_OR_FAILED'],
    ];
    for (const [name, authorRole, role, code] of denied) {
      it(`refuses ${name} (${code})`, async () => {
        const author = await onLedger(h, authorRole);
        await refuse(h, signed(author, nymOp(newSigner(), role)), code);
      });
    }

    it('lets an endorser create an identity owner', async () => {
      const endorser = await onLedger(h, '101');
      await onLedger(h, null, endorser);
    });

    it('refuses an off-ledger author creating another DID', async () => {
      // author = the joined signer DIDs, which is not on the ledger and is not dest
      await refuse(h, multiSignedWithoutIdentifier([TRUSTEE, STEWARD], nymOp(newSigner())), 'NYM_OFF_LEDGER_NOT_SELF');
    });

    it('refuses self-creation without a verkey', async () => {
      // A 16-byte DID without a verkey has no key (guardianship): refused at the signature check;
      // without signature checks the dynamic rule refuses it.
      const noSig = await createHarness({ verifySignatures: false });
      try {
        const self = newSigner();
        await refuse(noSig, signed(self, { type: '1', dest: self.did }), 'NYM_OFF_LEDGER_NO_VERKEY');
      } finally {
        await noSig.close();
      }
      const self = newSigner();
      await refuse(h, signed(self, { type: '1', dest: self.did }), 'UNKNOWN_SIGNER');
    });

    it('verifies a self-created 32-byte cryptonym without a verkey against the DID itself', async () => {
      const key = newSigner();
      const cryptonym = b58encode(key.publicKey);
      const op = { type: '1', dest: cryptonym };
      // signed by the cryptonym's key: the signature verifies, the dynamic rule refuses
      await refuse(h, signed(key, op, { identifier: cryptonym }), 'NYM_OFF_LEDGER_NO_VERKEY');
      // signed by another key: the signature itself is refused
      const bad = await refuse(h, signed(newSigner(), op, { identifier: cryptonym }), 'INSUFFICIENT_SIGNATURES');
      expect(bad).to.contain(`did=${cryptonym}`);
    });

    it('refuses self-creation under the default rules and allows it once a trustee permits off-ledger signatures', async () => {
      const self = newSigner();
      await refuse(h, signed(self, nymOp(self)), 'AUTH_OR_FAILED');
      const rule = {
        type: '120',
        auth_type: '1',
        auth_action: 'ADD',
        field: 'role',
        new_value: '',
        constraint: { constraint_id: 'ROLE', role: '*', sig_count: 1, need_to_be_owner: false, off_ledger_signature: true, metadata: {} },
      };
      const r = await h.order(2, [signed(TRUSTEE, rule)]);
      expect(r.results[0]!.valid, (r.results[0] as { reason?: string }).reason).to.equal(true);
      await accept(h, signed(self, nymOp(self)));
      expect(h.executor.idr.getNym(self.did)?.creator).to.equal(self.did);
    });

    it('binds version 1 and 2 DIDs to their verkey', async () => {
      const a = newSigner();
      await accept(h, signed(TRUSTEE, { type: '1', dest: a.did, verkey: a.fullVerkey, version: 1 }));
      const b = newSigner();
      await accept(h, signed(TRUSTEE, { type: '1', dest: didIndyV2Id(b.publicKey), verkey: b.fullVerkey, version: 2 }));
      const c = newSigner();
      await accept(h, signed(TRUSTEE, { type: '1', dest: c.did, verkey: c.fullVerkey, version: 0 }));
    });

    const binding: [string, (s: Ed25519Signer, o: Ed25519Signer) => Record<string, unknown>, string][] = [
      ['version 1 with another key', (s, o) => ({ type: '1', dest: s.did, verkey: o.fullVerkey, version: 1 }), 'NYM_VERSION_1_MISMATCH'],
      ['version 1 with an abbreviated key', (s) => ({ type: '1', dest: s.did, verkey: s.verkey, version: 1 }), 'NYM_VERSION_1_MISMATCH'],
      ['version 1 without a key', (s) => ({ type: '1', dest: s.did, version: 1 }), 'NYM_VERSION_1_MISMATCH'],
      ['version 2 with the version 1 DID', (s) => ({ type: '1', dest: s.did, verkey: s.fullVerkey, version: 2 }), 'NYM_VERSION_2_MISMATCH'],
    ];
    for (const [name, op, code] of binding) {
      it(`refuses ${name} (${code})`, async () => refuse(h, signed(TRUSTEE, op(newSigner(), newSigner())), code));
    }
  });

  describe('update', () => {
    it('refuses setting a version on an existing NYM', async () => {
      const user = await onLedger(h);
      await refuse(h, signed(user, { type: '1', dest: user.did, version: 1 }), 'NYM_VERSION_ON_UPDATE');
    });

    it('lets the owner rotate its key, and the new key then signs', async () => {
      const user = await onLedger(h, '101');
      const next = newSigner();
      await accept(h, signed(user, { type: '1', dest: user.did, verkey: next.fullVerkey }));
      expect(h.executor.idr.getNym(user.did)).to.include({ verkey: next.fullVerkey, role: '101' });
      // the old key no longer authenticates; the new one does (signing as user.did with next's key)
      await refuse(h, signed(user, nymOp(newSigner())), 'INSUFFICIENT_SIGNATURES');
    });

    it('refuses a key rotation by someone else than the owner', async () => {
      const user = await onLedger(h);
      await refuse(h, signed(STEWARD, { type: '1', dest: user.did, verkey: newSigner().verkey }), 'AUTH_NOT_OWNER');
    });

    it('lets the creator set the key of a DID under guardianship', async () => {
      const ward = newSigner();
      await accept(h, signed(TRUSTEE, { type: '1', dest: ward.did }));
      expect(h.executor.idr.ownerOf(ward.did)).to.equal(TRUSTEE.did);
      await accept(h, signed(TRUSTEE, { type: '1', dest: ward.did, verkey: ward.verkey }));
      expect(h.executor.idr.ownerOf(ward.did)).to.equal(ward.did);
    });

    it('refuses a trustee re-sending the role of a steward it does not own (row 57)', async () => {
      await refuse(h, signed(TRUSTEE, { type: '1', dest: STEWARD.did, role: '2' }), 'AUTH_NOT_OWNER');
    });

    it('refuses a steward demoting an endorser', async () => {
      const endorser = await onLedger(h, '101');
      await refuse(h, signed(STEWARD, { type: '1', dest: endorser.did, role: null }), 'AUTH_NOT_ENOUGH_SIGNATURES');
    });

    it('lets only the owner change alias or diddocContent', async () => {
      const user = await onLedger(h);
      await refuse(h, signed(TRUSTEE, { type: '1', dest: user.did, alias: 'x' }), 'AUTH_EMPTY');
      await accept(h, signed(user, { type: '1', dest: user.did, alias: 'x', diddocContent: '{"service":[]}' }));
      const rec = JSON.parse(Buffer.from(h.stores.states[1].get(nymKey(user.did))!).toString());
      expect(rec).to.include({ identifier: TRUSTEE.did, role: null, verkey: user.verkey, diddocContent: '{"service":[]}' });
      expect(rec).to.not.have.property('alias');
    });
  });

  it('scenario (transactions.md §3): absent -> exists -> role reset to none by a trustee -> cannot write', async () => {
    const did = newSigner();
    expect(h.executor.idr.getNym(did.did)).to.equal(undefined);
    const created = await accept(h, signed(TRUSTEE, nymOp(did, '2')));
    expect(h.executor.idr.getNym(did.did)).to.include({ role: '2', verkey: did.verkey, creator: TRUSTEE.did, seqNo: created.txnMetadata.seqNo });
    // exists: only the specified fields change
    await accept(h, signed(did, { type: '1', dest: did.did, diddocContent: '{"service":[]}' }));
    expect(h.executor.idr.getNym(did.did)).to.include({ role: '2', verkey: did.verkey });
    // the steward writes while it has its role
    await onLedger(h, '101', did);
    // a trustee (another one than its creator) resets the role to none
    const trustee2 = await onLedger(h, '0');
    await accept(h, signed(trustee2, { type: '1', dest: did.did, role: null }));
    expect(h.executor.idr.getNym(did.did)).to.include({ role: null, verkey: did.verkey });
    // the DID exists with no role and can no longer write what needs a role
    await refuse(h, signed(did, nymOp(newSigner())), 'AUTH_OR_FAILED');
    await refuse(h, signed(did, { type: '101', data: { name: 's', version: '1.0', attr_names: ['a'] } }), 'AUTH_OR_FAILED');
  });
});
