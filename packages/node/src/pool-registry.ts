// The validator registry R and the node records of the pool ledger (consensus.md §1.3, §8):
// replaying NODE txns in seqNo order, a txn whose `services` holds VALIDATOR appends its alias if
// absent, one whose `services` is present without it removes the alias, one without `services`
// changes nothing. Node records merge every NODE txn's `data` for a dest (formats.md §8.1).
import { TxnType } from '@quire/common';
import type { ValidatorInfo } from '@quire/network';

export interface NodeRecord {
  dest: string;
  alias: string;
  data: Record<string, unknown>;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Map);
}

export class PoolRegistry {
  private validators_: string[] = [];
  private readonly nodes = new Map<string, NodeRecord>();
  private readonly byAlias = new Map<string, string>();

  get validators(): readonly string[] {
    return this.validators_;
  }

  clone(): PoolRegistry {
    const r = new PoolRegistry();
    r.validators_ = [...this.validators_];
    for (const [k, v] of this.nodes) r.nodes.set(k, { ...v, data: { ...v.data } });
    for (const [k, v] of this.byAlias) r.byAlias.set(k, v);
    return r;
  }

  /** Applies one pool-ledger txn; returns true when it was a NODE txn. */
  apply(txn: unknown): boolean {
    if (!isObject(txn) || !isObject(txn.txn) || txn.txn.type !== TxnType.NODE || !isObject(txn.txn.data)) return false;
    const d = txn.txn.data;
    if (typeof d.dest !== 'string') return false;
    const patch = isObject(d.data) ? d.data : {};
    const prev = this.nodes.get(d.dest);
    const data = { ...(prev?.data ?? {}), ...patch };
    const alias = typeof data.alias === 'string' ? data.alias : prev?.alias;
    if (alias === undefined) return true;
    this.nodes.set(d.dest, { dest: d.dest, alias, data });
    this.byAlias.set(alias, d.dest);
    if (Array.isArray(patch.services)) {
      const isValidator = patch.services.includes('VALIDATOR');
      const i = this.validators_.indexOf(alias);
      if (isValidator && i < 0) this.validators_ = [...this.validators_, alias];
      else if (!isValidator && i >= 0) this.validators_ = this.validators_.filter((a) => a !== alias);
    }
    return true;
  }

  node(alias: string): NodeRecord | undefined {
    const dest = this.byAlias.get(alias);
    return dest === undefined ? undefined : this.nodes.get(dest);
  }

  destOf(alias: string): string | undefined {
    return this.byAlias.get(alias);
  }

  /** The validators with a dialable node address, for the node host. */
  validatorInfos(): ValidatorInfo[] {
    const out: ValidatorInfo[] = [];
    for (const alias of this.validators_) {
      const n = this.node(alias);
      if (n === undefined) continue;
      const host = n.data.node_ip;
      const port = typeof n.data.node_port === 'string' ? Number(n.data.node_port) : n.data.node_port;
      if (typeof host !== 'string' || typeof port !== 'number' || !Number.isSafeInteger(port) || port < 1 || port > 65535) continue;
      out.push({ name: alias, dest: n.dest, host, port });
    }
    return out;
  }
}
