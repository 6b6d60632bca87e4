// Ledger plugins in the node (plugins.ts, config `plugins`): loading from the config with stable error
// codes, the stores of a plugin ledger, its batches in the audit txn (the audit txn of a pool without
// plugins is unchanged: consensus-executor.test.ts), catch-up between two nodes, and the start-up
// check that refuses a node whose audit ledger names a plugin ledger it does not run.
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { b58encode, signatureInput } from '@quire/common';
import { batchDigest } from '@quire/consensus';
import { RequestExecutor, type Txn } from '@quire/requests';
import { type KvStore, openMemoryKvStore, parseGenesis } from '@quire/storage';
import { AuditTrail } from '../../src/audit-trail.js';
import { defaultNodeConfig, mergeConfig } from '../../src/config.js';
import { nodeSeed } from '../../src/genesis-gen.js';
import { deriveNodeKeys } from '../../src/keys.js';
import { createLogger } from '../../src/logger.js';
import { QuireNode } from '../../src/node.js';
import { ConsensusExecutor, type NodeStores } from '../../src/consensus-executor.js';
import { expectCodeAsync } from '@quire/testing';
import { NodeError, NodeErrorCode } from '../../src/errors.js';
import { poolGenesis, standardDomainGenesis, standardPoolNodes } from '../../src/genesis-gen.js';
import { attachMultiSignatures } from '../../src/client-replies.js';
import { checkAgainstAudit, openNodeStores } from '../../src/node-setup.js';
import { loadLedgerPlugins, pluginImportSpecifier } from '../../src/plugins.js';
import { PoolRegistry } from '../../src/pool-registry.js';
import { PORTS, nymRequest, soloNodeConfig, trustee, user } from './helpers.js';

const KV_PLUGIN = fileURLToPath(new URL('../../../../test/fixtures/plugins/kv-ledger.mjs', import.meta.url));
const KV = 1001;

/** Loads `specs`, which must fail with NodeError `code`; returns the error. */
const loadError = (specs: string[], dir: string, code: NodeErrorCode): Promise<NodeError> => expectCodeAsync(loadLedgerPlugins(specs, dir), NodeError, code);

let reqId = 1_800_000_000_000;
function kvPut(key: string, value: string): Record<string, unknown> {
  const req: Record<string, unknown> = { identifier: trustee.did, reqId: reqId++, protocolVersion: 2, operation: { type: '20000', key, value } };
  req.signature = trustee.signBase58(signatureInput(req));
  return req;
}

function input(ledgerId: number, requests: Record<string, unknown>[], ppSeqNo: number) {
  const ppTime = 1_700_000_000 + ppSeqNo;
  const digests = requests.map((_, i) => String(i).padStart(64, '0'));
  return { ledgerId, requests, digests, ppTime, ppSeqNo, originalViewNo: 0, primaries: ['Node1'], digest: batchDigest(0, ppTime, digests, ledgerId) };
}

interface PluginNode {
  kv: KvStore;
  stores: NodeStores;
  executor: ConsensusExecutor;
}

/** A node's stores and executors over memory, with the test plugin's ledger and the standard genesis. */
async function pluginNode(): Promise<PluginNode> {
  const loaded = await loadLedgerPlugins([KV_PLUGIN], tmpdir());
  const kv = await openMemoryKvStore();
  const { stores, requestStores } = await openNodeStores(kv, loaded.ledgerIds);
  const reqExecutor = new RequestExecutor({}, { stores: requestStores, registry: loaded.registry });
  const pool = parseGenesis(poolGenesis(standardPoolNodes(PORTS)), { file: 'pool', ledgerId: 0 });
  await reqExecutor.applyGenesis(
    0,
    pool.map((e) => e.txn as unknown as Txn),
  );
  await reqExecutor.applyGenesis(
    1,
    parseGenesis(standardDomainGenesis(), { file: 'domain', ledgerId: 1 }).map((e) => e.txn as unknown as Txn),
  );
  const registry = new PoolRegistry();
  for (const e of pool) registry.apply(e.txn);
  const executor = new ConsensusExecutor({ durable: false }, { stores, executor: reqExecutor, registry, audit: await AuditTrail.load(stores.ledgers[3]) });
  return { kv, stores, executor };
}

type AuditData = { ledgerSize: Map<number, number>; ledgerRoot: Map<number, unknown>; stateRoot: Map<number, string> };
async function auditData(stores: NodeStores, seqNo: number): Promise<AuditData> {
  return ((await stores.ledgers[3].get(seqNo)) as unknown as { txn: { data: AuditData } }).txn.data;
}

