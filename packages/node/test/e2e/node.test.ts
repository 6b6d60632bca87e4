// Four QuireNodes in this process (in-memory storage, ports chosen by the system): the write path,
// a read with its multi-signature, metrics, startup checks and an idempotent close.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { NodeConnection, Pool } from '@quire/client';
import { b58decode, b58encode, multiSignatureMessage, parseJson } from '@quire/common';
import { blsVerifyAggregate } from '@quire/crypto';
import { type NodeConfig, defaultNodeConfig, mergeConfig } from '../../src/config.js';
import { NodeError, NodeErrorCode } from '../../src/errors.js';
import { nodeSeed, poolGenesis, standardPoolNodes, writeGenesisFiles } from '../../src/genesis-gen.js';
import { deriveNodeKeys } from '../../src/keys.js';
import { testLogger } from '../../src/logger.js';
import { QuireNode } from '../../src/node.js';
import { nymRequest, trustee, user } from '../unit/helpers.js';
import { freePort } from './support.js';

const dec = (b: Uint8Array): Record<string, unknown> => parseJson(new TextDecoder().decode(b)) as Record<string, unknown>;
const enc = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));

describe('QuireNode: a 4-node pool in one process', function () {
  this.timeout(60_000);
  let dir: string;
  let config: NodeConfig;
  let ports: { nodePort: number; clientPort: number }[];
  const keys = deriveNodeKeys('Node1', Buffer.from(nodeSeed('Node1')));

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-node-'));
    ports = [];
    for (let i = 0; i < 4; i++) ports.push({ nodePort: await freePort(), clientPort: await freePort() });
    const g = await writeGenesisFiles(dir, poolGenesis(standardPoolNodes(ports)));
    config = mergeConfig(defaultNodeConfig, { poolGenesisFile: g.pool, domainGenesisFile: g.domain, metricsPort: 0, durable: false });
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('orders a write, answers a read with a verifying multi-signature, serves metrics, closes idempotently', async () => {
    const nodes: QuireNode[] = [];
    let client: NodeConnection | undefined;
    try {
      for (let i = 1; i <= 4; i++) {
        const k = deriveNodeKeys(`Node${i}`, Buffer.from(nodeSeed(`Node${i}`)));
        nodes.push(
          await QuireNode.create(
            { dataDir: dir, config: { ...config, metricsPort: i === 1 ? 0 : null }, inMemory: true },
            { logger: testLogger(`Node${i}`), keys: k },
          ),
        );
      }
      const node = nodes[0]!;
      expect(node.clientPort).to.be.greaterThan(0);
      client = await NodeConnection.connect({ host: '127.0.0.1', port: node.clientPort, dest: keys.dest, timeoutMs: 15_000 });
      const target = user(8);
      const req = nymRequest(trustee, target, {}, 42);
      const pushed = new Promise<Record<string, unknown>>((res) => client!.on('push', (b) => res(dec(b))));
      expect(dec(await client.request(enc(req)))).to.deep.equal({ op: 'REQACK', identifier: trustee.did, reqId: 42 });
      const reply = await pushed;
      expect(reply.op).to.equal('REPLY');
      expect((reply.result as { txnMetadata: { seqNo: number } }).txnMetadata.seqNo).to.equal(6);

      const read = dec(await client.request(enc({ identifier: trustee.did, reqId: 43, protocolVersion: 2, operation: { type: '105', dest: target.did } })));
      const result = read.result as {
        data: string;
        state_proof: { root_hash: string; multi_signature: { signature: string; participants: string[]; value: Parameters<typeof multiSignatureMessage>[0] } };
      };
      expect(JSON.parse(result.data)).to.include({ verkey: target.verkey });
      const ms = result.state_proof.multi_signature;
      expect(ms.participants.length).to.be.at.least(3);
      expect(ms.value.state_root_hash).to.equal(result.state_proof.root_hash);
      const blsKeys = new Map(standardPoolNodes(ports).map((n) => [n.alias, b58decode(n.keys.blskey)]));
      expect(
        blsVerifyAggregate(
          ms.participants.map((p) => blsKeys.get(p)!),
          multiSignatureMessage(ms.value),
          b58decode(ms.signature),
        ),
      ).to.equal(true);

      expect(node.metricsPort).to.be.a('number');
      const text = await (await fetch(`http://127.0.0.1:${node.metricsPort}/metrics`)).text();
      expect(text).to.match(/quire_client_requests_total\{kind="write",outcome="reply",node="Node1"\} 1/);
      expect(text).to.match(/quire_batches_ordered_total\{ledger="1",node="Node1"\} [1-9]/);
      expect(text).to.contain('quire_batch_commit_seconds_bucket');
      expect(node.status().lastOrdered.ppSeqNo).to.be.greaterThan(0);

      // the client SDK's pool-ledger catch-up against the node's answers: from a genesis of one node
      // to the whole pool ledger
      const sdk = await Pool.fromGenesisText(poolGenesis(standardPoolNodes(ports)).trim().split('\n')[0]!, { catchupTimeoutMs: 15_000 });
      try {
        expect(sdk.status().ledgerSize).to.equal(1);
        const r = await sdk.refresh();
        expect(r).to.deep.include({ from: 1, to: 4, discarded: [] });
        expect(sdk.status().n).to.equal(4);
        expect(sdk.status().root).to.equal(b58encode(node.stores.ledgers[0].root));
      } finally {
        await sdk.close();
      }
      await client.close();
      client = undefined;
      await Promise.all([node.close(), node.close()]);
      await node.close();
      expect(
        await fetch(`http://127.0.0.1:${node.metricsPort}/metrics`).then(
          () => 'served',
          () => 'refused',
        ),
      ).to.equal('refused');
    } finally {
      await client?.close();
      for (const n of nodes) await n.close();
    }
  });

  it('refuses to start a node whose alias or key is not in the pool ledger', async () => {
    const cases: [NodeConfig, ReturnType<typeof deriveNodeKeys>][] = [
      [{ ...config, name: 'Node7' }, keys],
      [config, deriveNodeKeys('Node1', Buffer.from(nodeSeed('Node2')))],
    ];
    for (const [cfg, k] of cases) {
      try {
        await QuireNode.create({ dataDir: dir, config: cfg, inMemory: true }, { logger: testLogger(), keys: k });
        expect.fail('expected NOT_IN_POOL');
      } catch (e) {
        expect(e).to.be.instanceOf(NodeError);
        expect((e as NodeError).code).to.equal(NodeErrorCode.NOT_IN_POOL);
      }
    }
  });

  it('refuses a missing genesis file', async () => {
    try {
      await QuireNode.create({ dataDir: dir, config: { ...config, poolGenesisFile: join(dir, 'nope') }, inMemory: true }, { logger: testLogger(), keys });
      expect.fail('expected GENESIS_INVALID');
    } catch (e) {
      expect((e as NodeError).code).to.equal(NodeErrorCode.GENESIS_INVALID);
    }
  });
});
