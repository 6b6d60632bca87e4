// The node's side of upgrades and restarts: builds the UpgradeService of src/upgrade/ for this
// node and feeds it the node's events (requests.md §6): the first config-ledger catch-up after
// start (finish a restart / upgrade, replay the ledger), later catch-ups (replay), every committed
// config txn, forced POOL_UPGRADEs at receipt and authorized POOL_RESTARTs. NODE_UPGRADEs are
// signed with the node key and sent through the node's own client-request intake, so they are
// propagated and ordered like any write; an upgrade runs its action once its own in_progress is
// ordered (seen among the committed config txns, bounded wait). Also answers POOL_UPGRADE's
// installed-software checks.
import type { Request, Txn } from '@quire/common';
import type { Ed25519Signer } from '@quire/crypto';
import type { SoftwareInfo } from '@quire/requests';
import type { UpgradeConfig } from './config.js';
import type { NodeLogger } from './logger.js';
import {
  type UpgradeClock,
  type RestartDecision,
  type UpgradeActionRunner,
  UpgradeService,
  nodeUpgradeSubmitter,
  readInstalledVersion,
} from './upgrade/index.js';

export type { SoftwareInfo } from '@quire/requests';

/** The node software package a POOL_UPGRADE names by default. */
export const NODE_PACKAGE = 'quire-node';

export interface NodeUpgradesOptions {
  nodeName: string;
  nodeDest: string;
  dataDir: string;
  /** the version of this package; the data dir's `installed_version` overrides it */
  packageVersion: string;
  upgrade: UpgradeConfig;
  /** how long an upgrade waits for its NODE_UPGRADE `in_progress` to be ordered before running the action anyway; default 60 s */
  inProgressOrderTimeoutMs?: number;
}

export interface NodeUpgradesModules {
  logger: NodeLogger;
  /** the node's Ed25519 key (NODE.dest) */
  signer: Ed25519Signer;
  /** the node's own write intake (propagated and ordered like a client write) */
  submitOwn(request: Request): Promise<void>;
  /** graceful shutdown, then end the process with `code` */
  exit(code: number): void | Promise<void>;
  clock?: UpgradeClock;
  runAction?: UpgradeActionRunner;
}

export class NodeUpgrades {
  readonly service: UpgradeService;
  /** the running version (`installed_version` of the data dir, else the package version) */
  readonly currentVersion: string;
  readonly software: SoftwareInfo;
  private readonly log: NodeLogger;
  private started = false;
  private closed = false;

  constructor(options: NodeUpgradesOptions, modules: NodeUpgradesModules) {
    this.currentVersion = readInstalledVersion(options.dataDir, options.packageVersion);
    const version = this.currentVersion;
    this.software = {
      nodePackage: NODE_PACKAGE,
      installedVersion: (pkg) => (pkg === NODE_PACKAGE ? version : undefined),
      belongsToPool: (pkg) => pkg === NODE_PACKAGE,
    };
    const log = modules.logger.child({ module: 'upgrade' });
    this.log = log;
    this.service = new UpgradeService(
      {
        nodeName: options.nodeName,
        nodeDest: options.nodeDest,
        dataDir: options.dataDir,
        currentVersion: version,
        nodePackage: NODE_PACKAGE,
        upgradeActionCommand: options.upgrade.actionCommand,
        upgradeActionTimeoutMs: options.upgrade.timeoutSec * 1000,
        ...(options.inProgressOrderTimeoutMs !== undefined ? { inProgressOrderTimeoutMs: options.inProgressOrderTimeoutMs } : {}),
      },
      {
        ...(modules.clock !== undefined ? { clock: modules.clock } : {}),
        ...(modules.runAction !== undefined ? { runAction: modules.runAction } : {}),
        submitNodeUpgrade: nodeUpgradeSubmitter(modules.signer, (r) => modules.submitOwn(r), modules.clock),
        exit: (code) => modules.exit(code),
        logger: log,
      },
    );
  }

  /**
   * The config ledger has caught up: the first time after start finishes a restart or upgrade of
   * the previous run and replays the ledger (onStartup), later times replay it.
   */
  async caughtUp(configTxns: Iterable<Txn> | AsyncIterable<Txn>): Promise<void> {
    if (this.closed) return;
    if (!this.started) {
      this.started = true;
      const r = await this.service.onStartup(configTxns);
      this.log.debug({ upgrade: r.upgrade.outcome, restarted: r.restarted }, 'upgrade service started');
      return;
    }
    await this.service.onConfigLedgerCaughtUp(configTxns);
  }

  /** Every committed (ordered) config-ledger txn, in ledger order; this node's NODE_UPGRADE `in_progress` lets a waiting upgrade run its action. */
  configTxnCommitted(txn: Txn): Promise<void> {
    return this.closed ? Promise.resolve() : this.service.onConfigTxnCommitted(txn);
  }

  /** A forced POOL_UPGRADE that passed validation at receipt. */
  forcedPoolUpgrade(request: Request): Promise<void> {
    return this.closed ? Promise.resolve() : this.service.onForcedPoolUpgrade(request);
  }

  /** An authorized POOL_RESTART whose REPLY is on its way. */
  poolRestart(request: Request): RestartDecision {
    return this.service.onPoolRestart(request);
  }

  /** Clears the schedulers' timers. Idempotent. */
  close(): void {
    this.closed = true;
    this.service.close();
  }
}
