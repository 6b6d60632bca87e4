// The BatchExecutor the consensus core drives (consensus.md §3.3, §3.8, §3.9, §3.11), over the
// request handlers of @quire/requests and the ledgers, tries and side stores of @quire/storage.
//
// The core calls its executor synchronously. Applying a request runs the same steps as
// RequestExecutor.applyBatch (envelope, static validation, duplicate check, signatures, TAA,
// dynamic validation + authorization, txn, state update, ledger append), on the uncommitted heads,
// and appends one audit txn per batch. `commitBatch` puts everything of the oldest applied batch
// into ONE WriteBatch (ledger, state, audit txn, seqNo/digest index, ts-root, attributes,
// multi-signatures) and starts writing it; `flush()` resolves when every started write is durable,
// and the node awaits it before it answers clients or handles the next event.
import { b58decode, b58encode, decodeMsgpack, type Txn as CommonTxn } from '@quire/common';
import type {
  AppliedBatch,
  ApplyBatchInput,
  AuditSummary,
  BatchExecutor,
  CommittedBatch,
  MultiSignature,
  SignedLedgerRoots,
} from '@quire/consensus';
import {
  type AttributeAccess,
  type ParsedRequest,
  RequestError,
  RequestErrorCode,
  type RequestExecutor,
  type Txn,
  type WriteHandler,
  checkTaaAcceptance,
  parseRequest,
  requestToTxn,
  toRequestError,
  wrapReason,
} from '@quire/requests';
import {
  type AttributeStore,
  type BlsStore,
  type KvStore,
  type Ledger,
  type SeqNoIndex,
  type StateTrie,
  type TimestampStore,
  ledgerBuckets,
  merkleRootOfLeafHashes,
  seqNoKey,
  verifyConsistency,
} from '@quire/storage';
import { NodeError, NodeErrorCode, reasonOf } from './errors.js';
import type { PoolRegistry } from './pool-registry.js';
import type { AuditRecord, AuditTrail } from './audit-trail.js';
import { consistencySubproof, runStep } from './executor-steps.js';

export type StateLedger = 0 | 1 | 2;
export const STATE_LEDGERS: readonly StateLedger[] = [0, 1, 2];
export const AUDIT_LEDGER = 3;

export interface NodeStores {
  kv: KvStore;
  ledgers: Record<0 | 1 | 2 | 3, Ledger>;
  states: Record<StateLedger, StateTrie>;
  bls: BlsStore;
  seqNoIndex: SeqNoIndex;
  timestamps: TimestampStore;
  attributes: AttributeStore;
}

interface Applied {
  ledgerId: StateLedger;
  ppSeqNo: number;
  ppTime: number;
  txnCount: number;
  stateRootBefore: Uint8Array;
  stateRootAfter: Uint8Array;
  digests: { payloadDigest: string; digest: string; seqNo: number }[];
  attributes: Map<string, string>;
  audit: AuditRecord;
  registryBefore: PoolRegistry;
  txns: Txn[];
}

export interface ConsensusExecutorOptions {
  /** sync every batch write (EnsureLedgerDurability) */
  durable: boolean;
}

export interface ConsensusExecutorModules {
  stores: NodeStores;
  executor: RequestExecutor;
  /** R_committed at startup (from the pool ledger) */
  registry: PoolRegistry;
  audit: AuditTrail;
  /** called after each committed batch's write, with the committed pool txns (registry rebuild) */
  onCommitted?: (ledgerId: number, txns: readonly Txn[]) => void;
}

export class ConsensusExecutor implements BatchExecutor {
  private readonly stores: NodeStores;
  private readonly ex: RequestExecutor;
  private readonly audit: AuditTrail;
  private readonly applied: Applied[] = [];
  private readonly inFlight = new Set<string>();
  /** payload digests committed whose write has not landed yet */
  private readonly unwritten = new Set<string>();
  private registryCommitted: PoolRegistry;
  private registryHead: PoolRegistry;
  private writes: Promise<void> = Promise.resolve();
  private writeError: Error | undefined;
  private readonly opts: ConsensusExecutorOptions;
  private readonly onCommitted: ((ledgerId: number, txns: readonly Txn[]) => void) | undefined;

  constructor(options: ConsensusExecutorOptions, modules: ConsensusExecutorModules) {
    this.opts = options;
    this.stores = modules.stores;
    this.ex = modules.executor;
    this.audit = modules.audit;
    this.registryCommitted = modules.registry.clone();
    this.registryHead = modules.registry.clone();
    this.onCommitted = modules.onCommitted;
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
    return b58encode(this.stores.states[0].headRoot);
  }

