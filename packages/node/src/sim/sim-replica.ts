// One simulated node over the real stack: the node's ConsensusExecutor over a RequestExecutor of
// @quire/requests and the ledgers, tries and side stores of @quire/storage on its own key-value
// store, the node's request analyzer, and BLS crypto with the node's keys looked up in its pool
// state at the value's pool state root. A crash drops every object but the key-value store (the
// simulator waits for each event's batch write, as the node does before its next event, so the
// store holds the last completed atomic write); a restart opens everything again from it, as a
// node process does at startup.
import { LedgerId, TxnType, b58decode, b58encode, parseJson } from '@quire/common';
import {
  type ClientRequestBody,
  type ConsensusCrypto,
  type MultiSignature,
  type RequestAnalyzer,
  type RequestCheck,
  createBlsConsensusCrypto,
} from '@quire/consensus';
import { type SimAuditEntry, type SimExecutor, type SimReplica as SimReplicaContract } from '@quire/consensus/sim';
import { type BlsSecretKey, LruCache } from '@quire/crypto';
import { RequestExecutor, type SignatureVerifier, type Txn } from '@quire/requests';
import { type KvStore, openMemoryKvStore, parseGenesis } from '@quire/storage';
import { AuditTrail } from '../audit-trail.js';
import { ConsensusExecutor, type ConsensusExecutorModules, type ConsensusExecutorOptions, type NodeStores, catchupInterrupted } from '../consensus-executor.js';
import { checkAgainstAudit, openNodeStores, popCheckedBlsKey } from '../node-setup.js';
import { PoolRegistry } from '../pool-registry.js';
import { ExecutorRequestAnalyzer } from '../request-analyzer.js';
import { simBlsKey, simNodeKeys } from './sim-identities.js';
import { TearableKvStore } from './tearable-kv.js';

/** What the replicas of one run share (pure caches, and the genesis they all start from). */
export interface SimRunShared {
  /** verified (request digest, signer, key) triples: one ed25519 verification per request per run */
  verifier: SignatureVerifier;
  /** positive request checks by request object (simulated messages pass requests by reference) */
  checks: WeakMap<object, RequestCheck>;
  /** BLS key generation per alias (rotations so far) */
  generations: Map<string, number>;
  poolGenesis: string;
  domainGenesis: string;
}

/** Multi-signature verifications of every simulated node of the process (a pure function of their inputs). */
const blsVerifyCache = new LruCache<string, boolean>(1 << 16);
/** `blskey|blskey_pop` -> the key when its proof of possession verifies (else null) */
const popChecked = new Map<string, Uint8Array | null>();
const decoder = new TextDecoder();

/** The node's ConsensusExecutor plus the read-only view of its committed storage the simulator's checkers use. */
export class SimConsensusExecutor extends ConsensusExecutor implements SimExecutor {
  private readonly rootSets = new Map<number, { size: number; roots: Set<string> }>();

  constructor(
    options: ConsensusExecutorOptions,
    modules: ConsensusExecutorModules,
    private readonly nodeStores: NodeStores,
    /** every multi-signature this node stored, kept by the replica across restarts */
    readonly storedMultiSigs: MultiSignature[],
  ) {
    super(options, modules);
  }

  override commitBatch(multiSigs: MultiSignature[]): ReturnType<ConsensusExecutor['commitBatch']> {
    const committed = super.commitBatch(multiSigs);
    this.storedMultiSigs.push(...multiSigs);
    return committed;
  }

  override appendCaughtUp(...args: Parameters<ConsensusExecutor['appendCaughtUp']>): boolean {
    const ok = super.appendCaughtUp(...args);
    if (ok) this.storedMultiSigs.push(...(args[5] ?? []));
    return ok;
  }

  override storeMultiSignatures(multiSigs: readonly MultiSignature[]): void {
    super.storeMultiSignatures(multiSigs);
    this.storedMultiSigs.push(...multiSigs);
  }

