// STAND-IN EXECUTOR for the simulator, to be replaced by the executor of @quire/requests over
// @quire/storage (through an adapter implementing BatchExecutor) as soon as that lands.
//
// It keeps ledgers and states in memory with hash-chained roots (root_i = SHA-256(root_{i-1} ||
// SHA-256(txn_i))), applies NYM-like writes `{dest, verkey}` with one dynamic rule (a dest can be
// written once; `operation.invalid === true` is always refused), appends one audit txn per batch,
// and separates committed from uncommitted data exactly as the real executor must: a crash drops
// everything uncommitted and keeps the rest.
import { b58encode, canonicalJson, sha256 } from '@quire/common';
import type {
  AppliedBatch,
  ApplyBatchInput,
  AuditSummary,
  BatchExecutor,
  CommittedBatch,
  SignedLedgerRoots,
} from '../interfaces.js';
import type { MultiSignature } from '../messages.js';

const EMPTY_ROOT = b58encode(sha256(new Uint8Array(0)));
const LEDGERS = [0, 1, 2] as const;
const AUDIT = 3;

function leafHash(item: string): string {
  return b58encode(sha256(item));
}

function chainHashed(prev: string, leaf: string): string {
  return b58encode(sha256(`${prev}|${leaf}`));
}

function chain(prev: string, item: string): string {
  return chainHashed(prev, leafHash(item));
}

class ChainLedger {
  readonly txns: string[] = [];
  /** roots[i] = root after i txns */
  readonly roots: string[] = [EMPTY_ROOT];
  committed = 0;

  get size(): number {
    return this.txns.length;
  }
  get root(): string {
    return this.roots[this.txns.length]!;
  }
  append(txn: string): void {
    const next = chain(this.root, txn);
    this.txns.push(txn);
    this.roots.push(next);
  }
  truncate(size: number): void {
    this.txns.length = size;
    this.roots.length = size + 1;
  }
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
}

export interface StandInRequestView {
  payloadDigestOf(request: Record<string, unknown>): string;
}

export class StandInExecutor implements BatchExecutor {
  readonly ledgers = new Map<number, ChainLedger>([0, 1, 2, 3].map((l) => [l, new ChainLedger()]));
  private readonly committedState = new Map<number, Map<string, string>>(LEDGERS.map((l) => [l, new Map()]));
  private readonly committedStateRoot = new Map<number, string>(LEDGERS.map((l) => [l, EMPTY_ROOT]));
  private readonly headStateRoot = new Map<number, string>(LEDGERS.map((l) => [l, EMPTY_ROOT]));
  private readonly applied: AppliedRecord[] = [];
  /** payloadDigest -> "<ledger>~<seqNo>" (committed) */
  readonly seqNoIndex = new Map<string, string>();
  /** state root -> multi-signature (the BLS store) */
  readonly blsStore = new Map<string, MultiSignature>();
  /** every multi-signature ever stored, for the simulator's checks */
  readonly storedMultiSigs: MultiSignature[] = [];
  private readonly committedLastUpdate = new Map<number, number>();

  constructor(private readonly requests: StandInRequestView) {}

  uncommittedPoolStateRoot(): string {
    return this.headStateRoot.get(0)!;
  }

  isPayloadCommitted(payloadDigest: string): boolean {
    return this.seqNoIndex.has(payloadDigest);
  }

  private lookup(ledgerId: number, key: string): string | undefined {
    for (let i = this.applied.length - 1; i >= 0; i--) {
      const a = this.applied[i]!;
      if (a.ledgerId === ledgerId && a.changes.has(key)) return a.changes.get(key);
    }
    return this.committedState.get(ledgerId)!.get(key);
  }

