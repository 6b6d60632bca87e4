// The client path over in-memory stores holding the standard genesis: exact REQACK / REQNACK /
// REPLY / REJECT shapes, duplicates answered from the ledger, reads with the multi-signature of
// the read root attached, and the read-only pool refusal.
import { expect } from 'chai';
import { b58decode, b58encode, parseJson, signatureInput } from '@quire/common';
import { type ApplyBatchInput, batchDigest } from '@quire/consensus';
import { parseRequest } from '@quire/requests';
import { merkleLeafHash, verifyInclusion } from '@quire/storage';
import { ClientPath, type ClientChannel } from '../../src/client-path.js';
import { testLogger } from '../../src/logger.js';
import { type Fixture, memoryFixture, nymRequest, steward1, trustee, user } from './helpers.js';

interface Recorder extends ClientChannel {
  responses: Record<string, unknown>[];
  pushes: Record<string, unknown>[];
}

function recorder(): Recorder {
  const r: Recorder = {
    responses: [],
    pushes: [],
    respond: (b) => (r.responses.push(parseJson(new TextDecoder().decode(b)) as Record<string, unknown>), true),
    push: (b) => (r.pushes.push(parseJson(new TextDecoder().decode(b)) as Record<string, unknown>), true),
  };
  return r;
}

const enc = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));

