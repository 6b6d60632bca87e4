// GET_TXN on the audit ledger (3), as indy-plenum's GetTxnHandler serves it (AUDIT_LEDGER_ID is one of the node's
// ledger ids): the audit txn with `rootHash`, `auditPath` and `ledgerSize` against the current size, its integer map
// keys written as "0", "1"... and no multi-signature (no state root of the audit ledger is ever recorded, so a client
// settles the answer by f+1 matching replies). Through the node's real wiring: openNodeStores, the request pipeline
// and the client path.
import { expect } from 'chai';
import { b58decode, b58encode, encodeMsgpack, isPlainObject, parseJson, restoreAuditIntegerKeys, type Txn as CommonTxn } from '@quire/common';
import { type ApplyBatchInput, batchDigest } from '@quire/consensus';
import { RequestExecutor, RequestPipeline, parseRequest, type Txn } from '@quire/requests';
import { merkleLeafHash, openMemoryKvStore, parseGenesis, verifyInclusion } from '@quire/storage';
import { AuditTrail } from '../../src/audit-trail.js';
import { ClientPath, type ClientChannel } from '../../src/client-path.js';
import { ConsensusExecutor, type NodeStores } from '../../src/consensus-executor.js';
import { poolGenesis, standardDomainGenesis, standardPoolNodes } from '../../src/genesis-gen.js';
import { testLogger } from '../../src/logger.js';
import { openNodeStores } from '../../src/node-setup.js';
import { PoolRegistry } from '../../src/pool-registry.js';
import { PORTS, memoryFixture, nymRequest, trustee, user } from './helpers.js';

type Json = Record<string, unknown>;

function channel(): ClientChannel & { responses: Json[] } {
  const c = {
    responses: [] as Json[],
    respond: (b: Uint8Array) => (c.responses.push(parseJson(new TextDecoder().decode(b)) as Json), true),
    push: () => true,
  };
  return c;
}

const enc = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));

async function ask(path: ClientPath, operation: Json, reqId = 7): Promise<Json> {
  const ch = channel();
  await path.handle(enc({ identifier: trustee.did, reqId, protocolVersion: 2, operation }), ch);
  expect(ch.responses).to.have.length(1);
  return ch.responses[0]!;
}

