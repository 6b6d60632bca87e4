// The read path of the pool handle (pool.ts) against four real client hosts (@quire/network's ClientHost) that
// answer as nodes at different points of the ledger: real state tries, real trie proofs and real BLS
// multi-signatures. A node that is behind proves an older state with a valid multi-signature; the handle must not
// return it after it saw a newer state (read your writes, monotonic reads: docs/reliability.md F1), and must prefer
// a verified reply to f+1 unproven ones (F2).
import { expect } from 'chai';
import { parseJson, stringifyJson, type Request } from '@quire/common';
import { ClientHost } from '@quire/network';
import { encodeNymRecord, nymKey, nymReadData, type NymRecord } from '@quire/requests';
import type { StateTrie } from '@quire/storage';
import { ClientError, ClientErrorCode, DidKey, Pool, buildGetNymRequest, buildGetTxnRequest, buildNymRequest, signRequest } from '../../src/index.js';
import { NODE_NAMES, nodeSeed, poolGenesis, stateProof, stateWith } from '../unit/fixtures.js';

type Handler = (req: Record<string, unknown>, reply: (m: unknown) => void, push: (m: unknown) => void) => void;

const enc = new TextEncoder();
const trustee = DidKey.fromSeed('000000000000000000000000Trustee1');
const DEST = 'VsKV7grR1BUE29mG2Fm2kX';
const OTHER = 'Th7MpTaRZVRYnPiabds81Y';
/** The client's clock; the pool's batch times are a little before it. */
const NOW = 1_700_000_300;
/** ppTime of the batch that holds the client's NYM (seqNo 43). */
const T = 1_700_000_200;

const otherRec: NymRecord = { identifier: trustee.did, role: '101', verkey: '~CoRER63DVYnWZtK8uAzNbx', seqNo: 42, txnTime: T - 30 };
const destRec: NymRecord = { identifier: trustee.did, role: null, verkey: '~HmFJvBnJyXL2Pkr9u8Xhtd', seqNo: 43, txnTime: T };