  isPayloadCommitted(payloadDigest: string): boolean {
    return this.unwritten.has(payloadDigest) || this.stores.seqNoIndex.getByPayloadDigestSync(payloadDigest) !== undefined;
  }

  applyBatch(input: ApplyBatchInput): AppliedBatch {
    if (this.writeError !== undefined) throw new NodeError(NodeErrorCode.WRITE_FAILED, { reason: reasonOf(this.writeError) });
    const ledgerId = input.ledgerId;
    if (ledgerId !== 0 && ledgerId !== 1 && ledgerId !== 2) throw new NodeError(NodeErrorCode.EXECUTOR_STATE, { reason: `batch for ledger ${ledgerId}` });
    const trie = this.stores.states[ledgerId];
    const batch: Applied = {
      ledgerId,
      ppSeqNo: input.ppSeqNo,
      ppTime: input.ppTime,
      txnCount: 0,
      stateRootBefore: trie.headRoot,
      stateRootAfter: trie.headRoot,
      digests: [],
      attributes: new Map(),
      audit: undefined as unknown as AuditRecord,
      registryBefore: this.registryHead.clone(),
      txns: [],
    };
    const discarded: number[] = [];
    const rejectReasons: string[] = [];
    for (let i = 0; i < input.requests.length; i++) {
      const r = this.applyOne(input.requests[i], ledgerId, input.ppTime, batch);
      if (r !== undefined) {
        discarded.push(i);
        rejectReasons.push(r);
      }
    }
    batch.stateRootAfter = trie.headRoot;
    const sizes = new Map<number, number>(STATE_LEDGERS.map((l) => [l, this.stores.ledgers[l].uncommittedSize]));
    const roots = new Map<number, string>(STATE_LEDGERS.map((l) => [l, b58encode(this.stores.ledgers[l].uncommittedRoot)]));
    const stateRoots = new Map<number, string>(STATE_LEDGERS.map((l) => [l, b58encode(this.stores.states[l].headRoot)]));
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
    const auditLedger = this.stores.ledgers[AUDIT_LEDGER];
    auditLedger.append([record.txn as unknown as CommonTxn]);
    batch.audit = record;
    this.applied.push(batch);
    const signedLedgers: SignedLedgerRoots[] = record.signed.map((l) => ({ ledgerId: l, stateRoot: stateRoots.get(l)!, txnRoot: roots.get(l)! }));
    return {
      discarded,
      rejectReasons,
      stateRoot: b58encode(trie.headRoot),
      txnRoot: b58encode(this.stores.ledgers[ledgerId].uncommittedRoot),
      auditRoot: b58encode(auditLedger.uncommittedRoot),
      signedLedgers,
      nodeReg: [...this.registryHead.validators],
    };
  }

  /** Applies one request; returns undefined when valid, else the REJECT reason. */
  private applyOne(raw: unknown, ledgerId: StateLedger, ppTime: number, batch: Applied): string | undefined {
    const ledger = this.stores.ledgers[ledgerId];
    const views = this.ex.views;
    const sizeBefore = ledger.uncommittedSize;
    const pendingAttrs = new Map<string, string>();
    let req: ParsedRequest | undefined;
    let undoOpen = false;
    try {
      req = parseRequest(raw);
      const handler = this.writeHandlerFor(req, ledgerId);
      handler.validateStatic(req);
      const pd = req.payloadDigest;
      if (this.inFlight.has(pd) || this.isPayloadCommitted(pd)) throw new RequestError(RequestErrorCode.ALREADY_ORDERED, { payloadDigest: pd });
      this.ex.verifier.verify(req, this.ex.idr, views[0]);
      checkTaaAcceptance(req, ledgerId, views[2], ppTime);
      const seqNo = sizeBefore + 1;
      const stores = this.stores;
      const applied = this.applied;
      const attributes: AttributeAccess = {
        put: (hash, value) => void pendingAttrs.set(hash, value),
        get: async (hash) => pendingAttrs.get(hash) ?? batchAttribute(applied, batch, hash) ?? stores.attributes.getSync(hash),
      };
      const ctx = this.ex.context(ledgerId, ppTime, seqNo, attributes);
      runStep(handler.validateDynamic(req, ctx), req.type);
      for (const id of STATE_LEDGERS) views[id].beginUndo();
      undoOpen = true;
      const txn = requestToTxn(req);
      const txnId = handler.prepareTxn?.(txn, req, ctx);
      txn.txnMetadata = { seqNo, txnTime: ppTime };
      if (txnId !== undefined) txn.txnMetadata.txnId = txnId;
      runStep(handler.updateState(txn, ctx, req), req.type);
      ledger.append([txn as unknown as CommonTxn]);
      for (const id of STATE_LEDGERS) views[id].endUndo(false);
      undoOpen = false;
      if (ledgerId === 0) this.registryHead.apply(txn);
      this.inFlight.add(pd);
      for (const [h, v] of pendingAttrs) batch.attributes.set(h, v);
      batch.txnCount++;
      batch.txns.push(txn);
      batch.digests.push({ payloadDigest: pd, digest: req.digest, seqNo });
      return undefined;
    } catch (e) {
      try {
        if (ledger.uncommittedSize > sizeBefore) ledger.discard(ledger.uncommittedSize - sizeBefore);
        if (undoOpen) for (const id of STATE_LEDGERS) views[id].endUndo(true);
      } finally {
        this.ex.idr.clear();
      }
      if (e instanceof NodeError) return e.message;
      const err = toRequestError(e);
      return wrapReason(err, req?.identifier ?? null, req?.reqId);
    }
  }

