// Four QuireNodes in this process configured with one observer: the SDK's BatchFollower, with the
// observer's key, connects to the validators' node listeners, follows the ordered-batch topic and
// accepts the batch of a NYM written through the SDK (txn inside, multi-signature verified); the
// observer cannot open consensus streams, and a key that is neither validator nor observer is refused.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { BatchFollower, DidKey, type FollowedBatch, Pool, PoolLedger, buildNymRequest, signRequest, verifyMultiSignature } from '@quire/client';
import { stringifyJson } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { NODE_PROTOCOL, NodeHost, encodeFrame, peerIdFromVerkey, type NetworkStats } from '@quire/network';
import { type NodeConfig, defaultNodeConfig, mergeConfig } from '../../src/config.js';
import { TRUSTEE_SEED, nodeSeed, poolGenesis, standardPoolNodes, writeGenesisFiles } from '../../src/genesis-gen.js';
import { deriveNodeKeys } from '../../src/keys.js';
import { testLogger } from '../../src/logger.js';
import { QuireNode } from '../../src/node.js';
import { freePort, waitFor } from './support.js';

/** What the test uses of a libp2p connection of the follower. */
interface ObserverConnection {
  status: string;
  remotePeer: { toString(): string };
  newStream(protocol: string, options?: { negotiateFully?: boolean }): Promise<{ send(data: Uint8Array): boolean }>;
}

/** The node host of a node, to look at its counters and topic peers. */
function hostOf(n: QuireNode): { stats(): NetworkStats; topicPeers(topic: string): string[]; connectedPeers(): string[] } {
  return (n as unknown as { nodeHost: { stats(): NetworkStats; topicPeers(topic: string): string[]; connectedPeers(): string[] } }).nodeHost;
}

