// The BatchExecutor the consensus core drives (consensus.md §3.3, §3.8, §3.9, §3.11): a thin
// adapter over the RequestExecutor of @quire/requests, which validates, applies, reverts, commits
// and appends caught-up txns synchronously. This adapter adds what is the node's: one audit txn per
// batch with the delta rules of formats.md §10.1 (AuditTrail), the validator registry R (committed
// and uncommitted), the BLS multi-signatures stored with the batch, and the write of each committed
// batch: `commitBatch` puts everything of the oldest applied batch into ONE WriteBatch (ledger,
// state, audit txn, seqNo/digest index, ts-root, attributes, multi-signatures) and starts writing
// it; `flush()` resolves when every started write is durable, and the node awaits it before it
// answers clients (not before it handles the next event: the next batch is ordered while a write
// lands, and the answers follow each batch's write, node.ts onOrdered).
//
// It lives in the node, not in requests or consensus: it implements the consensus interface over
// the requests implementation and the node's stores, which only the composition root may combine
// (requests never imports consensus; consensus imports only the interfaces of requests).
import {
  BoundedFifo,
  b58decode,
  b58decodeOrUndefined,
  b58encode,
  decodeMsgpack,
  integerKeyedMap,
  LedgerId,
  MsgpackEncoded,
  type Txn as CommonTxn,
} from '@quire/common';
import type { AppliedBatch, ApplyBatchInput, AuditSummary, BatchExecutor, CommittedBatch, MultiSignature, SignedLedgerRoots } from '@quire/consensus';
import { type RequestExecutor, type Txn, wrapReason } from '@quire/requests';
import {
  type AttributeStore,
  type BlsStore,
  type KvStore,
  type Ledger,
  type SeqNoIndex,
  type StateTrie,
  type TimestampStore,
  type WriteBatch,
  multiSignatureProblem,
  verifyConsistency,
} from '@quire/storage';
import { NodeError, NodeErrorCode, reasonOf } from './errors.js';
import { rootText } from './client-replies.js';
import type { PoolRegistry } from './pool-registry.js';
import type { AuditRecord, AuditTrail } from './audit-trail.js';
import { catchupProofCheck, checkCommittedSizes } from './executor-steps.js';
import { RegistryHistory, changedNodes } from './registry-history.js';

/** A ledger with a state: pool 0, domain 1, config 2, or a plugin ledger (ids from 1000). */
export type StateLedger = number;
/** The base ledgers with a state. */
export const STATE_LEDGERS: readonly StateLedger[] = [0, 1, 2];
export const AUDIT_LEDGER = 3;

export interface NodeStores {
  kv: KvStore;
  /** the base ledgers 0-3 and each plugin ledger */
  ledgers: Record<0 | 1 | 2 | 3, Ledger> & Record<number, Ledger>;
  /** the states of ledgers 0-2 and of each plugin ledger */
  states: Record<0 | 1 | 2, StateTrie> & Record<number, StateTrie>;
  /** the ledgers with a state, ascending: 0, 1, 2 and the plugin ledgers (default STATE_LEDGERS: no plugins) */
  stateLedgers?: readonly StateLedger[];
  bls: BlsStore;
  seqNoIndex: SeqNoIndex;
  timestamps: TimestampStore;
  attributes: AttributeStore;
}

/** What the adapter keeps of an applied batch besides what the request executor keeps. */
interface Applied {
  batchId: number;
  ledgerId: StateLedger;
  ppSeqNo: number;
  ppTime: number;
  audit: AuditRecord;
  registryBefore: PoolRegistry;
}

export interface ConsensusExecutorOptions {
  /** sync every batch write (EnsureLedgerDurability) */
  durable: boolean;
}

export interface ConsensusExecutorModules {
  stores: NodeStores;
  /** applies, reverts and commits the requests; built over the same stores */
  executor: RequestExecutor;
  /** R_committed at startup (from the pool ledger) */
  registry: PoolRegistry;
  audit: AuditTrail;
  /** called after each committed batch's write, with the committed pool txns (registry rebuild) */
  onCommitted?: (ledgerId: number, txns: readonly Txn[]) => void;
  /**
   * Told once when a commit failed after it had begun to change the executor's state (COMMIT_FAILED):
   * memory and storage may disagree from then on, so the node must stop (a restart reopens
   * everything from the last durable write). Every later call of the executor throws the same error.
   * Also told, once, when a batch write failed (WRITE_FAILED; later writes are not attempted).
   */
  onFatal?: (error: NodeError) => void;
}

