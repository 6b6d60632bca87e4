// The one check of a received multi-signature (multisig-check.ts), shared by PRE-PREPARE check 12
// and catch-up (#15 F2, F10): properties over random registries and participant lists.
import { expect } from 'chai';
import fc from 'fast-check';
import { b58encode } from '@quire/common';
import { type ConsensusCrypto, type MultiSignature, MultiSigVerdict, checkMultiSignature, quorumsFor } from '@quire/consensus';

const GOOD = b58encode(new Uint8Array(96).fill(5));
const BAD = b58encode(new Uint8Array(96).fill(6));
const ROOT = b58encode(new Uint8Array(32).fill(1));

/** Only the crypto of the context is used: an aggregate "verifies" when it is GOOD. */
function ctxWith(crypto: Partial<ConsensusCrypto>): Parameters<typeof checkMultiSignature>[0] {
  const full: ConsensusCrypto = {
    blsSign: () => GOOD,
    blsVerifyShare: () => true,
    blsAggregate: () => GOOD,
    blsVerifyMulti: (_p, _v, s) => s === GOOD,
    ...crypto,
  };
  return { modules: { crypto: full } } as unknown as Parameters<typeof checkMultiSignature>[0];
}

function ms(participants: string[], signature = GOOD, over: Partial<MultiSignature['value']> = {}): MultiSignature {
  return {
    signature,
    participants,
    value: { ledger_id: 1, pool_state_root_hash: ROOT, state_root_hash: ROOT, timestamp: 1_700_000_000, txn_root_hash: ROOT, ...over },
  };
}

describe('checkMultiSignature (PRE-PREPARE check 12 and catch-up)', () => {
  it('is VALID exactly for n−f or more distinct validators of the registry with an aggregate that verifies (property)', () => {
    const names = (k: number) => Array.from({ length: k }, (_, i) => `Node${i + 1}`);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.array(fc.integer({ min: 1, max: 14 }), { minLength: 1, maxLength: 14 }),
        fc.boolean(),
        (n, picks, good) => {
          const registry = names(n);
          const participants = picks.map((i) => `Node${i}`);
          const distinct = new Set(participants).size === participants.length;
          const members = participants.every((p) => registry.includes(p));
          const enough = new Set(participants).size >= quorumsFor(n).blsSignatures;
          const expected = !distinct || !members || !enough ? MultiSigVerdict.PARTICIPANTS : good ? MultiSigVerdict.VALID : MultiSigVerdict.SIGNATURE;
          return checkMultiSignature(ctxWith({}), ms(participants, good ? GOOD : BAD), registry) === expected;
        },
      ),
    );
  });

  it('never verifies the aggregate of participants that are not all validators at the root', () => {
    let verified = 0;
    const ctx = ctxWith({ blsVerifyMulti: () => (verified++, true) });
    expect(checkMultiSignature(ctx, ms(['Node1', 'Node2', 'Mallory']), ['Node1', 'Node2', 'Node3', 'Node4'])).to.equal(MultiSigVerdict.PARTICIPANTS);
    expect(verified).to.equal(0);
  });

  it('is UNKNOWN_POOL_ROOT without a registry, whatever the signature, and MALFORMED first of all', () => {
    expect(checkMultiSignature(ctxWith({}), ms(['Node1', 'Node2', 'Node3'], BAD), undefined)).to.equal(MultiSigVerdict.UNKNOWN_POOL_ROOT);
    const registry = ['Node1', 'Node2', 'Node3', 'Node4'];
    expect(checkMultiSignature(ctxWith({}), ms(['Node1', 'Node2', 'Node3'], '3'), registry)).to.equal(MultiSigVerdict.MALFORMED);
    expect(checkMultiSignature(ctxWith({}), ms(['Node1', 'Node2', 'Node3'], GOOD, { state_root_hash: b58encode(new Uint8Array(31)) }), undefined)).to.equal(
      MultiSigVerdict.MALFORMED,
    );
  });

  it('takes a crypto failure for a bad signature, never an exception', () => {
    const ctx = ctxWith({
      blsVerifyMulti: () => {
        throw new Error('boom');
      },
    });
    expect(checkMultiSignature(ctx, ms(['Node1', 'Node2', 'Node3']), ['Node1', 'Node2', 'Node3', 'Node4'])).to.equal(MultiSigVerdict.SIGNATURE);
  });
});