  private ledgerOf(ledgerId: number): NodeStores['ledgers'][0] {
    if (ledgerId !== LedgerId.POOL && ledgerId !== LedgerId.DOMAIN && ledgerId !== LedgerId.CONFIG && ledgerId !== LedgerId.AUDIT)
      throw new RangeError(`no ledger ${ledgerId}`);
    return this.nodeStores.ledgers[ledgerId];
  }

  committedSize(ledgerId: number): number {
    return this.ledgerOf(ledgerId).size;
  }

  /** The stored bytes (MP(txn)) of a committed txn, base64. */
  committedTxn(ledgerId: number, seqNo: number): string | undefined {
    const l = this.ledgerOf(ledgerId);
    if (!(seqNo >= 1 && seqNo <= l.size)) return undefined;
    const bytes = l.getEncodedSync(seqNo);
    return bytes === undefined ? undefined : Buffer.from(bytes).toString('base64');
  }

  auditEntry(seqNo: number): SimAuditEntry {
    const t = this.ledgerOf(LedgerId.AUDIT).getSync(seqNo) as
      { txn?: { data?: { viewNo?: unknown; ppSeqNo?: unknown } }; txnMetadata?: { txnTime?: unknown } } | undefined;
    return { viewNo: Number(t?.txn?.data?.viewNo), ppSeqNo: Number(t?.txn?.data?.ppSeqNo), ppTime: Number(t?.txnMetadata?.txnTime) };
  }

  committedDest(seqNo: number): string | undefined {
    const t = this.ledgerOf(LedgerId.DOMAIN).getSync(seqNo) as { txn?: { type?: unknown; data?: { dest?: unknown } } } | undefined;
    return t?.txn?.type === TxnType.NYM && typeof t.txn.data?.dest === 'string' ? t.txn.data.dest : undefined;
  }

  /** The committed state and ledgers against the last audit txn (its state roots, sizes and txn roots). */
  stateProblem(): string | undefined {
    const audit = this.nodeStores.ledgers[LedgerId.AUDIT];
    if (audit.size === 0) return undefined;
    for (const { ledgerId, stateRoot } of this.auditStateRoots(audit.getSync(audit.size))) {
      if (ledgerId !== LedgerId.POOL && ledgerId !== LedgerId.DOMAIN && ledgerId !== LedgerId.CONFIG) continue;
      const have = b58encode(this.nodeStores.states[ledgerId].committedRoot);
      if (have !== stateRoot) return `has state root ${have} for ledger ${ledgerId}, its last audit txn (${audit.size}) names ${stateRoot}`;
    }
    for (const [ledgerId, target] of this.ledgerTargets()) {
      const st = this.ledgerStatus(ledgerId);
      if (st.size !== target.size || st.root !== target.root)
        return `has ledger ${ledgerId} at size ${st.size}, its last audit txn (${audit.size}) names size ${target.size}`;
    }
    return undefined;
  }

  isCommittedTxnRoot(ledgerId: number, txnRoot: string): boolean {
    const l = this.ledgerOf(ledgerId);
    let known = this.rootSets.get(ledgerId);
    if (known === undefined || known.size > l.size) {
      known = { size: 0, roots: new Set([b58encode(l.rootAtSync(0))]) };
      this.rootSets.set(ledgerId, known);
    }
    for (let s = known.size + 1; s <= l.size; s++) known.roots.add(b58encode(l.rootAtSync(s)));
    known.size = l.size;
    return known.roots.has(txnRoot);
  }
}

/** The node's request analyzer with positive results shared by the replicas of a run. */
class SharedCheckAnalyzer implements RequestAnalyzer {
  constructor(
    private readonly inner: RequestAnalyzer,
    private readonly shared: WeakMap<object, RequestCheck>,
  ) {}

  analyze(request: ClientRequestBody): RequestCheck {
    const hit = this.shared.get(request);
    if (hit !== undefined) return hit;
    const r = this.inner.analyze(request);
    // every signer of the simulated workload is a genesis DID whose key never changes, so a
    // successful check is a pure function of the request; failures are not shared
    if (r.ok) this.shared.set(request, r);
    return r;
  }
}

/** A replica's options: plain data. */
export interface SimReplicaOptions {
  alias: string;
}

