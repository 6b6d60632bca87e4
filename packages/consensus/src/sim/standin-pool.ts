// STAND-IN pool state for the simulator's stand-in executor: NODE txns (ledger 0) with the registry
// rule of consensus.md §1.3 and the BLS keys of formats.md §9, kept per pool state root so that
// keys and registries stay resolvable at every root a multi-signature names (key rotation, §8).
// The real executor derives the same from the pool trie of @quire/storage.
import { canonicalJson } from '@quire/common';

export const VALIDATOR = 'VALIDATOR';

/** NODE txn data as the simulator writes it: `{alias, services?, blskey?, node_ip?}` */
export interface StandInNodeData {
  alias: string;
  services?: string[];
  blskey?: string;
  node_ip?: string;
}

/** The pool as of one pool state root. */
export interface PoolView {
  /** validator aliases in registry order (R) */
  registry: string[];
  /** dest -> merged NODE data */
  nodes: Map<string, StandInNodeData>;
}

export const EMPTY_POOL: PoolView = { registry: [], nodes: new Map() };

export type NodeTxnCheck = { ok: true; view: PoolView; value: string; changed: string | undefined } | { ok: false; reason: string };

/** Minimum validators a demotion must leave in a production pool (consensus.md §8 [Q]). */
const MIN_VALIDATORS = 4;

/**
 * Applies one NODE txn to a pool view: merges the data, appends a new or promoted validator at the
 * end of R, removes a demoted one. `changed` is the alias of an existing node whose keys or address
 * changed (vote 27 when it is the primary).
 */
export function applyNodeTxn(view: PoolView, dest: string, data: unknown, strict: boolean): NodeTxnCheck {
  if (typeof data !== 'object' || data === null) return { ok: false, reason: 'NODE data missing' };
  const d = data as Partial<StandInNodeData>;
  if (typeof d.alias !== 'string' || d.alias === '') return { ok: false, reason: 'NODE alias missing' };
  const existing = view.nodes.get(dest);
  if (existing !== undefined && existing.alias !== d.alias) return { ok: false, reason: `alias of ${dest} cannot change` };
  if (existing === undefined) {
    for (const n of view.nodes.values()) if (n.alias === d.alias) return { ok: false, reason: `alias ${d.alias} already taken` };
  }
  const merged: StandInNodeData = { ...(existing ?? {}), ...(d as StandInNodeData) };
  let registry = view.registry;
  if (d.services !== undefined) {
    const validator = Array.isArray(d.services) && d.services.includes(VALIDATOR);
    if (validator && !registry.includes(merged.alias)) {
      if (strict && typeof merged.blskey !== 'string') return { ok: false, reason: 'a validator needs a BLS key' };
      registry = [...registry, merged.alias];
    } else if (!validator && registry.includes(merged.alias)) {
      if (strict && registry.length <= MIN_VALIDATORS) return { ok: false, reason: `a demotion would leave fewer than ${MIN_VALIDATORS} validators` };
      registry = registry.filter((a) => a !== merged.alias);
    }
  }
  const nodes = new Map(view.nodes);
  nodes.set(dest, merged);
  const changed = existing !== undefined && (existing.blskey !== merged.blskey || existing.node_ip !== merged.node_ip) ? merged.alias : undefined;
  return { ok: true, view: { registry, nodes }, value: canonicalJson(merged), changed };
}

/** The BLS key (base58) of a validator in a pool view; undefined for non-validators and keyless nodes. */
export function blsKeyIn(view: PoolView, alias: string): string | undefined {
  if (!view.registry.includes(alias)) return undefined;
  for (const n of view.nodes.values()) if (n.alias === alias) return n.blskey;
  return undefined;
}
