// Read your writes against four real quire-node processes (docs/reliability.md F1): a node killed -9 misses a
// NYM; restarted while the nodes that ordered it are down, it answers from its older state with a valid proof and
// a fresh multi-signature. The handle that wrote the NYM never returns that answer: READ_BEHIND while only that
// node is up, then the NYM from a node that has it. A handle that saw nothing accepts the older answer (a valid
// proof of the state that node has). Loopback only, random ports, temp dirs; the pool is torn down on failure too.
import { expect } from 'chai';
import { ClientError, ClientErrorCode, DidKey, buildGetNymRequest, buildNymRequest, signRequest, type ReadOutcome } from '../../src/index.js';
import { TRUSTEE_SEED } from '../../../../devnet/lib/node-api.js';
import { TestPool } from '../../../../test/support/test-pool.js';
import { secs, waitFor } from '../../../../test/support/wait.js';

const trustee = DidKey.fromSeed(TRUSTEE_SEED);

describe('read your writes on a real pool with a node behind', function () {
  this.timeout(900_000);
  let tp: TestPool | undefined;

  // Opt-in (QUIRE_RYW_POOL=1) until the node-side half of docs/reliability.md F2 is fixed: a primary
  // killed -9 and restarted beside a node that is behind sometimes answers its newest root without a
  // multi-signature, so the writer gets no verified read of the NYM (seen once in three clean-clone runs).
  const why =
    process.env.QUIRE_RYW_POOL === '1'
      ? undefined
      : 'the real-pool read-your-writes run is opt-in until the node side of F2 in docs/reliability.md is fixed: QUIRE_RYW_POOL=1';

  before(async function () {
    if (why !== undefined) {
      console.log(`    (skipped: ${why})`);
      this.skip();
    }
    tp = await TestPool.start({ name: 'client-ryw', orderingTimeoutMs: 300_000 });
  });

  after(async () => {
    await tp?.close();
  });

  it('a node restarted behind the write is never read from by the writer; READ_BEHIND while it alone is up', async () => {
    const pool = tp!;
    // Node4 is asked first by both handles; the freshness window is wide because restarts are slow on a loaded machine
    const opts = {
      readOrder: (a: string[]) => ['Node4', ...a.filter((x) => x !== 'Node4')],
      freshnessSeconds: 3600,
      nodeReadTimeoutMs: 10_000,
      readTimeoutMs: 60_000,
    };
    const writer = await pool.client(opts);
    const node4 = pool.node('Node4');
    try {
      await node4.kill9();
      const did = DidKey.random();
      const w = await writer.submitWrite(signRequest(buildNymRequest({ submitter: trustee.did, dest: did.did, verkey: did.verkey }), trustee));
      const seqNo = (w.result.txnMetadata as { seqNo: number }).seqNo;
      const getNym = buildGetNymRequest({ dest: did.did });
      // the nodes that ordered the NYM go down; Node4 comes back alone, with the state it had
      for (const name of ['Node1', 'Node2', 'Node3']) await pool.node(name).kill9();
      const restarted = Date.now();
      node4.start();
      const bystander = await pool.client(opts);
      const older = await waitFor('Node4 to answer reads', () => bystander.submitRead(getNym), 600_000, 1000);
      console.log(`      [timing] Node4 answered reads ${secs(Date.now() - restarted)} after its restart`);
      expect(older.nodes).to.deep.equal(['Node4']);
      expect(older.verified).to.equal(true);
      expect(older.result.data, 'Node4 did not miss the NYM').to.equal(null);
      // the writer refuses that answer
      let err: unknown;
      await writer.submitRead(getNym).catch((e: unknown) => (err = e));
      expect(err, 'the writer accepted a read behind its own write').to.be.instanceOf(ClientError);
      expect((err as ClientError).code).to.equal(ClientErrorCode.READ_BEHIND);
      expect((err as ClientError).data.behind).to.include({ node: 'Node4' });
      // Node1, which ordered the NYM, comes back: the writer reads the NYM (Node4 set aside while it is behind)
      pool.node('Node1').start();
      const current = await waitFor<ReadOutcome>(
        'a read of the NYM',
        async () => {
          try {
            return await writer.submitRead(getNym);
          } catch (e) {
            if (e instanceof ClientError && e.code !== ClientErrorCode.READ_BEHIND && e.code !== ClientErrorCode.NO_VERIFIED_REPLY) throw e;
            return undefined;
          }
        },
        600_000,
        1000,
      );
      expect(current.verified).to.equal(true);
      expect(JSON.parse(current.result.data as string).seqNo).to.equal(seqNo);
    } catch (e) {
      pool.dumpLogs(`read-your-writes failed: ${(e as Error).message}`);
      throw e;
    }
  });
});
