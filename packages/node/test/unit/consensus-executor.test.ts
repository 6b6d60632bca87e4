// The executor consensus drives, over real (in-memory and LevelDB) stores: batches applied to
// uncommitted state with one audit txn each (formats.md §10.1 delta rules), reverted newest first,
// committed in one write, and restored from the audit ledger after a restart.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { MsgpackEncoded, b58encode, decodeMsgpack, encodeMsgpack, signatureInput } from '@quire/common';
import { batchDigest } from '@quire/consensus';
import { Ledger, merkleLeafHash, merkleRootOfLeafHashes, openLevelKvStore } from '@quire/storage';
import { AuditTrail } from '../../src/audit-trail.js';
import { ConsensusExecutor } from '../../src/consensus-executor.js';
import { NodeError, NodeErrorCode } from '../../src/errors.js';
import { memoryFixture, nymRequest, trustee, user } from './helpers.js';

function input(ledgerId: number, requests: Record<string, unknown>[], ppSeqNo: number, ppTime = 1_700_000_000 + ppSeqNo) {
  const digests = requests.map((_, i) => String(i).padStart(64, '0'));
  return { ledgerId, requests, digests, ppTime, ppSeqNo, originalViewNo: 0, primaries: ['Node1'], digest: batchDigest(0, ppTime, digests, ledgerId) };
}

