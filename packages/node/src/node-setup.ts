// The startup steps of a node that only read and check: opening the stores over one key-value
// store, replaying the pool ledger into the validator registry (this node must be in it, with this
// key file), checking the ledgers against the last audit txn, and the BLS key lookup the consensus
// crypto uses (a validator's key as of a pool state root, proof of possession checked once).
import { b58decode, LedgerId, parseJson } from '@quire/common';
import type { InstanceChangeVoteStore, StoredInstanceChangeVote } from '@quire/consensus';
import { blsVerifyPop } from '@quire/crypto';
import type { ExecutorStores, Txn } from '@quire/requests';
import { AttributeStore, BlsStore, type KvStore, Ledger, SeqNoIndex, StateTrie, TimestampStore } from '@quire/storage';
import type { AuditTrail } from './audit-trail.js';
import type { NodeStores } from './consensus-executor.js';
import { NodeError, NodeErrorCode } from './errors.js';
import type { NodeKeys } from './keys.js';
import { PoolRegistry } from './pool-registry.js';

/**
 * The node's ledgers, states and side stores over one key-value store: the base ledgers, and for each
 * plugin ledger a ledger and a state (`ledger-<id>`) in the same store.
 */
export async function openNodeStores(kv: KvStore, pluginLedgers: readonly number[] = []): Promise<{ stores: NodeStores; requestStores: ExecutorStores }> {
  const ledgers: NodeStores['ledgers'] = {
    [LedgerId.POOL]: await Ledger.open({ ledgerId: LedgerId.POOL }, { kv }),
    [LedgerId.DOMAIN]: await Ledger.open({ ledgerId: LedgerId.DOMAIN }, { kv }),
    [LedgerId.CONFIG]: await Ledger.open({ ledgerId: LedgerId.CONFIG }, { kv }),
    [LedgerId.AUDIT]: await Ledger.open({ ledgerId: LedgerId.AUDIT }, { kv }),
  };
  const states: NodeStores['states'] = {
    [LedgerId.POOL]: await StateTrie.open({ name: 'pool' }, { kv }),
    [LedgerId.DOMAIN]: await StateTrie.open({ name: 'domain' }, { kv }),
    [LedgerId.CONFIG]: await StateTrie.open({ name: 'config' }, { kv }),
  };
  const plugins = [...pluginLedgers].sort((a, b) => a - b);
  for (const id of plugins) {
    ledgers[id] = await Ledger.open({ ledgerId: id }, { kv });
    states[id] = await StateTrie.open({ name: `ledger-${id}` }, { kv });
  }
  const stores: NodeStores = {
    kv,
    ledgers,
    states,
    stateLedgers: [0, 1, 2, ...plugins],
    bls: new BlsStore(kv),
    seqNoIndex: new SeqNoIndex(kv),
    timestamps: new TimestampStore(kv),
    attributes: new AttributeStore(kv),
  };
  const stateLedgers: Record<number, Ledger> = {
    [LedgerId.POOL]: ledgers[LedgerId.POOL],
    [LedgerId.DOMAIN]: ledgers[LedgerId.DOMAIN],
    [LedgerId.CONFIG]: ledgers[LedgerId.CONFIG],
  };
  for (const id of plugins) stateLedgers[id] = ledgers[id];
  const requestStores = {
    kv,
    ledgers: stateLedgers,
    audit: ledgers[LedgerId.AUDIT],
    states,
    attributes: stores.attributes,
    timestamps: stores.timestamps,
    seqNoIndex: stores.seqNoIndex,
  } as unknown as ExecutorStores;
  return { stores, requestStores };
}

/** Replays the pool ledger; throws NOT_IN_POOL unless `name` is a node of it with this key file's dest. */
export async function loadPoolRegistry(pool: Ledger, name: string, keys: NodeKeys): Promise<{ registry: PoolRegistry; poolTxns: Txn[] }> {
  const registry = new PoolRegistry();
  const poolTxns: Txn[] = [];
  for await (const [, t] of pool.range(1, pool.size)) {
    registry.apply(t);
    poolTxns.push(t as unknown as Txn);
  }
  const self = registry.node(name);
  if (self === undefined) throw new NodeError(NodeErrorCode.NOT_IN_POOL, { name, reason: 'no NODE txn with this alias in the pool ledger' });
  if (self.dest !== keys.dest)
    throw new NodeError(NodeErrorCode.NOT_IN_POOL, { name, reason: `the key file's dest ${keys.dest} differs from NODE.dest ${self.dest}` });
  return { registry, poolTxns };
}

/** A ledger found behind the size its last audit txn records: a catch-up that a crash cut short. */
export interface LedgerBehindAudit {
  ledgerId: number;
  size: number;
  auditSize: number;
}

/**
 * Checks ledgers 0-2 and the plugin ledgers against the sizes the last audit txn records. Ordering commits a batch's txns
 * and its audit txn in one write, so they agree; catch-up appends the audit ledger first and then
 * pool, config and domain, each reply in a write of its own (consensus.md §7.2), so a node killed
 * in between has ledgers *behind* its audit ledger, each at the end of one proof-checked write, and
 * the catch-up mark those writes carry (`catchupInterrupted`). That is a catch-up to finish, not
 * damage: those ledgers are returned (the node starts, and the catch-up it always runs at start
 * fetches the rest against the audit ledger's targets). A ledger behind without the mark (a torn or
 * lost write) or ahead of the audit ledger cannot come from any write the node makes:
 * STORAGE_INCONSISTENT.
 */