  private writeHandlerFor(req: ParsedRequest, ledgerId: StateLedger): WriteHandler {
    const h = this.ex.registry.get(req.type);
    if (h === undefined) throw new RequestError(RequestErrorCode.UNKNOWN_TYPE, { type: req.type });
    if (h.kind !== 'write') throw new RequestError(RequestErrorCode.NOT_A_WRITE, { type: req.type });
    if (h.ledgerId !== ledgerId) throw new RequestError(RequestErrorCode.WRONG_LEDGER, { type: req.type, ledgerId });
    return h;
  }

  revertLastBatch(): void {
    const b = this.applied.pop();
    if (b === undefined) throw new NodeError(NodeErrorCode.EXECUTOR_STATE, { reason: 'revert without an applied batch' });
    this.stores.ledgers[b.ledgerId].discard(b.txnCount);
    this.stores.states[b.ledgerId].setHead(b.stateRootBefore);
    this.stores.ledgers[AUDIT_LEDGER].discard(1);
    this.audit.revert();
    this.registryHead = b.registryBefore;
    for (const d of b.digests) this.inFlight.delete(d.payloadDigest);
    if (this.applied.length === 0) for (const id of STATE_LEDGERS) this.stores.states[id].revertToCommitted();
    this.ex.idr.clear();
  }

  commitBatch(multiSigs: MultiSignature[]): CommittedBatch {
    const b = this.applied.shift();
    if (b === undefined) throw new NodeError(NodeErrorCode.EXECUTOR_STATE, { reason: 'commit without an applied batch' });
    const s = this.stores;
    const wb = s.kv.batch();
    s.ledgers[b.ledgerId].commit(b.txnCount, wb);
    s.states[b.ledgerId].commit(b.stateRootAfter, wb);
    s.ledgers[AUDIT_LEDGER].commit(1, wb);
    for (const l of b.audit.signed) {
      const root = l === b.ledgerId ? b.stateRootAfter : b58decode(b.audit.stateRoots.get(l)!);
      s.timestamps.set(l, b.ppTime, root, wb);
    }
    for (const d of b.digests) {
      s.seqNoIndex.add({ payloadDigest: d.payloadDigest, digest: d.digest, ledgerId: b.ledgerId, seqNo: d.seqNo }, wb);
      this.inFlight.delete(d.payloadDigest);
      this.unwritten.add(d.payloadDigest);
    }
    for (const value of [...b.attributes.values()].sort()) s.attributes.put(value, wb);
    for (const ms of multiSigs) s.bls.put(ms, wb);
    this.audit.commit(b.audit, b58encode(s.ledgers[AUDIT_LEDGER].root));
    this.rememberAudit(b.audit.seqNo, b.audit.txn);
    this.startWrite(wb, b.digests.map((d) => d.payloadDigest));
    if (b.ledgerId === 0 && b.txnCount > 0) {
      this.registryCommitted = this.registryCommitted.clone();
      for (const t of b.txns) this.registryCommitted.apply(t);
    }
    if (b.txnCount > 0) this.onCommitted?.(b.ledgerId, b.txns);
    if (this.applied.length === 0) this.registryHead = this.registryCommitted.clone();
    return {
      ledgerId: b.ledgerId,
      ppSeqNo: b.ppSeqNo,
      txns: b.digests.map((d) => ({ digest: d.digest, seqNo: d.seqNo })),
      nodeReg: b.audit.nodeReg,
    };
  }

