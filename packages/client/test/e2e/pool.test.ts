// The client against real client hosts (@quire/network's ClientHost, the node side of /quire/client/1.0.0) that
// answer canned replies: writes resolve on f+1, f+1 REQNACKs reject, reads fail over from lying nodes, and the
// pool ledger is refreshed by catch-up.
import { expect } from 'chai';
import { POOL_OVERLOADED_REASON, b58encode, parseJson, stringifyJson, type Request } from '@quire/common';
import { ClientHost } from '@quire/network';
import { encodeNymRecord, nymKey, nymReadData, type NymRecord } from '@quire/requests';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../unit/cli.test.js';
import { ClientErrorCode, DidKey, Pool, buildGetNymRequest, buildNymRequest, signRequest } from '../../src/index.js';
import { NODE_NAMES, blsKeys, ledgerWith, nodeDests, nodeSeed, poolGenesis, stateProof, stateWith } from '../unit/fixtures.js';

type Handler = (req: Record<string, unknown>, reply: (m: unknown) => void, push: (m: unknown) => void) => void;

const enc = new TextEncoder();
const trustee = DidKey.fromSeed('000000000000000000000000Trustee1');
const DEST = 'VsKV7grR1BUE29mG2Fm2kX';

describe('Pool over the client protocol (4 client hosts)', function () {
  this.timeout(30_000);
  const hosts: ClientHost[] = [];
  const handlers: (Handler | undefined)[] = [undefined, undefined, undefined, undefined];
  let pool: Pool;

  before(async () => {
    for (let i = 0; i < 4; i++) {
      const h = await ClientHost.create({ seed: enc.encode(nodeSeed(NODE_NAMES[i]!)), host: '127.0.0.1', port: 0 });
      h.on('request', (clientId, bytes, respond, info) => {
        const req = parseJson(bytes) as Record<string, unknown>;
        const send = (m: unknown): void => void respond(enc.encode(stringifyJson(m)));
        const push = (m: unknown): void => void h.push(clientId, enc.encode(stringifyJson(m)), info.requestId);
        handlers[i]?.(req, send, push);
      });
      hosts.push(h);
    }
    pool = await Pool.fromGenesisText(poolGenesis({ ports: hosts.map((h) => h.port) }), { writeTimeoutMs: 5_000, nodeReadTimeoutMs: 2_000 });
  });

  after(async () => {
    await pool?.close();
    await Promise.all(hosts.map((h) => h.close()));
  });

  function txnOf(req: Record<string, unknown>, seqNo: number): Record<string, unknown> {
    const op = req.operation as Record<string, unknown>;
    return {
      ver: '1',
      txn: { type: op.type, protocolVersion: 2, data: { dest: op.dest }, metadata: { from: req.identifier, reqId: req.reqId } },
      txnMetadata: { seqNo, txnTime: 1_700_000_000 },
      reqSignature: { type: 'ED25519', values: [{ from: req.identifier, value: req.signature }] },
      rootHash: 'C2t4zdcHiG3kekqEreK6vpvqwZDoKWRJcX3Q3ryPrPKa',
      auditPath: [],
    };
  }

  it('a write resolves on f+1 matching REPLYs (one node silent, one disagreeing), reqId exact', async () => {
    handlers[0] = (req, reply, push) => {
      reply({ op: 'REQACK', identifier: req.identifier, reqId: req.reqId });
      push({ op: 'REPLY', result: txnOf(req, 7) });
    };
    handlers[1] = (req, reply) => reply({ op: 'REPLY', result: txnOf(req, 7) }); // a duplicate: REPLY at once
    handlers[2] = (req, reply, push) => {
      reply({ op: 'REQACK', identifier: req.identifier, reqId: req.reqId });
      push({ op: 'REPLY', result: txnOf(req, 8) });
    };
    handlers[3] = () => undefined;
    const req = signRequest(buildNymRequest({ submitter: trustee.did, dest: DEST }), trustee);
    const out = await pool.submitWrite(req);
    expect(out.nodes.sort()).to.deep.equal(['Node1', 'Node2']);
    expect(((out.result.txn as Record<string, unknown>).metadata as Record<string, unknown>).reqId).to.equal(req.reqId);
    expect(typeof req.reqId).to.equal('bigint');
  });

  it('a burst of writes sent in one tick all arrive and resolve; equal results match whatever their key order', async () => {
    const seen = [0, 0, 0, 0];
    const reorder = (t: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(t).reverse());
    for (let i = 0; i < 4; i++) {
      handlers[i] = (req, reply, push) => {
        seen[i]!++;
        reply({ op: 'REQACK', identifier: req.identifier, reqId: req.reqId });
        // Node1 and Node2 send the same bytes; Node3 the same result with its keys in another order; Node4 another result
        const txn = txnOf(req, i === 3 ? 99 : 7);
        push({ op: 'REPLY', result: i === 2 ? reorder(txn) : txn });
      };
    }
    const reqs = Array.from({ length: 40 }, (_, i) =>
      signRequest(buildNymRequest({ submitter: trustee.did, dest: b58encode(new Uint8Array(16).fill(i + 1)) }), trustee),
    );
    const outs = await Promise.all(reqs.map((r) => pool.submitWrite(r)));
    expect(seen).to.deep.equal([40, 40, 40, 40]);
    for (const [i, out] of outs.entries()) {
      expect(out.nodes.length).to.be.at.least(2);
      expect(out.nodes).to.not.include('Node4');
      expect(((out.result.txn as Record<string, unknown>).metadata as Record<string, unknown>).reqId).to.equal(reqs[i]!.reqId);
      expect((out.result.txnMetadata as Record<string, unknown>).seqNo).to.equal(7);
    }
    // Node1 silent: the result is confirmed only by Node2 together with Node3's reordered copy
    handlers[0] = () => undefined;
    const one = signRequest(buildNymRequest({ submitter: trustee.did, dest: DEST }), trustee);
    const out = await pool.submitWrite(one);
    expect(out.nodes.sort()).to.deep.equal(['Node2', 'Node3']);
  });

  it('a write rejects on f+1 matching REQNACKs with that reason', async () => {
    const reason = "client request invalid: InvalidClientRequest('x', 1, 'dest should be added')";
    for (let i = 0; i < 4; i++) {
      handlers[i] = (req, reply) =>
        reply(
          i === 3 ? { op: 'REQACK', identifier: req.identifier, reqId: req.reqId } : { op: 'REQNACK', identifier: req.identifier, reqId: req.reqId, reason },
        );
    }
    const req = signRequest(buildNymRequest({ submitter: trustee.did, dest: DEST }), trustee);
    try {
      await pool.submitWrite(req);
      expect.fail('resolved');
    } catch (e) {
      expect((e as { code: string }).code).to.equal(ClientErrorCode.REQUEST_NACKED);
      expect((e as { data: { reason: string } }).data.reason).to.equal(reason);
    }
  });

  it('a write refused as overloaded by f+1 nodes rejects with REQUEST_NACKED at once, though another took it in', async () => {
    // the nodes order only what n-f of them took in: f+1 refusals mean the pool will not order the write
    const asked = [0, 0, 0, 0];
    handlers[0] = (req, reply) => {
      asked[0]!++;
      reply({ op: 'REQACK', identifier: req.identifier, reqId: req.reqId });
    };
    for (let i = 1; i < 4; i++) {
      handlers[i] = (req, reply) => {
        asked[i]!++;
        reply({ op: 'REQNACK', identifier: req.identifier, reqId: req.reqId, reason: POOL_OVERLOADED_REASON });
      };
    }
    const req = signRequest(buildNymRequest({ submitter: trustee.did, dest: DEST }), trustee);
    try {
      await pool.submitWrite(req);
      expect.fail('resolved');
    } catch (e) {
      expect((e as { code: string }).code).to.equal(ClientErrorCode.REQUEST_NACKED);
      expect((e as { data: { reason: string } }).data.reason).to.equal(POOL_OVERLOADED_REASON);
      expect((e as { data: { nodes: string[] } }).data.nodes).to.have.length(2);
    }
    await new Promise((r) => setTimeout(r, 500));
    // nobody is asked again
    expect(asked).to.deep.equal([1, 1, 1, 1]);
  });

  it('a write every node refuses as overloaded rejects with REQUEST_NACKED at once, without asking again', async () => {
    const asked = [0, 0, 0, 0];
    for (let i = 0; i < 4; i++) {
      handlers[i] = (req, reply) => {
        asked[i]!++;
        reply({ op: 'REQNACK', identifier: req.identifier, reqId: req.reqId, reason: POOL_OVERLOADED_REASON });
      };
    }
    const req = signRequest(buildNymRequest({ submitter: trustee.did, dest: DEST }), trustee);
    try {
      await pool.submitWrite(req);
      expect.fail('resolved');
    } catch (e) {
      expect((e as { code: string }).code).to.equal(ClientErrorCode.REQUEST_NACKED);
      expect((e as { data: { reason: string; nodes: string[] } }).data.reason).to.equal(POOL_OVERLOADED_REASON);
      expect((e as { data: { nodes: string[] } }).data.nodes.length).to.be.at.least(2);
    }
    await new Promise((r) => setTimeout(r, 500));
    expect(asked).to.deep.equal([1, 1, 1, 1]);
  });

  it('a write refused as overloaded by f nodes while n-f took it in resolves on their REPLYs', async () => {
    handlers[0] = (req, reply) => reply({ op: 'REQNACK', identifier: req.identifier, reqId: req.reqId, reason: POOL_OVERLOADED_REASON });
    for (let i = 1; i < 4; i++) {
      handlers[i] = (req, reply, push) => {
        reply({ op: 'REQACK', identifier: req.identifier, reqId: req.reqId });
        setTimeout(() => push({ op: 'REPLY', result: txnOf(req, 9) }), 100);
      };
    }
    const req = signRequest(buildNymRequest({ submitter: trustee.did, dest: DEST }), trustee);
    const out = await pool.submitWrite(req);
    expect(out.nodes).to.have.length(2);
    expect(out.nodes).to.not.include('Node1');
    expect((out.result.txnMetadata as Record<string, unknown>).seqNo).to.equal(9);
  });

  it('a write that no f+1 nodes agree on times out', async () => {
    for (let i = 0; i < 4; i++) handlers[i] = (req, reply) => reply({ op: 'REQACK', identifier: req.identifier, reqId: req.reqId });
    const req = signRequest(buildNymRequest({ submitter: trustee.did, dest: DEST }), trustee);
    try {
      await pool.submitWrite(req, { timeoutMs: 500 });
      expect.fail('resolved');
    } catch (e) {
      expect((e as { code: string }).code).to.equal(ClientErrorCode.TIMEOUT);
    }
  });

  it("a write the caller aborts ends with ABORTED at once, not at its deadline, and names the abort's reason", async () => {
    for (let i = 0; i < 4; i++) handlers[i] = (req, reply) => reply({ op: 'REQACK', identifier: req.identifier, reqId: req.reqId });
    const req = signRequest(buildNymRequest({ submitter: trustee.did, dest: DEST }), trustee);
    const ctl = new AbortController();
    const pending = pool.submitWrite(req, { timeoutMs: 60_000, signal: ctl.signal });
    ctl.abort(new Error('shutting down'));
    const e = await pending.then(
      () => expect.fail('resolved'),
      (err: unknown) => err as { code: string; data: Record<string, unknown> },
    );
    expect(e.code).to.equal(ClientErrorCode.ABORTED);
    expect(e.data.reason).to.equal('shutting down');
    // a signal aborted before the call: nothing is sent
    const before = signRequest(buildNymRequest({ submitter: trustee.did, dest: DEST }), trustee);
    const sent: string[] = [];
    for (let i = 0; i < 4; i++) handlers[i] = (r) => void sent.push(String(r.reqId));
    const e2 = await pool.submitWrite(before, { signal: AbortSignal.abort('stop') }).then(
      () => expect.fail('resolved'),
      (err: unknown) => err as { code: string },
    );
    expect(e2.code).to.equal(ClientErrorCode.ABORTED);
    await new Promise((r) => setTimeout(r, 200));
    expect(sent).to.not.include(String(before.reqId));
  });

  it('a read and an action the caller aborts end with ABORTED', async () => {
    for (let i = 0; i < 4; i++) handlers[i] = () => undefined;
    const read = buildGetNymRequest({ dest: DEST });
    const ctl = new AbortController();
    const pending = pool.submitRead(read, { signal: ctl.signal });
    setTimeout(() => ctl.abort(), 50);
    const e = await pending.then(
      () => expect.fail('resolved'),
      (err: unknown) => err as { code: string },
    );
    expect(e.code).to.equal(ClientErrorCode.ABORTED);
    const action = { ...signRequest(buildNymRequest({ submitter: trustee.did, dest: DEST }), trustee), operation: { type: '119' } } as Request;
    const ctl2 = new AbortController();
    const pendingAction = pool.submitAction(action, { signal: ctl2.signal });
    setTimeout(() => ctl2.abort(), 50);
    const e2 = await pendingAction.then(
      () => expect.fail('resolved'),
      (err: unknown) => err as { code: string },
    );
    expect(e2.code).to.equal(ClientErrorCode.ABORTED);
  });

  it('a read fails over from lying nodes to the one whose proof verifies', async () => {
    const now = Math.floor(Date.now() / 1000);
    const rec: NymRecord = { identifier: trustee.did, role: '101', verkey: '~CoRER63DVYnWZtK8uAzNbx', seqNo: 42, txnTime: now - 10 };
    const trie = await stateWith([[nymKey(DEST), encodeNymRecord(rec)]]);
    const honest = (req: Record<string, unknown>, stale = false, tamper = false): Record<string, unknown> => ({
      op: 'REPLY',
      result: {
        ...(req.operation as object),
        identifier: req.identifier,
        reqId: req.reqId,
        data: nymReadData(tamper ? { ...rec, role: '0' } : rec, DEST),
        seqNo: 42,
        txnTime: rec.txnTime,
        state_proof: stateProof(trie, nymKey(DEST), 1, stale ? now - 10_000 : now - 5),
      },
    });
    handlers[0] = (req, reply) => reply(honest(req, false, true)); // tampered value
    handlers[1] = (req, reply) => reply(honest(req, true)); // stale multi-signature
    handlers[2] = () => undefined; // silent
    handlers[3] = (req, reply) => reply(honest(req));
    const out = await pool.submitRead(buildGetNymRequest({ dest: DEST }));
    expect(out.verified).to.equal(true);
    expect(out.nodes).to.deep.equal(['Node4']);
    expect(JSON.parse(out.result.data as string).role).to.equal('101');
    const codes = Object.fromEntries(out.rejected.map((r) => [r.node, r.code]));
    for (const [node, code] of Object.entries(codes)) {
      expect(code).to.equal({ Node1: ClientErrorCode.PROOF_VALUE_MISMATCH, Node2: ClientErrorCode.MULTISIG_STALE, Node3: ClientErrorCode.TIMEOUT }[node]);
    }
  });

  it('a read without proof settles on f+1 identical answers', async () => {
    const answer = (req: Record<string, unknown>, data: unknown): Record<string, unknown> => ({
      op: 'REPLY',
      result: { ...(req.operation as object), identifier: req.identifier, reqId: req.reqId, data, seqNo: null, txnTime: null },
    });
    handlers[0] = (req, reply) => reply(answer(req, null));
    handlers[1] = (req, reply) => reply(answer(req, null));
    handlers[2] = (req, reply) => reply(answer(req, null));
    handlers[3] = (req, reply) => reply(answer(req, 'lie'));
    // a DID this handle never read (it read DEST above: an answer without proof saying DEST is absent would be behind)
    const out = await pool.submitRead(buildGetNymRequest({ dest: DidKey.random().did }) as Request);
    expect(out.verified).to.equal(false);
    expect(out.nodes).to.have.length.of.at.least(2);
    expect(out.result.data).to.equal(null);
  });

  it('refreshes the pool ledger by catch-up: f+1 consistency proofs, verified CATCHUP_REP, new validator set', async () => {
    const full = poolGenesis({ ports: hosts.map((h) => h.port) })
      .trim()
      .split('\n')
      .map((l) => parseJson(l) as Record<string, unknown>);
    // txn 5: Node4 demoted
    full.push({
      reqSignature: {},
      txn: { data: { data: { alias: 'Node4', services: [] }, dest: nodeDests[3] }, metadata: { from: 'TWwCRQRZ2ZHMJFn9TzLp7W' }, type: '0' },
      txnMetadata: { seqNo: 5, txnTime: 1_700_000_100 },
      ver: '1',
    });
    const ledger = await ledgerWith(full, 0);
    const proof = (await ledger.consistencyProof(4, 5)).map(b58encode);
    const root4 = b58encode(await ledger.rootAt(4));
    const root5 = b58encode(ledger.root);
    expect(pool.status().ledgerSize).to.equal(4);
    for (let i = 0; i < 4; i++) {
      handlers[i] = (req, reply) => {
        if (req.op === 'LEDGER_STATUS') {
          if (i === 0)
            reply({
              op: 'CONSISTENCY_PROOF',
              ledgerId: 0,
              seqNoStart: 4,
              seqNoEnd: 9,
              viewNo: 0,
              ppSeqNo: 0,
              oldMerkleRoot: root4,
              newMerkleRoot: root5,
              hashes: proof,
            });
          else
            reply({
              op: 'CONSISTENCY_PROOF',
              ledgerId: 0,
              seqNoStart: 4,
              seqNoEnd: 5,
              viewNo: 0,
              ppSeqNo: 0,
              oldMerkleRoot: root4,
              newMerkleRoot: root5,
              hashes: proof,
            });
        } else if (req.op === 'CATCHUP_REQ') {
          // Node2 serves a forged txn; the others the real one
          const txn = i === 1 ? { ...full[4]!, txn: { ...(full[4]!.txn as object), type: '1' } } : full[4];
          reply({ op: 'CATCHUP_REP', ledgerId: 0, txns: { '5': txn }, consProof: [] });
        }
      };
    }
    expect(pool.status().root).to.equal(root4);
    const r = await pool.refresh();
    expect(r).to.include({ from: 4, to: 5 });
    expect(r.discarded.map((d) => d.node)).to.include('Node1'); // its proof claimed seqNoEnd 9
    const st = pool.status();
    expect(st.root).to.equal(root5);
    expect(st.n).to.equal(3);
    expect(st.validators.map((v) => v.alias)).to.deep.equal(['Node1', 'Node2', 'Node3']);
    expect(st.demoted).to.deep.equal(['Node4']);
    expect(pool.ledger.blsKeys().blsKeys.size).to.equal(3);
    expect(blsKeys).to.have.length(4);
  });
  it('the CLI: a verified read prints the data; a refused write prints the reason and exits non-zero', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quire-e2e-'));
    const genesis = join(dir, 'pool_transactions_genesis');
    writeFileSync(genesis, poolGenesis({ ports: hosts.map((h) => h.port) }));
    const now = Math.floor(Date.now() / 1000);
    const rec: NymRecord = { identifier: trustee.did, role: null, verkey: '~CoRER63DVYnWZtK8uAzNbx', seqNo: 9, txnTime: now - 10 };
    const trie = await stateWith([[nymKey(DEST), encodeNymRecord(rec)]]);
    for (let i = 0; i < 4; i++) {
      handlers[i] = (req, reply) => {
        const op = req.operation as Record<string, unknown>;
        if (op.type === '105') {
          reply({
            op: 'REPLY',
            result: {
              ...op,
              identifier: req.identifier,
              reqId: req.reqId,
              data: nymReadData(rec, DEST),
              seqNo: 9,
              txnTime: rec.txnTime,
              state_proof: stateProof(trie, nymKey(DEST), 1, now - 5),
            },
          });
        } else reply({ op: 'REQNACK', identifier: req.identifier, reqId: req.reqId, reason: 'insufficient number of valid signatures' });
      };
    }
    const r = await runCli(['--genesis', genesis, 'get-nym', '--dest', DEST]);
    expect(r.code, r.err.join('\n')).to.equal(0);
    expect(r.out.join('\n')).to.contain('~CoRER63DVYnWZtK8uAzNbx').and.contain('verified by state proof');
    const j = await runCli(['--genesis', genesis, '--json', 'get-nym', '--dest', DEST]);
    expect(j.code).to.equal(0);
    expect((parseJson(j.out[0]!) as { reqId: unknown }).reqId).to.be.a('bigint');
    const w = await runCli(['--genesis', genesis, '--seed', '000000000000000000000000Trustee1', 'nym', '--dest', DEST]);
    expect(w.code).to.equal(1);
    expect(w.err.join('\n')).to.contain('insufficient number of valid signatures');
  });
});

