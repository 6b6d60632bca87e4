/**
 * The node's upgrade and restart service: one component the node wires to its config ledger, its
 * action path and its process exit. It owns the upgrade scheduler (POOL_UPGRADE -> NODE_UPGRADE,
 * requests.md §6.2) and the restart scheduler (POOL_RESTART, §6.3).
 */
import type { Request, Txn } from '@quire/common';
import type { Ed25519Signer } from '@quire/crypto';
import { systemClock } from './clock.js';
import type { UpgradeClock } from './clock.js';
import { buildNodeUpgradeRequest } from './node-upgrade-request.js';
import { Restarter, defaultRestarterOptions } from './restarter.js';
import type { RestartDecision } from './restarter.js';
import { Upgrader, defaultUpgraderOptions } from './upgrader.js';
import type { UpgradeStartupResult } from './upgrader.js';
import type { UpgradeActionRunner } from './upgrade-action.js';
import type { ExitProcess, SubmitNodeUpgrade, UpgradeLogger } from './types.js';

export interface UpgradeServiceOptions {
  nodeName: string;
  /** NODE.dest of this node. */
  nodeDest: string;
  /** Holds upgrade_log and restart_log. */
  dataDir: string;
  /** The running software version (see readInstalledVersion). */
  currentVersion: string;
  /** Default package of POOL_UPGRADEs without `package`. */
  nodePackage?: string;
  /** The upgrade action: argv, or a shell command line (config `upgrade.actionCommand`); the version is appended. */
  upgradeActionCommand?: string | string[] | null;
  upgradeActionTimeoutMs?: number;
  submitTimeoutMs?: number;
  /** How long the node waits for its NODE_UPGRADE `in_progress` to be ordered before running the action anyway (0: no wait). */
  inProgressOrderTimeoutMs?: number;
  immediateRestartDelayMs?: number;
}

/** The service hears of every committed config txn, so by default it waits this long for its own `in_progress` to be ordered. */
export const DEFAULT_IN_PROGRESS_ORDER_TIMEOUT_MS = 60_000;

export const defaultUpgradeServiceOptions = {
  nodePackage: defaultUpgraderOptions.nodePackage,
  upgradeActionCommand: defaultUpgraderOptions.actionCommand,
  upgradeActionTimeoutMs: defaultUpgraderOptions.actionTimeoutMs,
  submitTimeoutMs: defaultUpgraderOptions.submitTimeoutMs,
  inProgressOrderTimeoutMs: DEFAULT_IN_PROGRESS_ORDER_TIMEOUT_MS,
  immediateRestartDelayMs: defaultRestarterOptions.immediateDelayMs,
};

export interface UpgradeServiceModules {
  /** Defaults to the system clock. */
  clock?: UpgradeClock;
  submitNodeUpgrade: SubmitNodeUpgrade;
  exit: ExitProcess;
  logger: UpgradeLogger;
  runAction?: UpgradeActionRunner;
}

/** What the service found at startup. */
export interface UpgradeServiceStartup {
  upgrade: UpgradeStartupResult;
  /** True when a scheduled restart was completed by this start. */
  restarted: boolean;
}

export class UpgradeService {
  readonly upgrader: Upgrader;
  readonly restarter: Restarter;

  constructor(options: UpgradeServiceOptions, modules: UpgradeServiceModules) {
    const o = { ...defaultUpgradeServiceOptions, ...options };
    const clock = modules.clock ?? systemClock;
    this.upgrader = new Upgrader(
      {
        nodeName: o.nodeName,
        nodeDest: o.nodeDest,
        dataDir: o.dataDir,
        currentVersion: o.currentVersion,
        nodePackage: o.nodePackage,
        actionCommand: o.upgradeActionCommand ?? [],
        actionTimeoutMs: o.upgradeActionTimeoutMs,
        submitTimeoutMs: o.submitTimeoutMs,
        inProgressOrderTimeoutMs: o.inProgressOrderTimeoutMs,
      },
      {
        clock,
        submitNodeUpgrade: modules.submitNodeUpgrade,
        exit: modules.exit,
        logger: modules.logger,
        ...(modules.runAction ? { runAction: modules.runAction } : {}),
      },
    );
    this.restarter = new Restarter({ dataDir: o.dataDir, immediateDelayMs: o.immediateRestartDelayMs }, { clock, exit: modules.exit, logger: modules.logger });
  }

  /**
   * Call once at startup, after the config ledger is caught up and the node can submit writes:
   * finishes a restart or an upgrade that ended the previous run (logs it, writes NODE_UPGRADE
   * complete/fail), then re-schedules the pending upgrade from the config ledger.
   */
  async onStartup(configTxns: Iterable<Txn> | AsyncIterable<Txn>): Promise<UpgradeServiceStartup> {
    const restarted = this.restarter.onStartup();
    const upgrade = await this.upgrader.onStartup();
    await this.upgrader.replay(configTxns);
    return { upgrade, restarted };
  }

  /** Call after every config-ledger catch-up (requests.md §6.2 replay). */
  onConfigLedgerCaughtUp(configTxns: Iterable<Txn> | AsyncIterable<Txn>): Promise<void> {
    return this.upgrader.replay(configTxns);
  }

  /** Call for every committed config-ledger txn, in order (this node's own NODE_UPGRADE `in_progress` included: the upgrade waits for it). */
  onConfigTxnCommitted(txn: Txn): Promise<void> {
    return this.upgrader.onConfigTxnCommitted(txn);
  }

  /** Call for a forced POOL_UPGRADE once it passed validation at receipt. */
  onForcedPoolUpgrade(request: Request): Promise<void> {
    return this.upgrader.onForcedPoolUpgrade(request);
  }

  /** Call for a POOL_RESTART that passed authorization, after sending (or while sending) its REPLY. */
  onPoolRestart(request: Request): RestartDecision {
    return this.restarter.onPoolRestart(request);
  }

  /** Clears every timer. Idempotent. */
  close(): void {
    this.upgrader.close();
    this.restarter.close();
  }
}

/**
 * A {@link SubmitNodeUpgrade} for the node: builds the NODE_UPGRADE with the node's key and hands it
 * to `send` (the node's own path into propagation and ordering). reqIds are microseconds since the
 * epoch, kept strictly increasing.
 */
export function nodeUpgradeSubmitter(signer: Ed25519Signer, send: (request: Request) => Promise<void>, clock: UpgradeClock = systemClock): SubmitNodeUpgrade {
  let last = 0;
  return (data) => {
    last = Math.max(last + 1, clock.now() * 1000);
    return send(buildNodeUpgradeRequest(signer, data, last));
  };
}