  /** duration of the last batch write, ms (metrics) */
  lastWriteMs = 0;

  /** Chains a batch write behind the earlier ones; `payloads` stop counting as unwritten once it lands. */
  private startWrite(wb: ReturnType<KvStore['batch']>, payloads: readonly string[]): void {
    const started = Date.now();
    this.writes = this.writes.then(async () => {
      if (this.writeError !== undefined) return;
      try {
        await wb.write({ sync: this.opts.durable });
      } catch (e) {
        this.writeError = e instanceof Error ? e : new Error(String(e));
        return;
      }
      for (const pd of payloads) this.unwritten.delete(pd);
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

  // ---- catch-up -------------------------------------------------------------------------------

  ledgerStatus(ledgerId: number): { size: number; root: string } {
    const l = this.ledger(ledgerId);
    return { size: l.size, root: b58encode(l.root) };
  }

  rootAt(ledgerId: number, size: number): string {
    const l = this.ledger(ledgerId);
    if (size === l.size) return b58encode(l.root);
    return b58encode(merkleRootOfLeafHashes(this.leafHashes(l, 1, size)));
  }

  consistencyProof(ledgerId: number, oldSize: number, newSize: number): string[] {
    const l = this.ledger(ledgerId);
    if (!(Number.isSafeInteger(oldSize) && Number.isSafeInteger(newSize) && oldSize >= 0 && oldSize <= newSize && newSize <= l.size)) {
      throw new NodeError(NodeErrorCode.EXECUTOR_STATE, { reason: `consistency proof ${oldSize}..${newSize} of a ledger of ${l.size}` });
    }
    if (oldSize === 0 || oldSize === newSize) return [];
    const leaves = this.leafHashes(l, 1, newSize);
    return consistencySubproof(oldSize, leaves, true).map((h) => b58encode(h));
  }

  verifyConsistency(oldSize: number, oldRoot: string, newSize: number, newRoot: string, proof: readonly string[]): boolean {
    try {
      verifyConsistency(oldSize, newSize, b58decode(oldRoot), b58decode(newRoot), proof.map((p) => b58decode(p)));
      return true;
    } catch {
      return false;
    }
  }

  txnRange(ledgerId: number, from: number, to: number): unknown[] {
    const l = this.ledger(ledgerId);
    const bucket = ledgerBuckets(ledgerId).txn;
    const out: unknown[] = [];
    for (let seqNo = Math.max(1, from); seqNo <= Math.min(to, l.size); seqNo++) {
      const bytes = this.stores.kv.getSync(bucket, seqNoKey(seqNo));
      if (bytes === undefined) break;
      out.push(decodeMsgpack(bytes));
    }
    return out;
  }

  /**
   * Verifies caught-up txns against the target (root at the target size through `consProof`),
   * applies them to state and commits ledger, state, indexes and ts-root in one write. Nothing is
   * kept when they do not verify or do not apply.
   */
  appendCaughtUp(ledgerId: number, txns: readonly unknown[], consProof: readonly string[], targetSize: number, targetRoot: string): boolean {
    if (this.applied.length > 0 || this.writeError !== undefined || txns.length === 0) return false;
    if (ledgerId !== 0 && ledgerId !== 1 && ledgerId !== 2 && ledgerId !== AUDIT_LEDGER) return false;
    const s = this.stores;
    const ledger = s.ledgers[ledgerId];
    const sizeBefore = ledger.size;
    const newSize = sizeBefore + txns.length;
    if (newSize > targetSize) return false;
    try {
      ledger.append(txns as CommonTxn[]);
    } catch (e) {
      this.log?.(`catch-up txns for ledger ${ledgerId} do not append: ${reasonOf(e)}`);
      return false;
    }
    const root = b58encode(ledger.uncommittedRoot);
    const consistent = newSize === targetSize ? root === targetRoot : this.verifyConsistency(newSize, root, targetSize, targetRoot, consProof);
    if (!consistent) {
      ledger.discard(txns.length);
      return false;
    }
    if (ledgerId !== AUDIT_LEDGER) {
      const ok = this.applyCaughtUpState(ledgerId, txns as Txn[], sizeBefore);
      if (!ok) {
        ledger.discard(txns.length);
        s.states[ledgerId].revertToCommitted();
        this.ex.idr.clear();
        return false;
      }
    }
    const wb = s.kv.batch();
    const payloads: string[] = [];
    ledger.commit(txns.length, wb);
    if (ledgerId !== AUDIT_LEDGER) {
      const trie = s.states[ledgerId];
      const stateRoot = trie.headRoot;
      trie.commit(stateRoot, wb);
      let lastTime: number | undefined;
      for (let i = 0; i < txns.length; i++) {
        const t = txns[i] as Txn;
        const md = (t.txn?.metadata ?? {}) as Record<string, unknown>;
        if (typeof md.payloadDigest === 'string') {
          const entry: { payloadDigest: string; digest?: string; ledgerId: number; seqNo: number } = { payloadDigest: md.payloadDigest, ledgerId, seqNo: sizeBefore + i + 1 };
          if (typeof md.digest === 'string') entry.digest = md.digest;
          s.seqNoIndex.add(entry, wb);
          this.unwritten.add(md.payloadDigest);
          payloads.push(md.payloadDigest);
        }
        const tt = t.txnMetadata?.txnTime;
        if (typeof tt === 'number') lastTime = tt;
      }
      if (lastTime !== undefined) s.timestamps.set(ledgerId, lastTime, stateRoot, wb);
      if (ledgerId === 0) {
        this.registryCommitted = this.registryCommitted.clone();
        for (const t of txns) this.registryCommitted.apply(t);
      }
      this.registryHead = this.registryCommitted.clone();
      this.ex.idr.clear();
    } else {
      for (let i = 0; i < txns.length; i++) this.rememberAudit(sizeBefore + i + 1, txns[i]);
      this.audit.restore(newSize, (n) => this.auditTxn(n), root);
    }
    this.startWrite(wb, payloads);
    if (ledgerId !== AUDIT_LEDGER) this.onCommitted?.(ledgerId, txns as Txn[]);
    return true;
  }

  /** optional diagnostic sink (the node's logger) */
  log: ((msg: string) => void) | undefined;

  /** caught-up and recently committed audit txns whose write may still be in flight */
  private readonly recentAudit = new Map<number, unknown>();

  private rememberAudit(seqNo: number, txn: unknown): void {
    this.recentAudit.set(seqNo, txn);
    while (this.recentAudit.size > 4096) this.recentAudit.delete(this.recentAudit.keys().next().value!);
  }

  private auditTxn(seqNo: number): unknown {
    const hit = this.recentAudit.get(seqNo);
    if (hit !== undefined) return hit;
    const bytes = this.stores.kv.getSync(ledgerBuckets(AUDIT_LEDGER).txn, seqNoKey(seqNo));
    return bytes === undefined ? undefined : decodeMsgpack(bytes);
  }

  private applyCaughtUpState(ledgerId: StateLedger, txns: readonly Txn[], sizeBefore: number): boolean {
    for (let i = 0; i < txns.length; i++) {
      const txn = txns[i]!;
      const handler = this.ex.registry.write(txn.txn?.type);
      if (handler === undefined || handler.ledgerId !== ledgerId) continue;
      const txnTime = typeof txn.txnMetadata?.txnTime === 'number' ? txn.txnMetadata.txnTime : null;
      try {
        runStep(handler.updateState(txn, this.ex.context(ledgerId, txnTime, sizeBefore + i + 1)), String(txn.txn?.type));
      } catch (e) {
        this.log?.(`caught-up txn ${sizeBefore + i + 1} of ledger ${ledgerId} does not apply: ${reasonOf(e)}`);
        return false;
      }
    }
    return true;
  }

  ledgerTargets(): Map<number, { size: number; root: string }> {
    return this.audit.targets();
  }

  private ledger(ledgerId: number): Ledger {
    if (ledgerId !== 0 && ledgerId !== 1 && ledgerId !== 2 && ledgerId !== 3) throw new NodeError(NodeErrorCode.EXECUTOR_STATE, { reason: `unknown ledger ${ledgerId}` });
    return this.stores.ledgers[ledgerId];
  }

  private leafHashes(l: Ledger, from: number, to: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (let s = from; s <= to; s++) out.push(l.leafHash(s));
    return out;
  }
}

function batchAttribute(applied: readonly Applied[], current: Applied, hash: string): string | undefined {
  const v = current.attributes.get(hash);
  if (v !== undefined) return v;
  for (let i = applied.length - 1; i >= 0; i--) {
    const x = applied[i]!.attributes.get(hash);
    if (x !== undefined) return x;
  }
  return undefined;
}
