/**
 * Upgrade scheduling (requests.md §6.2). Each node follows the POOL_UPGRADE txns of the config
 * ledger: at its own time in the schedule it logs `started`, writes NODE_UPGRADE `in_progress`,
 * waits (bounded) until that txn is ordered, runs the upgrade action and, when that succeeds,
 * exits with the restart code so that its supervisor starts the new version. After the restart it
 * compares versions, logs `succeeded` or `failed` and writes NODE_UPGRADE `complete` or `fail`. A
 * failed or timed-out action is logged `failed` and written as NODE_UPGRADE `fail`. Every event goes
 * to the upgrade log first.
 *
 * After a failure the same upgrade (same upgrade_id) is not tried again: the log's last event for
 * it is `failed`, which §6.2 says to ignore. Trustees send a new POOL_UPGRADE to retry.
 */
import { TxnType } from '@quire/common';
import type { Request, Txn } from '@quire/common';
import { compareNodeVersions, upgradePackageName, validation } from '@quire/requests';
import { ActionEvent, UpgradeLog } from './action-log.js';
import type { UpgradeLogData } from './action-log.js';
import type { UpgradeClock, ClockTimer } from './clock.js';
import { UpgradeError, UpgradeErrorCode } from './errors.js';
import { NodeUpgradeAction, checkUpgradeVersion } from './node-upgrade-request.js';
import { InProgressOrderWatch } from './order-wait.js';
import { runUpgradeAction } from './upgrade-action.js';
import type { UpgradeActionRunner } from './upgrade-action.js';
import { RESTART_EXIT_CODE, errorInfo, exitProcess } from './types.js';
import type { ExitProcess, SubmitNodeUpgrade, UpgradeLogger } from './types.js';

export interface UpgraderOptions {
  /** The node's alias (for logs and the action's environment). */
  nodeName: string;
  /** The node id: NODE.dest, the key of this node in a POOL_UPGRADE schedule. */
  nodeDest: string;
  /** Holds `upgrade_log`. */
  dataDir: string;
  /** The version of the node software now running. */
  currentVersion: string;
  /** Package name a POOL_UPGRADE without `package` refers to. */
  nodePackage: string;
  /** The upgrade action (argv, or a shell command line); the version is appended. Empty = upgrades fail with ACTION_NOT_CONFIGURED. */
  actionCommand: string | string[];
  /** The action is killed after this long (or the POOL_UPGRADE timeout, if shorter). */
  actionTimeoutMs: number;
  /** How long a NODE_UPGRADE submission may take before the upgrade goes on without it. */
  submitTimeoutMs: number;
  /**
   * How long, from its submission, the node waits for its NODE_UPGRADE `in_progress` to be ordered
   * (seen by {@link Upgrader.onConfigTxnCommitted} or a replay) before running the action anyway.
   * 0: no wait (a scheduler that is not told of committed txns).
   */
  inProgressOrderTimeoutMs: number;
}

export const defaultUpgraderOptions = {
  nodePackage: 'quire-node',
  actionCommand: [] as string | string[],
  actionTimeoutMs: 10 * 60_000,
  submitTimeoutMs: 30_000,
  inProgressOrderTimeoutMs: 0,
};

/** POOL_UPGRADE `timeout` default, in minutes (requests.md §5.2). */
export const DEFAULT_UPGRADE_TIMEOUT_MINUTES = 10;

export interface UpgraderModules {
  clock: UpgradeClock;
  submitNodeUpgrade: SubmitNodeUpgrade;
  exit: ExitProcess;
  logger: UpgradeLogger;
  /** Runs the action command; defaults to spawning it. */
  runAction?: UpgradeActionRunner;
}

/** A POOL_UPGRADE as the scheduler sees it. */
export interface PoolUpgrade {
  name: string;
  action: 'start' | 'cancel';
  version: string;
  schedule: Record<string, unknown> | undefined;
  timeoutMinutes: number;
  reinstall: boolean;
  force: boolean;
  pkgName: string;
  /** reqId followed by seqNo (reqId alone when handled before ordering). */
  upgradeId: string;
  /** reqId alone, to recognise a forced upgrade handled before it was ordered. */
  reqId: string;
}