  applyBatch(input: ApplyBatchInput): AppliedBatch {
    const lid = input.ledgerId;
    const ledger = this.ledgers.get(lid)!;
    const sizesBefore = [0, 1, 2, 3].map((l) => this.ledgers.get(l)!.size);
    const changes = new Map<string, string>();
    const discarded: number[] = [];
    const rejectReasons: string[] = [];
    const valid: AppliedRecord['valid'] = [];
    const stateRootBefore = this.headStateRoot.get(lid)!;
    let stateRoot = stateRootBefore;
    input.requests.forEach((req, i) => {
      const op = (req.operation ?? {}) as Record<string, unknown>;
      const dest = typeof op.dest === 'string' ? op.dest : '';
      if (op.invalid === true || dest === '' || changes.has(dest) || this.lookup(lid, dest) !== undefined) {
        discarded.push(i);
        rejectReasons.push(op.invalid === true ? 'refused by rule' : `${dest} already exists`);
        return;
      }
      const value = canonicalJson({ verkey: op.verkey ?? null });
      changes.set(dest, value);
      stateRoot = chain(stateRoot, `${dest}=${value}`);
      const seqNo = ledger.size + 1;
      const payloadDigest = this.requests.payloadDigestOf(req);
      ledger.append(canonicalJson({ txn: { data: op, type: op.type ?? '1' }, txnMetadata: { seqNo, txnTime: input.ppTime, digest: input.digests[i], payloadDigest } }));
      valid.push({ digest: input.digests[i]!, payloadDigest, seqNo });
    });
    this.headStateRoot.set(lid, stateRoot);
    const audit = this.ledgers.get(AUDIT)!;
    const ledgerSize: Record<string, number> = {};
    for (const l of LEDGERS) ledgerSize[l] = this.ledgers.get(l)!.size;
    audit.append(
      canonicalJson({
        viewNo: input.originalViewNo,
        ppSeqNo: input.ppSeqNo,
        ppTime: input.ppTime,
        ledgerId: lid,
        ledgerSize,
        ledgerRoot: ledger.root,
        stateRoot,
        primaries: input.primaries,
        digest: input.digest,
      }),
    );
    this.applied.push({ ledgerId: lid, ppSeqNo: input.ppSeqNo, ppTime: input.ppTime, viewNo: input.originalViewNo, changes, stateRootBefore, stateRootAfter: stateRoot, valid, sizesBefore });
    const signedLedgers: SignedLedgerRoots[] = [{ ledgerId: lid, stateRoot, txnRoot: ledger.root }];
    return { discarded, rejectReasons, stateRoot, txnRoot: ledger.root, auditRoot: audit.root, signedLedgers, nodeReg: [] };
  }

  revertLastBatch(): void {
    const a = this.applied.pop();
    if (a === undefined) throw new Error('stand-in executor: nothing to revert');
    for (const l of [0, 1, 2, 3]) this.ledgers.get(l)!.truncate(a.sizesBefore[l]!);
    this.headStateRoot.set(a.ledgerId, a.stateRootBefore);
  }

  commitBatch(multiSigs: MultiSignature[]): CommittedBatch {
    const a = this.applied.shift();
    if (a === undefined) throw new Error('stand-in executor: nothing to commit');
    const ledger = this.ledgers.get(a.ledgerId)!;
    ledger.committed += a.valid.length;
    this.ledgers.get(AUDIT)!.committed += 1;
    const state = this.committedState.get(a.ledgerId)!;
    for (const [k, v] of a.changes) state.set(k, v);
    this.committedStateRoot.set(a.ledgerId, a.stateRootAfter);
    for (const v of a.valid) this.seqNoIndex.set(v.payloadDigest, `${a.ledgerId}~${v.seqNo}`);
    for (const ms of multiSigs) {
      this.blsStore.set(ms.value.state_root_hash, ms);
      this.storedMultiSigs.push(ms);
    }
    this.committedLastUpdate.set(a.ledgerId, a.ppTime);
    return { ledgerId: a.ledgerId, ppSeqNo: a.ppSeqNo, txns: a.valid.map((v) => ({ digest: v.digest, seqNo: v.seqNo })), nodeReg: [] };
  }

  lastAudit(): AuditSummary | undefined {
    const audit = this.ledgers.get(AUDIT)!;
    if (audit.committed === 0) return undefined;
    const t = JSON.parse(audit.txns[audit.committed - 1]!) as { viewNo: number; ppSeqNo: number; ppTime: number };
    return {
      viewNo: t.viewNo,
      ppSeqNo: t.ppSeqNo,
      ppTime: t.ppTime,
      auditRoot: audit.roots[audit.committed]!,
      nodeReg: [],
      lastUpdate: Object.fromEntries(this.committedLastUpdate),
    };
  }

  auditRootAt(size: number): string {
    return this.ledgers.get(AUDIT)!.roots[size]!;
  }

