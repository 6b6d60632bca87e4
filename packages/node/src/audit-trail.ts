// Audit txns (formats.md §10.1, consensus.md §3.11): builds the next audit txn with the delta rules
// for ledgerRoot / primaries / nodeReg, keeps the resolved values of the last committed and of the
// applied-uncommitted ones, and restores them from the audit ledger at startup.
import { BoundedFifo, TxnType, b58encode } from '@quire/common';
import type { AuditSummary, SignedLedgerRoots } from '@quire/consensus';
import type { Ledger } from '@quire/storage';
import { NodeError, NodeErrorCode } from './errors.js';

export interface AuditRecord {
  /** the stored txn; `ledgerSize`, `ledgerRoot`, `stateRoot` are integer-keyed Maps */
  txn: Record<string, unknown>;
  seqNo: number;
  viewNo: number;
  ppSeqNo: number;
  ppTime: number;
  /** the ledgers with a root string (and a stateRoot entry) in this txn, ascending, with those roots: the ledgers BLS-signed for it */
  signed: SignedLedgerRoots[];
  sizes: Map<number, number>;
  /** each ledger's root: the raw ledgerRoot field value (string or delta) and the resolved root (deltas followed) */
  ledgerRoots: Map<number, LedgerRoot>;
  stateRoots: Map<number, string>;
  primaries: string[];
  primariesField: string[] | number;
  nodeReg: string[];
  nodeRegField: string[] | number;
  /** ppTime of the latest audit txn with a root string for each ledger (freshness) */
  lastUpdate: Map<number, number>;
}

/** A ledger's entry in an audit txn's ledgerRoot: the field as written, and the root it stands for. */
export interface LedgerRoot {
  /** the root (base58), or the distance back to the audit txn that holds it */
  field: string | number;
  root: string;
}

export interface NextAuditInput {
  ledgerId: number;
  viewNo: number;
  ppSeqNo: number;
  ppTime: number;
  digest: string;
  sizes: Map<number, number>;
  roots: Map<number, string>;
  stateRoots: Map<number, string>;
  primaries: string[];
  nodeReg: string[];
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function listField(
  value: string[],
  prev: AuditRecord | undefined,
  prevResolved: string[] | undefined,
  prevField: string[] | number | undefined,
): string[] | number {
  if (prev === undefined || prevResolved === undefined || !sameList(value, prevResolved)) return [...value];
  return typeof prevField === 'number' ? prevField + 1 : 1;
}

function toMap(v: unknown): Map<number, unknown> {
  if (v instanceof Map) return v as Map<number, unknown>;
  const m = new Map<number, unknown>();
  if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) m.set(Number(k), x);
  return m;
}

export class AuditTrail {
  private committed: AuditRecord | undefined;
  private readonly uncommitted: AuditRecord[] = [];
  /** committed audit roots by size (checkpoint digests); bounded */
  private readonly roots: BoundedFifo<number, string>;
  /** each ledger's state root as the committed audit txns name it last (the holder of its ledger root) */
  private stateRootByLedger = new Map<number, string>();

  private constructor(maxRoots: number) {
    this.roots = new BoundedFifo(maxRoots);
  }

  /** Restores the last committed audit txn (deltas resolved from earlier audit txns). */
  static async load(audit: Ledger, maxRoots = 1024): Promise<AuditTrail> {
    const t = new AuditTrail(maxRoots);
    const size = audit.size;
    if (size === 0) return t;
    // the audit ledger is read synchronously through the key-value store; this load runs before
    // anything is written, so every committed txn is on disk
    const txns = new Map<number, unknown>();
    const need = new Set<number>([size]);
    const last = await audit.get(size);
    txns.set(size, last);
    const data = (last as { txn?: { data?: Record<string, unknown> } } | undefined)?.txn?.data ?? {};
    for (const f of ['ledgerRoot', 'primaries', 'nodeReg']) {
      const v = data[f];
      if (typeof v === 'number') need.add(size - v);
      else if (f === 'ledgerRoot') for (const d of toMap(v).values()) if (typeof d === 'number') need.add(size - d);
    }
    for (const n of need) if (!txns.has(n)) txns.set(n, await audit.get(n));
    t.restore(size, (n) => txns.get(n), b58encode(audit.root));
    return t;
  }