/** What {@link Upgrader.onStartup} found. */
export type UpgradeStartupResult = { outcome: 'none' } | { outcome: 'succeeded' | 'failed'; version: string };

interface Scheduled {
  data: UpgradeLogData;
  timeoutMinutes: number;
  timer: ClockTimer;
}

interface InProgress {
  data: UpgradeLogData;
  timeoutTimer: ClockTimer | undefined;
}

/** Reads the scheduler's view of a POOL_UPGRADE operation or txn data. Throws UpgradeError. */
export function parsePoolUpgrade(data: Record<string, unknown>, reqId: unknown, seqNo: number | undefined, defaultPackage: string): PoolUpgrade {
  const bad = (field: string): never => {
    throw new UpgradeError(UpgradeErrorCode.POOL_UPGRADE_TXN_INVALID, { field, seqNo });
  };
  if (typeof data.name !== 'string') bad('name');
  if (data.action !== 'start' && data.action !== 'cancel') bad('action');
  try {
    checkUpgradeVersion(data.version);
  } catch {
    bad('version');
  }
  if (typeof reqId !== 'number' && typeof reqId !== 'bigint') bad('reqId');
  const schedule = data.schedule;
  if (schedule !== undefined && schedule !== null && (typeof schedule !== 'object' || Array.isArray(schedule))) bad('schedule');
  const timeout = data.timeout;
  let timeoutMinutes = DEFAULT_UPGRADE_TIMEOUT_MINUTES;
  if (timeout !== undefined && timeout !== null) {
    if ((typeof timeout !== 'number' && typeof timeout !== 'bigint') || Number(timeout) < 0 || !Number.isInteger(Number(timeout))) bad('timeout');
    // 0 gives no time at all to upgrade; it is read as "the default"
    if (Number(timeout) > 0) timeoutMinutes = Number(timeout);
  }
  const pkgName = upgradePackageName(typeof data.package === 'string' ? data.package : defaultPackage);
  if (pkgName === '') bad('package');
  const req = String(reqId);
  return {
    name: data.name as string,
    action: data.action as 'start' | 'cancel',
    version: data.version as string,
    schedule: (schedule ?? undefined) as Record<string, unknown> | undefined,
    timeoutMinutes,
    reinstall: data.reinstall === true,
    force: data.force === true,
    pkgName,
    upgradeId: seqNo === undefined ? req : `${req}${seqNo}`,
    reqId: req,
  };
}

function sameData(a: UpgradeLogData, b: UpgradeLogData): boolean {
  return a.whenMs === b.whenMs && a.version === b.version && a.upgradeId === b.upgradeId && a.pkgName === b.pkgName;
}