describe('client path', () => {
  let fx: Fixture;
  let path: ClientPath;
  let submitted: { connId: string; request: Record<string, unknown> }[];
  let ppSeqNo = 0;

  beforeEach(async () => {
    fx = await memoryFixture();
    submitted = [];
    ppSeqNo = 0;
    path = new ClientPath(
      {},
      {
        pipeline: fx.pipeline,
        stores: fx.stores,
        submit: (connId, request) => submitted.push({ connId, request }),
        now: () => 1_700_000_000,
        logger: testLogger(),
      },
    );
  });

  afterEach(async () => {
    await fx.stores.kv.close();
  });

  /** orders one domain batch of the given requests through the executor, as consensus would */
  async function order(requests: Record<string, unknown>[]) {
    const digests = requests.map(() => 'ab'.repeat(32));
    const input: ApplyBatchInput = {
      ledgerId: 1,
      requests,
      digests,
      ppTime: 1_700_000_100,
      ppSeqNo: ++ppSeqNo,
      originalViewNo: 0,
      primaries: ['Node1'],
      digest: batchDigest(0, 1_700_000_100, digests, 1),
    };
    const applied = fx.executor.applyBatch(input);
    const committed = fx.executor.commitBatch([]);
    await fx.executor.flush();
    return { applied, committed };
  }

  it('REQNACKs what does not parse, with the request envelope echoed when it can be found', async () => {
    const ch = recorder();
    await path.handle(new TextEncoder().encode('{"identifier":"V4SGRU86Z58d6TV7PBUe6f","reqId":7,'), ch);
    expect(ch.responses).to.have.length(1);
    expect(ch.responses[0]).to.include({ op: 'REQNACK', identifier: 'V4SGRU86Z58d6TV7PBUe6f', reqId: 7 });
    expect(ch.responses[0]!.reason).to.be.a('string').and.not.equal('');
    expect(submitted).to.have.length(0);
  });

  it('REQNACKs a bad signature with the signature text', async () => {
    const req = nymRequest(trustee, user(1));
    req.signature = steward1.signBase58(signatureInput(req));
    const ch = recorder();
    await path.handle(enc(req), ch);
    expect(ch.responses[0]).to.include({ op: 'REQNACK', identifier: trustee.did, reqId: req.reqId });
    expect(ch.responses[0]!.reason).to.match(/insufficient number of valid signatures/);
  });

  it('hands a valid write to consensus, REQACKs it, and pushes the REPLY of formats.md §5.2 after ordering', async () => {
    const req = nymRequest(trustee, user(2));
    const ch = recorder();
    await path.handle(enc(req), ch);
    expect(ch.responses).to.have.length(0);
    expect(submitted).to.have.length(1);
    path.ack(submitted[0]!.connId);
    expect(ch.responses).to.deep.equal([{ op: 'REQACK', identifier: trustee.did, reqId: req.reqId }]);
    const { committed } = await order([submitted[0]!.request]);
    expect(committed.txns).to.have.length(1);
    await path.ordered(1, [{ seqNo: committed.txns[0]!.seqNo, connIds: [submitted[0]!.connId] }], []);
    expect(ch.pushes).to.have.length(1);
    const reply = ch.pushes[0]!;
    expect(reply.op).to.equal('REPLY');
    const result = reply.result as Record<string, unknown>;
    expect(result.txnMetadata).to.deep.include({ seqNo: 6, txnTime: 1_700_000_100 });
    expect((result.txn as { data: Record<string, unknown> }).data).to.include({ dest: user(2).did, verkey: user(2).verkey });
    // rootHash / auditPath prove the txn at size seqNo
    const { rootHash, auditPath, ...txn } = result as { rootHash: string; auditPath: string[] };
    const leaf = merkleLeafHash((await fx.stores.ledgers[1].getEncoded(6)) as Uint8Array);
    expect(b58encode(await fx.stores.ledgers[1].rootAt(6))).to.equal(rootHash);
    expect(() =>
      verifyInclusion(
        leaf,
        5,
        6,
        auditPath.map((h) => b58decode(h)),
        b58decode(rootHash),
      ),
    ).to.not.throw();
    expect(txn).to.have.property('reqSignature');
    expect(path.pendingCount).to.equal(0);
  });

  it('answers a repeated request from the ledger, and REQNACKs the same payload with other signatures', async () => {
    const req = nymRequest(trustee, user(3));
    await order([req]);
    const ch = recorder();
    path['pending'].set('x1', { channel: ch, identifier: trustee.did, reqId: req.reqId as number, answered: false, receivedAt: 0 });
    const parsed = parseRequest(req);
    await path.replyFromLedger('x1', parsed.payloadDigest, parsed.digest);
    expect(ch.responses[0]!.op).to.equal('REPLY');
    expect((ch.responses[0]!.result as { txnMetadata: { seqNo: number } }).txnMetadata.seqNo).to.equal(6);
    path['pending'].set('x2', { channel: ch, identifier: trustee.did, reqId: req.reqId as number, answered: false, receivedAt: 0 });
    await path.replyFromLedger('x2', parsed.payloadDigest, 'cd'.repeat(32));
    expect(ch.responses[1]).to.include({ op: 'REQNACK', identifier: trustee.did, reqId: req.reqId });
    expect(ch.responses[1]!.reason).to.contain('Same txn was already ordered with different signatures or pluggable fields');
  });

  it('REJECTs a write that fails dynamic validation when its batch is ordered', async () => {
    // a steward may not create a trustee
    const req = nymRequest(steward1, user(4), { role: '0' });
    const ch = recorder();
    await path.handle(enc(req), ch);
    path.ack(submitted[0]!.connId);
    const { applied } = await order([submitted[0]!.request]);
    expect(applied.discarded).to.deep.equal([0]);
    await path.ordered(1, [], [{ reason: applied.rejectReasons[0]!, connIds: [submitted[0]!.connId] }]);
    expect(ch.pushes).to.have.length(1);
    expect(ch.pushes[0]).to.include({ op: 'REJECT', identifier: steward1.did, reqId: req.reqId, code: null });
    expect(ch.pushes[0]!.reason).to.match(/^client request invalid: UnauthorizedClientRequest\(/);
  });

  it('answers a read locally with the multi-signature stored for the root it read', async () => {
    await order([nymRequest(trustee, user(5))]);
    const root = b58encode(fx.stores.states[1].committedRoot);
    const ms = {
      signature: b58encode(new Uint8Array(96).fill(1)),
      participants: ['Node1', 'Node2', 'Node3'],
      value: {
        ledger_id: 1,
        pool_state_root_hash: b58encode(fx.stores.states[0].committedRoot),
        state_root_hash: root,
        timestamp: 1_700_000_100,
        txn_root_hash: b58encode(fx.stores.ledgers[1].root),
      },
    };
    await fx.stores.bls.put(ms);
    const ch = recorder();
    await path.handle(enc({ identifier: trustee.did, reqId: 99, protocolVersion: 2, operation: { type: '105', dest: user(5).did } }), ch);
    const r = ch.responses[0]!;
    expect(r.op).to.equal('REPLY');
    const result = r.result as { data: string; reqId: number; identifier: string; state_proof: Record<string, unknown> };
    expect(result).to.include({ reqId: 99, identifier: trustee.did, type: '105', dest: user(5).did });
    expect(JSON.parse(result.data)).to.include({ verkey: user(5).verkey });
    expect(result.state_proof.root_hash).to.equal(root);
    expect(result.state_proof.multi_signature).to.deep.equal(ms);
  });

  it('in read-only mode refuses writes (not reads) with the read-only reason', async () => {
    path.setWritable(false);
    const ch = recorder();
    const req = nymRequest(trustee, user(6));
    await path.handle(enc(req), ch);
    expect(ch.responses[0]).to.include({ op: 'REQNACK', identifier: trustee.did, reqId: req.reqId });
    expect(ch.responses[0]!.reason).to.contain('Pool is in readonly mode, try again in 60 seconds');
    expect(submitted).to.have.length(0);
    await path.handle(enc({ identifier: trustee.did, reqId: 5, protocolVersion: 2, operation: { type: '105', dest: trustee.did } }), ch);
    expect(ch.responses[1]!.op).to.equal('REPLY');
  });

  it('orders an ATTRIB and restores its raw value in the REPLY', async () => {
    const attrib: Record<string, unknown> = {
      identifier: trustee.did,
      reqId: 77,
      protocolVersion: 2,
      operation: { type: '100', dest: trustee.did, raw: '{"endpoint":{"ha":"127.0.0.1:5555"}}' },
    };
    attrib.signature = trustee.signBase58(signatureInput(attrib));
    const { applied, committed } = await order([attrib]);
    expect(applied.discarded).to.deep.equal([]);
    const result = await path.writeResult(1, committed.txns[0]!.seqNo);
    expect((result.txn as { data: Record<string, unknown> }).data.raw).to.equal('{"endpoint":{"ha":"127.0.0.1:5555"}}');
    const stored = (await fx.stores.ledgers[1].get(committed.txns[0]!.seqNo)) as unknown as { txn: { data: { raw: string } } };
    expect(stored.txn.data.raw).to.match(/^[0-9a-f]{64}$/);
  });

  it('refuses actions without an action handler, and REQACKs + REPLYs them with one', async () => {
    const restart: Record<string, unknown> = {
      identifier: trustee.did,
      reqId: 90,
      protocolVersion: 2,
      operation: { type: '118', action: 'start', datetime: '0' },
    };
    restart.signature = trustee.signBase58(signatureInput(restart));
    const ch = recorder();
    await path.handle(enc(restart), ch);
    expect(ch.responses[0]).to.deep.equal({ op: 'REQNACK', identifier: trustee.did, reqId: 90, reason: 'action 118 is not available on this node' });
    const seen: string[] = [];
    const ch2 = recorder();
    const withAction = new ClientPath(
      {},
      {
        pipeline: fx.pipeline,
        stores: fx.stores,
        submit: () => undefined,
        onAction: async (r) => {
          seen.push(r.type);
          return { data: { scheduled: true }, afterReply: () => seen.push(`after:${ch2.pushes.length}`) };
        },
        now: () => 1_700_000_000,
        logger: testLogger(),
      },
    );
    await withAction.handle(enc(restart), ch2);
    // the follow-up runs once the REPLY is out
    expect(seen).to.deep.equal(['118', 'after:1']);
    expect(ch2.responses[0]).to.deep.equal({ op: 'REQACK', identifier: trustee.did, reqId: 90 });
    expect(ch2.pushes[0]).to.deep.include({ op: 'REPLY' });
    expect(ch2.pushes[0]!.result).to.deep.include({ type: '118', reqId: 90, data: { scheduled: true } });
    // without data: result = {...operation, identifier, reqId} (requests.md §8.1)
    const noData = new ClientPath(
      {},
      {
        pipeline: fx.pipeline,
        stores: fx.stores,
        submit: () => undefined,
        onAction: async () => ({}),
        now: () => 1_700_000_000,
        logger: testLogger(),
      },
    );
    const ch3 = recorder();
    await noData.handle(enc(restart), ch3);
    expect(ch3.pushes[0]!.result).to.deep.equal({ type: '118', action: 'start', datetime: '0', identifier: trustee.did, reqId: 90 });
    // a failing action is a REJECT
    const failing = new ClientPath(
      {},
      {
        pipeline: fx.pipeline,
        stores: fx.stores,
        submit: () => undefined,
        onAction: () => Promise.reject(new Error('no restart today')),
        now: () => 1_700_000_000,
        logger: testLogger(),
      },
    );
    const ch4 = recorder();
    await failing.handle(enc(restart), ch4);
    expect(ch4.pushes[0]).to.deep.equal({ op: 'REJECT', identifier: trustee.did, reqId: 90, reason: 'no restart today', code: null });
  });

  it('after stop() takes no new requests', async () => {
    path.stop();
    const ch = recorder();
    await path.handle(enc(nymRequest(trustee, user(7))), ch);
    expect(ch.responses).to.have.length(0);
    expect(submitted).to.have.length(0);
  });
});
