// STAND-IN EXECUTOR of the simulator's fast in-memory world (the consensus package's own tests;
// the node package runs the same scenarios over the real executor and storage).
//
// It keeps ledgers and states in memory with hash-chained roots (root_i = SHA-256(root_{i-1} ||
// SHA-256(txn_i))), applies NYM-like writes `{dest, verkey}` on the domain ledger with one dynamic
// rule (a dest can be written once; `operation.invalid === true` is always refused), NODE txns on
// the pool ledger (registry and BLS keys per pool state root, standin-pool.ts), appends one audit
// txn per batch (with `nodeReg`), and separates committed from uncommitted data exactly as the real
// executor must: a crash drops everything uncommitted and keeps the rest.
import { LedgerId, TxnType, canonicalJson } from '@quire/common';
import type { AppliedBatch, ApplyBatchInput, AuditSummary, CommittedBatch, SignedLedgerRoots } from '../interfaces.js';
import type { SimExecutor } from './backend.js';
import type { MultiSignature } from '../messages.js';
import { ChainLedger, EMPTY_ROOT, chain, chainHashed, leafHash } from './standin-ledger.js';
import { applyNodeTxn, blsKeyIn, EMPTY_POOL, type PoolView, VALIDATOR } from './standin-pool.js';
import { ConsensusError, ConsensusErrorCode } from '../errors.js';

const LEDGERS = [0, 1, 2] as const;
const AUDIT = 3;

/** The NODE txn `dest` the simulator uses for an alias (stands for the node's verkey). */
export function nodeDest(alias: string): string {
  return `node-${alias}`;
}

interface AppliedRecord {
  ledgerId: number;
  ppSeqNo: number;
  ppTime: number;
  viewNo: number;
  /** state changes of this batch */
  changes: Map<string, string>;
  stateRootBefore: string;
  stateRootAfter: string;
  valid: { digest: string; payloadDigest: string; seqNo: number }[];
  sizesBefore: number[];
  nodeReg: string[];
  changedNodes: string[];
}

/** A genesis validator of the stand-in pool ledger. */
export interface StandInGenesisNode {
  alias: string;
  /** base58 BLS public key */
  blskey: string;
}

interface AuditEntry {
  viewNo: number;
  ppSeqNo: number;
  ppTime: number;
  ledgerId: number;
  ledgerSize: Record<string, number>;
  ledgerRoot: string;
  stateRoot: string;
  primaries: string[];
  nodeReg: string[];
  digest: string;
}

/** The state of one of ledgers 0-2: its committed values, its committed root and its root after the last applied batch. */
interface StandInState {
  committed: Map<string, string>;
  committedRoot: string;
  headRoot: string;
}

function emptyState(): StandInState {
  return { committed: new Map(), committedRoot: EMPTY_ROOT, headRoot: EMPTY_ROOT };
}

export interface StandInRequestView {
  payloadDigestOf(request: Record<string, unknown>): string;
}

export class StandInExecutor implements SimExecutor {
  private readonly poolLedger = new ChainLedger();
  private readonly audit = new ChainLedger();
  /** ledgers 0-3 by id (the simulator has no plugin ledgers, and parse.ts lets no other id in) */
  readonly ledgers = new Map<number, ChainLedger>([
    [0, this.poolLedger],
    [1, new ChainLedger()],
    [2, new ChainLedger()],
    [AUDIT, this.audit],
  ]);
  private readonly poolState = emptyState();
  /** states of ledgers 0-2 by id */
  private readonly states = new Map<number, StandInState>([
    [0, this.poolState],
    [1, emptyState()],
    [2, emptyState()],
  ]);
  private readonly applied: AppliedRecord[] = [];
  /** payloadDigest -> "<ledger>~<seqNo>" (committed) */
  readonly seqNoIndex = new Map<string, string>();
  /** state root -> multi-signature (the BLS store) */
  readonly blsStore = new Map<string, MultiSignature>();
  /** every multi-signature ever stored, for the simulator's checks */
  readonly storedMultiSigs: MultiSignature[] = [];
  private readonly committedLastUpdate = new Map<number, number>();
  /** pool state root -> registry and node data at that root (never forgotten: historic roots stay resolvable) */
  private readonly poolViews = new Map<string, PoolView>([[EMPTY_ROOT, EMPTY_POOL]]);
  private readonly genesisRegistry: string[];
  private readonly auditCache = new Map<number, AuditEntry>();