/** A replica's live dependencies: what the replicas of the run share, and the key-value store (a fresh one in memory by default). */
export interface SimReplicaModules {
  shared: SimRunShared;
  kv?: KvStore;
}

/** What one incarnation of a replica runs over its key-value store: built anew at each (re)start. */
interface Incarnation {
  stores: NodeStores;
  executor: SimConsensusExecutor;
  requests: RequestAnalyzer;
  crypto: ConsensusCrypto;
}

export class SimReplica implements SimReplicaContract<SimConsensusExecutor> {
  readonly alias: string;
  /** every multi-signature this node stored, across restarts */
  private readonly multiSigs: MultiSignature[];
  private readonly shared: SimRunShared;
  private readonly kv: TearableKvStore;
  private running: Incarnation;

  private constructor(options: SimReplicaOptions, modules: { shared: SimRunShared; kv: TearableKvStore; multiSigs: MultiSignature[] }, first: Incarnation) {
    this.alias = options.alias;
    this.shared = modules.shared;
    this.kv = modules.kv;
    this.multiSigs = modules.multiSigs;
    this.running = first;
  }

  static async create(options: SimReplicaOptions, modules: SimReplicaModules): Promise<SimReplica> {
    const kv = new TearableKvStore(modules.kv ?? (await openMemoryKvStore()));
    const multiSigs: MultiSignature[] = [];
    return new SimReplica(options, { shared: modules.shared, kv, multiSigs }, await startIncarnation(options.alias, kv, modules.shared, multiSigs));
  }

  get executor(): SimConsensusExecutor {
    return this.running.executor;
  }

  get requests(): RequestAnalyzer {
    return this.running.requests;
  }

  get crypto(): ConsensusCrypto {
    return this.running.crypto;
  }

  private get stores(): NodeStores {
    return this.running.stores;
  }

  /** R_committed of the storage: what a node process starts its core with. */
  validators(): string[] {
    return [...this.executor.registry.validators];
  }

  /**
   * Everything volatile is lost; the key-value store keeps every completed write (the writes after
   * an armed tear point are lost: they never land).
   */
  async crash(): Promise<void> {
    try {
      await this.executor.flush();
    } catch {
      // a failed write is what a crash would have lost
    }
  }

  async restart(): Promise<void> {
    this.kv.armTear(undefined);
    this.running = await startIncarnation(this.alias, this.kv, this.shared, this.multiSigs);
  }

  /** After `writes` more batch writes, every later write is lost (the simulator crashes the node). */
  armTear(writes: number | undefined, afterLast?: boolean): void {
    this.kv.armTear(writes, afterLast);
  }

  torn(): boolean {
    return this.kv.torn;
  }

  /** The node crashes at the first flush that follows a batch write, losing the writes still in flight then. */
  armCrashAtFlush(): void {
    this.kv.armCrashAtFlush();
  }

  /** the tear came at a flush: the replies of that flush were sent */
  tornAtFlush(): boolean {
    return this.kv.tornAtFlush;
  }

  settle(): Promise<void> {
    const flushed = this.executor.flush();
    if (!this.kv.slowWrites) return flushed;
    // the crash point of armCrashAtFlush: the instant the node's flush resolves
    return flushed.finally(() => this.kv.flushed());
  }

  async close(): Promise<void> {
    await this.kv.close();
  }

