// Shared fixtures: in-memory stores holding the standard 4-node pool genesis and domain genesis.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ed25519Signer } from '@quire/crypto';
import { LedgerId, signatureInput } from '@quire/common';
import { type ExecutorStores, RequestExecutor, RequestPipeline, type Txn } from '@quire/requests';
import { openMemoryKvStore, parseGenesis } from '@quire/storage';
import { AuditTrail } from '../../src/audit-trail.js';
import { ConsensusExecutor, type NodeStores } from '../../src/consensus-executor.js';
import { type NodeConfig, defaultNodeConfig, mergeConfig } from '../../src/config.js';
import { poolGenesis, standardDomainGenesis, standardPoolNodes, writeGenesisFiles } from '../../src/genesis-gen.js';
import { openNodeStores } from '../../src/node-setup.js';
import { PoolRegistry } from '../../src/pool-registry.js';

export const PORTS = [
  { nodePort: 9701, clientPort: 9702 },
  { nodePort: 9703, clientPort: 9704 },
  { nodePort: 9705, clientPort: 9706 },
  { nodePort: 9707, clientPort: 9708 },
];

export interface Fixture {
  stores: NodeStores;
  requestStores: ExecutorStores;
  reqExecutor: RequestExecutor;
  pipeline: RequestPipeline;
  executor: ConsensusExecutor;
  registry: PoolRegistry;
}

export async function memoryFixture(): Promise<Fixture> {
  const kv = await openMemoryKvStore();
  // the stores as a node opens them (node-setup.ts)
  const { stores, requestStores } = await openNodeStores(kv);
  const reqExecutor = new RequestExecutor({ verifySignatures: true }, { stores: requestStores });
  const pool = parseGenesis(poolGenesis(standardPoolNodes(PORTS)), { file: 'pool', ledgerId: 0 });
  const domain = parseGenesis(standardDomainGenesis(), { file: 'domain', ledgerId: 1 });
  await reqExecutor.applyGenesis(
    0,
    pool.map((e) => e.txn as unknown as Txn),
  );
  await reqExecutor.applyGenesis(
    1,
    domain.map((e) => e.txn as unknown as Txn),
  );
  const registry = new PoolRegistry();
  for (const e of pool) registry.apply(e.txn);
  const audit = await AuditTrail.load(stores.ledgers[LedgerId.AUDIT]);
  const executor = new ConsensusExecutor({ durable: false }, { stores, executor: reqExecutor, registry, audit });
  return { stores, requestStores, reqExecutor, pipeline: new RequestPipeline(reqExecutor, requestStores), executor, registry };
}

export const trustee = Ed25519Signer.fromSeed('000000000000000000000000Trustee1');
export const steward1 = Ed25519Signer.fromSeed('000000000000000000000000Steward1');

let nextReqId = 1_700_000_000_000;

/** A request of `author` with `operation`, signed (JSON-ready object); `reqId` is the next of a counter unless given. */
export function signedRequest(author: Ed25519Signer, operation: Record<string, unknown>, reqId: number = nextReqId++): Record<string, unknown> {
  const req: Record<string, unknown> = { identifier: author.did, reqId, protocolVersion: 2, operation };
  req.signature = author.signBase58(signatureInput(req));
  return req;
}

/** A signed NYM request of `author` writing `target`'s DID and verkey (JSON-ready object); `reqId` as `signedRequest`. */
export function nymRequest(author: Ed25519Signer, target: Ed25519Signer, extra: Record<string, unknown> = {}, reqId?: number): Record<string, unknown> {
  return signedRequest(author, { type: '1', dest: target.did, verkey: target.verkey, ...extra }, reqId);
}

export function user(i: number): Ed25519Signer {
  return Ed25519Signer.fromSeed(`User${i}`.padStart(32, '0'));
}

/**
 * The configuration of a pool of one validator (Node1) whose genesis files are written into `dir`: loopback, free
 * ports, no fsync (the tests that start a QuireNode alone).
 */
export async function soloNodeConfig(dir: string): Promise<NodeConfig> {
  const g = await writeGenesisFiles(dir, poolGenesis(standardPoolNodes([{ nodePort: 9701, clientPort: 9702 }])));
  return mergeConfig(defaultNodeConfig, {
    poolGenesisFile: g.pool,
    domainGenesisFile: g.domain,
    nodeHost: '127.0.0.1',
    nodePort: 0,
    clientHost: '127.0.0.1',
    clientPort: 0,
    durable: false,
  });
}

/**
 * Registers mocha hooks of the enclosing suite that make a temporary directory named from `prefix` with a pool of one
 * validator's configuration in it (`soloNodeConfig`) before its tests and remove it after them; the fields are set once
 * the suite's `before` has run.
 */
export function soloNodeDir(prefix: string): { dir: string; config: NodeConfig } {
  const solo = { dir: '', config: defaultNodeConfig };
  before(async () => {
    solo.dir = await mkdtemp(join(tmpdir(), prefix));
    solo.config = await soloNodeConfig(solo.dir);
  });
  after(async () => {
    await rm(solo.dir, { recursive: true, force: true });
  });
  return solo;
}
