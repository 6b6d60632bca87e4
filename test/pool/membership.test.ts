// Whole-pool acceptance of membership changes: a new steward adds a 5th node with a NODE txn; it
// catches up and takes part in ordering (the pool of five orders with one of the original nodes
// down, which needs the newcomer's vote); a client that opened the pool before refreshes it and
// sees the new validator; demoted (NODE with no services, through the CLI) it stops taking part.
import { expect } from 'chai';
import { type Request } from '@quire/common';
import { DidKey, buildGetNymRequest, buildNodeRequest, buildNymRequest, signRequest, type Pool } from '@quire/client';
import { TRUSTEE_SEED, deriveNodeKeys, nodeSeed, stewardSeed } from '../../devnet/lib/node-api.js';
import { quireOk, readLedger, readVerifiedFrom } from '../support/client.js';
import { TestPool, type TestNode } from '../support/test-pool.js';
import { secs, waitFor } from '../support/wait.js';

const trustee = DidKey.fromSeed(TRUSTEE_SEED);
const steward5 = DidKey.fromSeed(stewardSeed(5));
const node5Keys = deriveNodeKeys('Node5', Buffer.from(nodeSeed('Node5'), 'utf8'));

function nym(target = DidKey.random()): Request {
  return signRequest(buildNymRequest({ submitter: trustee.did, dest: target.did, verkey: target.verkey }), trustee);
}

/** The validators whose BLS signatures are in the multi-signature of a verified GET_NYM. */
async function signersOf(client: Pool, did: string): Promise<string[]> {
  const r = await client.submitRead(buildGetNymRequest({ dest: did }));
  expect(r.verified).to.equal(true);
  const proof = r.result.state_proof as { multi_signature: { participants: string[] } };
  return [...proof.multi_signature.participants].sort();
}

describe('whole pool: membership (a 5th node added, then demoted)', function () {
  this.timeout(120_000);
  let pool: TestPool;
  let client: Pool;
  let node5: TestNode;
  let fileStarted = 0;

  before(async function () {
    this.timeout(150_000);
    fileStarted = Date.now();
    pool = await TestPool.start({
      name: 'membership',
      spareNodes: 1,
      orderingTimeoutMs: 120_000,
      config: { consensus: { stateFreshnessUpdateIntervalSec: 20 } },
    });
    client = await pool.client();
    console.log(`      [timing] pool ordering ${secs(pool.startMs)} after spawn (${TestPool.binDescription()})`);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') pool?.dumpLogs(`failed: ${this.currentTest.fullTitle()}`);
  });

  after(async () => {
    await pool?.close();
    console.log(`      [timing] membership file: ${secs(Date.now() - fileStarted)} wall time`);
  });

  it('a new steward adds Node5 with a NODE txn, and a client opened before refreshes its pool to five validators', async () => {
    expect(client.status().n).to.equal(4);
    await client.submitWrite(signRequest(buildNymRequest({ submitter: trustee.did, dest: steward5.did, verkey: steward5.verkey, role: '2' }), trustee));
    const ports = pool.portsOf(5);
    const node = buildNodeRequest({
      submitter: steward5.did,
      dest: node5Keys.dest,
      data: {
        alias: 'Node5',
        client_ip: '127.0.0.1',
        client_port: ports.clientPort,
        node_ip: '127.0.0.1',
        node_port: ports.nodePort,
        services: ['VALIDATOR'],
        blskey: node5Keys.blskey,
        blskey_pop: node5Keys.blskey_pop,
      },
    });
    const w = await client.submitWrite(signRequest(node, steward5));
    expect((w.result.txnMetadata as { seqNo: number }).seqNo).to.equal(5);

    const refreshed = await client.refresh();
    expect(refreshed).to.include({ from: 4, to: 5 });
    const st = client.status();
    expect(st.n).to.equal(5);
    expect(st.validators.find((v) => v.alias === 'Node5')).to.include({ dest: node5Keys.dest, bls: true, client: `127.0.0.1:${ports.clientPort}` });
  });

  it('Node5, given the pool ledger as its genesis, catches up and takes part: with Node4 down, five validators still order', async function () {
    this.timeout(150_000);
    // the operator's way: the current pool ledger (read_ledger of a running node) is the new node's pool genesis
    const poolLedger = await waitFor(
      'Node1 to hold 5 pool txns',
      async () => {
        const text = await readLedger(pool.node('Node1').layout.dataDir, 'pool');
        return text.split('\n').filter((l) => l !== '').length === 5 ? text : undefined;
      },
      10_000,
    );
    node5 = (await pool.addNode(5, poolLedger)).node;
    const started = Date.now();
    node5.start();
    await waitFor(
      'Node5 to serve the domain ledger it caught up, with a verified proof',
      async () => {
        const r = await readVerifiedFrom(client, node5, buildGetNymRequest({ dest: steward5.did }));
        return typeof r.result.data === 'string' ? r : undefined;
      },
      90_000,
      500,
    );
    console.log(`      [timing] Node5 started and caught up in ${secs(Date.now() - started)}`);

    // n = 5, f = 1: ordering needs 4 votes; with Node4 down they must include Node5's
    await pool.node('Node4').kill9();
    const target = DidKey.random();
    await client.submitWrite(nym(target), { timeoutMs: 60_000 });
    const signers = await waitFor(
      'a multi-signature with Node5',
      async () => {
        const s = await signersOf(client, target.did);
        return s.includes('Node5') ? s : undefined;
      },
      30_000,
    );
    expect(signers).to.not.include('Node4');
    expect(signers).to.have.length.at.least(4);
  });

  it('demoted with a NODE txn (through the CLI), Node5 stops taking part', async () => {
    await quireOk(['--genesis', pool.genesisFile, '--seed', stewardSeed(5), 'node', '--dest', node5Keys.dest, '--alias', 'Node5', '--services', '']);
    await client.refresh();
    const st = client.status();
    expect(st.n).to.equal(4);
    expect(st.demoted).to.include('Node5');
    // validators Node1..4 with Node4 still down: three of four order, without Node5
    const target = DidKey.random();
    await client.submitWrite(nym(target), { timeoutMs: 60_000 });
    const signers = await signersOf(client, target.did);
    expect(signers).to.deep.equal(['Node1', 'Node2', 'Node3']);
  });
});