  /**
   * Replays this node's committed txns from genesis on a fresh replica (as a catch-up from
   * genesis would: audit ledger first, then pool, domain, config) and compares the resulting state
   * and ledger roots with this node's; what differs, if anything.
   */
  async replayProblem(): Promise<string | undefined> {
    const fresh = await SimReplica.create({ alias: this.alias }, { shared: this.shared });
    try {
      for (const ledgerId of [LedgerId.AUDIT, LedgerId.POOL, LedgerId.DOMAIN, LedgerId.CONFIG]) {
        const mine = this.executor.ledgerStatus(ledgerId);
        const from = fresh.executor.ledgerStatus(ledgerId).size;
        if (from > mine.size) return `replay: genesis of ledger ${ledgerId} is longer than the node's ledger`;
        if (from === mine.size) continue;
        const txns = this.executor.txnRange(ledgerId, from + 1, mine.size);
        if (!fresh.executor.appendCaughtUp(ledgerId, txns, [], mine.size, mine.root))
          return `replay: its committed txns ${from + 1}..${mine.size} of ledger ${ledgerId} do not apply from genesis`;
        await fresh.executor.flush();
      }
      for (const ledgerId of [LedgerId.POOL, LedgerId.DOMAIN, LedgerId.CONFIG]) {
        const a = b58encode(this.stores.states[ledgerId].committedRoot);
        const b = b58encode(fresh.stores.states[ledgerId].committedRoot);
        if (a !== b) return `replay: state root of ledger ${ledgerId} is ${a}, a replay from genesis gives ${b}`;
      }
      return undefined;
    } finally {
      await fresh.close();
    }
  }

  /** the node's dest (NODE.dest), for tests */
  get dest(): string {
    return simNodeKeys(this.alias).dest;
  }
}

/** Startup over the key-value store, as a node process does: genesis into empty ledgers, registry, audit trail, executor. */
async function startIncarnation(alias: string, kv: TearableKvStore, shared: SimRunShared, multiSigs: MultiSignature[]): Promise<Incarnation> {
  const { stores, requestStores } = await openNodeStores(kv);
  // the run's verified-signature cache: keyed by (digest, signer, key), so sharing it is sound
  const reqExecutor = new RequestExecutor({ verifySignatures: true }, { stores: requestStores, verifier: shared.verifier });
  if (stores.ledgers[LedgerId.POOL].size === 0) {
    for (const [ledgerId, text, file] of [
      [LedgerId.POOL, shared.poolGenesis, 'pool'],
      [LedgerId.DOMAIN, shared.domainGenesis, 'domain'],
    ] as const) {
      await reqExecutor.applyGenesis(
        ledgerId,
        parseGenesis(text, { file, ledgerId }).map((e) => e.txn as unknown as Txn),
      );
    }
  }
  const registry = new PoolRegistry();
  const pool = stores.ledgers[LedgerId.POOL];
  for (let s = 1; s <= pool.size; s++) registry.apply(pool.getSync(s));
  const audit = await AuditTrail.load(stores.ledgers[LedgerId.AUDIT]);
  checkAgainstAudit(audit, stores.ledgers, catchupInterrupted(kv));
  const executor = new SimConsensusExecutor({ durable: false }, { stores, executor: reqExecutor, registry, audit }, stores, multiSigs);
  return {
    stores,
    executor,
    requests: new SharedCheckAnalyzer(new ExecutorRequestAnalyzer(reqExecutor), shared.checks),
    crypto: replicaCrypto(alias, executor, stores.states[LedgerId.POOL], shared.generations),
  };
}

/** BLS with the node's keys looked up in its pool state at the value's pool state root (its genesis key or a rotation). */
function replicaCrypto(alias: string, executor: SimConsensusExecutor, poolState: NodeStores['states'][0], generations: Map<string, number>): ConsensusCrypto {
  const destOf = (a: string): string | undefined => executor.uncommittedRegistry.destOf(a) ?? executor.registry.destOf(a);
  const recordAt = (a: string, root: string): Record<string, unknown> | undefined => {
    const dest = destOf(a);
    if (dest === undefined) return undefined;
    try {
      const raw = poolState.getAt(b58decode(root), dest);
      return raw === undefined ? undefined : (parseJson(decoder.decode(raw)) as Record<string, unknown>);
    } catch {
      return undefined;
    }
  };
  return createBlsConsensusCrypto({
    secretKeyAt: (root): BlsSecretKey => {
      const registered = recordAt(alias, root)?.blskey;
      for (let g = generations.get(alias) ?? 0; g > 0; g--) if (simBlsKey(alias, g).blskey === registered) return simBlsKey(alias, g).secret;
      return simBlsKey(alias, 0).secret;
    },
    publicKeyAt: (peer, root) => popCheckedBlsKey(recordAt(peer, root), popChecked),
    verifyCache: blsVerifyCache,
  });
}