/**
 * Bucket of the catch-up progress mark: present while a catch-up's writes have left ledgers 0-2
 * behind the audit ledger (it goes into the same atomic write as the caught-up txns), so that
 * startup can tell an interrupted catch-up (to finish) from a torn or lost write (to refuse).
 */
export const CATCHUP_MARK_BUCKET = 'catchup-progress';
const CATCHUP_MARK_KEY = new TextEncoder().encode('ledgers-behind-audit');

/** Whether the last catch-up write left ledgers behind the audit ledger (a catch-up was cut short). */
export function catchupInterrupted(kv: KvStore): boolean {
  return kv.getSync(CATCHUP_MARK_BUCKET, CATCHUP_MARK_KEY) !== undefined;
}

/** Committed batches signedReadRoot looks back through for a state root with a multi-signature. */
const READ_ROOT_LOOKBACK = 16;

export class ConsensusExecutor implements BatchExecutor {
  private readonly stores: NodeStores;
  /** ledgers with a state: 0, 1, 2 and the plugin ledgers */
  private readonly stateLedgers: readonly StateLedger[];
  private readonly ex: RequestExecutor;
  private readonly audit: AuditTrail;
  private readonly applied: Applied[] = [];
  private registryCommitted: PoolRegistry;
  private registryHead: PoolRegistry;
  private writes: Promise<void> = Promise.resolve();
  private writeError: Error | undefined;
  /** a commit failed half-way: nothing more is applied, committed or caught up */
  private commitError: NodeError | undefined;
  private readonly onFatal: ((error: NodeError) => void) | undefined;
  private readonly opts: ConsensusExecutorOptions;
  private readonly onCommitted: ((ledgerId: number, txns: readonly Txn[]) => void) | undefined;
  private readonly history: RegistryHistory;

  constructor(options: ConsensusExecutorOptions, modules: ConsensusExecutorModules) {
    this.opts = options;
    this.stores = modules.stores;
    this.stateLedgers = modules.stores.stateLedgers ?? STATE_LEDGERS;
    this.ex = modules.executor;
    this.audit = modules.audit;
    this.registryCommitted = modules.registry.clone();
    this.registryHead = modules.registry.clone();
    this.onCommitted = modules.onCommitted;
    this.onFatal = modules.onFatal;
    this.history = new RegistryHistory(this.stores.ledgers[LedgerId.POOL], this.stores.ledgers[AUDIT_LEDGER]);
    this.history.noteRoot(b58encode(this.stores.states[LedgerId.POOL].committedRoot), this.stores.ledgers[LedgerId.POOL].size);
  }

  /** R_committed */
  get registry(): PoolRegistry {
    return this.registryCommitted;
  }

  /** R_uncommitted: the pool registry after the last applied batch */
  get uncommittedRegistry(): PoolRegistry {
    return this.registryHead;
  }

  /** Resolves when every batch write started so far is on disk; rejects with WRITE_FAILED. */
  async flush(): Promise<void> {
    await this.writes;
    if (this.writeError !== undefined) throw new NodeError(NodeErrorCode.WRITE_FAILED, { reason: reasonOf(this.writeError) }, { cause: this.writeError });
  }

  get uncommittedBatches(): number {
    return this.applied.length;
  }

  uncommittedPoolStateRoot(): string {
    return b58encode(this.stores.states[LedgerId.POOL].headRoot);
  }

  isPayloadCommitted(payloadDigest: string): boolean {
    return this.ex.isPayloadCommitted(payloadDigest);
  }

