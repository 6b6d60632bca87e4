// The peer wire's decoder: a PROPAGATE encoding seen again (the same request from another validator) is not decoded
// again, everything else is; what it returns equals what decodeMsgpack returns; what it keeps is bounded.
import { expect } from 'chai';
import fc from 'fast-check';
import { EncodingError, decodeMsgpack, encodeMsgpack, takeDecodedEncoding } from '@quire/common';
import { PeerMessageDecoder, encodePeerMessage } from '../../src/peer-wire.js';

const request = (i: number): Record<string, unknown> => ({
  identifier: 'V4SGRU86Z58d6TV7PBUe6f',
  reqId: 1_700_000_000_000 + i,
  operation: { type: '1', dest: `Dest${String(i).padStart(18, '0')}`, verkey: '~CoRER63DVYnWZtK8uAzNbx' },
  protocolVersion: 2,
  signature: '5'.repeat(87),
});
const propagate = (i: number): Uint8Array => encodePeerMessage({ op: 'PROPAGATE', request: request(i), senderClient: null });

describe('PeerMessageDecoder', () => {
  it('decodes the same PROPAGATE bytes once: later copies get the value decoded first', () => {
    const d = new PeerMessageDecoder();
    const first = d.decode(propagate(1));
    // another validator's copy: other Uint8Array, same bytes
    const again = d.decode(Uint8Array.from(propagate(1)));
    expect(again).to.equal(first);
    expect(d.hits).to.equal(1);
    expect(first).to.deep.equal(decodeMsgpack(propagate(1)));
    const other = d.decode(propagate(2));
    expect(other).to.not.equal(first);
    expect(other).to.deep.equal({ op: 'PROPAGATE', request: request(2), senderClient: null });
    expect(d.hits).to.equal(1);
  });

  it('decodes every other message each time', () => {
    const d = new PeerMessageDecoder();
    const prepare = encodeMsgpack({ op: 'PREPARE', instId: 0, viewNo: 0, ppSeqNo: 3, ppTime: 1, digest: 'd', stateRootHash: 's', txnRootHash: 't' });
    const a = d.decode(prepare);
    const b = d.decode(prepare);
    expect(a).to.deep.equal(b);
    expect(a).to.not.equal(b);
    // a PROPAGATE in another encoding (its map header as a map 16) is decoded as it is, each time
    const canonical = propagate(3);
    const other = new Uint8Array(canonical.length + 2);
    other.set([0xde, 0x00, 0x03], 0);
    other.set(canonical.subarray(1), 3);
    expect(d.decode(other)).to.deep.equal(decodeMsgpack(canonical));
    expect(d.decode(other)).to.not.equal(d.decode(other));
    expect(d.hits).to.equal(0);
    expect(d.size.entries).to.equal(0);
  });

  it("keeps a CATCHUP_REP's txns' bytes for the ledger (takeDecodedEncoding), with or without multiSigs, and no other message's", () => {
    const d = new PeerMessageDecoder();
    const txn = (i: number) => ({ txn: { type: '1', data: { dest: `d${i}` } }, txnMetadata: { seqNo: i }, ver: '1' });
    for (const extra of [{}, { multiSigs: [] }]) {
      const rep = { op: 'CATCHUP_REP', ledgerId: 1, txns: { '5': txn(5), '6': txn(6) }, consProof: [], ...extra };
      const got = d.decode(encodePeerMessage(rep)) as { txns: Record<string, object> };
      expect(got).to.deep.equal(rep);
      for (const i of [5, 6]) {
        const bytes = takeDecodedEncoding(got.txns[String(i)] ?? {});
        expect(bytes !== undefined && Buffer.from(bytes).equals(Buffer.from(encodeMsgpack(txn(i))))).to.equal(true);
      }
    }
    // a PRE-PREPARE's maps at the same depth are not kept
    const pp = d.decode(encodePeerMessage({ op: 'PREPREPARE', a: { b: { c: 1 } } })) as { a: { b: object } };
    expect(takeDecodedEncoding(pp.a.b)).to.equal(undefined);
  });

  it('throws on bytes that do not decode, and keeps nothing of them', () => {
    const d = new PeerMessageDecoder();
    const bad = propagate(4).subarray(0, 40);
    expect(() => d.decode(bad)).to.throw(EncodingError);
    expect(() => d.decode(bad)).to.throw(EncodingError);
    expect(d.size).to.deep.equal({ entries: 0, bytes: 0 });
  });

  it('keeps at most maxEntries encodings and maxBytes of them, the oldest dropped first', () => {
    const d = new PeerMessageDecoder({ maxEntries: 8, maxBytes: 16 * 1024 });
    for (let i = 0; i < 100; i++) d.decode(propagate(i));
    expect(d.size.entries).to.equal(8);
    const recent = d.decode(propagate(99));
    expect(d.hits).to.equal(1);
    expect(recent).to.deep.equal(decodeMsgpack(propagate(99)));
    d.decode(propagate(0));
    expect(d.hits, 'the oldest were dropped').to.equal(1);
    const bySize = new PeerMessageDecoder({ maxEntries: 1000, maxBytes: 8 * propagate(0).length * 16 });
    for (let i = 0; i < 200; i++) bySize.decode(propagate(i));
    expect(bySize.size.bytes).to.be.at.most(8 * propagate(0).length * 16);
    expect(bySize.size.entries).to.be.below(200);
    // an encoding longer than a sixteenth of maxBytes is decoded but not kept
    const small = new PeerMessageDecoder({ maxEntries: 10, maxBytes: 1024 });
    small.decode(propagate(5));
    expect(small.size.entries).to.equal(0);
  });

  it('returns what decodeMsgpack returns, for any message and any repetition', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(20), fc.boolean()), { minLength: 1, maxLength: 60 }), (plan) => {
        const d = new PeerMessageDecoder({ maxEntries: 5, maxBytes: 64 * 1024 });
        for (const [i, isPropagate] of plan) {
          const bytes = isPropagate ? propagate(i) : encodeMsgpack({ op: 'COMMIT', instId: 0, viewNo: 0, ppSeqNo: i, blsSigs: {} });
          expect(d.decode(bytes)).to.deep.equal(decodeMsgpack(bytes));
        }
        expect(d.size.entries).to.be.at.most(5);
      }),
    );
  });
});
