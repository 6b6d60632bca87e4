// #16: a client's copy of a write that is already ordered is answered from the ledger once the batches' writes are
// durable, following the ordered batches' answers; the node's event queue does not wait for that write meanwhile.
// Before, the event queue awaited the executor's flush for each such copy: every later event (client writes,
// PROPAGATEs, the next batch's votes) waited for the write on disk, for each late copy of an ordered write, which
// under overload (copies read after their request was ordered from the peers' PROPAGATEs) is most of them.
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

describe('a copy of an ordered write, answered from the ledger (#16)', function () {
  this.timeout(30_000);
  let dir: string;
  let config: NodeConfig;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-ledger-answer-'));
    config = await soloNodeConfig(dir);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('waits for the write on disk without holding the event queue: later writes are taken in and ordered meanwhile', async () => {
    const node = await QuireNode.create({ dataDir: dir, config, inMemory: true }, { logger: createLogger({ level: 'silent' }), keys });
    let client: NodeConnection | undefined;
    let release = (): void => undefined;
    try {
      client = await NodeConnection.connect({ host: '127.0.0.1', port: node.clientPort, dest: keys.dest, timeoutMs: 10_000 });
      const pushes: Record<string, unknown>[] = [];
      client.on('push', (b) => pushes.push(dec(b)));
      const first = nym(1, '000000000000000000000000000User1');
      expect(dec(await client.request(enc(first))).op).to.equal('REQACK');
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
      const second = nym(2, '000000000000000000000000000User2');
      const orderedBefore = node.status().lastOrdered.ppSeqNo;
      expect(dec(await client.request(enc(second))).op).to.equal('REQACK');
      await until(() => node.status().lastOrdered.ppSeqNo > orderedBefore, 'the second write ordered');
      const afterSecond = node.status().lastOrdered.ppSeqNo;
      // a late copy of the second write (ordered, its write not on disk): answered from the ledger once it is
      let copyAnswer: Record<string, unknown> | undefined;
      const copy = client.request(enc(second)).then((b) => (copyAnswer = dec(b)));
      // the event queue goes on: a third write is taken in and ordered while the write is held
      expect(dec(await client.request(enc(nym(3, '000000000000000000000000000User3')))).op).to.equal('REQACK');
      await until(() => node.status().lastOrdered.ppSeqNo > afterSecond, 'the third write ordered while the second batch is not written');
      expect(copyAnswer, 'no answer from the ledger before the write is on disk').to.equal(undefined);
      expect(pushes).to.have.length(1);
      release();
      await copy;
      expect(copyAnswer?.op).to.equal('REPLY');
      const seqNoOf = (m: Record<string, unknown> | undefined): unknown =>
        ((m?.result as Record<string, unknown>).txnMetadata as Record<string, unknown>).seqNo;
      await until(() => pushes.length === 3, 'the REPLYs of the second and third writes');
      expect(seqNoOf(copyAnswer)).to.equal(seqNoOf(pushes[1]));
    } finally {
      release();
      await client?.close();
      await node.close();
    }
  });
});