  constructor(
    private readonly requests: StandInRequestView,
    genesis: readonly StandInGenesisNode[] = [],
  ) {
    for (const g of genesis) {
      const txn = canonicalJson({
        txn: { data: { dest: nodeDest(g.alias), data: { alias: g.alias, services: [VALIDATOR], blskey: g.blskey } }, type: TxnType.NODE },
        txnMetadata: { seqNo: this.poolLedger.size + 1 },
      });
      if (!this.appendCommitted(0, txn)) throw new ConsensusError(ConsensusErrorCode.SIMULATION, { reason: 'stand-in executor: bad genesis' });
    }
    this.genesisRegistry = [...this.poolView(this.poolState.committedRoot).registry];
  }

  private ledger(ledgerId: number): ChainLedger {
    const l = this.ledgers.get(ledgerId);
    if (l === undefined) throw new ConsensusError(ConsensusErrorCode.SIMULATION, { reason: `stand-in executor: no ledger ${ledgerId}` });
    return l;
  }

  private state(ledgerId: number): StandInState {
    const st = this.states.get(ledgerId);
    if (st === undefined) throw new ConsensusError(ConsensusErrorCode.SIMULATION, { reason: `stand-in executor: no state for ledger ${ledgerId}` });
    return st;
  }

  private poolView(root: string): PoolView {
    const v = this.poolViews.get(root);
    if (v === undefined) throw new ConsensusError(ConsensusErrorCode.SIMULATION, { reason: `stand-in executor: unknown pool state root ${root}` });
    return v;
  }

  /** The registry (R) at a pool state root, undefined for a root this node never had. */
  registryAt(poolStateRoot: string): string[] | undefined {
    return this.poolViews.get(poolStateRoot)?.registry;
  }

  /**
   * Every stand-in node starts from the pool genesis and keeps every pool state root it applied or
   * caught up, so no root of the pool's history is older than its genesis: `registryAt` answers
   * undefined for a root it never had.
   */
  hasPoolStateRoot(_poolStateRoot: string): boolean {
    return true;
  }

  /** A validator's base58 BLS key at a pool state root (consensus.md §8 key rotation). */
  blsKeyAt(alias: string, poolStateRoot: string): string | undefined {
    const v = this.poolViews.get(poolStateRoot);
    return v === undefined ? undefined : blsKeyIn(v, alias);
  }

  /** The registry after the last applied batch (R_uncommitted). */
  uncommittedRegistry(): string[] {
    return this.poolView(this.poolState.headRoot).registry;
  }

  uncommittedPoolStateRoot(): string {
    return this.poolState.headRoot;
  }

  isPayloadCommitted(payloadDigest: string): boolean {
    return this.seqNoIndex.has(payloadDigest);
  }

  private lookup(ledgerId: number, key: string): string | undefined {
    for (let i = this.applied.length - 1; i >= 0; i--) {
      const a = this.applied[i];
      if (a.ledgerId === ledgerId && a.changes.has(key)) return a.changes.get(key);
    }
    return this.state(ledgerId).committed.get(key);
  }

