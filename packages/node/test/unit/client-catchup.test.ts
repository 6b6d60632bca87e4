// Pool-ledger catch-up for light clients over the client protocol: LEDGER_STATUS answered with a
// LEDGER_STATUS or a CONSISTENCY_PROOF that verifies from the client's size and root, CATCHUP_REQ
// with a CATCHUP_REP whose txns (keyed by seqNo) and consProof lead to the target root, bounded
// in txns and bytes, and refusals for everything else.
import { expect } from 'chai';
import { b58decode, b58encode, encodeMsgpack, isPlainObject, parseJson } from '@quire/common';
import { merkleLeafHash, merkleRootOfLeafHashes, verifyConsistency } from '@quire/storage';
import { answerClientCatchup, isClientCatchupMessage } from '../../src/client-catchup.js';
import { ClientPath } from '../../src/client-path.js';
import { testLogger } from '../../src/logger.js';
import { type Fixture, memoryFixture } from './helpers.js';

const dec = (b: Uint8Array): Record<string, unknown> => parseJson(new TextDecoder().decode(b)) as Record<string, unknown>;

describe('client catch-up of the pool ledger', () => {
  let fx: Fixture;
  before(async () => {
    fx = await memoryFixture();
  });
  after(async () => {
    await fx.stores.kv.close();
  });

  const pool = () => fx.stores.ledgers[0];
  const status = (txnSeqNo: number, merkleRoot: string) => ({
    op: 'LEDGER_STATUS',
    ledgerId: 0,
    txnSeqNo,
    viewNo: null,
    ppSeqNo: null,
    merkleRoot,
    protocolVersion: 2,
  });

  it('answers a client that is not behind with its own LEDGER_STATUS', async () => {
    const a = await answerClientCatchup(status(4, b58encode(pool().root)), pool());
    expect(a.ok).to.equal(true);
    if (!a.ok) return;
    expect(a.op).to.equal('LEDGER_STATUS');
    expect(dec(a.reply)).to.deep.equal({
      op: 'LEDGER_STATUS',
      ledgerId: 0,
      txnSeqNo: 4,
      viewNo: null,
      ppSeqNo: null,
      merkleRoot: b58encode(pool().root),
      protocolVersion: 2,
    });
  });

  it('answers a client behind with a CONSISTENCY_PROOF that verifies from its size and root (size 0: the new root)', async () => {
    for (const size of [0, 1, 2, 3]) {
      const oldRoot = b58encode(await pool().rootAt(size));
      const a = await answerClientCatchup(status(size, oldRoot), pool());
      expect(a.ok).to.equal(true);
      if (!a.ok) return;
      const m = dec(a.reply);
      expect(m).to.include({
        op: 'CONSISTENCY_PROOF',
        ledgerId: 0,
        seqNoStart: size,
        seqNoEnd: 4,
        oldMerkleRoot: oldRoot,
        newMerkleRoot: b58encode(pool().root),
      });
      const hashes = (m.hashes as string[]).map((h) => b58decode(h));
      if (size === 0) expect(m.hashes).to.deep.equal([b58encode(pool().root)]);
      else expect(() => verifyConsistency(size, 4, b58decode(oldRoot), pool().root, hashes)).to.not.throw();
    }
  });

  it('serves CATCHUP_REP txns keyed by seqNo whose consProof leads to the target root', async () => {
    const a = await answerClientCatchup({ op: 'CATCHUP_REQ', ledgerId: 0, seqNoStart: 2, seqNoEnd: 3, catchupTill: 4 }, pool());
    expect(a.ok).to.equal(true);
    if (!a.ok) return;
    const m = dec(a.reply);
    expect(m.op).to.equal('CATCHUP_REP');
    expect(m.ledgerId).to.equal(0);
    expect(Object.keys(m.txns as object)).to.deep.equal(['2', '3']);
    // the client's check: leaves of its copy + the received txns, consistent with the target
    const leaves = [merkleLeafHash((await pool().getEncoded(1))!)];
    for (const [k, t] of Object.entries(m.txns as Record<string, unknown>)) {
      expect(isPlainObject(t)).to.equal(true);
      expect(JSON.stringify(t)).to.equal(JSON.stringify(await pool().get(Number(k))));
      leaves.push(merkleLeafHash(encodeMsgpack(t)));
    }
    const proof = (m.consProof as string[]).map((h) => b58decode(h));
    expect(() => verifyConsistency(3, 4, merkleRootOfLeafHashes(leaves), pool().root, proof)).to.not.throw();
  });

  it('bounds a CATCHUP_REP by txn count and by bytes, with the proof from the last txn sent', async () => {
    const byCount = await answerClientCatchup({ op: 'CATCHUP_REQ', ledgerId: 0, seqNoStart: 1, seqNoEnd: 4, catchupTill: 4 }, pool(), {
      maxMessageLength: 128 * 1024,
      maxTxns: 2,
    });
    expect(byCount.ok && Object.keys(dec(byCount.reply).txns as object)).to.deep.equal(['1', '2']);
    const one = (await pool().getEncoded(1))!.length;
    // room for about one NODE txn besides the reserved envelope
    const bySize = await answerClientCatchup({ op: 'CATCHUP_REQ', ledgerId: 0, seqNoStart: 1, seqNoEnd: 4, catchupTill: 4 }, pool(), {
      maxMessageLength: 4096 + one * 2 + 200,
      maxTxns: 2000,
    });
    expect(bySize.ok).to.equal(true);
    if (!bySize.ok) return;
    const m = dec(bySize.reply);
    const n = Object.keys(m.txns as object).length;
    expect(n).to.be.within(1, 3);
    expect(bySize.reply.length).to.be.at.most(4096 + one * 2 + 200);
    const proof = (m.consProof as string[]).map((h) => b58decode(h));
    expect(() => verifyConsistency(n, 4, rootsAt[n]!, pool().root, proof)).to.not.throw();
    const tiny = await answerClientCatchup({ op: 'CATCHUP_REQ', ledgerId: 0, seqNoStart: 1, seqNoEnd: 1, catchupTill: 4 }, pool(), {
      maxMessageLength: 4096 + 10,
      maxTxns: 10,
    });
    expect(tiny.ok).to.equal(false);
  });

  const rootsAt: Uint8Array[] = [];
  before(async () => {
    for (let i = 0; i <= 4; i++) rootsAt.push(await pool().rootAt(i));
  });

  it('refuses other ledgers, bad ranges and malformed statuses with a reason', async () => {
    const bad = [
      { op: 'LEDGER_STATUS', ledgerId: 1, txnSeqNo: 0, merkleRoot: 'x' },
      { op: 'LEDGER_STATUS', ledgerId: 0, txnSeqNo: -1, merkleRoot: 'x' },
      { op: 'LEDGER_STATUS', ledgerId: 0, txnSeqNo: 1.5, merkleRoot: 'x' },
      { op: 'LEDGER_STATUS', ledgerId: 0, txnSeqNo: 1 },
      { op: 'CATCHUP_REQ', ledgerId: 0, seqNoStart: 0, seqNoEnd: 2, catchupTill: 4 },
      { op: 'CATCHUP_REQ', ledgerId: 0, seqNoStart: 3, seqNoEnd: 2, catchupTill: 4 },
      { op: 'CATCHUP_REQ', ledgerId: 0, seqNoStart: 1, seqNoEnd: 5, catchupTill: 5 },
      { op: 'CATCHUP_REQ', ledgerId: 0, seqNoStart: 1, seqNoEnd: 3, catchupTill: 2 },
      { op: 'CATCHUP_REQ', ledgerId: 0, seqNoStart: '1', seqNoEnd: 3, catchupTill: 4 },
      { op: 'CATCHUP_REQ', ledgerId: 2, seqNoStart: 1, seqNoEnd: 1, catchupTill: 1 },
    ];
    for (const m of bad) {
      const a = await answerClientCatchup(m, pool());
      expect(a.ok, JSON.stringify(m)).to.equal(false);
      if (!a.ok) expect(a.reason).to.be.a('string').and.not.equal('');
    }
  });

  it('is reached through the client path (a request with an `operation` is not a catch-up message)', async () => {
    expect(isClientCatchupMessage({ op: 'LEDGER_STATUS', ledgerId: 0 })).to.equal(true);
    expect(isClientCatchupMessage({ op: 'LEDGER_STATUS', operation: { type: '1' } })).to.equal(false);
    expect(isClientCatchupMessage({ op: 'REPLY' })).to.equal(false);
    const path = new ClientPath({}, { pipeline: fx.pipeline, stores: fx.stores, submit: () => undefined, now: () => 1_700_000_000, logger: testLogger() });
    const responses: Record<string, unknown>[] = [];
    const ch = { respond: (b: Uint8Array) => (responses.push(dec(b)), true), push: () => true };
    await path.handle(new TextEncoder().encode(JSON.stringify(status(1, b58encode(rootsAt[1]!)))), ch);
    expect(responses[0]).to.include({ op: 'CONSISTENCY_PROOF', seqNoStart: 1, seqNoEnd: 4 });
    await path.handle(new TextEncoder().encode(JSON.stringify({ op: 'CATCHUP_REQ', ledgerId: 1, seqNoStart: 1, seqNoEnd: 1, catchupTill: 1 })), ch);
    expect(responses[1]).to.include({ op: 'REQNACK', identifier: '', reqId: 0 });
    expect(responses[1]!.reason).to.contain('pool ledger');
  });
});
