// In-memory harness: real stores (memory KV, Ledger, StateTrie, side stores), an executor with the
// standard local domain genesis (Trustee1, Steward1..4), signing helpers and batch application.
import { parseJson, signatureInput } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { AttributeStore, Ledger, SeqNoIndex, StateTrie, TimestampStore, openMemoryKvStore } from '@quire/storage';
import { RequestExecutor, type ExecutorModules, type ExecutorOptions } from '../../../src/executor/executor.js';
import type { ExecutorStores } from '../../../src/executor/stores.js';
import type { Txn } from '../../../src/handler.js';
import { createDefaultRegistry, type HandlerRegistry } from '../../../src/registry.js';
import { nymHandler } from '../../../src/types/nym.js';

/** The default registry, with the NYM handler added when it is not registered yet. */
export function testRegistry(): HandlerRegistry {
  const r = createDefaultRegistry();
  if (r.get('1') === undefined) r.register(nymHandler);
  return r;
}

export const TRUSTEE = Ed25519Signer.fromSeed('000000000000000000000000Trustee1');
export const STEWARDS = [1, 2, 3, 4].map((i) => Ed25519Signer.fromSeed(`000000000000000000000000Steward${i}`));

export const DOMAIN_GENESIS = `{"reqSignature":{},"txn":{"data":{"dest":"V4SGRU86Z58d6TV7PBUe6f","role":"0","verkey":"~CoRER63DVYnWZtK8uAzNbx"},"metadata":{},"type":"1"},"txnMetadata":{"seqNo":1},"ver":"1"}
{"reqSignature":{},"txn":{"data":{"dest":"Th7MpTaRZVRYnPiabds81Y","role":"2","verkey":"~7TYfekw4GUagBnBVCqPjiC"},"metadata":{"from":"V4SGRU86Z58d6TV7PBUe6f"},"type":"1"},"txnMetadata":{"seqNo":2},"ver":"1"}
{"reqSignature":{},"txn":{"data":{"dest":"EbP4aYNeTHL6q385GuVpRV","role":"2","verkey":"~RHGNtfvkgPEUQzQNtNxLNu"},"metadata":{"from":"V4SGRU86Z58d6TV7PBUe6f"},"type":"1"},"txnMetadata":{"seqNo":3},"ver":"1"}
{"reqSignature":{},"txn":{"data":{"dest":"4cU41vWW82ArfxJxHkzXPG","role":"2","verkey":"~EMoPA6HrpiExVihsVfxD3H"},"metadata":{"from":"V4SGRU86Z58d6TV7PBUe6f"},"type":"1"},"txnMetadata":{"seqNo":4},"ver":"1"}
{"reqSignature":{},"txn":{"data":{"dest":"TWwCRQRZ2ZHMJFn9TzLp7W","role":"2","verkey":"~UhP7K35SAXbix1kCQV4Upx"},"metadata":{"from":"V4SGRU86Z58d6TV7PBUe6f"},"type":"1"},"txnMetadata":{"seqNo":5},"ver":"1"}`;

export function genesisTxns(text: string): Txn[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => parseJson(l) as Txn);
}

export interface Harness {
  executor: RequestExecutor;
  stores: ExecutorStores;
  /** Applies one batch and commits it; returns the batch result. */
  order(ledgerId: number, requests: unknown[], ppTime?: number): Promise<ReturnType<RequestExecutor['applyBatch']>>;
  close(): Promise<void>;
}

export const PP_TIME = 1_700_000_000;

/** Empty in-memory stores: memory KV, the three ledgers and tries, and the side stores. */
export async function openStores(): Promise<ExecutorStores> {
  const kv = await openMemoryKvStore();
  const [l0, l1, l2] = await Promise.all([Ledger.open({ ledgerId: 0 }, { kv }), Ledger.open({ ledgerId: 1 }, { kv }), Ledger.open({ ledgerId: 2 }, { kv })]);
  const [s0, s1, s2] = await Promise.all([
    StateTrie.open({ name: 'pool' }, { kv }),
    StateTrie.open({ name: 'domain' }, { kv }),
    StateTrie.open({ name: 'config' }, { kv }),
  ]);
  return {
    kv,
    ledgers: { 0: l0, 1: l1, 2: l2 },
    states: { 0: s0, 1: s1, 2: s2 },
    attributes: new AttributeStore(kv),
    timestamps: new TimestampStore(kv),
    seqNoIndex: new SeqNoIndex(kv),
  };
}

export interface HarnessOptions extends ExecutorOptions {
  /** Domain genesis txns (default: the standard trustee and stewards). */
  domainGenesis?: Txn[];
  /** Plugin ledgers of the node (LEDGERS_FREEZE). */
  pluginLedgers?: ExecutorModules['pluginLedgers'];
}

export async function createHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const { domainGenesis, pluginLedgers, ...executorOptions } = opts;
  const stores = await openStores();
  const kv = stores.kv;
  const executor = new RequestExecutor(executorOptions, { stores, registry: testRegistry(), ...(pluginLedgers ? { pluginLedgers } : {}) });
  await executor.applyGenesis(1, domainGenesis ?? genesisTxns(DOMAIN_GENESIS));
  let t = PP_TIME;
  return {
    executor,
    stores,
    async order(ledgerId, requests, ppTime) {
      const r = executor.applyBatch(ledgerId, requests, ppTime ?? t++);
      await executor.commit(r.batchId);
      return r;
    },
    close: () => kv.close(),
  };
}

let reqCounter = 1_700_000_000_000_000_000n;
export function nextReqId(): bigint {
  return reqCounter++;
}

/** A request signed by `signer` (single signature) or by several (multi-signature). */
export function signed(
  signers: Ed25519Signer | Ed25519Signer[],
  operation: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const list = Array.isArray(signers) ? signers : [signers];
  const identifier = (extra.identifier as string | undefined) ?? list[0]!.did;
  const req: Record<string, unknown> = { identifier, reqId: nextReqId(), operation, protocolVersion: 2, ...extra };
  const input = signatureInput(req);
  if (Array.isArray(signers)) {
    const sigs: Record<string, string> = {};
    for (const s of list) sigs[s.did] = s.signBase58(input);
    req.signatures = sigs;
  } else req.signature = list[0]!.signBase58(input);
  return req;
}

let seedCounter = 0;
/** A fresh deterministic signer. */
export function newSigner(): Ed25519Signer {
  seedCounter++;
  return Ed25519Signer.fromSeed(`${'0'.repeat(32 - String(seedCounter).length - 4)}User${seedCounter}`);
}

/** NYM operation creating `target` with role. */
export function nymOp(target: Ed25519Signer, role?: string | null): Record<string, unknown> {
  const op: Record<string, unknown> = { type: '1', dest: target.did, verkey: target.verkey };
  if (role !== undefined) op.role = role;
  return op;
}
