// The ordered-batch announcement: built from a real ledger, signed by the sender's node key, its
// txns bound to the txn root through the Merkle frontier, and without its txns when too large.
import { expect } from 'chai';
import { AnnouncementError, decodeAnnouncement, verifySender, verifyTxnsAgainstRoot } from '@quire/client';
import { type BatchCommitted, b58encode, encodeMsgpack, type Txn } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { Ledger, openMemoryKvStore } from '@quire/storage';
import { OrderedAnnouncer, type OrderedEffect, encodeAnnouncement } from '../../src/ordered-announcement.js';
import type { NodeStores } from '../../src/consensus-executor.js';
import type { NodeLogger } from '../../src/logger.js';

const POOL_ID = 'PoolId1111111111111111111111111111111111111';
const signer = Ed25519Signer.fromSeed('000000000000000000000000000Node1');

function nym(i: number, pad = 0): Txn {
  return {
    ver: '1',
    txn: { type: '1', protocolVersion: 2, data: { dest: `Dest${i}`, note: 'x'.repeat(pad) }, metadata: { reqId: 1000 + i, from: 'Trustee' } },
    txnMetadata: { txnTime: 1_700_000_000 + i },
    reqSignature: {},
  } as unknown as Txn;
}

/** A ledger of `before` txns, then a batch of `count` txns: the BATCH_COMMITTED of that batch. */
async function batchOf(before: number, count: number, pad = 0): Promise<BatchCommitted> {
  const ledger = await Ledger.open({ ledgerId: 1 }, { kv: await openMemoryKvStore() });
  ledger.append(Array.from({ length: before }, (_, i) => nym(i)));
  await ledger.commit();
  const frontier = ledger.frontierAt(before).map(b58encode);
  ledger.append(Array.from({ length: count }, (_, i) => nym(before + i, pad)));
  await ledger.commit();
  const txns: Record<string, unknown>[] = [];
  for await (const [, t] of ledger.range(before + 1, before + count)) txns.push(t as unknown as Record<string, unknown>);
  return {
    ledgerId: 1,
    instId: 0,
    viewNo: 0,
    originalViewNo: 0,
    ppSeqNo: 9,
    ppTime: 1_700_000_100,
    stateRootHash: b58encode(new Uint8Array(32).fill(7)),
    txnRootHash: b58encode(ledger.root),
    auditTxnRootHash: b58encode(new Uint8Array(32).fill(8)),
    seqNoStart: before + 1,
    seqNoEnd: before + count,
    primaries: ['Node1'],
    nodeReg: ['Node1', 'Node2', 'Node3', 'Node4'],
    digest: 'd'.repeat(64),
    blsMultiSigs: [],
    txns,
    txnFrontier: frontier,
  };
}

const sender = (maxMessageLength = 128 * 1024) => ({ poolId: POOL_ID, name: 'Node1', signer, maxMessageLength });

describe('ordered-batch announcement', () => {
  for (const [before, count] of [
    [0, 1],
    [5, 3],
    [7, 1],
    [8, 8],
    [13, 22],
  ] as const) {
    it(`carries txns ${before + 1}..${before + count} in order, bound to the txn root, signed by the sender`, async () => {
      const msg = await batchOf(before, count);
      const a = decodeAnnouncement(encodeAnnouncement(msg, sender()));
      expect(a).to.include({ op: 'OBSERVED_DATA', msg_type: 'BATCH', sender: 'Node1' });
      expect(a.msg.txns!.map((t) => (t.txnMetadata as { seqNo: number }).seqNo)).to.deep.equal(Array.from({ length: count }, (_, i) => before + 1 + i));
      expect(a.msg.txnsOmitted).to.equal(undefined);
      for (const f of ['primaries', 'nodeReg', 'originalViewNo', 'auditTxnRootHash', 'digest', 'blsMultiSigs'] as const) expect(a.msg).to.have.property(f);
      verifySender(POOL_ID, a, signer.fullVerkey);
      verifyTxnsAgainstRoot(a.msg);
    });
  }

  it('an altered txn, a wrong frontier or a foreign signature is detected', async () => {
    const msg = await batchOf(5, 3);
    const a = decodeAnnouncement(encodeAnnouncement(msg, sender()));
    const tampered = structuredClone(a.msg);
    (tampered.txns![1]!.txn as { data: { dest: string } }).data.dest = 'Forged';
    expect(() => verifyTxnsAgainstRoot(tampered))
      .to.throw(AnnouncementError)
      .with.property('problem', 'txns-mismatch');
    expect(() => verifyTxnsAgainstRoot({ ...a.msg, txnFrontier: a.msg.txnFrontier!.slice(1) }))
      .to.throw(AnnouncementError)
      .with.property('problem', 'txns-mismatch');
    expect(() => verifySender(POOL_ID, { ...a, msg: tampered }, signer.fullVerkey))
      .to.throw(AnnouncementError)
      .with.property('problem', 'bad-signature');
    expect(() => verifySender('OtherPool', a, signer.fullVerkey))
      .to.throw(AnnouncementError)
      .with.property('problem', 'bad-signature');
    const other = Ed25519Signer.fromSeed('000000000000000000000000000Node2');
    expect(() => verifySender(POOL_ID, a, other.fullVerkey))
      .to.throw(AnnouncementError)
      .with.property('problem', 'bad-signature');
  });

  it('leaves the txns out (and says so) when the message would exceed the limit', async () => {
    const msg = await batchOf(2, 4, 20_000);
    const limit = 32 * 1024;
    expect(encodeMsgpack(msg).length).to.be.greaterThan(limit);
    const bytes = encodeAnnouncement(msg, sender(limit));
    expect(bytes.length).to.be.at.most(limit);
    const a = decodeAnnouncement(bytes);
    expect(a.msg.txns).to.equal(undefined);
    expect(a.msg.txnFrontier).to.equal(undefined);
    expect(a.msg).to.include({ txnsOmitted: true, seqNoStart: 3, seqNoEnd: 6, txnRootHash: msg.txnRootHash });
    verifySender(POOL_ID, a, signer.fullVerkey);
    // under the limit, the same batch keeps its txns
    expect(decodeAnnouncement(encodeAnnouncement(msg, sender())).msg.txns).to.have.length(4);
  });

  it('builds and sends nothing while no peer follows the topic', async () => {
    const published: Uint8Array[] = [];
    const failures: string[] = [];
    const log = { debug: (_o: unknown, m: string) => failures.push(m) } as unknown as NodeLogger;
    const eff = { kind: 'ordered', ledgerId: 1, ppSeqNo: 1, replies: [], multiSigs: [] } as unknown as OrderedEffect;
    // stores that cannot be read: an announcement that is built fails (and is logged)
    let audience = 0;
    const a = new OrderedAnnouncer(
      sender(),
      {} as NodeStores,
      async (_t, d) => published.push(d),
      log,
      () => audience,
    );
    a.announce(eff);
    await a.idle();
    expect(failures).to.deep.equal([]);
    audience = 1;
    a.announce(eff);
    await a.idle();
    expect(failures).to.deep.equal(['ordered-batch announcement not published']);
    expect(published).to.deep.equal([]);
  });

  it('refuses malformed input with a typed problem', () => {
    for (const bad of [
      Uint8Array.of(0xc1),
      encodeMsgpack([1, 2]),
      encodeMsgpack({ op: 'OBSERVED_DATA', msg_type: 'BATCH', sender: 'N', signature: 'x', msg: { ledgerId: 'one' } }),
    ]) {
      expect(() => decodeAnnouncement(bad))
        .to.throw(AnnouncementError)
        .with.property('problem', 'malformed');
    }
  });
});