describe('e2e: an observer follows the ordered-batch topic', function () {
  this.timeout(90_000);
  let dir: string;
  let config: NodeConfig;
  let genesisText: string;
  let ports: { nodePort: number; clientPort: number }[];
  const nodes: QuireNode[] = [];
  const observerSeed = randomBytes(32);
  const observerKey = Ed25519Signer.fromSeed(observerSeed);
  let follower: BatchFollower | undefined;
  let pool: Pool | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-observer-'));
    ports = [];
    for (let i = 0; i < 4; i++) ports.push({ nodePort: await freePort(), clientPort: await freePort() });
    const g = await writeGenesisFiles(dir, poolGenesis(standardPoolNodes(ports)));
    genesisText = await readFile(g.pool, 'utf8');
    config = mergeConfig(defaultNodeConfig, {
      poolGenesisFile: g.pool,
      domainGenesisFile: g.domain,
      durable: false,
      observers: [{ name: 'Obs1', dest: observerKey.fullVerkey }],
    });
    for (let i = 1; i <= 4; i++) {
      const k = deriveNodeKeys(`Node${i}`, Buffer.from(nodeSeed(`Node${i}`)));
      nodes.push(await QuireNode.create({ dataDir: dir, config, inMemory: true }, { logger: testLogger(`Node${i}`), keys: k }));
    }
  });

  after(async () => {
    await follower?.close();
    await pool?.close();
    for (const n of nodes) await n.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('accepts the batch of a NYM written through the SDK, with the txn inside and a verifying multi-signature', async () => {
    follower = await BatchFollower.start(genesisText, { seed: observerSeed, name: 'Obs1', reconnectMinMs: 50, reconnectMaxMs: 500 });
    const f = follower;
    expect(f.poolId).to.equal(nodes[0]!.poolId);
    await waitFor('the follower connected to every validator', async () => (f.connectedValidators().length === 4 ? true : undefined), 20_000, 50);
    await waitFor(
      'every validator sees the follower on the topic',
      async () => (nodes.every((n) => hostOf(n).topicPeers(f.topic).includes('Obs1')) ? true : undefined),
      20_000,
      50,
    );

    const batches: FollowedBatch[] = [];
    f.on('batch', (b) => batches.push(b));
    pool = await Pool.fromGenesisText(genesisText, { writeTimeoutMs: 20_000 });
    const trustee = DidKey.fromSeed(TRUSTEE_SEED);
    const target = DidKey.fromSeed('00000000000000000000000Observed1');
    const req = signRequest(buildNymRequest({ submitter: trustee.did, dest: target.did, verkey: target.verkey }), trustee);
    const out = await pool.submitWrite(req);
    const seqNo = (out.result.txnMetadata as { seqNo: number }).seqNo;

    const b = await waitFor('the NYM batch', async () => batches.find((x) => x.ledgerId === 1 && x.seqNoStart <= seqNo && seqNo <= x.seqNoEnd), 20_000, 50);
    expect(b.acceptedBy).to.equal('multi-signature');
    expect(b.txnsOmitted).to.equal(false);
    const txn = b.txns![seqNo - b.seqNoStart]!;
    expect((txn.txnMetadata as { seqNo: number }).seqNo).to.equal(seqNo);
    expect((txn.txn as { data: Record<string, unknown> }).data).to.include({ dest: target.did, verkey: target.verkey });
    expect(stringifyJson(txn.txn)).to.equal(stringifyJson(out.result.txn));
    expect(b.msg.nodeReg).to.deep.equal(['Node1', 'Node2', 'Node3', 'Node4']);
    expect(b.msg.primaries).to.have.length.greaterThan(0);
    expect(b.msg).to.include.keys('originalViewNo', 'auditTxnRootHash', 'digest', 'ppSeqNo', 'ppTime', 'viewNo', 'instId');
    // the multi-signature verifies on its own with n - f validators of the pool genesis
    const ms = verifyMultiSignature({ multiSignature: b.multiSignature, pool: PoolLedger.fromGenesis(genesisText).blsKeys(), freshness: { kind: 'none' } });
    expect(ms.participants.length).to.be.at.least(3);
    expect(ms.value.txn_root_hash).to.equal(b.txnRootHash);
    // every validator announced it; the later copies count as duplicates, nothing was dropped
    await waitFor('all four announcements', async () => (f.stats().duplicates >= 3 ? true : undefined), 10_000, 50);
    expect(f.stats().dropped).to.deep.equal({ malformed: 0, 'unknown-sender': 0, 'bad-signature': 0, 'txns-mismatch': 0, stale: 0 });
    // accepted batches come out in ledger order
    const domain = batches.filter((x) => x.ledgerId === 1);
    for (let i = 1; i < domain.length; i++) expect(domain[i]!.seqNoStart).to.equal(domain[i - 1]!.seqNoEnd + 1);
  });

  it('drops malformed and forged announcements without failing', () => {
    const f = follower!;
    const before = f.stats();
    f.handleAnnouncement(Uint8Array.of(0xc1, 0x00));
    f.handleAnnouncement(new TextEncoder().encode('{"op":"OBSERVED_DATA"}'));
    const after = f.stats();
    expect(after.dropped.malformed).to.equal(before.dropped.malformed + 2);
  });

  it('the observer cannot open consensus streams', async () => {
    const node1 = hostOf(nodes[0]!);
    const denied = node1.stats().deniedConnections;
    // the follower opens a consensus stream over its connection to Node1 and writes a frame: Node1 must refuse the
    // stream (a refused stream is a denied connection in its counters and never becomes a message for the consensus core)
    const node1PeerId = peerIdFromVerkey(standardPoolNodes(ports)[0]!.keys.dest);
    const conn = (follower as unknown as { transport: { libp2p: { getConnections(): ObserverConnection[] } } }).transport.libp2p
      .getConnections()
      .find((c) => c.status === 'open' && c.remotePeer.toString() === node1PeerId);
    expect(conn, 'a connection to Node1').to.not.equal(undefined);
    try {
      const stream = await conn!.newStream(NODE_PROTOCOL, { negotiateFully: true });
      stream.send(encodeFrame(new TextEncoder().encode('not a consensus message')));
    } catch {
      // refused while negotiating or writing: the counter below tells
    }
    await waitFor('the stream refused', async () => (node1.stats().deniedConnections > denied ? true : undefined), 10_000, 50);
    expect(node1.connectedPeers()).to.include('Obs1'); // still connected for gossip
  });

  it('refuses a peer whose key is neither a validator nor a configured observer', async () => {
    const outsider = await NodeHost.create({ name: 'Outsider', seed: randomBytes(32), reconnectMinMs: 50, reconnectMaxMs: 200 });
    try {
      const node1 = hostOf(nodes[0]!);
      const denied = node1.stats().deniedConnections;
      outsider.setValidators(standardPoolNodes(ports).map((n, i) => ({ name: n.alias, dest: n.keys.dest, host: '127.0.0.1', port: ports[i]!.nodePort })));
      await waitFor('a denied connection', async () => (node1.stats().deniedConnections > denied ? true : undefined), 10_000, 50);
      await waitFor('refused connections torn down', async () => (outsider.connectedPeers().length === 0 ? true : undefined), 10_000, 50);
      expect(node1.connectedPeers()).to.not.include('Outsider');
    } finally {
      await outsider.close();
    }
  });
});
