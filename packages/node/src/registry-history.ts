// The validator registry R through history (consensus.md §1.3, §1.4, §8), read from the committed
// pool and audit ledgers for the optional parts of the consensus BatchExecutor:
// - `registryAt(poolStateRoot)`: R at a historic pool state root (the n−f of a multi-signature
//   carried in a PRE-PREPARE). Pool state roots are mapped to pool ledger sizes from the audit
//   txns (their `stateRoot[0]`) and from the roots this node committed; R at a size is the replay of
//   the pool ledger up to it. A state can come back to an earlier root with another order of R
//   (demote X, then promote X: X moves to the end); the latest pool size with the root wins, so the
//   set of validators is always right and the order is that of the latest occurrence.
// - `viewStartRegistries(count)`: R_begin of the last views that ordered a batch — the `nodeReg` of
//   the audit txn before each view's first one (genesis R for the first audit txn). viewNo never
//   decreases along the audit ledger, so each view's first txn is found by binary search.
// - `changedNodes(before, txns)`: the nodes already in the pool whose addresses or keys a committed
//   batch of NODE txns changed (vote 27 when one is the primary).
import { BoundedFifo } from '@quire/common';
import type { Ledger } from '@quire/storage';
import { PoolRegistry } from './pool-registry.js';

/** NODE data fields whose change is a change of the node's addresses or keys (consensus.md §8). */
const NODE_IDENTITY_FIELDS = ['node_ip', 'node_port', 'client_ip', 'client_port', 'blskey', 'blskey_pop'] as const;

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function field(container: unknown, key: number): unknown {
  if (container instanceof Map) return (container as Map<unknown, unknown>).get(key) ?? (container as Map<unknown, unknown>).get(String(key));
  return isObject(container) ? container[String(key)] : undefined;
}

function auditData(audit: Ledger, seqNo: number): Record<string, unknown> {
  const t = audit.getSync(seqNo) as { txn?: { data?: unknown } } | undefined;
  return isObject(t?.txn?.data) ? t.txn.data : {};
}

/** Most registries by pool size kept (each is a replay of the pool ledger). */
const CACHED_REGISTRIES = 64;

export class RegistryHistory {
  /** base58 pool state root -> the largest committed pool ledger size known to have it */
  private readonly sizeByRoot = new Map<string, number>();
  /** audit txns scannedFrom..scannedTo have been read into sizeByRoot (scanned from the end backwards) */
  private scannedFrom = 1;
  private scannedTo = 0;
  private readonly bySize = new BoundedFifo<number, string[]>(CACHED_REGISTRIES);
  private genesis: string[] | undefined;

  constructor(
    private readonly pool: Ledger,
    private readonly audit: Ledger,
  ) {}

  /** Records that the committed pool state had `root` (base58) at pool ledger size `size`. */
  noteRoot(root: string, size: number): void {
    const known = this.sizeByRoot.get(root);
    if (known === undefined || known < size) this.sizeByRoot.set(root, size);
  }

  /**
   * R at a committed pool state root (base58), undefined when no committed history has it. Audit
   * txns are read from the newest back only as far as needed (the roots asked about are recent
   * ones), and each at most once.
   */
  registryAt(root: string): string[] | undefined {
    const end = this.audit.size;
    if (this.scannedTo > end) {
      // the audit ledger is shorter than what was read (never for a committed ledger): start over
      this.scannedFrom = 1;
      this.scannedTo = 0;
    }
    if (this.scannedTo < end) {
      if (this.scannedTo === 0) this.scannedFrom = end + 1;
      else for (let s = this.scannedTo + 1; s <= end; s++) this.noteAudit(s);
      this.scannedTo = end;
    }
    while (!this.sizeByRoot.has(root) && this.scannedFrom > 1) this.noteAudit(--this.scannedFrom);
    const size = this.sizeByRoot.get(root);
    // a root named by caught-up audit txns whose pool txns are not caught up yet is not known yet
    return size === undefined || size > this.pool.size ? undefined : [...this.registryAtSize(size)];
  }

  private noteAudit(seqNo: number): void {
    const d = auditData(this.audit, seqNo);
    const root = field(d.stateRoot, 0);
    const size = field(d.ledgerSize, 0);
    if (typeof root === 'string' && typeof size === 'number') this.noteRoot(root, size);
  }

  /** R after the first `size` pool txns. */
  private registryAtSize(size: number): string[] {
    const hit = this.bySize.get(size);
    if (hit !== undefined) return hit;
    const r = new PoolRegistry();
    for (let s = 1; s <= Math.min(size, this.pool.size); s++) r.apply(this.pool.getSync(s));
    const out = [...r.validators];
    this.bySize.set(size, out);
    return out;
  }

  /** R of the pool genesis: the pool txns before the first with a txnTime (ordered ones have one). */
  genesisRegistry(): string[] {
    if (this.genesis === undefined) {
      const r = new PoolRegistry();
      for (let s = 1; s <= this.pool.size; s++) {
        const t = this.pool.getSync(s) as { txnMetadata?: { txnTime?: unknown } } | undefined;
        if (t?.txnMetadata?.txnTime !== undefined) break;
        r.apply(t);
      }
      this.genesis = [...r.validators];
    }
    return [...this.genesis];
  }

  /** R_begin of the last `count` views that ordered a batch, from the committed audit ledger. */
  viewStartRegistries(count: number): Map<number, string[]> {
    const out = new Map<number, string[]>();
    const viewAt = (s: number): number => Number(auditData(this.audit, s).viewNo);
    let hi = this.audit.size;
    while (hi >= 1 && out.size < count) {
      const view = viewAt(hi);
      // the first audit txn of `view` in 1..hi (viewNo is non-decreasing)
      let lo = 1;
      let first = hi;
      while (lo < first) {
        const mid = Math.floor((lo + first) / 2);
        if (viewAt(mid) >= view) first = mid;
        else lo = mid + 1;
      }
      out.set(view, first > 1 ? this.nodeRegAt(first - 1) : this.genesisRegistry());
      hi = first - 1;
    }
    return out;
  }

  /** The resolved `nodeReg` of audit txn `seqNo` (a number is a back-reference, formats.md §10.1). */
  private nodeRegAt(seqNo: number): string[] {
    const v = auditData(this.audit, seqNo).nodeReg;
    if (Array.isArray(v)) return v.map(String);
    if (typeof v === 'number' && v > 0 && v < seqNo) {
      const back = auditData(this.audit, seqNo - v).nodeReg;
      if (Array.isArray(back)) return back.map(String);
    }
    return [];
  }
}

/** The aliases of nodes already in `before` whose addresses or keys the pool txns `txns` change. */
export function changedNodes(before: PoolRegistry, txns: readonly unknown[]): string[] {
  const after = before.clone();
  const touched: string[] = [];
  for (const t of txns) {
    if (!after.apply(t)) continue;
    const data = (t as { txn: { data: { dest?: unknown; data?: unknown } } }).txn.data;
    const alias = isObject(data.data) ? data.data.alias : undefined;
    if (typeof alias === 'string' && !touched.includes(alias)) touched.push(alias);
  }
  return touched.filter((alias) => {
    const old = before.node(alias);
    const now = after.node(alias);
    return old !== undefined && now !== undefined && NODE_IDENTITY_FIELDS.some((f) => JSON.stringify(old.data[f]) !== JSON.stringify(now.data[f]));
  });
}
