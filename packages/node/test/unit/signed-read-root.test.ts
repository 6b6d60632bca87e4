// Reads answered at a state root with a multi-signature (#17, the node side of F2): a node whose
// newest committed root has none yet (its batch ordered by catch-up, or its multi-signature not
// written yet) answers at the newest root of the last batches that has one, so the client can
// verify the answer; a node with no signed root at all answers at the committed root as before.
import { expect } from 'chai';
import { b58encode, type MultiSignature } from '@quire/common';
import { batchDigest } from '@quire/consensus';
import { RequestPipeline } from '@quire/requests';
import { memoryFixture, nymRequest, trustee, user } from './helpers.js';

function input(requests: Record<string, unknown>[], ppSeqNo: number) {
  const ppTime = 1_700_000_000 + ppSeqNo;
  const digests = requests.map((_, i) => String(i).padStart(64, '0'));
  return { ledgerId: 1, requests, digests, ppTime, ppSeqNo, originalViewNo: 0, primaries: ['Node1'], digest: batchDigest(0, ppTime, digests, 1) };
}

function multiSig(stateRoot: string): MultiSignature {
  const r = b58encode(new Uint8Array(32).fill(3));
  return {
    signature: b58encode(new Uint8Array(96).fill(8)),
    participants: ['Node1', 'Node2', 'Node3'],
    value: { ledger_id: 1, pool_state_root_hash: r, state_root_hash: stateRoot, timestamp: 1_700_000_001, txn_root_hash: r },
  };
}

const getNym = (did: string, reqId: number) => ({ identifier: trustee.did, reqId, protocolVersion: 2, operation: { type: '105', dest: did } });

describe('reads at the newest signed state root', () => {
  it('a committed root without a multi-signature: the read is answered at the signed root of an earlier batch, with its proof', async () => {
    const fx = await memoryFixture();
    const ex = fx.executor;
    const pipeline = new RequestPipeline(fx.reqExecutor, fx.requestStores, { readRoot: (l) => ex.signedReadRoot(l) });
    const first = user(71);
    const second = user(72);
    // batch 1 with its multi-signature, batch 2 without one
    ex.applyBatch(input([nymRequest(trustee, first)], 1));
    const signedRoot = b58encode(fx.stores.states[1].headRoot);
    ex.commitBatch([multiSig(signedRoot)]);
    ex.applyBatch(input([nymRequest(trustee, second)], 2));
    ex.commitBatch([]);
    await ex.flush();
    const head = b58encode(fx.stores.states[1].committedRoot);
    expect(head).to.not.equal(signedRoot);
    expect(b58encode(ex.signedReadRoot(1))).to.equal(signedRoot);

    const older = await pipeline.receive(getNym(first.did, 1), { now: 1_700_000_010, writable: true });
    expect(older.kind).to.equal('read');
    if (older.kind !== 'read') return;
    expect(b58encode(older.reply.stateRoot!.root)).to.equal(signedRoot);
    expect((older.reply.result.state_proof as { root_hash: string }).root_hash).to.equal(signedRoot);
    expect(older.reply.result.data).to.be.a('string');
    // the second NYM is not at the signed root yet: answered as absent there, with a proof of absence
    const newer = await pipeline.receive(getNym(second.did, 2), { now: 1_700_000_010, writable: true });
    if (newer.kind !== 'read') throw new Error(newer.kind);
    expect(newer.reply.result.data).to.equal(null);
    expect(b58encode(newer.reply.stateRoot!.root)).to.equal(signedRoot);

    // once the head root is signed, reads move to it
    ex.applyBatch(input([], 3));
    const third = b58encode(fx.stores.states[1].headRoot);
    ex.commitBatch([multiSig(third)]);
    await ex.flush();
    expect(b58encode(ex.signedReadRoot(1))).to.equal(third);
    const now = await pipeline.receive(getNym(second.did, 3), { now: 1_700_000_010, writable: true });
    if (now.kind !== 'read') throw new Error(now.kind);
    expect(now.reply.result.data).to.be.a('string');
    await fx.stores.kv.close();
  });

  it('no signed root among the last batches: the committed root, as before', async () => {
    const fx = await memoryFixture();
    const ex = fx.executor;
    ex.applyBatch(input([nymRequest(trustee, user(73))], 1));
    ex.commitBatch([]);
    await ex.flush();
    expect(b58encode(ex.signedReadRoot(1))).to.equal(b58encode(fx.stores.states[1].committedRoot));
    await fx.stores.kv.close();
  });
});