describe('ledger plugins: loading from the config', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-plugins-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('loads the test plugin from a path and registers its ledger and types with the built-in ones', async () => {
    const loaded = await loadLedgerPlugins([KV_PLUGIN], dir);
    expect(loaded.ledgerIds).to.deep.equal([KV]);
    expect(loaded.plugins.map((p) => p.name)).to.deep.equal(['kv-ledger']);
    expect(loaded.registry.write('20000')?.ledgerId).to.equal(KV);
    expect(loaded.registry.read('20001')?.ledgerId).to.equal(KV);
    expect(loaded.registry.write('1')?.name).to.equal('NYM');
    const none = await loadLedgerPlugins([], dir);
    expect(none.ledgerIds).to.deep.equal([]);
    expect(none.registry.get('20000')).to.equal(undefined);
    // relative paths are the data directory's, bare specifiers are modules
    expect(pluginImportSpecifier('./p.mjs', '/data')).to.equal('file:///data/p.mjs');
    expect(pluginImportSpecifier('some-plugin', '/data')).to.equal('some-plugin');
  });

  it('a plugin that cannot be imported is PLUGIN_NOT_FOUND; one that is not a valid plugin, or clashes, is PLUGIN_INVALID', async () => {
    await loadError(['quire-no-such-plugin'], dir, NodeErrorCode.PLUGIN_NOT_FOUND);
    await loadError(['./missing.mjs'], dir, NodeErrorCode.PLUGIN_NOT_FOUND);
    await writeFile(join(dir, 'syntax.mjs'), 'export default {');
    await loadError(['./syntax.mjs'], dir, NodeErrorCode.PLUGIN_NOT_FOUND);
    await writeFile(join(dir, 'nothing.mjs'), 'export const x = 1;');
    const nothing = await loadError(['./nothing.mjs'], dir, NodeErrorCode.PLUGIN_INVALID);
    expect(nothing.message).to.contain('exports neither default nor plugin');
    const fn = 'validateStatic() {}, validateDynamic() {}, updateState() {}';
    await writeFile(
      join(dir, 'base-ledger.mjs'),
      `export default { name: 'bad', ledgerId: 1, handlers: [{ kind: 'write', type: '30000', name: 'X', validator: 'X', ledgerId: 1, ${fn} }] };`,
    );
    const base = await loadError(['./base-ledger.mjs'], dir, NodeErrorCode.PLUGIN_INVALID);
    expect(base.message).to.contain('ledgerId: expected an integer in [1000');
    await writeFile(
      join(dir, 'nym-type.mjs'),
      `export const plugin = { name: 'nym', ledgerId: 1500, handlers: [{ kind: 'write', type: '1', name: 'X', validator: 'X', ledgerId: 1500, ${fn} }] };`,
    );
    const clash = await loadError(['./nym-type.mjs'], dir, NodeErrorCode.PLUGIN_INVALID);
    expect(clash.message).to.contain('type 1 is already registered (NYM)');
    await writeFile(
      join(dir, 'same-ledger.mjs'),
      `export default [{ name: 'other', ledgerId: ${KV}, handlers: [{ kind: 'write', type: '30000', name: 'X', validator: 'X', ledgerId: ${KV}, ${fn} }] }];`,
    );
    const twice = await loadError([KV_PLUGIN, './same-ledger.mjs'], dir, NodeErrorCode.PLUGIN_INVALID);
    expect(twice.message).to.contain(`ledger ${KV} is already the ledger of kv-ledger`);
    // a dynamic check written as an async function: its promise would not be awaited, so its refusal would be lost
    await writeFile(
      join(dir, 'async-check.mjs'),
      `export default { name: 'async', ledgerId: 1500, handlers: [{ kind: 'write', type: '30000', name: 'X', validator: 'X', ledgerId: 1500, validateStatic() {}, async validateDynamic() {}, updateState() {} }] };`,
    );
    const asyncCheck = await loadError(['./async-check.mjs'], dir, NodeErrorCode.PLUGIN_INVALID);
    expect(asyncCheck.data.reason).to.match(/^handlers\[0\]: validateDynamic: expected a synchronous function/);
  });

  it('a node whose plugin does not load does not start, and opens no database', async () => {
    const config = { ...(await soloNodeConfig(dir)), plugins: ['./missing.mjs'], dbDir: 'db-plugin-test' };
    const keys = deriveNodeKeys('Node1', Buffer.from(nodeSeed('Node1')));
    await expectCodeAsync(
      QuireNode.create({ dataDir: dir, config }, { logger: createLogger({ level: 'silent' }), keys }).then(async (node) => node.close()),
      NodeError,
      NodeErrorCode.PLUGIN_NOT_FOUND,
    );
    expect(existsSync(join(dir, 'db-plugin-test'))).to.equal(false);
  });

  it('the config option plugins is a list of distinct non-empty strings', () => {
    expect(mergeConfig(defaultNodeConfig, { plugins: [KV_PLUGIN] }).plugins).to.deep.equal([KV_PLUGIN]);
    expect(defaultNodeConfig.plugins).to.deep.equal([]);
    for (const plugins of ['x', [''], [1], ['a', 'a'], Array.from({ length: 17 }, (_, i) => `p${i}`)]) {
      expect(() => mergeConfig(defaultNodeConfig, { plugins }), JSON.stringify(plugins))
        .to.throw(NodeError)
        .with.property('code', NodeErrorCode.CONFIG_INVALID);
    }
    // the consensus group does not take plugin ledgers: they come from the plugins
    expect(() => mergeConfig(defaultNodeConfig, { consensus: { pluginLedgers: [KV] } }))
      .to.throw(NodeError)
      .with.property('code', NodeErrorCode.CONFIG_INVALID);
  });
});