  applyBatch(input: ApplyBatchInput): AppliedBatch {
    const lid = input.ledgerId;
    const ledger = this.ledger(lid);
    const state = this.state(lid);
    const sizesBefore = [0, 1, 2, 3].map((l) => this.ledger(l).size);
    const changes = new Map<string, string>();
    const discarded: number[] = [];
    const rejectReasons: string[] = [];
    const valid: AppliedRecord['valid'] = [];
    const changedNodes: string[] = [];
    const stateRootBefore = state.headRoot;
    let stateRoot = stateRootBefore;
    let pool = this.poolView(this.poolState.headRoot);
    input.requests.forEach((req, i) => {
      const op = (req.operation ?? {}) as Record<string, unknown>;
      const dest = typeof op.dest === 'string' ? op.dest : '';
      let value: string;
      if (op.invalid === true || dest === '') {
        discarded.push(i);
        rejectReasons.push(op.invalid === true ? 'refused by rule' : 'dest missing');
        return;
      }
      if (lid === 0) {
        const r = applyNodeTxn(pool, dest, op.data, true);
        if (!r.ok) {
          discarded.push(i);
          rejectReasons.push(r.reason);
          return;
        }
        pool = r.view;
        value = r.value;
        if (r.changed !== undefined && !changedNodes.includes(r.changed)) changedNodes.push(r.changed);
      } else {
        if (changes.has(dest) || this.lookup(lid, dest) !== undefined) {
          discarded.push(i);
          rejectReasons.push(`${dest} already exists`);
          return;
        }
        value = canonicalJson({ verkey: op.verkey ?? null });
      }
      changes.set(dest, value);
      stateRoot = chain(stateRoot, `${dest}=${value}`);
      if (lid === 0 && !this.poolViews.has(stateRoot)) this.poolViews.set(stateRoot, pool);
      const seqNo = ledger.size + 1;
      const payloadDigest = this.requests.payloadDigestOf(req);
      ledger.append(
        canonicalJson({ txn: { data: op, type: op.type ?? '1' }, txnMetadata: { seqNo, txnTime: input.ppTime, digest: input.digests[i], payloadDigest } }),
      );
      valid.push({ digest: input.digests[i], payloadDigest, seqNo });
    });
    state.headRoot = stateRoot;
    const audit = this.audit;
    const ledgerSize: Record<string, number> = {};
    for (const l of LEDGERS) ledgerSize[l] = this.ledger(l).size;
    const entry: AuditEntry = {
      viewNo: input.originalViewNo,
      ppSeqNo: input.ppSeqNo,
      ppTime: input.ppTime,
      ledgerId: lid,
      ledgerSize,
      ledgerRoot: ledger.root,
      stateRoot,
      primaries: input.primaries,
      nodeReg: pool.registry,
      digest: input.digest,
    };
    audit.append(canonicalJson(entry));
    this.applied.push({
      ledgerId: lid,
      ppSeqNo: input.ppSeqNo,
      ppTime: input.ppTime,
      viewNo: input.originalViewNo,
      changes,
      stateRootBefore,
      stateRootAfter: stateRoot,
      valid,
      sizesBefore,
      nodeReg: pool.registry,
      changedNodes,
    });
    const signedLedgers: SignedLedgerRoots[] = [{ ledgerId: lid, stateRoot, txnRoot: ledger.root }];
    return { discarded, rejectReasons, stateRoot, txnRoot: ledger.root, auditRoot: audit.root, signedLedgers, nodeReg: [...pool.registry] };
  }

  revertLastBatch(): void {
    const a = this.applied.pop();
    if (a === undefined) throw new ConsensusError(ConsensusErrorCode.SIMULATION, { reason: 'stand-in executor: nothing to revert' });
    for (const [l, ledger] of this.ledgers) ledger.truncate(a.sizesBefore[l]);
    this.state(a.ledgerId).headRoot = a.stateRootBefore;
  }

  commitBatch(multiSigs: MultiSignature[]): CommittedBatch {
    const a = this.applied.shift();
    if (a === undefined) throw new ConsensusError(ConsensusErrorCode.SIMULATION, { reason: 'stand-in executor: nothing to commit' });
    const ledger = this.ledger(a.ledgerId);
    ledger.committed += a.valid.length;
    this.audit.committed += 1;
    const state = this.state(a.ledgerId);
    for (const [k, v] of a.changes) state.committed.set(k, v);
    state.committedRoot = a.stateRootAfter;
    for (const v of a.valid) this.seqNoIndex.set(v.payloadDigest, `${a.ledgerId}~${v.seqNo}`);
    for (const ms of multiSigs) {
      this.blsStore.set(ms.value.state_root_hash, ms);
      this.storedMultiSigs.push(ms);
    }
    this.committedLastUpdate.set(a.ledgerId, a.ppTime);
    return {
      ledgerId: a.ledgerId,
      ppSeqNo: a.ppSeqNo,
      txns: a.valid.map((v) => ({ digest: v.digest, seqNo: v.seqNo })),
      nodeReg: [...a.nodeReg],
      ...(a.changedNodes.length > 0 ? { changedNodes: [...a.changedNodes] } : {}),
    };
  }