  /**
   * Re-reads the last committed audit txn (after catch-up appended audit txns); `read(seqNo)`
   * gives a committed audit txn. `root` is the audit ledger root at `size`.
   */
  restore(size: number, read: (seqNo: number) => unknown, root: string): void {
    this.uncommitted.length = 0;
    if (size === 0) {
      this.committed = undefined;
      return;
    }
    const dataAt = (seqNo: number): Record<string, unknown> => {
      const txn = read(seqNo) as { txn?: { data?: Record<string, unknown> }; txnMetadata?: { txnTime?: number } } | undefined;
      if (txn?.txn?.data === undefined) throw new NodeError(NodeErrorCode.STORAGE_INCONSISTENT, { reason: `audit txn ${seqNo} is missing` });
      return { ...txn.txn.data, __txnTime: txn.txnMetadata?.txnTime ?? 0 };
    };
    const last = dataAt(size);
    const resolveList = (field: string): string[] => {
      const v = last[field];
      if (Array.isArray(v)) return v as string[];
      if (typeof v === 'number') {
        const d = dataAt(size - v);
        if (Array.isArray(d[field])) return d[field] as string[];
      }
      return [];
    };
    const sizes = new Map<number, number>();
    for (const [k, v] of toMap(last.ledgerSize)) sizes.set(k, Number(v));
    const ledgerRoots = new Map<number, LedgerRoot>();
    const lastUpdate = new Map<number, number>();
    const stateRootByLedger = new Map<number, string>();
    const signed: SignedLedgerRoots[] = [];
    for (const [k, v] of toMap(last.ledgerRoot)) {
      const holder = typeof v === 'number' ? size - v : size;
      const d = holder === size ? last : dataAt(holder);
      const r = toMap(d.ledgerRoot).get(k);
      if (typeof r !== 'string') throw new NodeError(NodeErrorCode.STORAGE_INCONSISTENT, { reason: `audit txn ${holder} has no root for ledger ${k}` });
      ledgerRoots.set(k, { field: v as string | number, root: r });
      lastUpdate.set(k, d.__txnTime as number);
      const sr = toMap(d.stateRoot).get(k);
      if (typeof sr === 'string') {
        stateRootByLedger.set(k, sr);
        if (holder === size) signed.push({ ledgerId: k, stateRoot: sr, txnRoot: r });
      }
    }
    this.stateRootByLedger = stateRootByLedger;
    const stateRoots = new Map<number, string>();
    for (const [k, v] of toMap(last.stateRoot)) stateRoots.set(k, String(v));
    this.committed = {
      txn: {},
      seqNo: size,
      viewNo: Number(last.viewNo),
      ppSeqNo: Number(last.ppSeqNo),
      ppTime: last.__txnTime as number,
      signed,
      sizes,
      ledgerRoots,
      stateRoots,
      primaries: resolveList('primaries'),
      primariesField: last.primaries as string[] | number,
      nodeReg: resolveList('nodeReg'),
      nodeRegField: (last.nodeReg ?? []) as string[] | number,
      lastUpdate,
    };
    this.roots.set(size, root);
  }

  private head(): AuditRecord | undefined {
    return this.uncommitted.length > 0 ? this.uncommitted[this.uncommitted.length - 1] : this.committed;
  }