describe('ledger plugins: ledger, audit txn, catch-up and start-up checks', () => {
  it('a plugin batch is ordered on its ledger and the audit txns record its size, root and state root (deltas after)', async () => {
    const n = await pluginNode();
    try {
      const ex = n.executor;
      expect(n.stores.stateLedgers).to.deep.equal([0, 1, 2, KV]);
      ex.applyBatch(input(1, [nymRequest(trustee, user(40))], 1));
      ex.commitBatch([]);
      const a2 = ex.applyBatch(input(KV, [kvPut('colour', 'blue')], 2));
      expect(a2.discarded).to.deep.equal([]);
      expect(a2.signedLedgers.map((l) => l.ledgerId)).to.deep.equal([KV]);
      expect(a2.stateRoot).to.equal(b58encode(n.stores.states[KV].headRoot));
      ex.commitBatch([]);
      ex.applyBatch(input(1, [nymRequest(trustee, user(41))], 3));
      ex.commitBatch([]);
      await ex.flush();
      const [t1, t2, t3] = [await auditData(n.stores, 1), await auditData(n.stores, 2), await auditData(n.stores, 3)];
      // an empty plugin ledger: its size only
      expect([...t1.ledgerSize.keys()]).to.deep.equal([0, 1, 2, KV]);
      expect(t1.ledgerSize.get(KV)).to.equal(0);
      expect(t1.ledgerRoot.has(KV)).to.equal(false);
      // its batch: root and state root
      expect(t2.ledgerSize.get(KV)).to.equal(1);
      expect(t2.ledgerRoot.get(KV)).to.equal(b58encode(n.stores.ledgers[KV].root));
      expect(t2.stateRoot.get(KV)).to.equal(b58encode(n.stores.states[KV].committedRoot));
      // the next batch of another ledger: a delta
      expect(t3.ledgerRoot.get(KV)).to.equal(1);
      expect(ex.ledgerTargets().get(KV)).to.deep.equal({ size: 1, root: b58encode(n.stores.ledgers[KV].root) });
      expect(ex.ledgerStatus(KV).size).to.equal(1);
      expect(() => ex.ledgerStatus(1002))
        .to.throw(NodeError)
        .with.property('code', NodeErrorCode.EXECUTOR_STATE);

      // another node catches the plugin ledger up: audit ledger first, then the plugin ledger
      const other = await pluginNode();
      try {
        const audit = ex.txnRange(3, 1, 3);
        expect(other.executor.appendCaughtUp(3, audit, [], 3, ex.ledgerStatus(3).root)).to.equal(true);
        const kvTxns = ex.txnRange(KV, 1, 1);
        expect(other.executor.appendCaughtUp(KV, kvTxns, [], 1, ex.ledgerStatus(KV).root)).to.equal(true);
        await other.executor.flush();
        expect(b58encode(other.stores.states[KV].committedRoot)).to.equal(b58encode(n.stores.states[KV].committedRoot));
      } finally {
        await other.kv.close();
      }

      // GET_TXN of the plugin ledger carries the multi-signature of its committed state root, as for ledgers 0-2
      const ms = {
        signature: b58encode(new Uint8Array(96).fill(5)),
        participants: ['Node1', 'Node2', 'Node3'],
        value: {
          ledger_id: KV,
          pool_state_root_hash: b58encode(n.stores.states[0].committedRoot),
          state_root_hash: b58encode(n.stores.states[KV].committedRoot),
          timestamp: 1_700_000_002,
          txn_root_hash: b58encode(n.stores.ledgers[KV].root),
        },
      };
      await n.stores.bls.put(ms);
      const getTxn: Record<string, unknown> = { type: '3', data: { txn: {} } };
      attachMultiSignatures(n.stores, getTxn, { result: getTxn }, '3', { type: '3', ledgerId: KV, data: 1 });
      expect(getTxn.state_proof).to.deep.equal({ multi_signature: ms });
      const audit: Record<string, unknown> = { type: '3', data: { txn: {} } };
      attachMultiSignatures(n.stores, audit, { result: audit }, '3', { type: '3', ledgerId: 3, data: 1 });
      expect(audit).to.not.have.property('state_proof');

      // a node started over these stores without the plugin: PLUGIN_MISSING
      const trail = await AuditTrail.load(n.stores.ledgers[3]);
      expect(checkAgainstAudit(trail, n.stores.ledgers, false)).to.deep.equal([]);
      const withoutPlugin = { 0: n.stores.ledgers[0], 1: n.stores.ledgers[1], 2: n.stores.ledgers[2], 3: n.stores.ledgers[3] };
      expect(() => checkAgainstAudit(trail, withoutPlugin, false))
        .to.throw(NodeError)
        .with.property('code', NodeErrorCode.PLUGIN_MISSING);
    } finally {
      await n.kv.close();
    }
  });
});