export class Upgrader {
  readonly log: UpgradeLog;
  private readonly opts: UpgraderOptions;
  private readonly runAction: UpgradeActionRunner;
  private scheduled: Scheduled | undefined;
  private inProgress: InProgress | undefined;
  private readonly orderWatch: InProgressOrderWatch;
  private closed = false;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    options: Pick<UpgraderOptions, 'nodeName' | 'nodeDest' | 'dataDir' | 'currentVersion'> & Partial<UpgraderOptions>,
    private readonly modules: UpgraderModules,
  ) {
    this.opts = { ...defaultUpgraderOptions, ...options };
    this.runAction = modules.runAction ?? runUpgradeAction;
    this.log = new UpgradeLog(this.opts.dataDir, (msg, data) => modules.logger.warn(data, msg));
    this.orderWatch = new InProgressOrderWatch(this.opts.nodeDest, modules.clock);
  }

  /** The upgrade waiting for its time, if any. */
  get scheduledUpgrade(): Readonly<UpgradeLogData> | undefined {
    return this.scheduled?.data;
  }

  /** The upgrade being carried out, if any. */
  get upgradeInProgress(): Readonly<UpgradeLogData> | undefined {
    return this.inProgress?.data;
  }

  /** Resolves when every event received so far has been handled. */
  idle(): Promise<void> {
    return this.queue;
  }

  /**
   * A committed config-ledger txn. Non-forced POOL_UPGRADEs take effect here (forced ones did at
   * receipt); this node's NODE_UPGRADE `in_progress` ends the wait before the action (at once, not
   * through the queue, where the upgrade is waiting for it).
   */
  onConfigTxnCommitted(txn: Txn): Promise<void> {
    this.orderWatch.note(txn);
    if (txn.txn.type !== TxnType.POOL_UPGRADE) return Promise.resolve();
    if (txn.txn.data.force === true) return this.queue;
    return this.enqueue(() => this.handleTxn(txn));
  }

  /** A forced POOL_UPGRADE request that passed validation at receipt (requests.md §5.5). */
  onForcedPoolUpgrade(request: Request): Promise<void> {
    if (request.operation.type !== TxnType.POOL_UPGRADE || request.operation.force !== true) return this.queue;
    return this.enqueue(() => this.handle(parsePoolUpgrade(request.operation, request.reqId, undefined, this.opts.nodePackage)));
  }

  /**
   * After startup and after each config-ledger catch-up: the last POOL_UPGRADE `start`, unless a later
   * `cancel` of the same version follows it, is handled again (requests.md §6.2).
   */
  replay(configTxns: Iterable<Txn> | AsyncIterable<Txn>): Promise<void> {
    // txns learned by catch-up may hold the in_progress an upgrade in the queue is waiting for
    if (Symbol.iterator in configTxns) for (const txn of configTxns) this.orderWatch.note(txn);
    return this.enqueue(async () => {
      let lastStart: Txn | undefined;
      let cancelled = false;
      for await (const txn of configTxns) {
        this.orderWatch.note(txn);
        if (txn.txn.type !== TxnType.POOL_UPGRADE) continue;
        if (txn.txn.data.action === 'start') {
          lastStart = txn;
          cancelled = false;
        } else if (txn.txn.data.action === 'cancel' && lastStart !== undefined && txn.txn.data.version === lastStart.txn.data.version) {
          cancelled = true;
        }
      }
      if (lastStart !== undefined && !cancelled) this.handleTxn(lastStart);
    });
  }

  /**
   * At process start, once the node can write to the pool: if the log's last event is `started`,
   * the upgrade restarted the node; log `succeeded` when the running version is the target, else
   * `failed`, and write NODE_UPGRADE `complete` / `fail` once.
   */
  onStartup(): Promise<UpgradeStartupResult> {
    let result: UpgradeStartupResult = { outcome: 'none' };
    return this.enqueue(async () => {
      const last = this.log.lastEvent();
      if (last?.event !== ActionEvent.STARTED) return;
      const ok = compareNodeVersions(this.opts.currentVersion, last.data.version) === 0;
      this.log.append(ok ? ActionEvent.SUCCEEDED : ActionEvent.FAILED, last.data, this.modules.clock.now());
      result = { outcome: ok ? 'succeeded' : 'failed', version: last.data.version };
      const fields = { version: last.data.version, running: this.opts.currentVersion, upgradeId: last.data.upgradeId };
      if (ok) this.modules.logger.info(fields, 'upgrade succeeded');
      else this.modules.logger.error(fields, 'upgrade failed: the node restarted with another version');
      await this.submit(ok ? NodeUpgradeAction.COMPLETE : NodeUpgradeAction.FAIL, last.data.version);
    }).then(() => result);
  }

  /** Clears every timer; later events are ignored. Idempotent. */
  close(): void {
    this.closed = true;
    this.orderWatch.end();
    if (this.scheduled) this.modules.clock.clearTimer(this.scheduled.timer);
    if (this.inProgress?.timeoutTimer) this.modules.clock.clearTimer(this.inProgress.timeoutTimer);
    this.scheduled = undefined;
  }

  private enqueue(fn: () => void | Promise<void>): Promise<void> {
    const run = this.queue.then(async () => {
      if (this.closed) return;
      try {
        await fn();
      } catch (err) {
        this.modules.logger.error(errorInfo(err), 'upgrade scheduling failed');
      }
    });
    this.queue = run;
    return run;
  }

  private handleTxn(txn: Txn): void {
    let upgrade: PoolUpgrade;
    try {
      upgrade = parsePoolUpgrade(txn.txn.data, txn.txn.metadata.reqId, txn.txnMetadata.seqNo, this.opts.nodePackage);
    } catch (err) {
      this.modules.logger.warn(errorInfo(err), 'POOL_UPGRADE txn ignored');
      return;
    }
    this.handle(upgrade);
  }

  private handle(u: PoolUpgrade): void {
    if (u.action === 'cancel') {
      this.cancel(u);
      return;
    }
    const logger = this.modules.logger;
    const fields = { name: u.name, version: u.version, upgradeId: u.upgradeId };
    if (u.schedule === undefined || !Object.hasOwn(u.schedule, this.opts.nodeDest)) {
      logger.debug(fields, 'POOL_UPGRADE does not schedule this node');
      return;
    }
    const last = this.log.lastEvent();
    const sameUpgrade = last !== undefined && (last.data.upgradeId === u.upgradeId || (u.force && last.data.upgradeId === u.reqId));
    if (sameUpgrade && (last.event === ActionEvent.SUCCEEDED || last.event === ActionEvent.FAILED)) {
      logger.debug({ ...fields, outcome: last.event }, 'upgrade already carried out');
      return;
    }
    const cmp = compareNodeVersions(u.version, this.opts.currentVersion);
    if (!(cmp > 0 || (cmp === 0 && u.reinstall))) {
      logger.info({ ...fields, running: this.opts.currentVersion }, 'POOL_UPGRADE ignored: the running version is not older than the target');
      return;
    }
    const whenSec = validation.parseDateTimeWithOffset(String(u.schedule[this.opts.nodeDest]));
    if (whenSec === null) {
      logger.warn({ ...fields, when: u.schedule[this.opts.nodeDest] }, 'POOL_UPGRADE ignored: unreadable time for this node');
      return;
    }
    if (this.inProgress) {
      logger.warn({ ...fields, inProgress: this.inProgress.data.version }, 'POOL_UPGRADE ignored: an upgrade is in progress');
      return;
    }
    const data: UpgradeLogData = { whenMs: whenSec * 1000, version: u.version, upgradeId: u.upgradeId, pkgName: u.pkgName };
    if (this.scheduled) {
      if (sameData(this.scheduled.data, data)) return;
      this.unschedule(this.scheduled, 'replaced by another POOL_UPGRADE');
    }
    const clock = this.modules.clock;
    this.log.append(ActionEvent.SCHEDULED, data, clock.now());
    const timer = clock.setTimer(data.whenMs, () => void this.enqueue(() => this.start(data, u.timeoutMinutes)));
    this.scheduled = { data, timeoutMinutes: u.timeoutMinutes, timer };
    logger.info({ ...fields, when: new Date(data.whenMs).toISOString() }, 'upgrade scheduled');
  }

  private cancel(u: PoolUpgrade): void {
    const s = this.scheduled;
    if (s?.data.version !== u.version) {
      this.modules.logger.debug({ name: u.name, version: u.version }, 'POOL_UPGRADE cancel: no such upgrade scheduled here');
      return;
    }
    this.unschedule(s, `cancelled by POOL_UPGRADE '${u.name}'`);
  }

  /** Cancels `s`, the scheduled upgrade. */
  private unschedule(s: Scheduled, reason: string): void {
    this.modules.clock.clearTimer(s.timer);
    this.scheduled = undefined;
    this.log.append(ActionEvent.CANCELLED, s.data, this.modules.clock.now());
    this.modules.logger.info({ version: s.data.version, upgradeId: s.data.upgradeId, reason }, 'upgrade cancelled');
  }

  private async start(data: UpgradeLogData, timeoutMinutes: number): Promise<void> {
    if (this.scheduled === undefined || !sameData(this.scheduled.data, data)) return;
    const clock = this.modules.clock;
    this.scheduled = undefined;
    const timeoutMs = timeoutMinutes * 60_000;
    const inProgress: InProgress = { data, timeoutTimer: undefined };
    this.inProgress = inProgress;
    this.log.append(ActionEvent.STARTED, data, clock.now());
    this.modules.logger.info({ version: data.version, upgradeId: data.upgradeId, pkgName: data.pkgName }, 'upgrade started');
    // not through the queue: the timeout must fire even while the action or the exit is stuck
    inProgress.timeoutTimer = clock.setTimer(clock.now() + timeoutMs, () => void this.fail(inProgress, 'exceeded upgrade timeout'));
    await this.submitInProgressAndWait(inProgress);
    if (this.inProgress !== inProgress || this.closed) return;
    try {
      await this.runAction({
        command: this.opts.actionCommand,
        version: data.version,
        pkgName: data.pkgName,
        nodeName: this.opts.nodeName,
        dataDir: this.opts.dataDir,
        timeoutMs: Math.min(this.opts.actionTimeoutMs, timeoutMs),
      });
    } catch (err) {
      await this.fail(inProgress, 'upgrade action failed', err);
      return;
    }
    if (this.inProgress !== inProgress || this.closed) return;
    this.modules.logger.info({ version: data.version }, 'upgrade action done; restarting');
    exitProcess(this.modules, RESTART_EXIT_CODE, 'restart after upgrade failed');
  }

  /**
   * Submits NODE_UPGRADE `in_progress` and waits until it is ordered, at most
   * inProgressOrderTimeoutMs from now. requests.md §6.2 makes the action depend on nothing but the
   * submission, so a wait that ends without it (the pool cannot order now, the submission was
   * refused) is logged and the upgrade goes on; the POOL_UPGRADE `timeout` still bounds it all.
   */
  private async submitInProgressAndWait(inProgress: InProgress): Promise<void> {
    const { version, upgradeId } = inProgress.data;
    const waitMs = this.opts.inProgressOrderTimeoutMs;
    if (waitMs <= 0) {
      await this.submit(NodeUpgradeAction.IN_PROGRESS, version);
      return;
    }
    const clock = this.modules.clock;
    const startedAt = clock.now();
    const outcome = this.orderWatch.begin(version, waitMs);
    const sent = await this.submit(NodeUpgradeAction.IN_PROGRESS, version);
    if (!sent) this.orderWatch.end();
    const o = await outcome;
    const fields = { version, upgradeId, waitedMs: clock.now() - startedAt };
    if (o === 'ordered') this.modules.logger.info(fields, 'NODE_UPGRADE in_progress ordered; running the upgrade action');
    else if (o === 'timeout')
      this.modules.logger.warn({ ...fields, timeoutMs: waitMs }, 'NODE_UPGRADE in_progress not ordered in time; running the upgrade action anyway');
    else if (!sent && this.inProgress === inProgress && !this.closed)
      this.modules.logger.warn(fields, 'NODE_UPGRADE in_progress not submitted; running the upgrade action anyway');
  }

  private async fail(inProgress: InProgress, reason: string, err?: unknown): Promise<void> {
    if (this.inProgress !== inProgress || this.closed) return;
    this.inProgress = undefined;
    this.orderWatch.end();
    if (inProgress.timeoutTimer) this.modules.clock.clearTimer(inProgress.timeoutTimer);
    this.log.append(ActionEvent.FAILED, inProgress.data, this.modules.clock.now());
    this.modules.logger.error(
      { version: inProgress.data.version, upgradeId: inProgress.data.upgradeId, reason, ...(err !== undefined ? errorInfo(err) : {}) },
      'upgrade failed',
    );
    await this.submit(NodeUpgradeAction.FAIL, inProgress.data.version);
  }

  /**
   * Submits a NODE_UPGRADE, bounded by submitTimeoutMs; a failure is logged, never thrown. Resolves
   * false when the submission was refused or failed (true when sent, or still pending at the bound).
   */
  private async submit(action: NodeUpgradeAction, version: string): Promise<boolean> {
    let timer: ClockTimer | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = this.modules.clock.setTimer(this.modules.clock.now() + this.opts.submitTimeoutMs, () => resolve('timeout'));
    });
    try {
      const r = await Promise.race([this.modules.submitNodeUpgrade({ action, version }).then(() => 'sent' as const), timeout]);
      if (r === 'timeout')
        this.modules.logger.warn({ action, version, timeoutMs: this.opts.submitTimeoutMs }, 'NODE_UPGRADE not acknowledged in time; going on');
      else this.modules.logger.info({ action, version }, 'NODE_UPGRADE submitted');
      return true;
    } catch (err) {
      this.modules.logger.error({ action, version, ...errorInfo(err) }, 'NODE_UPGRADE could not be submitted');
      return false;
    } finally {
      if (timer !== undefined) this.modules.clock.clearTimer(timer);
    }
  }
}
