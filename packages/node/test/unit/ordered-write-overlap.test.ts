// #16: the node's event queue does not wait for an ordered batch's write (an fsync): the next
// requests are taken in and ordered while it lands, and every REPLY still waits for its own
// batch's write. Before, each ordered batch held every later event (client requests, PROPAGATEs,
// the next PRE-PREPARE and its votes) for the length of its fsync.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { waitUntil } from '@quire/testing';
import { parseJson } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { NodeConnection } from '@quire/client';
import type { NodeConfig } from '../../src/config.js';
import { nodeSeed } from '../../src/genesis-gen.js';
import { deriveNodeKeys } from '../../src/keys.js';
import { createLogger } from '../../src/logger.js';
import { QuireNode } from '../../src/node.js';
import { nymRequest, soloNodeConfig, trustee } from './helpers.js';

const dec = (b: Uint8Array): Record<string, unknown> => parseJson(new TextDecoder().decode(b)) as Record<string, unknown>;
const enc = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));
const keys = deriveNodeKeys('Node1', Buffer.from(nodeSeed('Node1')));

const nym = (reqId: number, seed: string): Record<string, unknown> => nymRequest(trustee, Ed25519Signer.fromSeed(seed), {}, reqId);

function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  return waitUntil(what, cond, ms, 10);
}

describe('an ordered batch whose write has not landed (#16)', function () {
  this.timeout(30_000);
  let dir: string;
  let config: NodeConfig;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-overlap-'));
    config = await soloNodeConfig(dir);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('holds back its REPLY, not the requests after it, which are taken in and ordered meanwhile', async () => {
    const node = await QuireNode.create({ dataDir: dir, config, inMemory: true }, { logger: createLogger({ level: 'silent' }), keys });
    let client: NodeConnection | undefined;
    let release = (): void => undefined;
    try {
      client = await NodeConnection.connect({ host: '127.0.0.1', port: node.clientPort, dest: keys.dest, timeoutMs: 10_000 });
      const pushes: Record<string, unknown>[] = [];
      client.on('push', (b) => pushes.push(dec(b)));
      // the first write answered, so that start-up batches are out of the way
      expect(dec(await client.request(enc(nym(1, '000000000000000000000000000User1')))).op).to.equal('REQACK');
      await until(() => pushes.length === 1, 'the first REPLY');
      // from now on the database's writes wait until released (a slow disk)
      const held = new Promise<void>((res) => (release = res));
      const kv = node.stores.kv;
      const batch = kv.batch.bind(kv);
      kv.batch = () => {
        const b = batch();
        const write = b.write.bind(b);
        b.write = async (...args: Parameters<typeof write>) => {
          await held;
          return write(...args);
        };
        return b;
      };
      const orderedBefore = node.status().lastOrdered.ppSeqNo;
      expect(dec(await client.request(enc(nym(2, '000000000000000000000000000User2')))).op).to.equal('REQACK');
      await until(() => node.status().lastOrdered.ppSeqNo > orderedBefore, 'the second write ordered');
      const second = node.status().lastOrdered.ppSeqNo;
      // the batch is ordered and its write held: a third write is still taken in and ordered
      expect(dec(await client.request(enc(nym(3, '000000000000000000000000000User3')))).op).to.equal('REQACK');
      await until(() => node.status().lastOrdered.ppSeqNo > second, 'the third write ordered while the second batch is not written');
      // neither is answered before its batch is on disk
      await new Promise((r) => setTimeout(r, 50));
      expect(pushes).to.have.length(1);
      release();
      await until(() => pushes.length === 3, 'the REPLYs after the writes');
      expect(pushes.map((p) => p.op)).to.deep.equal(['REPLY', 'REPLY', 'REPLY']);
      expect(pushes.map((p) => ((p.result as Record<string, unknown>).txnMetadata as Record<string, unknown>).seqNo)).to.deep.equal(
        [...pushes.map((p) => ((p.result as Record<string, unknown>).txnMetadata as Record<string, unknown>).seqNo)].sort((a, b) => Number(a) - Number(b)),
      );
    } finally {
      release();
      await client?.close();
      await node.close();
    }
  });
});
