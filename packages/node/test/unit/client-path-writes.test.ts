// The client path's handling of writes beyond the happy path: reply targets kept as long as
// consensus may order the write and released after, REPLY from the ledger for writes learned by catch-up, the node's own NODE_UPGRADE through the
// same intake, forced POOL_CONFIG on receipt (from a client and from a peer's PROPAGATE), and the
// second multi-signature of GET_REVOC_REG_DELTA.
import { expect } from 'chai';
import { waitUntil } from '@quire/testing';
import { b58encode, parseJson, signatureInput } from '@quire/common';
import { type ApplyBatchInput, batchDigest } from '@quire/consensus';
import { parseRequest } from '@quire/requests';
import { attachMultiSignatures } from '../../src/client-replies.js';
import { ClientPath, type ClientChannel } from '../../src/client-path.js';
import { NodeError, NodeErrorCode } from '../../src/errors.js';
import { ForcedRequests } from '../../src/forced-requests.js';
import { nodeSeed } from '../../src/genesis-gen.js';
import { deriveNodeKeys } from '../../src/keys.js';
import { testLogger } from '../../src/logger.js';
import { buildNodeUpgradeRequest } from '../../src/upgrade/index.js';
import { type Fixture, memoryFixture, nymRequest, steward1, trustee, user } from './helpers.js';

interface Recorder extends ClientChannel {
  responses: Record<string, unknown>[];
  pushes: Record<string, unknown>[];
}

function recorder(session?: string): Recorder {
  const r: Recorder = {
    responses: [],
    pushes: [],
    respond: (b) => (r.responses.push(parseJson(new TextDecoder().decode(b)) as Record<string, unknown>), true),
    push: (b) => (r.pushes.push(parseJson(new TextDecoder().decode(b)) as Record<string, unknown>), true),
    ...(session !== undefined ? { session } : {}),
  };
  return r;
}

const enc = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));

function poolConfig(writes: boolean, author = trustee, reqId = 1_700_000_900_000): Record<string, unknown> {
  const req: Record<string, unknown> = { identifier: author.did, reqId, protocolVersion: 2, operation: { type: '111', writes, force: true } };
  req.signature = author.signBase58(signatureInput(req));
  return req;
}