  auditEntry(seqNo: number): AuditEntry {
    let e = this.auditCache.get(seqNo);
    if (e === undefined) {
      e = JSON.parse(this.audit.txns[seqNo - 1]) as AuditEntry;
      if (this.auditCache.size > 4096) this.auditCache.clear();
      this.auditCache.set(seqNo, e);
    }
    return e;
  }

  lastAudit(): AuditSummary | undefined {
    const audit = this.audit;
    if (audit.committed === 0) return undefined;
    const t = this.auditEntry(audit.committed);
    return {
      viewNo: t.viewNo,
      ppSeqNo: t.ppSeqNo,
      ppTime: t.ppTime,
      auditRoot: audit.roots[audit.committed],
      nodeReg: [...t.nodeReg],
      lastUpdate: Object.fromEntries(this.committedLastUpdate),
    };
  }

  viewStartRegistries(count: number): Map<number, string[]> {
    const out = new Map<number, string[]>();
    const size = this.audit.committed;
    for (let i = size; i >= 1 && out.size < count; i--) {
      const view = this.auditEntry(i).viewNo;
      if (i > 1 && this.auditEntry(i - 1).viewNo === view) continue;
      if (!out.has(view)) out.set(view, i > 1 ? [...this.auditEntry(i - 1).nodeReg] : [...this.genesisRegistry]);
    }
    return out;
  }

  auditRootAt(size: number): string {
    return this.audit.roots[size];
  }

  committedBatch(ppSeqNo: number): { viewNo: number; digest: string } | undefined {
    if (ppSeqNo < 1 || ppSeqNo > this.audit.committed) return undefined;
    const t = this.auditEntry(ppSeqNo);
    return t.ppSeqNo === ppSeqNo ? { viewNo: t.viewNo, digest: t.digest } : undefined;
  }

  // ---- catch-up ----

  ledgerStatus(ledgerId: number): { size: number; root: string } {
    const l = this.ledger(ledgerId);
    return { size: l.committed, root: l.roots[l.committed] };
  }

  rootAt(ledgerId: number, size: number): string {
    const l = this.ledger(ledgerId);
    if (size > l.committed) throw new ConsensusError(ConsensusErrorCode.SIMULATION, { reason: 'stand-in executor: size beyond committed' });
    return l.roots[size];
  }

  /** For a hash chain the proof is the leaf hashes between the two sizes. */
  consistencyProof(ledgerId: number, oldSize: number, newSize: number): string[] {
    const l = this.ledger(ledgerId);
    return l.txns.slice(oldSize, newSize).map(leafHash);
  }

  verifyConsistency(oldSize: number, oldRoot: string, newSize: number, newRoot: string, proof: readonly string[]): boolean {
    if (newSize - oldSize !== proof.length) return false;
    let r = oldRoot;
    for (const h of proof) r = chainHashed(r, h);
    return r === newRoot;
  }

  txnRange(ledgerId: number, from: number, to: number): unknown[] {
    const l = this.ledger(ledgerId);
    return l.txns.slice(from - 1, Math.min(to, l.committed)).map((t) => JSON.parse(t) as unknown);
  }

  appendCaughtUp(
    ledgerId: number,
    txns: readonly unknown[],
    consProof: readonly string[],
    targetSize: number,
    targetRoot: string,
    multiSigs: readonly MultiSignature[] = [],
  ): boolean {
    if (this.applied.length > 0) throw new ConsensusError(ConsensusErrorCode.SIMULATION, { reason: 'stand-in executor: catch-up with uncommitted batches' });
    const l = this.ledger(ledgerId);
    const encoded: string[] = [];
    for (const t of txns) {
      try {
        encoded.push(canonicalJson(t));
      } catch {
        return false;
      }
    }
    let root = l.root;
    for (const e of encoded) root = chain(root, e);
    if (!this.verifyConsistency(l.size + encoded.length, root, targetSize, targetRoot, consProof)) return false;
    for (const e of encoded) if (!this.appendCommitted(ledgerId, e)) return false;
    this.storeMultiSignatures(multiSigs);
    return true;
  }