  applyBatch(input: ApplyBatchInput): AppliedBatch {
    if (this.commitError !== undefined) throw this.commitError;
    if (this.writeError !== undefined) throw new NodeError(NodeErrorCode.WRITE_FAILED, { reason: reasonOf(this.writeError) });
    const ledgerId = input.ledgerId;
    if (!this.isStateLedger(ledgerId)) throw new NodeError(NodeErrorCode.EXECUTOR_STATE, { reason: `batch for ledger ${ledgerId}` });
    const registryBefore = this.registryHead.clone();
    const r = this.ex.applyBatch(ledgerId, input.requests, input.ppTime);
    const discarded: number[] = [];
    const rejectReasons: string[] = [];
    for (const res of r.results) {
      if (res.valid) {
        if (ledgerId === LedgerId.POOL) this.registryHead.apply(res.txn);
      } else {
        discarded.push(res.index);
        rejectReasons.push(wrapReason(res.error, res.identifier, res.reqId));
      }
    }
    const ledgers = this.stores.ledgers;
    // every ledger with a state, plugin ledgers included (indy-plenum's audit txn names each ledger of the node)
    const all = this.stateLedgers;
    const sizes = new Map<number, number>(all.map((l) => [l, ledgers[l].uncommittedSize]));
    const roots = new Map<number, string>(all.map((l) => [l, b58encode(ledgers[l].uncommittedRoot)]));
    const stateRoots = new Map<number, string>(all.map((l) => [l, b58encode(this.stores.states[l].headRoot)]));
    const record = this.audit.next({
      ledgerId,
      viewNo: input.originalViewNo,
      ppSeqNo: input.ppSeqNo,
      ppTime: input.ppTime,
      digest: input.digest,
      sizes,
      roots,
      stateRoots,
      primaries: input.primaries,
      nodeReg: [...this.registryHead.validators],
    });
    const auditLedger = ledgers[AUDIT_LEDGER];
    auditLedger.append([record.txn as unknown as CommonTxn]);
    this.applied.push({ batchId: r.batchId, ledgerId, ppSeqNo: input.ppSeqNo, ppTime: input.ppTime, audit: record, registryBefore });
    // the audit txn signs the roots it names: the ones it was given above
    const signedLedgers: SignedLedgerRoots[] = record.signed;
    return {
      discarded,
      rejectReasons,
      stateRoot: b58encode(r.stateRoot),
      txnRoot: b58encode(r.txnRoot),
      auditRoot: b58encode(auditLedger.uncommittedRoot),
      signedLedgers,
      nodeReg: [...this.registryHead.validators],
    };
  }

  revertLastBatch(): void {
    if (this.commitError !== undefined) throw this.commitError;
    const b = this.applied.pop();
    if (b === undefined) throw new NodeError(NodeErrorCode.EXECUTOR_STATE, { reason: 'revert without an applied batch' });
    this.ex.revert(1);
    this.stores.ledgers[AUDIT_LEDGER].discard(1);
    this.audit.revert();
    this.registryHead = b.registryBefore;
  }

  /**
   * Commits the oldest applied batch into one WriteBatch and starts writing it. Everything that can
   * refuse is checked before anything changes: a multi-signature the BLS store would refuse (the core
   * stores only verified ones, so never one from it) is left out with a warning instead of failing
   * the batch, whose commit is what every honest node must agree on. Should a step fail once the
   * commit has begun (a bug, not bad input), the executor is failed for good (COMMIT_FAILED, every
   * later call throws it) and `onFatal` is told: its memory may no longer match storage.
   */
  commitBatch(multiSigs: MultiSignature[]): CommittedBatch {
    if (this.commitError !== undefined) throw this.commitError;
    const b = this.applied[0];
    if (b === undefined) throw new NodeError(NodeErrorCode.EXECUTOR_STATE, { reason: 'commit without an applied batch' });
    const storable: MultiSignature[] = [];
    for (const ms of multiSigs) {
      const problem = multiSignatureProblem(ms);
      if (problem === undefined) storable.push(ms);
      else this.log?.(`multi-signature of batch ${b.ppSeqNo} left out: bad ${problem}`);
    }
    try {
      return this.commitOldest(b, storable);
    } catch (e) {
      this.commitError = new NodeError(NodeErrorCode.COMMIT_FAILED, { ppSeqNo: b.ppSeqNo, reason: reasonOf(e) }, { cause: e });
      this.onFatal?.(this.commitError);
      throw this.commitError;
    }
  }