  // ---- catch-up ----

  ledgerStatus(ledgerId: number): { size: number; root: string } {
    const l = this.ledgers.get(ledgerId)!;
    return { size: l.committed, root: l.roots[l.committed]! };
  }

  rootAt(ledgerId: number, size: number): string {
    const l = this.ledgers.get(ledgerId)!;
    if (size > l.committed) throw new Error('stand-in executor: size beyond committed');
    return l.roots[size]!;
  }

  /** For a hash chain the proof is the leaf hashes between the two sizes. */
  consistencyProof(ledgerId: number, oldSize: number, newSize: number): string[] {
    const l = this.ledgers.get(ledgerId)!;
    return l.txns.slice(oldSize, newSize).map(leafHash);
  }

  verifyConsistency(oldSize: number, oldRoot: string, newSize: number, newRoot: string, proof: readonly string[]): boolean {
    if (newSize - oldSize !== proof.length) return false;
    let r = oldRoot;
    for (const h of proof) r = chainHashed(r, h);
    return r === newRoot;
  }

  txnRange(ledgerId: number, from: number, to: number): unknown[] {
    const l = this.ledgers.get(ledgerId)!;
    return l.txns.slice(from - 1, Math.min(to, l.committed)).map((t) => JSON.parse(t) as unknown);
  }

  appendCaughtUp(ledgerId: number, txns: readonly unknown[], consProof: readonly string[], targetSize: number, targetRoot: string): boolean {
    if (this.applied.length > 0) throw new Error('stand-in executor: catch-up with uncommitted batches');
    const l = this.ledgers.get(ledgerId)!;
    const encoded = txns.map((t) => canonicalJson(t));
    let root = l.root;
    for (const e of encoded) root = chain(root, e);
    if (!this.verifyConsistency(l.size + encoded.length, root, targetSize, targetRoot, consProof)) return false;
    for (const e of encoded) {
      l.append(e);
      l.committed++;
      const t = JSON.parse(e) as { txn: { data: Record<string, unknown> }; txnMetadata: { seqNo: number; payloadDigest?: string }; ppTime?: number; ledgerId?: number };
      if (ledgerId === AUDIT) {
        const a = JSON.parse(e) as { ledgerId: number; ppTime: number };
        this.committedLastUpdate.set(a.ledgerId, a.ppTime);
      } else {
        const dest = t.txn.data.dest as string;
        const value = canonicalJson({ verkey: t.txn.data.verkey ?? null });
        this.committedState.get(ledgerId)!.set(dest, value);
        const sr = chain(this.committedStateRoot.get(ledgerId)!, `${dest}=${value}`);
        this.committedStateRoot.set(ledgerId, sr);
        this.headStateRoot.set(ledgerId, sr);
        if (t.txnMetadata.payloadDigest !== undefined) this.seqNoIndex.set(t.txnMetadata.payloadDigest, `${ledgerId}~${t.txnMetadata.seqNo}`);
      }
    }
    return true;
  }

  ledgerTargets(): Map<number, { size: number; root: string }> {
    const audit = this.ledgers.get(AUDIT)!;
    const out = new Map<number, { size: number; root: string }>();
    for (let i = audit.committed - 1; i >= 0 && out.size < LEDGERS.length; i--) {
      const a = JSON.parse(audit.txns[i]!) as { ledgerId: number; ledgerSize: Record<string, number>; ledgerRoot: string };
      if (!out.has(a.ledgerId)) out.set(a.ledgerId, { size: a.ledgerSize[a.ledgerId]!, root: a.ledgerRoot });
    }
    return out;
  }

  /** Crash: everything not committed is lost. */
  dropUncommitted(): void {
    while (this.applied.length > 0) this.revertLastBatch();
  }

  committedSize(ledgerId: number): number {
    return this.ledgers.get(ledgerId)!.committed;
  }

  committedTxn(ledgerId: number, seqNo: number): string | undefined {
    const l = this.ledgers.get(ledgerId)!;
    return seqNo <= l.committed ? l.txns[seqNo - 1] : undefined;
  }

  committedRoot(ledgerId: number): string {
    const l = this.ledgers.get(ledgerId)!;
    return l.roots[l.committed]!;
  }
}