describe('GET_TXN on the audit ledger', () => {
  let stores: NodeStores;
  let executor: ConsensusExecutor;
  let path: ClientPath;
  let ppSeqNo = 0;

  beforeEach(async () => {
    ppSeqNo = 0;
    // the node's own store wiring (openNodeStores), not a test copy of it
    const opened = await openNodeStores(await openMemoryKvStore());
    stores = opened.stores;
    const reqExecutor = new RequestExecutor({ verifySignatures: true }, { stores: opened.requestStores });
    const pool = parseGenesis(poolGenesis(standardPoolNodes(PORTS)), { file: 'pool', ledgerId: 0 });
    await reqExecutor.applyGenesis(
      0,
      pool.map((e) => e.txn as unknown as Txn),
    );
    await reqExecutor.applyGenesis(
      1,
      parseGenesis(standardDomainGenesis(), { file: 'domain', ledgerId: 1 }).map((e) => e.txn as unknown as Txn),
    );
    const registry = new PoolRegistry();
    for (const e of pool) registry.apply(e.txn);
    executor = new ConsensusExecutor({ durable: false }, { stores, executor: reqExecutor, registry, audit: await AuditTrail.load(stores.ledgers[3]) });
    path = new ClientPath(
      {},
      {
        pipeline: new RequestPipeline(reqExecutor, opened.requestStores),
        stores,
        submit: () => undefined,
        now: () => 1_700_000_000,
        logger: testLogger(),
      },
    );
  });

  afterEach(async () => {
    await stores.kv.close();
  });

  async function order(requests: Json[]): Promise<void> {
    const digests = requests.map((r) => parseRequest(r).digest);
    const ppTime = 1_700_000_100 + ppSeqNo;
    const input: ApplyBatchInput = {
      ledgerId: 1,
      requests,
      digests,
      ppTime,
      ppSeqNo: ++ppSeqNo,
      originalViewNo: 0,
      primaries: ['Node1'],
      digest: batchDigest(0, ppTime, digests, 1),
    };
    executor.applyBatch(input);
    executor.commitBatch([]);
    await executor.flush();
  }

  it('answers an audit txn with its audit path against the current audit ledger, its map keys as decimal strings, and no multi-signature', async () => {
    await order([nymRequest(trustee, user(1))]);
    await order([nymRequest(trustee, user(2)), nymRequest(trustee, user(3))]);
    expect(stores.ledgers[3].size).to.equal(2);
    const domainSize = stores.ledgers[1].size;

    for (const seqNo of [1, 2]) {
      const reply = await ask(path, { type: '3', ledgerId: 3, data: seqNo });
      expect(reply.op).to.equal('REPLY');
      const result = reply.result as Json;
      expect(result).to.include({ type: '3', seqNo, identifier: trustee.did, reqId: 7 });
      // Indy finds no audit-recorded state root for ledger 3, so it attaches no multi-signature: neither do we
      expect(result).to.not.have.property('state_proof');
      const data = result.data as Json;
      const { rootHash, auditPath, ledgerSize, ...entry } = data;
      expect(ledgerSize).to.equal(2);
      expect(rootHash).to.equal(b58encode(stores.ledgers[3].root));
      const txn = entry.txn as Json;
      expect(txn.type).to.equal('2');
      const body = txn.data as Json;
      expect(body.ppSeqNo).to.equal(seqNo);
      expect(Object.keys(body.ledgerSize as Json)).to.include('1');
      if (seqNo === 2) expect((body.ledgerSize as Json)['1']).to.equal(domainSize);
      expect((entry.txnMetadata as Json).seqNo).to.equal(seqNo);
      // the leaf is MP of the txn with its integer keys restored: the path proves it against the signed-size root
      const leaf = merkleLeafHash(encodeMsgpack(restoreAuditIntegerKeys(entry as unknown as CommonTxn)));
      expect(() =>
        verifyInclusion(
          leaf,
          seqNo - 1,
          2,
          (auditPath as string[]).map((h) => b58decode(h)),
          b58decode(rootHash as string),
        ),
      ).to.not.throw();
    }

    const missing = await ask(path, { type: '3', ledgerId: 3, data: 3 });
    expect(missing.op).to.equal('REPLY');
    expect((missing.result as Json).data).to.equal(null);
  });

  it('still refuses a ledger id the node does not have, and leaves GET_TXN of the other ledgers as it was', async () => {
    await order([nymRequest(trustee, user(4))]);
    const bad = await ask(path, { type: '3', ledgerId: 4, data: 1 });
    expect(bad.op).to.equal('REQNACK');
    expect(String(bad.reason)).to.include('Invalid ledger id 4');
    const domain = await ask(path, { type: '3', ledgerId: 1, data: 1 });
    expect(domain.op).to.equal('REPLY');
    const d = (domain.result as Json).data;
    expect(isPlainObject(d) && d.ledgerSize).to.equal(stores.ledgers[1].size);
  });

  it('a request pipeline over stores without an audit ledger refuses ledger 3 with the stable code', async () => {
    const fx = await memoryFixture();
    try {
      const { audit: _audit, ...withoutAudit } = fx.requestStores;
      const pipeline = new RequestPipeline(fx.reqExecutor, withoutAudit);
      const out = await pipeline.receive(
        { identifier: trustee.did, reqId: 8, protocolVersion: 2, operation: { type: '3', ledgerId: 3, data: 1 } },
        { now: 1_700_000_000, writable: true },
      );
      expect(out.kind === 'nack' && out.error.code).to.equal('READ_INVALID_LEDGER');
    } finally {
      await fx.stores.kv.close();
    }
  });
});