  /** commitBatch once its input is checked: `b` is the oldest applied batch, `multiSigs` are all accepted by the BLS store. */
  private commitOldest(b: Applied, multiSigs: readonly MultiSignature[]): CommittedBatch {
    this.applied.shift();
    const s = this.stores;
    const wb = s.kv.batch();
    const [c] = this.ex.commitInto(wb, b.batchId);
    if (c?.batchId !== b.batchId)
      throw new NodeError(NodeErrorCode.EXECUTOR_STATE, { reason: `request executor committed ${String(c?.batchId)} instead of batch ${b.batchId}` });
    void s.ledgers[AUDIT_LEDGER].commit(1, wb);
    // the request executor records the batch ledger's root; the audit txn signs the others too
    for (const l of b.audit.signed) if (l.ledgerId !== b.ledgerId) s.timestamps.set(l.ledgerId, b.ppTime, b58decode(l.stateRoot), wb);
    for (const ms of this.newestByRoot(multiSigs)) s.bls.put(ms, wb);
    this.audit.commit(b.audit, b58encode(s.ledgers[AUDIT_LEDGER].root));
    this.startWrite(wb);
    let changed: string[] = [];
    if (b.ledgerId === LedgerId.POOL && c.txns.length > 0) {
      changed = changedNodes(this.registryCommitted, c.txns);
      this.registryCommitted = this.registryCommitted.clone();
      for (const t of c.txns) this.registryCommitted.apply(t);
      this.history.noteRoot(b58encode(c.stateRoot), s.ledgers[LedgerId.POOL].size);
    }
    if (c.txns.length > 0) this.onCommitted?.(b.ledgerId, c.txns);
    if (this.applied.length === 0) this.registryHead = this.registryCommitted.clone();
    return {
      ledgerId: b.ledgerId,
      ppSeqNo: b.ppSeqNo,
      txns: c.requests.map((d) => ({ digest: d.digest, seqNo: d.seqNo })),
      nodeReg: b.audit.nodeReg,
      ...(changed.length > 0 ? { changedNodes: changed } : {}),
    };
  }

  /** duration of the last batch write, ms (metrics) */
  lastWriteMs = 0;

  /** optional diagnostic sink (the node's logger) */
  log: ((msg: string) => void) | undefined;

  /** Chains a batch write behind the earlier ones (batches land in commit order). */
  private startWrite(wb: WriteBatch): void {
    const started = Date.now();
    this.writes = this.writes.then(async () => {
      if (this.writeError !== undefined) return;
      try {
        await wb.write({ sync: this.opts.durable });
      } catch (e) {
        this.writeError = e instanceof Error ? e : new NodeError(NodeErrorCode.WRITE_FAILED, { reason: String(e) });
        // at once, not only at the next flush: a node that cannot write must not go on voting
        this.onFatal?.(new NodeError(NodeErrorCode.WRITE_FAILED, { reason: reasonOf(this.writeError) }, { cause: this.writeError }));
        return;
      }
      this.lastWriteMs = Date.now() - started;
    });
  }

  lastAudit(): AuditSummary | undefined {
    return this.audit.summary();
  }

  auditRootAt(size: number): string {
    const known = this.audit.rootAt(size);
    if (known !== undefined) return known;
    return this.rootAt(AUDIT_LEDGER, size);
  }

  /** The original view and batch digest of the batch committed at `ppSeqNo`, from its audit txn. */
  committedBatch(ppSeqNo: number): { viewNo: number; digest: string } | undefined {
    const audit = this.stores.ledgers[AUDIT_LEDGER];
    if (!Number.isSafeInteger(ppSeqNo) || ppSeqNo < 1 || ppSeqNo > audit.size) return undefined;
    const data = (audit.getSync(ppSeqNo) as { txn?: { data?: Record<string, unknown> } } | undefined)?.txn?.data;
    const viewNo = data?.viewNo;
    const digest = data?.digest;
    if (data?.ppSeqNo !== ppSeqNo || typeof viewNo !== 'number' || typeof digest !== 'string') return undefined;
    return { viewNo, digest };
  }

  // ---- catch-up -------------------------------------------------------------------------------

  ledgerStatus(ledgerId: number): { size: number; root: string } {
    const l = this.ledger(ledgerId);
    return { size: l.size, root: b58encode(l.root) };
  }

