// Startup steps of a node before anything runs: genesis into empty ledgers (checked against
// non-empty ones), repair of a lost state, and small readers of the ledgers.
import { b58encode } from '@quire/common';
import type { RequestExecutor, Txn } from '@quire/requests';
import { BLANK_ROOT, type Ledger, loadGenesisEntries, readGenesisFile } from '@quire/storage';
import type { AuditTrail } from './audit-trail.js';
import { type NodeConfig, resolvePath } from './config.js';
import { type NodeStores, STATE_LEDGERS } from './consensus-executor.js';
import { NodeError, NodeErrorCode, reasonOf } from './errors.js';
import type { NodeLogger } from './logger.js';

const STATE_NAMES: Record<number, string> = { 0: 'pool', 1: 'domain', 2: 'config' };
const stateName = (lid: number): string => STATE_NAMES[lid] ?? `ledger-${lid}`;

export function genesisSize(poolTxns: readonly Txn[]): number {
  let n = 0;
  for (const t of poolTxns) {
    const meta = (t as { txnMetadata?: { txnTime?: unknown } }).txnMetadata;
    if (meta?.txnTime !== undefined) break;
    n++;
  }
  return Math.max(1, n);
}

export async function configTxns(ledger: Ledger): Promise<Txn[]> {
  const out: Txn[] = [];
  if (ledger.size === 0) return out;
  for await (const [, t] of ledger.range(1, ledger.size)) out.push(t as unknown as Txn);
  return out;
}

/** Loads genesis into empty ledgers (with their state); checks it against non-empty ones. */
export async function loadGenesisFiles(
  ex: RequestExecutor,
  ledgers: Record<0 | 1 | 2 | 3, Ledger>,
  dir: string,
  cfg: NodeConfig,
  log: NodeLogger,
): Promise<void> {
  const files: [0 | 1 | 2, string | null][] = [
    [0, cfg.poolGenesisFile],
    [1, cfg.domainGenesisFile],
    [2, cfg.configGenesisFile],
  ];
  for (const [lid, f] of files) {
    if (f === null) continue;
    const file = resolvePath(dir, f);
    let entries;
    try {
      entries = await readGenesisFile(file, { ledgerId: lid });
    } catch (e) {
      if (ledgers[lid].size > 0 && (e as { code?: string }).code === 'GENESIS_UNREADABLE') continue;
      throw new NodeError(NodeErrorCode.GENESIS_INVALID, { file, reason: reasonOf(e) }, { cause: e });
    }
    if (ledgers[lid].size === 0) {
      await ex.applyGenesis(
        lid,
        entries.map((e) => e.txn as unknown as Txn),
      );
      log.info({ ledgerId: lid, txns: entries.length, file }, 'genesis loaded');
    } else {
      try {
        await loadGenesisEntries(ledgers[lid], file, entries);
      } catch (e) {
        throw new NodeError(NodeErrorCode.GENESIS_INVALID, { file, reason: reasonOf(e) }, { cause: e });
      }
    }
  }
}

/** A state whose committed root was lost (empty) while its ledger has txns is rebuilt from the ledger (a warning when that restored anything). */
export async function repairState(ex: RequestExecutor, stores: NodeStores, log: NodeLogger): Promise<void> {
  const blank = b58encode(BLANK_ROOT);
  for (const lid of stores.stateLedgers ?? STATE_LEDGERS) {
    if (stores.ledgers[lid].size > 0 && b58encode(stores.states[lid].committedRoot) === blank) {
      // a ledger of stateless txns only (POOL_UPGRADE, NODE_UPGRADE) legitimately has an empty state
      await ex.rebuildState(lid);
      if (b58encode(stores.states[lid].committedRoot) !== blank)
        log.warn({ ledgerId: lid, state: stateName(lid) }, 'state was missing: rebuilt it from the ledger');
    }
  }
}

/**
 * A state whose committed root differs from the one the audit ledger names for its ledger at that
 * size (a rebuild that a kill cut short: it commits as it goes, so the root it leaves names a prefix
 * of the ledger; or any damage) is rebuilt from the ledger, from an empty trie, with a warning; a
 * kill during that rebuild is met the same way at the next start. STORAGE_INCONSISTENT when even
 * the rebuilt state differs. Ledgers behind the audit ledger (an interrupted catch-up) are left to
 * the catch-up.
 */
export async function repairStateAgainstAudit(ex: RequestExecutor, stores: NodeStores, audit: AuditTrail, log: NodeLogger): Promise<void> {
  const targets = audit.targets();
  const named = audit.committedStateRoots();
  for (const lid of stores.stateLedgers ?? STATE_LEDGERS) {
    const expected = named.get(lid);
    if (expected === undefined || targets.get(lid)?.size !== stores.ledgers[lid].size) continue;
    const trie = stores.states[lid];
    const found = b58encode(trie.committedRoot);
    if (found === expected) continue;
    log.warn({ ledgerId: lid, state: stateName(lid), found, expected }, 'state root differs from the audit ledger: rebuilding the state from the ledger');
    trie.setHead(BLANK_ROOT);
    await trie.commit(BLANK_ROOT);
    await ex.rebuildState(lid);
    const rebuilt = b58encode(trie.committedRoot);
    if (rebuilt !== expected) {
      throw new NodeError(NodeErrorCode.STORAGE_INCONSISTENT, {
        reason: `state ${lid} rebuilt from its ledger has root ${rebuilt}, the audit ledger says ${expected}`,
      });
    }
  }
}
