// Startup repair of a state that differs from what the audit ledger names (#15 F6: a kill during a
// state rebuild, which commits as it goes, leaves the root of a prefix of the ledger).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { b58encode } from '@quire/common';
import { batchDigest } from '@quire/consensus';
import { NodeConnection } from '@quire/client';
import { StateTrie, openLevelKvStore } from '@quire/storage';
import { AuditTrail } from '../../src/audit-trail.js';
import { NodeErrorCode } from '../../src/errors.js';
import { nodeSeed } from '../../src/genesis-gen.js';
import { deriveNodeKeys } from '../../src/keys.js';
import { createLogger, testLogger } from '../../src/logger.js';
import { QuireNode } from '../../src/node.js';
import { repairStateAgainstAudit } from '../../src/startup.js';
import { memoryFixture, nymRequest, soloNodeConfig, trustee, user } from './helpers.js';

function input(ledgerId: number, requests: Record<string, unknown>[], ppSeqNo: number, ppTime = 1_700_000_000 + ppSeqNo) {
  const digests = requests.map((_, i) => `${ppSeqNo}${i}`.padStart(64, '0'));
  return { ledgerId, requests, digests, ppTime, ppSeqNo, originalViewNo: 0, primaries: ['Node1'], digest: batchDigest(0, ppTime, digests, ledgerId) };
}

describe('startup: a state that differs from the audit ledger is rebuilt (#15 F6)', () => {
  it('names the committed state root of every ledger with txns, across commits and after a restart', async () => {
    const fx = await memoryFixture();
    fx.executor.applyBatch(input(1, [nymRequest(trustee, user(40))], 1));
    fx.executor.commitBatch([]);
    fx.executor.applyBatch(input(1, [nymRequest(trustee, user(41))], 2));
    fx.executor.commitBatch([]);
    await fx.executor.flush();
    const loaded = await AuditTrail.load(fx.stores.ledgers[3]);
    for (const l of [0, 1] as const) expect(loaded.committedStateRoots().get(l), `ledger ${l}`).to.equal(b58encode(fx.stores.states[l].committedRoot));
    expect(loaded.committedStateRoots().has(2)).to.equal(false);
    await fx.stores.kv.close();
  });

  it('rebuilds a state left at the root of a prefix of its ledger, from an empty trie', async () => {
    const fx = await memoryFixture();
    const prefixRoot = fx.stores.states[1].committedRoot;
    for (let k = 1; k <= 3; k++) {
      fx.executor.applyBatch(input(1, [nymRequest(trustee, user(50 + k))], k));
      fx.executor.commitBatch([]);
    }
    await fx.executor.flush();
    const good = b58encode(fx.stores.states[1].committedRoot);
    // what a rebuild killed half-way leaves: the committed root of a prefix of the ledger
    await fx.stores.states[1].commit(prefixRoot);
    expect(b58encode(fx.stores.states[1].committedRoot)).to.not.equal(good);
    const audit = await AuditTrail.load(fx.stores.ledgers[3]);
    await repairStateAgainstAudit(fx.reqExecutor, fx.stores, audit, testLogger());
    expect(b58encode(fx.stores.states[1].committedRoot)).to.equal(good);
    // a state that agrees is left alone
    const pool = b58encode(fx.stores.states[0].committedRoot);
    await repairStateAgainstAudit(fx.reqExecutor, fx.stores, audit, testLogger());
    expect(b58encode(fx.stores.states[0].committedRoot)).to.equal(pool);
    await fx.stores.kv.close();
  });

  it('stops with STORAGE_INCONSISTENT when even the rebuilt state differs', async () => {
    const fx = await memoryFixture();
    fx.executor.applyBatch(input(1, [nymRequest(trustee, user(60))], 1));
    fx.executor.commitBatch([]);
    await fx.executor.flush();
    const audit = await AuditTrail.load(fx.stores.ledgers[3]);
    // an audit ledger that names another root than the ledger's txns give
    const named = audit.committedStateRoots();
    named.set(1, b58encode(new Uint8Array(32).fill(9)));
    const lying = Object.assign(Object.create(audit) as AuditTrail, { committedStateRoots: () => named });
    let code: unknown;
    try {
      await repairStateAgainstAudit(fx.reqExecutor, fx.stores, lying, testLogger());
    } catch (e) {
      code = (e as { code?: unknown }).code;
    }
    expect(code).to.equal(NodeErrorCode.STORAGE_INCONSISTENT);
    await fx.stores.kv.close();
  });
});

describe('QuireNode restarts over its LevelDB: the state checked against the audit ledger (#15 F6)', function () {
  this.timeout(60_000);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-repair-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('starts again untouched, and rebuilds a domain state set back to an older root', async () => {
    const config = await soloNodeConfig(dir);
    const keys = deriveNodeKeys('Node1', Buffer.from(nodeSeed('Node1')));
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const l of chunk.toString('utf8').split('\n')) if (l !== '') lines.push(l);
        cb();
      },
    });
    const start = () => QuireNode.create({ dataDir: dir, config }, { logger: createLogger({ level: 'info', destination: stream }), keys });
    const repaired = () => lines.filter((l) => l.includes('state root differs from the audit ledger')).length;
    let node = await start();
    const genesisDomainRoot = node.stores.states[1].committedRoot;
    const client = await NodeConnection.connect({ host: '127.0.0.1', port: node.clientPort, dest: keys.dest, timeoutMs: 10_000 });
    const pushed = new Promise<void>((res) => client.on('push', () => res()));
    const req = nymRequest(trustee, user(77), {}, 77);
    await client.request(new TextEncoder().encode(JSON.stringify(req)));
    await pushed;
    await client.close();
    const root = b58encode(node.stores.states[1].committedRoot);
    await node.close();
    node = await start();
    expect(repaired()).to.equal(0);
    expect(b58encode(node.stores.states[1].committedRoot)).to.equal(root);
    await node.close();
    // the domain state set back to its genesis root, as a rebuild killed half-way would leave it
    const kv = await openLevelKvStore(join(dir, config.dbDir));
    const trie = await StateTrie.open({ name: 'domain' }, { kv });
    await trie.commit(genesisDomainRoot);
    await kv.close();
    node = await start();
    expect(repaired()).to.equal(1);
    expect(b58encode(node.stores.states[1].committedRoot)).to.equal(root);
    await node.close();
  });
});