  /** The state root a stand-in audit txn names (one: its batch's ledger). */
  auditStateRoots(auditTxn: unknown): { ledgerId: number; stateRoot: string }[] {
    const a = auditTxn as Partial<AuditEntry> | null;
    if (a === null || typeof a !== 'object' || typeof a.ledgerId !== 'number' || typeof a.stateRoot !== 'string') return [];
    return [{ ledgerId: a.ledgerId, stateRoot: a.stateRoot }];
  }

  multiSignatureFor(stateRoot: string): MultiSignature | undefined {
    return this.blsStore.get(stateRoot);
  }

  /** Multi-signatures checked in catch-up, into the BLS store. */
  storeMultiSignatures(multiSigs: readonly MultiSignature[]): void {
    for (const ms of multiSigs) {
      this.blsStore.set(ms.value.state_root_hash, ms);
      this.storedMultiSigs.push(ms);
    }
  }

  /** Appends one committed txn (genesis, catch-up) and applies it to committed state. */
  private appendCommitted(ledgerId: number, e: string): boolean {
    const l = this.ledger(ledgerId);
    if (ledgerId === AUDIT) {
      const a = JSON.parse(e) as AuditEntry;
      this.committedLastUpdate.set(a.ledgerId, a.ppTime);
    } else {
      const t = JSON.parse(e) as { txn: { data: Record<string, unknown> }; txnMetadata: { seqNo: number; payloadDigest?: string } };
      const dest = t.txn.data.dest as string;
      let value: string;
      let pool: PoolView | undefined;
      if (ledgerId === LedgerId.POOL) {
        // the txn is proven committed by the pool: apply the registry rule without the dynamic checks
        const r = applyNodeTxn(this.poolView(this.poolState.committedRoot), dest, t.txn.data.data, false);
        if (!r.ok) return false;
        pool = r.view;
        value = r.value;
      } else {
        value = canonicalJson({ verkey: t.txn.data.verkey ?? null });
      }
      const state = this.state(ledgerId);
      state.committed.set(dest, value);
      const sr = chain(state.committedRoot, `${dest}=${value}`);
      state.committedRoot = sr;
      state.headRoot = sr;
      if (pool !== undefined && !this.poolViews.has(sr)) this.poolViews.set(sr, pool);
      if (t.txnMetadata.payloadDigest !== undefined) this.seqNoIndex.set(t.txnMetadata.payloadDigest, `${ledgerId}~${t.txnMetadata.seqNo}`);
    }
    l.append(e);
    l.committed++;
    return true;
  }

  ledgerTargets(): Map<number, { size: number; root: string }> {
    const audit = this.audit;
    const out = new Map<number, { size: number; root: string }>();
    for (let i = audit.committed - 1; i >= 0 && out.size < LEDGERS.length; i--) {
      const a = this.auditEntry(i + 1);
      if (!out.has(a.ledgerId)) out.set(a.ledgerId, { size: a.ledgerSize[a.ledgerId], root: a.ledgerRoot });
    }
    return out;
  }

  /** Crash: everything not committed is lost. */
  dropUncommitted(): void {
    while (this.applied.length > 0) this.revertLastBatch();
  }

  committedSize(ledgerId: number): number {
    return this.ledger(ledgerId).committed;
  }

  committedTxn(ledgerId: number, seqNo: number): string | undefined {
    const l = this.ledger(ledgerId);
    return seqNo <= l.committed ? l.txns[seqNo - 1] : undefined;
  }

  committedDest(seqNo: number): string | undefined {
    const t = this.committedTxn(1, seqNo);
    if (t === undefined) return undefined;
    const dest = (JSON.parse(t) as { txn: { data: { dest?: unknown } } }).txn.data.dest;
    return typeof dest === 'string' ? dest : undefined;
  }

  isCommittedTxnRoot(ledgerId: number, txnRoot: string): boolean {
    const l = this.ledger(ledgerId);
    return l.roots.slice(0, l.committed + 1).includes(txnRoot);
  }

  committedRoot(ledgerId: number): string {
    const l = this.ledger(ledgerId);
    return l.roots[l.committed];
  }
}