describe('Pool against client hosts that refuse at the transport', function () {
  this.timeout(30_000);
  const hosts: ClientHost[] = [];
  const handlers: (Handler | undefined)[] = [undefined, undefined];
  let pool: Pool;

  before(async () => {
    // Node1 rate-limits every request, Node2 refuses every request as one too many in flight; Node3 and Node4 answer
    // through `handlers`
    const limits = [{ clientRate: 0, clientBurst: 0 }, { maxPendingPerSession: 0 }, {}, {}];
    for (let i = 0; i < 4; i++) {
      const h = await ClientHost.create({ seed: enc.encode(nodeSeed(NODE_NAMES[i]!)), host: '127.0.0.1', port: 0, ...limits[i] });
      h.on('request', (_clientId, bytes, respond) => {
        const req = parseJson(bytes) as Record<string, unknown>;
        handlers[i - 2]?.(
          req,
          (m) => void respond(enc.encode(stringifyJson(m))),
          () => undefined,
        );
      });
      hosts.push(h);
    }
    pool = await Pool.fromGenesisText(poolGenesis({ ports: hosts.map((h) => h.port) }), { writeTimeoutMs: 15_000 });
  });

  after(async () => {
    await pool?.close();
    await Promise.all(hosts.map((h) => h.close()));
  });

  const refusals = [
    { node: 'Node1', code: 'RATE_LIMITED', reason: 'rate limited' },
    { node: 'Node2', code: 'TOO_MANY_PENDING', reason: 'too many requests in flight' },
  ];
  const errorsOf = (e: unknown): unknown[] => [...(e as { data: { errors: { node: string }[] } }).data.errors].sort((a, b) => a.node.localeCompare(b.node));

  it('TIMEOUT names each refusing node with its own refusal code and reason', async () => {
    handlers[0] = handlers[1] = () => undefined;
    const req = signRequest(buildNymRequest({ submitter: trustee.did, dest: DEST }), trustee);
    try {
      await pool.submitWrite(req, { timeoutMs: 4_000 }); // long enough for the refusals on a busy machine
      expect.fail('resolved');
    } catch (e) {
      expect((e as { code: string }).code).to.equal(ClientErrorCode.TIMEOUT);
      expect(errorsOf(e)).to.deep.equal(refusals);
    }
  });

  it('a write every node refused, by REQNACK or at the transport, fails with REQUEST_NACKED "pool overloaded" (nobody holds it)', async () => {
    handlers[0] = (req, reply) => reply({ op: 'REQNACK', identifier: req.identifier, reqId: req.reqId, reason: 'first reason' });
    handlers[1] = (req, reply) => reply({ op: 'REQNACK', identifier: req.identifier, reqId: req.reqId, reason: 'second reason' });
    const req = signRequest(buildNymRequest({ submitter: trustee.did, dest: DEST }), trustee);
    try {
      await pool.submitWrite(req);
      expect.fail('resolved');
    } catch (e) {
      // the refusals of the transport (RATE_LIMITED, TOO_MANY_PENDING) count like REQNACKs "pool overloaded": the
      // client backs off instead of reading NO_CONSENSUS
      expect((e as { code: string }).code).to.equal(ClientErrorCode.REQUEST_NACKED);
      const data = (e as { data: { reason: string; nodes: string[] } }).data;
      expect(data.reason).to.equal('pool overloaded');
      expect([...data.nodes].sort()).to.deep.equal(refusals.map((r) => r.node));
    }
  });
});