  /** Builds (and records as applied) the audit txn of the next batch. */
  next(input: NextAuditInput): AuditRecord {
    const prev = this.head();
    const ledgerSize = new Map<number, number>();
    const ledgerRoot = new Map<number, string | number>();
    const stateRoot = new Map<number, string>();
    const ledgerRoots = new Map<number, LedgerRoot>();
    const signed: SignedLedgerRoots[] = [];
    const lastUpdate = new Map(prev?.lastUpdate ?? []);
    for (const [l, size] of [...input.sizes].sort((a, b) => a[0] - b[0])) {
      ledgerSize.set(l, size);
      const prevRoot = prev?.ledgerRoots.get(l);
      let full: boolean;
      if (l === input.ledgerId) full = true;
      else if (prev === undefined || prevRoot === undefined) full = size > 0;
      else full = size > (prev.sizes.get(l) ?? 0);
      if (full) {
        // the executor gives every ledger's size, txn root and state root together
        const root = input.roots.get(l);
        const ledgerStateRoot = input.stateRoots.get(l);
        if (root === undefined || ledgerStateRoot === undefined) {
          throw new NodeError(NodeErrorCode.EXECUTOR_STATE, { reason: `the audit txn of a batch has the size of ledger ${l} but not its roots` });
        }
        ledgerRoot.set(l, root);
        stateRoot.set(l, ledgerStateRoot);
        ledgerRoots.set(l, { field: root, root });
        signed.push({ ledgerId: l, stateRoot: ledgerStateRoot, txnRoot: root });
        lastUpdate.set(l, input.ppTime);
      } else if (prevRoot !== undefined) {
        const field = typeof prevRoot.field === 'number' ? prevRoot.field + 1 : 1;
        ledgerRoot.set(l, field);
        ledgerRoots.set(l, { field, root: prevRoot.root });
      }
    }
    const primariesField = listField(input.primaries, prev, prev?.primaries, prev?.primariesField);
    const nodeRegField = listField(input.nodeReg, prev, prev?.nodeReg, prev?.nodeRegField);
    const seqNo = (prev?.seqNo ?? 0) + 1;
    const data: Record<string, unknown> = {
      ver: '1',
      viewNo: input.viewNo,
      ppSeqNo: input.ppSeqNo,
      ledgerSize,
      ledgerRoot,
      stateRoot,
      primaries: primariesField,
      digest: input.digest,
    };
    if (input.nodeReg.length > 0) data.nodeReg = nodeRegField;
    const txn = {
      ver: '1',
      txn: { type: TxnType.AUDIT, protocolVersion: 2, data, metadata: {} },
      txnMetadata: { seqNo, txnTime: input.ppTime },
      reqSignature: {},
    };
    const rec: AuditRecord = {
      txn,
      seqNo,
      viewNo: input.viewNo,
      ppSeqNo: input.ppSeqNo,
      ppTime: input.ppTime,
      signed,
      sizes: ledgerSize,
      ledgerRoots,
      stateRoots: stateRoot,
      primaries: [...input.primaries],
      primariesField,
      nodeReg: [...input.nodeReg],
      nodeRegField,
      lastUpdate,
    };
    this.uncommitted.push(rec);
    return rec;
  }

  /** Drops the newest applied audit txn. */
  revert(): void {
    this.uncommitted.pop();
  }

  /** Marks the oldest applied audit txn committed; `root` = audit ledger root after it. */
  commit(rec: AuditRecord, root: string): void {
    if (this.uncommitted[0] !== rec) throw new NodeError(NodeErrorCode.EXECUTOR_STATE, { reason: 'audit txns committed out of order' });
    this.uncommitted.shift();
    this.committed = rec;
    for (const [l, r] of rec.stateRoots) this.stateRootByLedger.set(l, r);
    this.roots.set(rec.seqNo, root);
  }

  rootAt(size: number): string | undefined {
    return this.roots.get(size);
  }

  summary(): AuditSummary | undefined {
    const c = this.committed;
    if (c === undefined) return undefined;
    const lastUpdate: Record<number, number> = {};
    for (const [l, t] of c.lastUpdate) lastUpdate[l] = t;
    return { viewNo: c.viewNo, ppSeqNo: c.ppSeqNo, ppTime: c.ppTime, auditRoot: this.roots.get(c.seqNo) ?? '', nodeReg: [...c.nodeReg], lastUpdate };
  }

  /**
   * Each ledger's state root as the committed audit ledger names it last (the audit txn holding its
   * ledger root); what the committed state of a ledger at its target size must have.
   */
  committedStateRoots(): Map<number, string> {
    return new Map(this.stateRootByLedger);
  }

  targets(): Map<number, { size: number; root: string }> {
    const out = new Map<number, { size: number; root: string }>();
    const c = this.committed;
    if (c === undefined) return out;
    for (const [l, size] of c.sizes) {
      const entry = c.ledgerRoots.get(l);
      if (entry !== undefined) out.set(l, { size, root: entry.root });
    }
    return out;
  }
}
