// A pool of one validator (consensus.md §1.2: development pools may have n < 4) run as one
// QuireNode on loopback ports chosen by the system: it orders a write, names itself on every log
// line, refuses requests with SHUTTING_DOWN while it stops, and reports a batch it could not write
// with WRITE_FAILED_EXIT_CODE. Also the INSTANCE_CHANGE vote store over LevelDB.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { parseJson } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { NodeConnection, ClientRequestError } from '@quire/client';
import { openLevelKvStore } from '@quire/storage';
import { waitUntil } from '@quire/testing';
import type { NodeConfig } from '../../src/config.js';
import { nodeSeed } from '../../src/genesis-gen.js';
import { deriveNodeKeys } from '../../src/keys.js';
import { createLogger } from '../../src/logger.js';
import { QuireNode, WRITE_FAILED_EXIT_CODE } from '../../src/node.js';
import { KvVoteStore, VOTE_STORE_BUCKET } from '../../src/node-setup.js';
import { nymRequest, soloNodeConfig, trustee } from './helpers.js';

const dec = (b: Uint8Array): Record<string, unknown> => parseJson(new TextDecoder().decode(b)) as Record<string, unknown>;
const enc = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));
const keys = deriveNodeKeys('Node1', Buffer.from(nodeSeed('Node1')));

const nym = (reqId: number, seed: string): Record<string, unknown> => nymRequest(trustee, Ed25519Signer.fromSeed(seed), {}, reqId);

/** A pino destination keeping every line. */
function capture(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n')) if (l !== '') lines.push(l);
      cb();
    },
  });
  return { stream, lines };
}

describe('QuireNode: a pool of one validator', function () {
  this.timeout(30_000);
  let dir: string;
  let config: NodeConfig;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-solo-'));
    config = await soloNodeConfig(dir);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('orders a write, names the node on every log line without duplicate keys, and answers SHUTTING_DOWN while stopping', async () => {
    const log = capture();
    // no `name` in the config and none given to the logger: the node takes the key file's alias
    const logger = createLogger({ level: 'debug', destination: log.stream });
    const node = await QuireNode.create({ dataDir: dir, config, inMemory: true }, { logger, keys });
    let client: NodeConnection | undefined;
    try {
      client = await NodeConnection.connect({ host: '127.0.0.1', port: node.clientPort, dest: keys.dest, timeoutMs: 10_000 });
      const pushed = new Promise<Record<string, unknown>>((res) => client!.on('push', (b) => res(dec(b))));
      expect(dec(await client.request(enc(nym(7, '000000000000000000000000000User7'))))).to.deep.equal({ op: 'REQACK', identifier: trustee.did, reqId: 7 });
      const reply = await pushed;
      expect(reply.op).to.equal('REPLY');
      expect(node.status().viewNo).to.equal(0);

      // stopping: hold the last batch write, so the client host is still up while the node stops
      let release!: () => void;
      const held = new Promise<void>((res) => (release = res));
      const flush = node.executor.flush.bind(node.executor);
      node.executor.flush = async () => {
        await held;
        return flush();
      };
      const closing = node.close();
      let refusal: unknown;
      try {
        await client.request(enc(nym(8, '000000000000000000000000000User8')));
      } catch (e) {
        refusal = e;
      }
      release();
      await closing;
      expect(refusal).to.be.instanceOf(ClientRequestError);
      expect((refusal as ClientRequestError).code).to.equal('SHUTTING_DOWN');
    } finally {
      await client?.close();
      await node.close();
    }
    const records = log.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.length).to.be.greaterThan(3);
    for (const r of records) expect(r.node, JSON.stringify(r)).to.equal('Node1');
    for (const l of log.lines) expect(l.match(/"module":/g)?.length ?? 0, l).to.be.at.most(1);
    const modules = new Set(records.map((r) => r.module));
    expect([...modules]).to.include.members(['node', 'consensus']);
    expect(records.some((r) => r.msg === 'batch ordered')).to.equal(true);
  });

  it('stops itself and reports WRITE_FAILED_EXIT_CODE when an ordered batch cannot be written', async () => {
    const fatal: number[] = [];
    const node = await QuireNode.create(
      { dataDir: dir, config, inMemory: true },
      { logger: createLogger({ level: 'silent' }), keys, onFatal: (c) => fatal.push(c) },
    );
    let client: NodeConnection | undefined;
    try {
      client = await NodeConnection.connect({ host: '127.0.0.1', port: node.clientPort, dest: keys.dest, timeoutMs: 10_000 });
      // from now on every write of the database fails (a failing disk); reads still work
      const kv = node.stores.kv;
      const batch = kv.batch.bind(kv);
      kv.batch = () => {
        const b = batch();
        b.write = () => Promise.reject(new Error('EIO: i/o error, write'));
        return b;
      };
      await client.request(enc(nym(9, '000000000000000000000000000User9'))).catch(() => undefined);
      await waitUntil('the node to stop itself', () => fatal.length > 0, 10_000, 50);
      expect(fatal).to.deep.equal([WRITE_FAILED_EXIT_CODE]);
      expect(WRITE_FAILED_EXIT_CODE).to.not.equal(75);
    } finally {
      await client?.close();
      await node.close();
    }
  });
});

describe('KvVoteStore (INSTANCE_CHANGE votes across restarts)', () => {
  it('keeps the last saved votes across a reopen of the database and ignores an unreadable value', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'quire-votes-'));
    try {
      let kv = await openLevelKvStore(join(dir, 'db'));
      let store = new KvVoteStore(kv);
      expect(store.load()).to.deep.equal([]);
      store.save([{ viewNo: 1, voter: 'Node2', utc: 100 }]);
      store.save([
        { viewNo: 1, voter: 'Node2', utc: 100 },
        { viewNo: 1, voter: 'Node3', utc: 101 },
      ]);
      await store.flush();
      await kv.close();
      kv = await openLevelKvStore(join(dir, 'db'));
      store = new KvVoteStore(kv);
      expect(store.load()).to.deep.equal([
        { viewNo: 1, voter: 'Node2', utc: 100 },
        { viewNo: 1, voter: 'Node3', utc: 101 },
      ]);
      const problems: string[] = [];
      await kv.batch().put(VOTE_STORE_BUCKET, new TextEncoder().encode('votes'), new TextEncoder().encode('{not json')).write();
      expect(new KvVoteStore(kv, (p) => problems.push(p)).load()).to.deep.equal([]);
      expect(problems).to.have.length(1);
      await kv.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