describe('Pool against client hosts that refuse for now (a write another node took in)', function () {
  this.timeout(30_000);
  const hosts: ClientHost[] = [];
  const handlers: (Handler | undefined)[] = [undefined, undefined, undefined, undefined];
  let pool: Pool;

  before(async () => {
    // Node1 and Node2 take one request every 500 ms (burst 1); Node3 and Node4 take everything
    const limits = [{ clientRate: 2, clientBurst: 1 }, { clientRate: 2, clientBurst: 1 }, {}, {}];
    for (let i = 0; i < 4; i++) {
      const h = await ClientHost.create({ seed: enc.encode(nodeSeed(NODE_NAMES[i]!)), host: '127.0.0.1', port: 0, ...limits[i] });
      h.on('request', (clientId, bytes, respond, info) => {
        const req = parseJson(bytes) as Record<string, unknown>;
        handlers[i]?.(
          req,
          (m) => void respond(enc.encode(stringifyJson(m))),
          (m) => void h.push(clientId, enc.encode(stringifyJson(m)), info.requestId),
        );
      });
      hosts.push(h);
    }
    pool = await Pool.fromGenesisText(poolGenesis({ ports: hosts.map((h) => h.port) }), { writeTimeoutMs: 10_000 });
  });

  after(async () => {
    await pool?.close();
    await Promise.all(hosts.map((h) => h.close()));
  });

  it('a node that refused as rate limited is asked again once another node took the write in, and its REPLY settles it', async () => {
    const txn = (req: Record<string, unknown>): Record<string, unknown> => ({
      txn: { type: '1', data: { dest: DEST }, metadata: { from: req.identifier, reqId: req.reqId } },
      txnMetadata: { seqNo: 9, txnTime: 1_700_000_000 },
    });
    const asked = [0, 0, 0, 0];
    for (const i of [0, 1]) {
      handlers[i] = (req, reply) => {
        asked[i]!++;
        reply({ op: 'REPLY', result: txn(req) });
      };
    }
    // Node3 takes the write in and replies; Node4 never answers: a second REPLY must come from a rate-limited node
    handlers[2] = (req, reply, push) => {
      asked[2]!++;
      reply({ op: 'REQACK', identifier: req.identifier, reqId: req.reqId });
      push({ op: 'REPLY', result: txn(req) });
    };
    handlers[3] = () => void asked[3]!++;
    // spend Node1's and Node2's one token: the write arrives while both refuse it
    const spend = signRequest(buildNymRequest({ submitter: trustee.did, dest: 'Th7MpTaRZVRYnPiabds81Y' }), trustee);
    await pool.submitAction(spend, { nodes: ['Node1', 'Node2'], timeoutMs: 2_000 });
    const req = signRequest(buildNymRequest({ submitter: trustee.did, dest: DEST }), trustee);
    const before = asked[0]! + asked[1]!;
    const out = await pool.submitWrite(req);
    expect(out.nodes).to.have.length(2);
    expect(out.nodes).to.include('Node3');
    expect(
      out.nodes.some((n) => n === 'Node1' || n === 'Node2'),
      'a REPLY of a node asked again',
    ).to.equal(true);
    expect(asked[0]! + asked[1]!).to.be.greaterThan(before); // asked again after the refusals
  });
});