describe('consensus executor', () => {
  it('appends one audit txn per batch with full roots, then deltas for untouched ledgers', async () => {
    const fx = await memoryFixture();
    const ex = fx.executor;
    const a1 = ex.applyBatch(input(1, [nymRequest(trustee, user(10))], 1));
    expect(a1.discarded).to.deep.equal([]);
    // first audit txn: every non-empty ledger is signed (pool and domain), config is empty
    expect(a1.signedLedgers.map((l) => l.ledgerId)).to.deep.equal([0, 1]);
    expect(a1.nodeReg).to.deep.equal(['Node1', 'Node2', 'Node3', 'Node4']);
    ex.commitBatch([]);
    const a2 = ex.applyBatch(input(1, [], 2));
    expect(a2.signedLedgers.map((l) => l.ledgerId)).to.deep.equal([1]);
    ex.commitBatch([]);
    await ex.flush();
    const t1 = (await fx.stores.ledgers[3].get(1)) as unknown as { txn: { data: Record<string, unknown> } };
    const t2 = (await fx.stores.ledgers[3].get(2)) as unknown as { txn: { data: Record<string, unknown> } };
    expect([...(t1.txn.data.ledgerRoot as Map<number, unknown>).keys()]).to.deep.equal([0, 1]);
    expect((t1.txn.data.ledgerSize as Map<number, number>).get(1)).to.equal(6);
    expect(t1.txn.data.primaries).to.deep.equal(['Node1']);
    expect((t2.txn.data.ledgerRoot as Map<number, unknown>).get(0)).to.equal(1);
    expect(typeof (t2.txn.data.ledgerRoot as Map<number, unknown>).get(1)).to.equal('string');
    expect(t2.txn.data.primaries).to.equal(1);
    expect(t2.txn.data.nodeReg).to.equal(1);
    const s = ex.lastAudit()!;
    expect(s).to.include({ ppSeqNo: 2, viewNo: 0, ppTime: 1_700_000_002 });
    expect(s.auditRoot).to.equal(b58encode(fx.stores.ledgers[3].root));
    expect(s.lastUpdate).to.deep.equal({ 0: 1_700_000_001, 1: 1_700_000_002 });
    expect(ex.auditRootAt(1)).to.equal(b58encode(await fx.stores.ledgers[3].rootAt(1)));
    expect(ex.isPayloadCommitted('00'.repeat(32))).to.equal(false);
    await fx.stores.kv.close();
  });

  it('reverts applied batches newest first back to the committed roots', async () => {
    const fx = await memoryFixture();
    const ex = fx.executor;
    const domainRoot = b58encode(fx.stores.states[1].committedRoot);
    const auditRoot = b58encode(fx.stores.ledgers[3].uncommittedRoot);
    ex.applyBatch(input(1, [nymRequest(trustee, user(11))], 1));
    const dup = nymRequest(trustee, user(12));
    const a2 = ex.applyBatch(input(1, [dup, dup], 2));
    // the same payload twice in one batch: the second is discarded
    expect(a2.discarded).to.deep.equal([1]);
    expect(a2.rejectReasons[0]).to.match(/already ordered/);
    ex.revertLastBatch();
    ex.revertLastBatch();
    expect(b58encode(fx.stores.states[1].headRoot)).to.equal(domainRoot);
    expect(fx.stores.ledgers[1].uncommittedSize).to.equal(5);
    expect(b58encode(fx.stores.ledgers[3].uncommittedRoot)).to.equal(auditRoot);
    expect(() => ex.revertLastBatch())
      .to.throw(NodeError)
      .with.property('code', NodeErrorCode.EXECUTOR_STATE);
    expect(() => ex.commitBatch([]))
      .to.throw(NodeError)
      .with.property('code', NodeErrorCode.EXECUTOR_STATE);
    // the reverted request applies again
    expect(ex.applyBatch(input(1, [nymRequest(trustee, user(11))], 1)).discarded).to.deep.equal([]);
    await fx.stores.kv.close();
  });

  it('serves catch-up: statuses, consistency proofs that verify, txn ranges', async () => {
    const fx = await memoryFixture();
    const ex = fx.executor;
    for (let k = 1; k <= 3; k++) {
      ex.applyBatch(input(1, [nymRequest(trustee, user(20 + k))], k));
      ex.commitBatch([]);
    }
    await ex.flush();
    const st = ex.ledgerStatus(1);
    expect(st.size).to.equal(8);
    for (const old of [1, 3, 5, 7]) {
      const proof = ex.consistencyProof(1, old, 8);
      expect(ex.verifyConsistency(old, ex.rootAt(1, old), 8, st.root, proof), `from ${old}`).to.equal(true);
      expect(ex.verifyConsistency(old, ex.rootAt(1, old === 1 ? 2 : old - 1), 8, st.root, proof)).to.equal(false);
    }
    // each stored txn is served as its stored bytes
    const served = ex.txnRange(1, 6, 8);
    expect(served.every((t) => t instanceof MsgpackEncoded)).to.equal(true);
    expect((served as MsgpackEncoded[]).map((t) => t.bytes)).to.deep.equal([6, 7, 8].map((n) => fx.stores.ledgers[1].getEncodedSync(n)));
    const txns = decodeMsgpack(encodeMsgpack(served)) as { txnMetadata: { seqNo: number } }[];
    expect(txns.map((t) => t.txnMetadata.seqNo)).to.deep.equal([6, 7, 8]);
    expect(ex.ledgerTargets().get(1)).to.deep.equal({ size: 8, root: st.root });
    await fx.stores.kv.close();
  });

  it('appends caught-up txns only when they prove against the target', async () => {
    const seeder = await memoryFixture();
    const leecher = await memoryFixture();
    for (let k = 1; k <= 2; k++) {
      seeder.executor.applyBatch(input(1, [nymRequest(trustee, user(30 + k))], k));
      seeder.executor.commitBatch([]);
    }
    await seeder.executor.flush();
    const target = seeder.executor.ledgerStatus(1);
    const audit = seeder.executor.ledgerStatus(3);
    const l = leecher.executor;
    // as the wire gives them (the node's peer wire keeps each txn's bytes, keepMapsAtDepth)
    const first = decodeMsgpack(encodeMsgpack(seeder.executor.txnRange(1, 6, 6)), { keepMapsAtDepth: 1 }) as unknown[];
    // a tampered txn does not prove
    const bad = structuredClone(first) as { txn: { data: Record<string, unknown> } }[];
    bad[0]!.txn.data.verkey = user(99).verkey;
    expect(l.appendCaughtUp(1, bad, seeder.executor.consistencyProof(1, 6, 7), target.size, target.root)).to.equal(false);
    expect(l.ledgerStatus(1).size).to.equal(5);
    expect(l.appendCaughtUp(1, first, seeder.executor.consistencyProof(1, 6, 7), target.size, target.root)).to.equal(true);
    expect(l.appendCaughtUp(1, seeder.executor.txnRange(1, 7, 7), [], target.size, target.root)).to.equal(true);
    expect(l.appendCaughtUp(3, seeder.executor.txnRange(3, 1, 2), [], audit.size, audit.root)).to.equal(true);
    await l.flush();
    expect(l.ledgerStatus(1)).to.deep.equal(target);
    expect(b58encode(leecher.stores.states[1].committedRoot)).to.equal(b58encode(seeder.stores.states[1].committedRoot));
    expect(l.lastAudit()).to.deep.equal(seeder.executor.lastAudit());
    await seeder.stores.kv.close();
    await leecher.stores.kv.close();
  });

  it('serves roots and proofs of any committed size from the hash store, and refuses sizes beyond it', async () => {
    const fx = await memoryFixture();
    const ex = fx.executor;
    for (let k = 1; k <= 4; k++) {
      ex.applyBatch(input(1, [nymRequest(trustee, user(40 + k)), nymRequest(trustee, user(50 + k))], k));
      ex.commitBatch([]);
    }
    // a batch applied, not committed: its txns are not served
    ex.applyBatch(input(1, [nymRequest(trustee, user(60))], 5));
    const l = fx.stores.ledgers[1];
    const leaves = Array.from({ length: 13 }, (_, i) => merkleLeafHash(l.getEncodedSync(i + 1)!));
    for (let n = 0; n <= 13; n++) expect(ex.rootAt(1, n), `root ${n}`).to.equal(b58encode(merkleRootOfLeafHashes(leaves.slice(0, n))));
    for (const m of [0, 1, 5, 8, 12, 13]) {
      expect(ex.verifyConsistency(m, ex.rootAt(1, m), 13, ex.rootAt(1, 13), ex.consistencyProof(1, m, 13)), `${m} -> 13`).to.equal(true);
    }
    for (const [a, b] of [
      [0, 14],
      [3, 2],
      [-1, 4],
      [1.5, 4],
    ] as const) {
      expect(() => ex.consistencyProof(1, a, b), `${a}..${b}`)
        .to.throw(NodeError)
        .with.property('code', NodeErrorCode.EXECUTOR_STATE);
    }
    expect(() => ex.rootAt(1, 14))
      .to.throw(NodeError)
      .with.property('code', NodeErrorCode.EXECUTOR_STATE);
    expect(() => ex.rootAt(7, 1))
      .to.throw(NodeError)
      .with.property('code', NodeErrorCode.EXECUTOR_STATE);
    expect(ex.txnRange(1, 12, 20)).to.have.length(2);
    ex.revertLastBatch();
    await fx.stores.kv.close();
  });

  it('catches up ATTRIB txns: originals restored by the seeder, hashed and kept by the leecher', async () => {
    const seeder = await memoryFixture();
    const leecher = await memoryFixture();
    const owner = user(70);
    let reqId = 1_900_000_000_000;
    const attrib = (op: Record<string, unknown>): Record<string, unknown> => {
      const req: Record<string, unknown> = { identifier: owner.did, reqId: reqId++, protocolVersion: 2, operation: { type: '100', dest: owner.did, ...op } };
      req.signature = owner.signBase58(signatureInput(req));
      return req;
    };
    seeder.executor.applyBatch(input(1, [nymRequest(trustee, owner)], 1));
    seeder.executor.commitBatch([]);
    expect(
      seeder.executor.applyBatch(input(1, [attrib({ raw: '{"endpoint":{"ha":"10.0.0.9:9702"}}' }), attrib({ enc: 'secret' })], 2)).discarded,
    ).to.deep.equal([]);
    seeder.executor.commitBatch([]);
    await seeder.executor.flush();
    const target = seeder.executor.ledgerStatus(1);
    // what goes on the wire carries the originals
    const wire = decodeMsgpack(encodeMsgpack(seeder.executor.txnRange(1, 6, 8))) as { txn: { data: Record<string, unknown> } }[];
    expect(wire[1]!.txn.data.raw).to.equal('{"endpoint":{"ha":"10.0.0.9:9702"}}');
    expect(wire[2]!.txn.data.enc).to.equal('secret');
    // the stored bytes are sent as they are, except for the ATTRIBs restored; a reply is byte for byte the reply of
    // the txns decoded and restored (catchupTxns)
    const served = seeder.executor.txnRange(1, 1, 8);
    expect(served.map((t) => t instanceof MsgpackEncoded).slice(5)).to.deep.equal([true, false, false]);
    const reply = (txns: readonly unknown[]): Uint8Array =>
      encodeMsgpack({ op: 'CATCHUP_REP', ledgerId: 1, txns: Object.fromEntries(txns.map((t, i) => [String(1 + i), t])), consProof: [] });
    expect(reply(served)).to.deep.equal(reply(seeder.reqExecutor.catchupTxns(1, 1, 8)));
    const committed: unknown[] = [];
    const audit = await AuditTrail.load(leecher.stores.ledgers[3]);
    const l = new ConsensusExecutor(
      { durable: false },
      { stores: leecher.stores, executor: leecher.reqExecutor, registry: leecher.registry, audit, onCommitted: (_id, txns) => committed.push(...txns) },
    );
    expect(l.appendCaughtUp(1, wire.slice(0, 2), seeder.executor.consistencyProof(1, 7, 8), target.size, target.root)).to.equal(true);
    expect(l.appendCaughtUp(1, wire.slice(2), [], target.size, target.root)).to.equal(true);
    await l.flush();
    expect(l.ledgerStatus(1)).to.deep.equal(target);
    expect(b58encode(leecher.stores.states[1].committedRoot)).to.equal(b58encode(seeder.stores.states[1].committedRoot));
    // the leecher's ledger and the committed txns it reports hold the hashes; its store the originals
    const stored = [6, 7, 8].map((n) => seeder.stores.ledgers[1].getSync(n));
    expect([6, 7, 8].map((n) => leecher.stores.ledgers[1].getSync(n))).to.deep.equal(stored);
    expect(committed).to.deep.equal(stored);
    expect(await leecher.stores.attributes.get(stored[1]!.txn.data.raw as string)).to.equal('{"endpoint":{"ha":"10.0.0.9:9702"}}');
    expect(await leecher.stores.attributes.get(stored[2]!.txn.data.enc as string)).to.equal('secret');
    // and it serves them in turn as the seeder did
    expect(decodeMsgpack(encodeMsgpack(l.txnRange(1, 6, 8)))).to.deep.equal(wire);
    await seeder.stores.kv.close();
    await leecher.stores.kv.close();
  });

  it('restores the last audit txn (deltas resolved) from a LevelDB after a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'quire-audit-'));
    try {
      const kv = await openLevelKvStore(dir);
      const ledger = await Ledger.open({ ledgerId: 3 }, { kv });
      const trail = await AuditTrail.load(ledger);
      const sizes = new Map([
        [0, 4],
        [1, 5],
        [2, 0],
      ]);
      const roots = new Map([
        [0, 'A'.repeat(44)],
        [1, 'B'.repeat(44)],
        [2, 'C'.repeat(44)],
      ]);
      for (let k = 1; k <= 3; k++) {
        const rec = trail.next({
          ledgerId: 1,
          viewNo: 0,
          ppSeqNo: k,
          ppTime: 100 + k,
          digest: 'd'.repeat(64),
          sizes,
          roots,
          stateRoots: roots,
          primaries: ['Node1'],
          nodeReg: ['Node1', 'Node2'],
        });
        ledger.append([rec.txn as never]);
        await ledger.commit(1);
        trail.commit(rec, b58encode(ledger.root));
      }
      const before = trail.summary();
      await kv.close();
      const kv2 = await openLevelKvStore(dir);
      const again = await AuditTrail.load(await Ledger.open({ ledgerId: 3 }, { kv: kv2 }));
      expect(again.summary()).to.deep.equal(before);
      expect(before).to.deep.include({ ppSeqNo: 3, nodeReg: ['Node1', 'Node2'], lastUpdate: { 0: 101, 1: 103 } });
      await kv2.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
