// #16: the node's event queue does not wait for an ordered batch's write (an fsync): the next requests are taken in
// and ordered while it lands, and every REPLY still waits for its own batch's write. Before, each ordered batch held
// every later event (client requests, PROPAGATEs, the next PRE-PREPARE and its votes) for the length of its fsync.
// A client's copy of a write already ordered is answered from the ledger once the batches' writes are durable,
// following the ordered batches' answers; before, the event queue awaited the executor's flush for each such copy.
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
const seqNoOf = (m: Record<string, unknown> | undefined): unknown => ((m?.result as Record<string, unknown>).txnMetadata as Record<string, unknown>).seqNo;

function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  return waitUntil(what, cond, ms, 10);
}

interface HeldDisk {
  node: QuireNode;
  client: NodeConnection;
  /** every push (REPLY) the client received, in order */
  pushes: Record<string, unknown>[];
  /** the database's writes wait until `release` (a slow disk) from this call on */
  hold(): void;
  release(): void;
}

/**
 * A one-node pool and a client whose first write is answered (so that start-up batches are out of the way), then
 * `run`; the node and the client are closed and held writes released whatever `run` does.
 */
async function withSoloNode(dir: string, config: NodeConfig, run: (h: HeldDisk) => Promise<void>): Promise<void> {
  const node = await QuireNode.create({ dataDir: dir, config, inMemory: true }, { logger: createLogger({ level: 'silent' }), keys });
  let client: NodeConnection | undefined;
  let release = (): void => undefined;
  try {
    client = await NodeConnection.connect({ host: '127.0.0.1', port: node.clientPort, dest: keys.dest, timeoutMs: 10_000 });
    const pushes: Record<string, unknown>[] = [];
    client.on('push', (b) => pushes.push(dec(b)));
    expect(dec(await client.request(enc(nym(1, '000000000000000000000000000User1')))).op).to.equal('REQACK');
    await until(() => pushes.length === 1, 'the first REPLY');
    const hold = (): void => {
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
    };
    await run({ node, client, pushes, hold, release: () => release() });
  } finally {
    release();
    await client?.close();
    await node.close();
  }
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
    await withSoloNode(dir, config, async ({ node, client, pushes, hold, release }) => {
      hold();
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
      expect(pushes.map(seqNoOf)).to.deep.equal([...pushes.map(seqNoOf)].sort((a, b) => Number(a) - Number(b)));
    });
  });

  it('answers a copy of an ordered write from the ledger once it is on disk, without holding the event queue', async () => {
    await withSoloNode(dir, config, async ({ node, client, pushes, hold, release }) => {
      hold();
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
      await until(() => pushes.length === 3, 'the REPLYs of the second and third writes');
      expect(seqNoOf(copyAnswer)).to.equal(seqNoOf(pushes[1]));
    });
  });
});
