// A node's stores and consensus executor without its hosts, and signed NYM creations to feed it: what the benchmarks
// that drive a node's executor directly share (batch-execute, catchup).
import { createHash } from 'node:crypto';
import { LedgerId, TxnType, b58encode, signatureInput } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import {
  AuditTrail,
  ConsensusExecutor,
  type NodeStores,
  PoolRegistry,
  TRUSTEE_SEED,
  openNodeStores,
  poolGenesis,
  standardDomainGenesis,
  standardPoolNodes,
} from '@quire/node';
import { RequestExecutor, type ExecutorOptions, type Txn } from '@quire/requests';
import { type KvStore, openLevelKvStore, parseGenesis } from '@quire/storage';

/** A node's stores over one LevelDB, its request executor and its consensus executor (durable writes, the default). */
export interface ExecutorNode {
  kv: KvStore;
  stores: NodeStores;
  requests: RequestExecutor;
  executor: ConsensusExecutor;
}

const PORTS = [9701, 9703, 9705, 9707].map((p) => ({ nodePort: p, clientPort: p + 1 }));
const poolTxns = parseGenesis(poolGenesis(standardPoolNodes(PORTS)), { file: 'pool', ledgerId: LedgerId.POOL }).map((e) => e.txn as unknown as Txn);
const domainTxns = parseGenesis(standardDomainGenesis(), { file: 'domain', ledgerId: LedgerId.DOMAIN }).map((e) => e.txn as unknown as Txn);

/** A node over a LevelDB in `dir` holding the standard 4-node pool genesis and the standard domain genesis. */
export async function openExecutorNode(dir: string, requestOptions: ExecutorOptions = {}): Promise<ExecutorNode> {
  const kv = await openLevelKvStore(dir, { writeBufferJitter: 0 });
  const { stores, requestStores } = await openNodeStores(kv);
  const requests = new RequestExecutor(requestOptions, { stores: requestStores });
  await requests.applyGenesis(LedgerId.POOL, structuredClone(poolTxns));
  await requests.applyGenesis(LedgerId.DOMAIN, structuredClone(domainTxns));
  const registry = new PoolRegistry();
  for (const t of poolTxns) registry.apply(t);
  const audit = await AuditTrail.load(stores.ledgers[LedgerId.AUDIT]);
  const executor = new ConsensusExecutor({ durable: true }, { stores, executor: requests, registry, audit });
  return { kv, stores, requests, executor };
}

/**
 * `count` NYM creations by the standard genesis's trustee, for users `first`..`first + count - 1`: a user's dest and
 * verkey come from the SHA-256 of `${label} ${n}`, its reqId is 1,700,000,000,000 + n.
 */
export function trusteeNymRequests(label: string, first: number, count: number): Record<string, unknown>[] {
  const trustee = Ed25519Signer.fromSeed(TRUSTEE_SEED);
  const out: Record<string, unknown>[] = [];
  for (let n = first; n < first + count; n++) {
    const key = createHash('sha256').update(`${label} ${n}`).digest();
    const req: Record<string, unknown> = {
      identifier: trustee.did,
      reqId: 1_700_000_000_000 + n,
      protocolVersion: 2,
      operation: { type: TxnType.NYM, dest: b58encode(key.subarray(0, 16)), verkey: b58encode(key) },
    };
    req.signature = trustee.signBase58(signatureInput(req));
    out.push(req);
  }
  return out;
}