describe('client path: timeouts, catch-up, own requests, forced requests', () => {
  let fx: Fixture;
  let path: ClientPath;
  let submitted: { connId: string; request: Record<string, unknown> }[];
  let clock: number;
  /** digests of the writes consensus holds (ConsensusCore.holdsRequest) */
  let held: Set<string>;
  let ppSeqNo = 0;

  beforeEach(async () => {
    fx = await memoryFixture();
    submitted = [];
    clock = 0;
    held = new Set();
    path = new ClientPath(
      { droppedWriteMemoryMs: 130_000 },
      {
        pipeline: fx.pipeline,
        stores: fx.stores,
        holds: (digest) => held.has(digest),
        submit: (connId, request) => submitted.push({ connId, request }),
        now: () => 1_700_000_000,
        monotonicMs: () => clock,
        logger: testLogger(),
      },
    );
  });

  afterEach(async () => {
    await fx.stores.kv.close();
  });

  async function order(ledgerId: 1 | 2, requests: Record<string, unknown>[]) {
    const digests = requests.map((r) => parseRequest(r).digest);
    const input: ApplyBatchInput = {
      ledgerId,
      requests,
      digests,
      ppTime: 1_700_000_100,
      ppSeqNo: ++ppSeqNo,
      originalViewNo: 0,
      primaries: ['Node1'],
      digest: batchDigest(0, 1_700_000_100, digests, ledgerId),
    };
    const applied = fx.executor.applyBatch(input);
    const committed = fx.executor.commitBatch([]);
    await fx.executor.flush();
    return { applied, committed };
  }

  it('keeps an acknowledged write for as long as consensus holds it: ordered 20 s and 10 min after it was read, it gets its REPLY', async () => {
    for (const [i, orderedAt] of [
      [11, 20_000],
      [12, 600_000],
    ] as const) {
      const ch = recorder();
      const at = clock;
      await path.handle(enc(nymRequest(trustee, user(i))), ch);
      const sent = submitted[submitted.length - 1]!;
      held.add(parseRequest(sent.request).digest);
      path.ack(sent.connId);
      // the sweep runs every second meanwhile (the clients wait 30 s, or longer): past any former reply timeout
      for (clock = at; clock <= at + orderedAt; clock += 5_000) expect(path.expire()).to.equal(0);
      held.delete(parseRequest(sent.request).digest);
      const { committed } = await order(1, [sent.request]);
      await path.ordered(1, [{ seqNo: committed.txns[0]!.seqNo, connIds: [sent.connId] }], []);
      expect(ch.responses.map((r) => r.op)).to.deep.equal(['REQACK']);
      expect(ch.pushes.map((r) => r.op)).to.deep.equal(['REPLY']);
    }
    expect(path.pendingCount).to.equal(0);
  });

  it('keeps the target of a write consensus no longer holds (dropped unordered) as long as consensus may still order it, then releases it', async () => {
    const write = async (i: number): Promise<{ ch: Recorder; connId: string; request: Record<string, unknown>; digest: string }> => {
      const ch = recorder();
      await path.handle(enc(nymRequest(trustee, user(i))), ch);
      const sent = submitted[submitted.length - 1]!;
      const digest = parseRequest(sent.request).digest;
      held.add(digest);
      path.ack(sent.connId);
      return { ch, ...sent, digest };
    };
    const orderNow = async (w: { connId: string; request: Record<string, unknown> }): Promise<void> => {
      const { committed } = await order(1, [w.request]);
      await path.ordered(1, [{ seqNo: committed.txns[0]!.seqNo, connIds: [w.connId] }], []);
    };
    // A: dropped (a full node's stale sweep), taken back and ordered just within droppedWriteMemoryMs: answered
    const a = await write(13);
    clock += 20_000;
    expect(path.expire()).to.equal(0);
    held.delete(a.digest);
    clock += 1_000;
    expect(path.expire()).to.equal(0);
    clock += 129_999;
    expect(path.expire()).to.equal(0);
    await orderNow(a);
    expect(a.ch.pushes.map((r) => r.op)).to.deep.equal(['REPLY']);
    // B: dropped and not back within that time: released, its later ordering goes nowhere
    const b = await write(14);
    held.delete(b.digest);
    clock += 1_000;
    expect(path.expire()).to.equal(0);
    clock += 130_000;
    expect(path.expire()).to.equal(1);
    expect(path.pendingCount).to.equal(0);
    await orderNow(b);
    expect(b.ch.pushes).to.have.length(0);
    // C: dropped, held again, dropped again: its time counts from the last drop
    const c = await write(15);
    held.delete(c.digest);
    clock += 1_000;
    expect(path.expire()).to.equal(0);
    held.add(c.digest);
    clock += 200_000;
    expect(path.expire()).to.equal(0);
    held.delete(c.digest);
    clock += 1_000;
    expect(path.expire()).to.equal(0);
    clock += 129_999;
    expect(path.expire()).to.equal(0);
    clock += 1;
    expect(path.expire()).to.equal(1);
  });

  it('keeps at most maxTargetsPerRequest acknowledged targets of one request: a further copy releases the oldest', async () => {
    path = new ClientPath(
      { maxTargetsPerRequest: 3 },
      {
        pipeline: fx.pipeline,
        stores: fx.stores,
        holds: () => true,
        submit: (connId, request) => submitted.push({ connId, request }),
        now: () => 1_700_000_000,
        monotonicMs: () => clock,
        logger: testLogger(),
      },
    );
    const req = nymRequest(trustee, user(15));
    const other = recorder();
    await path.handle(enc(nymRequest(trustee, user(16))), other);
    path.ack(submitted[0]!.connId);
    const copies: Recorder[] = [];
    for (let i = 0; i < 5; i++) {
      const ch = recorder(`s${i}`);
      copies.push(ch);
      await path.handle(enc(req), ch);
      path.ack(submitted[submitted.length - 1]!.connId);
    }
    expect(path.pendingCount).to.equal(1 + 3);
    const { committed } = await order(1, [submitted[1]!.request, submitted[0]!.request]);
    await path.ordered(
      1,
      [
        { seqNo: committed.txns[0]!.seqNo, connIds: submitted.slice(1).map((x) => x.connId) },
        { seqNo: committed.txns[1]!.seqNo, connIds: [submitted[0]!.connId] },
      ],
      [],
    );
    // the three latest copies and the other request are answered; the two oldest copies were released
    expect(copies.map((c) => c.pushes.length)).to.deep.equal([0, 0, 1, 1, 1]);
    expect(other.pushes).to.have.length(1);
    expect(path.pendingCount).to.equal(0);
  });

  it('answers from the ledger the writes this node learned by catch-up, not by ordering', async () => {
    const ch = recorder();
    const waiting = recorder();
    await path.handle(enc(nymRequest(trustee, user(2))), ch);
    await path.handle(enc(nymRequest(trustee, user(3))), waiting);
    path.ack(submitted[0]!.connId);
    // the first write reaches the ledger without an 'ordered' for this node (as by catch-up)
    await order(1, [submitted[0]!.request]);
    expect(await path.answerCaughtUp()).to.equal(1);
    expect(ch.pushes).to.have.length(1);
    expect(ch.pushes[0]!.op).to.equal('REPLY');
    expect((ch.pushes[0]!.result as { txnMetadata: { seqNo: number } }).txnMetadata.seqNo).to.equal(6);
    expect(ch.pushes[0]!.result).to.have.property('auditPath');
    expect(waiting.pushes).to.have.length(0);
    expect(path.pendingCount).to.equal(1);
  });

  it('drops the reply targets of a closed session', async () => {
    await path.handle(enc(nymRequest(trustee, user(4))), recorder('s1'));
    await path.handle(enc(nymRequest(trustee, user(5))), recorder('s2'));
    path.forgetSession('s1');
    expect(path.pendingCount).to.equal(1);
  });

  it("submits the node's own NODE_UPGRADE through the write intake: resolves on REQACK, rejects on REQNACK", async () => {
    const node1 = deriveNodeKeys('Node1', Buffer.from(nodeSeed('Node1')));
    const req = buildNodeUpgradeRequest(node1.signer, { action: 'in_progress', version: '0.2.0' }, 1_700_000_000_000_001);
    const p = path.submitOwn(req);
    await waitUntil('the request handed to consensus', () => submitted.length === 1);
    expect(submitted[0]!.request).to.deep.include({ identifier: node1.dest });
    path.ack(submitted[0]!.connId);
    await p;
    // a client may not send one
    const ch = recorder();
    await path.handle(enc(req), ch);
    expect(ch.responses[0]!.reason).to.contain('External NODE_UPGRADE requests are not allowed');
    // consensus refuses it
    const p2 = path.submitOwn(buildNodeUpgradeRequest(node1.signer, { action: 'complete', version: '0.2.0' }, 1_700_000_000_000_002));
    await waitUntil('the second request handed to consensus', () => submitted.length === 2);
    path.nackWrite(submitted[1]!.connId, 'pool overloaded');
    const err = await p2.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(NodeError);
    expect((err as NodeError).code).to.equal(NodeErrorCode.OWN_REQUEST_REFUSED);
    // a bad signature never reaches consensus
    const forged = buildNodeUpgradeRequest(node1.signer, { action: 'fail', version: '0.2.0' }, 1_700_000_000_000_003);
    forged.signature = steward1.signBase58(signatureInput(forged));
    const err2 = await path.submitOwn(forged).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err2 as NodeError).code).to.equal(NodeErrorCode.OWN_REQUEST_REFUSED);
    expect(submitted).to.have.length(2);
  });

  it('applies a forced POOL_CONFIG on receipt from a client, once, and still hands it to consensus', async () => {
    const writes: boolean[] = [];
    const forced = new ForcedRequests({
      pipeline: fx.pipeline,
      setWritable: (w) => writes.push(w),
      poolUpgrade: () => undefined,
      now: () => 1_700_000_000,
      logger: testLogger(),
    });
    const p = new ClientPath(
      {},
      {
        pipeline: fx.pipeline,
        stores: fx.stores,
        submit: (connId, request) => submitted.push({ connId, request }),
        onForced: (r, d) => forced.apply(r, d),
        now: () => 1_700_000_000,
        logger: testLogger(),
      },
    );
    const req = poolConfig(false);
    await p.handle(enc(req), recorder());
    await p.handle(enc(req), recorder());
    expect(writes).to.deep.equal([false]);
    expect(submitted).to.have.length(2);
    // the same request arriving as a peer's PROPAGATE is not applied again
    await forced.fromPeer({ op: 'PROPAGATE', request: req, senderClient: 'c1' });
    expect(writes).to.deep.equal([false]);
  });

  it("applies a forced POOL_CONFIG from a peer's PROPAGATE only when it is valid and authorized", async () => {
    const writes: boolean[] = [];
    const forced = new ForcedRequests({
      pipeline: fx.pipeline,
      setWritable: (w) => writes.push(w),
      poolUpgrade: () => undefined,
      now: () => 1_700_000_000,
      logger: testLogger(),
    });
    // a steward may not change the pool config; a non-forced one waits for its commit
    await forced.fromPeer({ op: 'PROPAGATE', request: poolConfig(false, steward1), senderClient: null });
    const unforced: Record<string, unknown> = { identifier: trustee.did, reqId: 5, protocolVersion: 2, operation: { type: '111', writes: false } };
    unforced.signature = trustee.signBase58(signatureInput(unforced));
    await forced.fromPeer({ op: 'PROPAGATE', request: unforced, senderClient: null });
    const tampered = { ...poolConfig(false, trustee, 6), reqId: 7 };
    await forced.fromPeer({ op: 'PROPAGATE', request: tampered, senderClient: null });
    await forced.fromPeer({ op: 'PREPARE', request: poolConfig(false, trustee, 8) });
    await forced.fromPeer('garbage');
    expect(writes).to.deep.equal([]);
    await forced.fromPeer({ op: 'PROPAGATE', request: poolConfig(false, trustee, 9), senderClient: null });
    expect(writes).to.deep.equal([false]);
  });

  it('attaches the multi-signature of the `from` root of GET_REVOC_REG_DELTA as data.stateProofFrom.multi_signature', async () => {
    const rootTo = new Uint8Array(32).fill(7);
    const rootFrom = new Uint8Array(32).fill(9);
    const ms = (root: Uint8Array, ts: number) => ({
      signature: b58encode(new Uint8Array(96).fill(ts % 255)),
      participants: ['Node1', 'Node2', 'Node3'],
      value: {
        ledger_id: 1,
        pool_state_root_hash: b58encode(fx.stores.states[0].committedRoot),
        state_root_hash: b58encode(root),
        timestamp: ts,
        txn_root_hash: b58encode(fx.stores.ledgers[1].root),
      },
    });
    await fx.stores.bls.put(ms(rootTo, 200));
    await fx.stores.bls.put(ms(rootFrom, 100));
    const result: Record<string, unknown> = {
      type: '117',
      data: { revocRegDefId: 'x', value: { accum_to: {}, accum_from: {} }, stateProofFrom: { root_hash: b58encode(rootFrom), proof_nodes: 'AA==' } },
      state_proof: { root_hash: b58encode(rootTo), proof_nodes: 'AA==' },
    };
    attachMultiSignatures(fx.stores, result, { result, stateRoot: { ledgerId: 1, root: rootTo }, stateRootFrom: { ledgerId: 1, root: rootFrom } }, '117', {});
    expect((result.state_proof as Record<string, unknown>).multi_signature).to.deep.equal(ms(rootTo, 200));
    expect(((result.data as Record<string, unknown>).stateProofFrom as Record<string, unknown>).multi_signature).to.deep.equal(ms(rootFrom, 100));
    // no stored multi-signature for the from root: none attached; no stateProofFrom: nothing added
    const r2: Record<string, unknown> = { data: { stateProofFrom: { root_hash: 'x' } }, state_proof: { root_hash: b58encode(rootTo) } };
    attachMultiSignatures(
      fx.stores,
      r2,
      { result: r2, stateRoot: { ledgerId: 1, root: rootTo }, stateRootFrom: { ledgerId: 1, root: new Uint8Array(32) } },
      '117',
      {},
    );
    expect((r2.data as Record<string, Record<string, unknown>>).stateProofFrom).to.not.have.property('multi_signature');
    const r3: Record<string, unknown> = { data: { stateProofFrom: null }, state_proof: {} };
    attachMultiSignatures(fx.stores, r3, { result: r3, stateRoot: { ledgerId: 1, root: rootTo }, stateRootFrom: { ledgerId: 1, root: rootFrom } }, '117', {});
    expect((r3.data as Record<string, unknown>).stateProofFrom).to.equal(null);
  });
});