  /** Committed root at `size`: O(log n) reads of the ledger's hash store. */
  rootAt(ledgerId: number, size: number): string {
    const l = this.ledger(ledgerId);
    checkCommittedSizes(l, 0, size);
    return b58encode(size === l.size ? l.root : l.rootAtSync(size));
  }

  /** RFC 6962 consistency proof between two committed sizes: O(log n) reads of the hash store. */
  consistencyProof(ledgerId: number, oldSize: number, newSize: number): string[] {
    const l = this.ledger(ledgerId);
    checkCommittedSizes(l, oldSize, newSize);
    return l.consistencyProofSync(oldSize, newSize).map((h) => b58encode(h));
  }

  verifyConsistency(oldSize: number, oldRoot: string, newSize: number, newRoot: string, proof: readonly string[]): boolean {
    try {
      verifyConsistency(
        oldSize,
        newSize,
        b58decode(oldRoot),
        b58decode(newRoot),
        proof.map((p) => b58decode(p)),
      );
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Committed txns `from`..`to` in their catch-up form: for ledgers 0-2 the request executor's
   * (ordered ATTRIB txns carry their `raw` / `enc` original from the attribute store, formats.md
   * 12.1), every other txn given as its stored bytes MP(txn) (MsgpackEncoded, written verbatim into the
   * CATCHUP_REP: a seeder neither decodes nor encodes it again); audit txns as stored, decoded (the
   * seeder reads the roots they name).
   */
  txnRange(ledgerId: number, from: number, to: number): unknown[] {
    const l = this.ledger(ledgerId);
    if (this.isStateLedger(ledgerId)) return this.ex.catchupTxnsEncoded(ledgerId, from, to);
    const out: unknown[] = [];
    for (let seqNo = Math.max(1, from); seqNo <= Math.min(to, l.size); seqNo++) out.push(l.getSync(seqNo));
    return out;
  }

  /**
   * Verifies caught-up txns against the target (root at the target size through `consProof`),
   * applies them to state and commits ledger, state, indexes and ts-root in one write (the request
   * executor does all of it for ledgers 0-2; audit txns are the node's), with the multi-signatures
   * the consensus core checked (formats.md §12.1). Nothing is kept when they do not verify or do not
   * apply.
   */
  appendCaughtUp(
    ledgerId: number,
    txns: readonly unknown[],
    consProof: readonly string[],
    targetSize: number,
    targetRoot: string,
    multiSigs: readonly MultiSignature[] = [],
  ): boolean {
    if (this.applied.length > 0 || this.writeError !== undefined || this.commitError !== undefined || !Array.isArray(txns) || txns.length === 0) return false;
    // txns of another node's txnRange handed over in process (a replay) are read as the wire reads them
    if (txns.some((t) => t instanceof MsgpackEncoded)) {
      try {
        txns = txns.map((t: unknown) => (t instanceof MsgpackEncoded ? decodeMsgpack(t.bytes, { keepMapsAtDepth: 0 }) : t));
      } catch {
        return false;
      }
    }
    const proves = catchupProofCheck(consProof, targetSize, targetRoot);
    if (proves === undefined) return false;
    const wb = this.stores.kv.batch();
    let stored: readonly Txn[] = [];
    if (ledgerId === AUDIT_LEDGER) {
      if (!this.appendAuditTxns(txns, wb, proves)) return false;
    } else if (this.isStateLedger(ledgerId)) {
      try {
        stored = this.ex.appendCaughtUp(ledgerId, txns, wb, proves).txns;
      } catch (e) {
        this.log?.(`catch-up txns of ledger ${ledgerId} refused: ${reasonOf(e)}`);
        return false;
      }
      if (ledgerId === LedgerId.POOL) {
        this.registryCommitted = this.registryCommitted.clone();
        for (const t of stored) this.registryCommitted.apply(t);
      }
      this.registryHead = this.registryCommitted.clone();
    } else return false;
    this.putMultiSignatures(multiSigs, wb);
    this.markCatchupProgress(wb);
    this.startWrite(wb);
    if (ledgerId !== AUDIT_LEDGER) this.onCommitted?.(ledgerId, stored);
    return true;
  }

  /** Sets the catch-up mark in `wb` while a ledger is behind the audit ledger's target for it, else clears it. */
  private markCatchupProgress(wb: WriteBatch): void {
    const targets = this.audit.targets();
    const behind = this.stateLedgers.some((l) => this.stores.ledgers[l].size < (targets.get(l)?.size ?? 0));
    if (behind) wb.put(CATCHUP_MARK_BUCKET, CATCHUP_MARK_KEY, new Uint8Array([1]));
    else wb.del(CATCHUP_MARK_BUCKET, CATCHUP_MARK_KEY);
  }

  /** Multi-signatures received in catch-up and checked by the core, in a write of their own. */
  storeMultiSignatures(multiSigs: readonly MultiSignature[]): void {
    if (this.writeError !== undefined || this.commitError !== undefined || multiSigs.length === 0) return;
    const wb = this.stores.kv.batch();
    this.putMultiSignatures(multiSigs, wb);
    this.startWrite(wb);
  }

  /** Puts multi-signatures into `wb` by state root; a malformed one (never from the core) is left out. */
  private putMultiSignatures(multiSigs: readonly MultiSignature[], wb: WriteBatch): void {
    const wellFormed: MultiSignature[] = [];
    for (const ms of multiSigs) {
      const problem = multiSignatureProblem(ms);
      if (problem === undefined) wellFormed.push(ms);
      else this.log?.(`catch-up multi-signature left out: bad ${problem}`);
    }
    for (const ms of this.newestByRoot(wellFormed)) this.stores.bls.put(ms, wb);
  }

  /** state root -> timestamp of the multi-signature last put for it here (its write may still be on the way) */
  private readonly putTimestamps = new BoundedFifo<string, number>(1024);
  /** per state ledger: the last unsigned committed root (base58) reads were asked at, and the root chosen for it */
  private readonly readRoots = new Map<StateLedger, { committed: string; root: Uint8Array }>();

  /**
   * The multi-signatures to put: per state root the one with the latest timestamp (a root kept by
   * empty batches is signed again at each), and none that would replace a later one stored or on its
   * way: a valid but older multi-signature (a primary may carry any it saw) never makes the
   * state proofs of a root look stale to clients' freshness checks.
   */
  private newestByRoot(multiSigs: readonly MultiSignature[]): MultiSignature[] {
    const byRoot = new Map<string, MultiSignature>();
    for (const ms of multiSigs) {
      const prev = byRoot.get(ms.value.state_root_hash);
      if (prev === undefined || ms.value.timestamp >= prev.value.timestamp) byRoot.set(ms.value.state_root_hash, ms);
    }
    const out: MultiSignature[] = [];
    for (const [root, ms] of byRoot) {
      const later = Math.max(this.putTimestamps.get(root) ?? -1, this.multiSignatureFor(root)?.value.timestamp ?? -1);
      if (ms.value.timestamp < later) continue;
      out.push(ms);
      this.putTimestamps.setNewest(root, ms.value.timestamp);
    }
    return out;
  }

  /** The state roots an audit txn (as stored and sent in catch-up) names: its `stateRoot` map. */
  auditStateRoots(auditTxn: unknown): { ledgerId: number; stateRoot: string }[] {
    const data = (auditTxn as { txn?: { data?: { stateRoot?: unknown } } } | null)?.txn?.data;
    if (data === null || typeof data !== 'object' || data.stateRoot === undefined) return [];
    let roots: Map<number, unknown>;
    try {
      roots = integerKeyedMap(data.stateRoot);
    } catch {
      return [];
    }
    const out: { ledgerId: number; stateRoot: string }[] = [];
    for (const [ledgerId, root] of roots) if (this.isStateLedger(ledgerId) && typeof root === 'string') out.push({ ledgerId, stateRoot: root });
    return out;
  }

  /**
   * The root reads of `ledgerId` are answered at: the committed state root when it has a
   * multi-signature, else the newest root of the last READ_ROOT_LOOKBACK committed batches that has
   * one (a batch ordered by catch-up, or whose multi-signature is not written yet, has none), else
   * the committed root. An answer at a signed root can be verified by the client; one a batch
   * older is recognised as such by a client that has seen the newer write, and asked again.
   */
  signedReadRoot(ledgerId: StateLedger): Uint8Array {
    const trie = this.stores.states[ledgerId];
    const committed = trie.committedRoot;
    const key = rootText(committed); // b58encode, remembered for the reads of the same root
    if (this.multiSignatureFor(key) !== undefined) return committed;
    // the look-back reads audit txns: done once per committed root, not per read
    const known = this.readRoots.get(ledgerId);
    if (known?.committed === key) return known.root;
    const root = this.newestSignedRoot(ledgerId) ?? committed;
    this.readRoots.set(ledgerId, { committed: key, root });
    return root;
  }

  /** The newest state root of `ledgerId` among the last READ_ROOT_LOOKBACK committed batches that has a multi-signature. */
  private newestSignedRoot(ledgerId: StateLedger): Uint8Array | undefined {
    const trie = this.stores.states[ledgerId];
    const audit = this.stores.ledgers[AUDIT_LEDGER];
    for (let s = audit.size; s >= 1 && s > audit.size - READ_ROOT_LOOKBACK; s--) {
      let txn: unknown;
      try {
        txn = audit.getSync(s);
      } catch {
        return undefined;
      }
      const named = this.auditStateRoots(txn).find((r) => r.ledgerId === ledgerId)?.stateRoot;
      if (named === undefined || this.multiSignatureFor(named) === undefined) continue;
      const root = b58decodeOrUndefined(named);
      if (root !== undefined && trie.hasRoot(root)) return root;
    }
    return undefined;
  }

  /** The committed multi-signature of a state root; undefined when none or unreadable. */
  multiSignatureFor(stateRoot: string): MultiSignature | undefined {
    try {
      return this.stores.bls.getSync(stateRoot);
    } catch (e) {
      this.log?.(`multi-signature of ${stateRoot} unreadable: ${reasonOf(e)}`);
      return undefined;
    }
  }

  /** Caught-up audit txns: appended when they prove, committed into `wb`, the trail restored from them. */
  private appendAuditTxns(txns: readonly unknown[], wb: WriteBatch, proves: (root: Uint8Array, size: number) => boolean): boolean {
    const ledger = this.stores.ledgers[AUDIT_LEDGER];
    if (ledger.uncommittedSize !== ledger.size) return false;
    try {
      ledger.append(txns as CommonTxn[]);
    } catch (e) {
      this.log?.(`catch-up audit txns do not append: ${reasonOf(e)}`);
      return false;
    }
    if (!proves(ledger.uncommittedRoot, ledger.uncommittedSize)) {
      ledger.discard(txns.length);
      return false;
    }
    void ledger.commit(txns.length, wb);
    this.audit.restore(ledger.size, (n) => ledger.getSync(n), b58encode(ledger.root));
    return true;
  }

  ledgerTargets(): Map<number, { size: number; root: string }> {
    return this.audit.targets();
  }

  /** R_begin of the last `count` views that ordered a batch (registry-history.ts). */
  viewStartRegistries(count: number): Map<number, string[]> {
    return this.history.viewStartRegistries(count);
  }

  /** R at a pool state root: the uncommitted head's, or one of the committed history (registry-history.ts). */
  registryAt(poolStateRoot: string): string[] | undefined {
    if (poolStateRoot === this.uncommittedPoolStateRoot()) return [...this.registryHead.validators];
    return this.history.registryAt(poolStateRoot);
  }

  /** Whether the pool state trie holds `poolStateRoot` (base58), committed or as an uncommitted head. */
  hasPoolStateRoot(poolStateRoot: string): boolean {
    const bytes = b58decodeOrUndefined(poolStateRoot);
    if (bytes?.length !== 32) return false;
    try {
      return this.stores.states[LedgerId.POOL].hasRoot(bytes);
    } catch {
      return false;
    }
  }

  private ledger(ledgerId: number): Ledger {
    if (ledgerId !== AUDIT_LEDGER && !this.isStateLedger(ledgerId)) throw new NodeError(NodeErrorCode.EXECUTOR_STATE, { reason: `unknown ledger ${ledgerId}` });
    return this.stores.ledgers[ledgerId];
  }

  /** Whether `id` is a ledger of this node with a state: 0, 1, 2 or one of its plugin ledgers. */
  private isStateLedger(id: number): boolean {
    return this.stateLedgers.includes(id);
  }
}