export function checkAgainstAudit(audit: AuditTrail, ledgers: NodeStores['ledgers'], catchupInterrupted: boolean): LedgerBehindAudit[] {
  if (audit.summary() === undefined) return [];
  const behind: LedgerBehindAudit[] = [];
  for (const [l, size] of audit.targets()) {
    if (l === 3) continue;
    // a plugin ledger the pool wrote to and this node does not run: it could never order nor catch up
    if (!Object.hasOwn(ledgers, l)) throw new NodeError(NodeErrorCode.PLUGIN_MISSING, { ledgerId: l });
    const have = ledgers[l].size;
    if (have > size.size || (have < size.size && !catchupInterrupted)) {
      throw new NodeError(NodeErrorCode.STORAGE_INCONSISTENT, {
        reason: `ledger ${l} has ${have} txns, the last audit txn says ${size.size}${have < size.size ? ' (and no catch-up was under way)' : ''}`,
      });
    }
    if (have < size.size) behind.push({ ledgerId: l, size: have, auditSize: size.size });
  }
  return behind;
}

/**
 * The BLS public key of validator `alias` as of pool state root `poolRoot` (base58), or undefined
 * when it has none, it is unreadable, or its proof of possession fails. Verified keys are cached.
 */
export function blsKeyLookup(poolState: StateTrie, destOf: (alias: string) => string | undefined): (alias: string, poolRoot: string) => Uint8Array | undefined {
  const cache = new Map<string, Uint8Array | null>();
  const decoder = new TextDecoder();
  return (alias, poolRoot) => {
    const dest = destOf(alias);
    if (dest === undefined) return undefined;
    let raw: Uint8Array | undefined;
    try {
      raw = poolState.getAt(b58decode(poolRoot), dest);
    } catch {
      return undefined;
    }
    if (raw === undefined) return undefined;
    let rec: Record<string, unknown>;
    try {
      rec = parseJson(decoder.decode(raw)) as Record<string, unknown>;
    } catch {
      return undefined;
    }
    return popCheckedBlsKey(rec, cache);
  };
}

/**
 * The BLS public key of a NODE record (`blskey`), only when its proof of possession (`blskey_pop`)
 * verifies; results, including refusals (null), are cached by key and proof.
 */
export function popCheckedBlsKey(rec: { blskey?: unknown; blskey_pop?: unknown } | undefined, cache: Map<string, Uint8Array | null>): Uint8Array | undefined {
  if (typeof rec?.blskey !== 'string' || typeof rec.blskey_pop !== 'string') return undefined;
  const cacheKey = `${rec.blskey}|${rec.blskey_pop}`;
  let pk = cache.get(cacheKey);
  if (pk === undefined) {
    try {
      const k = b58decode(rec.blskey);
      pk = blsVerifyPop(k, b58decode(rec.blskey_pop)) ? k : null;
    } catch {
      pk = null;
    }
    cache.set(cacheKey, pk);
  }
  return pk ?? undefined;
}

/** Bucket of the INSTANCE_CHANGE votes that survive a restart (one key, `votes`). */
export const VOTE_STORE_BUCKET = 'instance-change-votes';
const VOTES_KEY = new TextEncoder().encode('votes');

/**
 * The consensus core's `InstanceChangeVoteStore` over the node's key-value store (consensus.md
 * §6.2): the live votes as one JSON array under one key. `load()` reads synchronously; `save()`
 * only keeps the latest set: writes are coalesced (#15, F4), at most one in flight and one set
 * pending, which the next write takes whole, so a flood of votes costs one synced write per write
 * time rather than one per vote, and it is encoded only when written. `flush()` awaits the writes
 * (before the store closes). A stored value that cannot be read is ignored with `onError` (votes
 * are advisory: losing them only delays a view change).
 */
export class KvVoteStore implements InstanceChangeVoteStore {
  private pending: StoredInstanceChangeVote[] | undefined;
  private draining = false;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly kv: KvStore,
    private readonly onError: (reason: string) => void = () => undefined,
  ) {}

  load(): StoredInstanceChangeVote[] {
    const raw = this.kv.getSync(VOTE_STORE_BUCKET, VOTES_KEY);
    if (raw === undefined) return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(new TextDecoder().decode(raw));
    } catch (e) {
      this.onError(`stored INSTANCE_CHANGE votes unreadable: ${e instanceof Error ? e.message : String(e)}`);
      return [];
    }
    if (!Array.isArray(parsed)) {
      this.onError('stored INSTANCE_CHANGE votes unreadable: not an array');
      return [];
    }
    return parsed.filter(isStoredVote);
  }

  save(votes: StoredInstanceChangeVote[]): void {
    this.pending = votes;
    if (this.draining) return;
    this.draining = true;
    this.writing = this.drain();
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending !== undefined && !this.kv.closed) {
        const votes = this.pending;
        this.pending = undefined;
        const value = new TextEncoder().encode(JSON.stringify(votes.map((v) => ({ viewNo: v.viewNo, voter: v.voter, utc: v.utc }))));
        try {
          await this.kv.batch().put(VOTE_STORE_BUCKET, VOTES_KEY, value).write({ sync: true });
        } catch (e) {
          this.onError(`INSTANCE_CHANGE votes not saved: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  /** Resolves once every vote set given to save() so far is written (or failed). */
  flush(): Promise<void> {
    return this.writing;
  }
}

function isStoredVote(v: unknown): v is StoredInstanceChangeVote {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return Number.isSafeInteger(o.viewNo) && typeof o.voter === 'string' && Number.isSafeInteger(o.utc);
}