describe('Pool reads never go back behind what the handle has seen (4 client hosts)', function () {
  this.timeout(30_000);
  const hosts: ClientHost[] = [];
  const handlers: (Handler | undefined)[] = [undefined, undefined, undefined, undefined];
  const asked: string[] = [];
  let before43: StateTrie; // the state before the NYM: DEST absent
  let after43: StateTrie; // the state after it
  let pools: Pool[] = [];
  let order = ['Node1', 'Node2', 'Node3', 'Node4'];

  before(async () => {
    before43 = await stateWith([[nymKey(OTHER), encodeNymRecord(otherRec)]]);
    after43 = await stateWith([
      [nymKey(OTHER), encodeNymRecord(otherRec)],
      [nymKey(DEST), encodeNymRecord(destRec)],
    ]);
    for (let i = 0; i < 4; i++) {
      const h = await ClientHost.create({ seed: enc.encode(nodeSeed(NODE_NAMES[i]!)), host: '127.0.0.1', port: 0 });
      h.on('request', (clientId, bytes, respond, info) => {
        const req = parseJson(bytes) as Record<string, unknown>;
        const op = (req.operation as Record<string, unknown> | undefined)?.type;
        if (op === '105') asked.push(NODE_NAMES[i]!);
        const send = (m: unknown): void => void respond(enc.encode(stringifyJson(m)));
        const push = (m: unknown): void => void h.push(clientId, enc.encode(stringifyJson(m)), info.requestId);
        handlers[i]?.(req, send, push);
      });
      hosts.push(h);
    }
  });

  beforeEach(() => {
    asked.length = 0;
    order = ['Node1', 'Node2', 'Node3', 'Node4'];
    handlers.fill(undefined);
  });

  afterEach(async () => {
    await Promise.all(pools.map((p) => p.close()));
    pools = [];
  });

  after(async () => {
    await Promise.all(hosts.map((h) => h.close()));
  });

  /** A pool handle that asks the nodes in `order` (so a test decides who answers first). */
  async function open(): Promise<Pool> {
    const p = await Pool.fromGenesisText(poolGenesis({ ports: hosts.map((h) => h.port) }), {
      writeTimeoutMs: 5_000,
      nodeReadTimeoutMs: 2_000,
      now: () => NOW,
      readOrder: () => order,
    });
    pools.push(p);
    return p;
  }

  /** A GET_NYM reply as a node builds it: its state's record of DEST (or none), the trie proof and the multi-signature it stored for that root. */
  function nymReply(req: Record<string, unknown>, trie: StateTrie, timestamp: number, opts: { proof?: boolean } = {}): Record<string, unknown> {
    const rec = trie === after43 ? destRec : null;
    const result: Record<string, unknown> = {
      ...(req.operation as object),
      identifier: req.identifier,
      reqId: req.reqId,
      data: rec === null ? null : nymReadData(rec, DEST),
      seqNo: rec?.seqNo ?? null,
      txnTime: rec?.txnTime ?? null,
    };
    const sp = stateProof(trie, nymKey(DEST), 1, timestamp);
    if (opts.proof === false) delete sp.multi_signature; // a root without a stored multi-signature: the node sends the proof nodes alone
    result.state_proof = sp;
    return { op: 'REPLY', result };
  }

  /** The write REPLY of the NYM: seqNo 43 in the batch of time T. */
  function writeReply(req: Record<string, unknown>): Record<string, unknown> {
    const op = req.operation as Record<string, unknown>;
    return {
      op: 'REPLY',
      result: {
        ver: '1',
        txn: { type: op.type, protocolVersion: 2, data: { dest: op.dest }, metadata: { from: req.identifier, reqId: req.reqId } },
        txnMetadata: { seqNo: 43, txnTime: T },
        reqSignature: { type: 'ED25519', values: [{ from: req.identifier, value: req.signature }] },
        rootHash: 'C2t4zdcHiG3kekqEreK6vpvqwZDoKWRJcX3Q3ryPrPKa',
        auditPath: [],
      },
    };
  }

  /** Every node answers writes with the REPLY of seqNo 43 and GET_NYM by `read(i)`. */
  function nodes(read: (i: number, req: Record<string, unknown>, reply: (m: unknown) => void) => void): void {
    for (let i = 0; i < 4; i++) {
      handlers[i] = (req, reply) => {
        if ((req.operation as Record<string, unknown>).type === '1') reply(writeReply(req));
        else read(i, req, reply);
      };
    }
  }

  const getNym = (): Request => buildGetNymRequest({ dest: DEST });

  async function writeNym(pool: Pool): Promise<void> {
    await pool.submitWrite(signRequest(buildNymRequest({ submitter: trustee.did, dest: DEST }), trustee));
  }

  it('after its own write, a verified reply from a node whose multi-signature is older is set aside for a current one (F1)', async () => {
    // Node1 is behind: it proves the state before the write, signed 30 s before it (well inside the freshness window)
    nodes((i, req, reply) => reply(i === 0 ? nymReply(req, before43, T - 30) : nymReply(req, after43, T)));
    const pool = await open();
    await writeNym(pool);
    expect(pool.seen(1)).to.deep.equal({ time: T, seqNo: 43 });
    const out = await pool.submitRead(getNym());
    expect(out.verified).to.equal(true);
    expect(out.nodes).to.deep.equal(['Node2']);
    expect(JSON.parse(out.result.data as string).seqNo).to.equal(43);
    expect(out.rejected).to.deep.equal([{ node: 'Node1', code: ClientErrorCode.REPLY_BEHIND }]);
    expect(asked).to.deep.equal(['Node1', 'Node2']);
  });

  it('a node one batch behind in the same second (equal timestamp) is caught by the seqNo of the key written (F1)', async () => {
    // the batch before the write had the same ppTime: an equal timestamp over the older state
    nodes((i, req, reply) => reply(i === 0 ? nymReply(req, before43, T) : nymReply(req, after43, T)));
    const pool = await open();
    await writeNym(pool);
    const out = await pool.submitRead(getNym());
    expect(out.nodes).to.deep.equal(['Node2']);
    expect(out.result.data).to.be.a('string');
    expect(out.rejected.map((r) => r.code)).to.deep.equal([ClientErrorCode.REPLY_BEHIND]);
  });

  it('when every node that verifies is behind the write, the read fails with READ_BEHIND, never a stale answer (F1)', async () => {
    nodes((_i, req, reply) => reply(nymReply(req, before43, T - 30)));
    const pool = await open();
    await writeNym(pool);
    let err: unknown;
    await pool.submitRead(getNym()).catch((e: unknown) => (err = e));
    expect(err).to.be.instanceOf(ClientError);
    expect((err as ClientError).code).to.equal(ClientErrorCode.READ_BEHIND);
    const data = (err as ClientError).data as { ledgerId: number; seen: unknown; behind: { node: string; timestamp: number }; errors: { code: string }[] };
    expect(data.ledgerId).to.equal(1);
    expect(data.seen).to.deep.equal({ time: T, seqNo: 43 });
    expect(data.behind).to.include({ node: 'Node1', timestamp: T - 30 });
    expect(data.errors.map((e) => e.code)).to.deep.equal(Array(4).fill(ClientErrorCode.REPLY_BEHIND));
    // the same answers are valid proofs: a handle that saw nothing accepts them
    const fresh = await open();
    const out = await fresh.submitRead(getNym());
    expect(out).to.include({ verified: true });
    expect(out.result.data).to.equal(null);
  });

  it('monotonic reads: an older multi-signature is accepted only over a root already read; a key never goes back (F1)', async () => {
    const pool = await open();
    // 1. Node1 proves DEST at seqNo 43, signed at T + 10
    nodes((_i, req, reply) => reply(nymReply(req, after43, T + 10)));
    expect((await pool.submitRead(getNym())).nodes).to.deep.equal(['Node1']);
    expect(pool.seen(1)).to.deep.equal({ time: T + 10, seqNo: 43 });
    // 2. Node2 is behind (the state before, at T); Node3 has the same state as Node1 but missed the freshness
    //    batch of T + 10 (its multi-signature for that root is of T + 5): the same state, accepted
    order = ['Node2', 'Node3', 'Node1', 'Node4'];
    nodes((i, req, reply) => reply(i === 1 ? nymReply(req, before43, T) : i === 2 ? nymReply(req, after43, T + 5) : nymReply(req, after43, T + 10)));
    const second = await pool.submitRead(getNym());
    expect(second.nodes).to.deep.equal(['Node3']);
    expect(second.rejected).to.deep.equal([{ node: 'Node2', code: ClientErrorCode.REPLY_BEHIND }]);
    // 3. Node4 proves the older state signed in the same second T + 10: DEST was read at seqNo 43 at that time
    order = ['Node4', 'Node1', 'Node2', 'Node3'];
    nodes((i, req, reply) => reply(i === 3 ? nymReply(req, before43, T + 10) : nymReply(req, after43, T + 10)));
    const third = await pool.submitRead(getNym());
    expect(third.nodes).to.deep.equal(['Node1']);
    expect(third.rejected).to.deep.equal([{ node: 'Node4', code: ClientErrorCode.REPLY_BEHIND }]);
  });

  it('a reply without a multi-signature does not settle the read while another node has a verified one (F2)', async () => {
    // Node1 and Node2 caught up and have no multi-signature for their root yet; Node3 proves it; Node4 is silent
    nodes((i, req, reply) => {
      if (i < 2) reply(nymReply(req, after43, T, { proof: false }));
      else if (i === 2) reply(nymReply(req, after43, T));
    });
    const pool = await open();
    const out = await pool.submitRead(getNym());
    expect(out.verified).to.equal(true);
    expect(out.nodes).to.deep.equal(['Node3']);
    expect(JSON.parse(out.result.data as string).seqNo).to.equal(43);
  });

  it('nodes that show a root before its multi-signature can be read are asked once more before agreement settles the read (F2)', async () => {
    // every node has just committed the batch: its first answer carries the proof nodes without the multi-signature
    const asks = [0, 0, 0, 0];
    nodes((i, req, reply) => reply(nymReply(req, after43, T, { proof: asks[i]!++ > 0 })));
    const pool = await open();
    const out = await pool.submitRead(getNym());
    expect(out.verified).to.equal(true);
    expect(JSON.parse(out.result.data as string).seqNo).to.equal(43);
    expect(asks.every((n) => n >= 1)).to.equal(true);
    expect(Math.max(...asks)).to.equal(2);
  });

  it('only when no node has a proof is the read settled by f+1 identical answers, leaving out those behind the write (F2)', async () => {
    // no node has a multi-signature; Node1 and Node2 answer from the state before the write
    nodes((i, req, reply) => reply(nymReply(req, i < 2 ? before43 : after43, T, { proof: false })));
    const pool = await open();
    await writeNym(pool);
    const out = await pool.submitRead(getNym());
    expect(out.verified).to.equal(false);
    expect([...out.nodes].sort()).to.deep.equal(['Node3', 'Node4']);
    expect(JSON.parse(out.result.data as string).seqNo).to.equal(43);
    expect(
      out.rejected
        .filter((r) => r.code === ClientErrorCode.REPLY_BEHIND)
        .map((r) => r.node)
        .sort(),
    ).to.deep.equal(['Node1', 'Node2']);
    // a handle that saw no write settles on the first f+1 identical answers, as before
    const fresh = await open();
    nodes((_i, req, reply) => reply(nymReply(req, before43, T, { proof: false })));
    const unproven = await fresh.submitRead(getNym());
    expect(unproven).to.include({ verified: false });
    expect(unproven.result.data).to.equal(null);
  });

  it('a GET_TXN "not found" for a seqNo the handle saw acknowledged is not settled by agreement (F2)', async () => {
    // a missing txn has no proof: nodes behind the write say seqNo 43 does not exist
    nodes((_i, req, reply) => reply({ op: 'REPLY', result: { type: '3', identifier: req.identifier, reqId: req.reqId, seqNo: 43, data: null } }));
    const pool = await open();
    await writeNym(pool);
    let err: unknown;
    await pool.submitRead(buildGetTxnRequest({ ledgerId: 1, seqNo: 43 })).catch((e: unknown) => (err = e));
    expect((err as ClientError).code).to.equal(ClientErrorCode.NO_CONSENSUS);
    expect(((err as ClientError).data.errors as { code: string }[]).map((e) => e.code)).to.deep.equal(Array(4).fill(ClientErrorCode.REPLY_BEHIND));
    // seqNo 44 was never seen: f+1 nodes saying it does not exist settle it
    const out = await pool.submitRead(buildGetTxnRequest({ ledgerId: 1, seqNo: 44 }));
    expect(out).to.include({ verified: false });
    expect(out.result.data).to.equal(null);
  });
});
