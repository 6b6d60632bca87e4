// A running node wires its client door: the client host it starts is given the client path's door (ClientHost
// `modules.door`), so a write consensus refuses as overloaded is answered as its frame is read, ahead of the requests
// queued for the handlers. A node of one validator whose admission holds one request (maxRequestQueueSize 1) takes a
// burst of writes on one connection: the first is admitted, the door refuses the others with the REQNACK "pool
// overloaded", and the client host counts those answers. Without the door every refusal would come from the handler
// and the count would stay at 0.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { POOL_OVERLOADED_REASON, parseJson } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { NodeConnection } from '@quire/client';
import type { NodeConfig } from '../../src/config.js';
import { nodeSeed } from '../../src/genesis-gen.js';
import { deriveNodeKeys } from '../../src/keys.js';
import { createLogger } from '../../src/logger.js';
import { QuireNode } from '../../src/node.js';
import { nymRequest, soloNodeConfig, trustee } from './helpers.js';

const keys = deriveNodeKeys('Node1', Buffer.from(nodeSeed('Node1')));
const enc = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));
const dec = (b: Uint8Array): Record<string, unknown> => parseJson(new TextDecoder().decode(b)) as Record<string, unknown>;

const nym = (reqId: number): Record<string, unknown> => nymRequest(trustee, Ed25519Signer.fromSeed(`door${String(reqId).padStart(28, '0')}`), {}, reqId);

describe('QuireNode: the client door is wired', function () {
  this.timeout(30_000);
  let dir: string;
  let config: NodeConfig;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-door-'));
    const solo = await soloNodeConfig(dir);
    config = { ...solo, consensus: { ...solo.consensus, maxRequestQueueSize: 1 } };
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses the writes beyond its admission with "pool overloaded" as their frames are read', async () => {
    const node = await QuireNode.create({ dataDir: dir, config, inMemory: true }, { logger: createLogger({ level: 'silent' }), keys });
    let client: NodeConnection | undefined;
    try {
      client = await NodeConnection.connect({ host: '127.0.0.1', port: node.clientPort, dest: keys.dest, timeoutMs: 10_000 });
      const c = client;
      // one burst, pipelined on the connection: the first write holds the one place while it is verified and ordered
      const answers = (await Promise.all(Array.from({ length: 20 }, (_, i) => c.request(enc(nym(100 + i)))))).map(dec);
      const overloaded = answers.filter((a) => a.op === 'REQNACK' && a.reason === POOL_OVERLOADED_REASON);
      expect(answers.filter((a) => a.op === 'REQACK').length, JSON.stringify(answers)).to.be.at.least(1);
      expect(overloaded.length, JSON.stringify(answers)).to.be.at.least(1);
      // the client host the node started counts the requests its door answered: every one an overloaded REQNACK
      const doorAnswers = node['clientHost']?.doorAnswers ?? 0;
      expect(doorAnswers).to.be.at.least(1);
      expect(doorAnswers).to.be.at.most(overloaded.length);
    } finally {
      await client?.close();
      await node.close();
    }
  });
});
