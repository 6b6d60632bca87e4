/**
 * Restart scheduling (POOL_RESTART, requests.md §6.3 and §8.1). A trustee's POOL_RESTART is an
 * action each node carries out on its own copy: at `datetime` (or as soon as possible when it is
 * absent, "0", "" or past) the node exits with the restart code and its supervisor starts it again.
 * Scheduled restarts are logged in `restart_log`; an immediate one is not.
 */
import { TxnType } from '@quire/common';
import type { Request } from '@quire/common';
import { restartTime } from '@quire/requests';
import { ActionEvent, RestartLog } from './action-log.js';
import type { RestartLogData } from './action-log.js';
import type { UpgradeClock, ClockTimer } from './clock.js';
import { UpgradeError, UpgradeErrorCode } from './errors.js';
import { RESTART_EXIT_CODE, errorInfo, exitProcess } from './types.js';
import type { ExitProcess, UpgradeLogger } from './types.js';

export interface RestarterOptions {
  /** Holds `restart_log`. */
  dataDir: string;
  /**
   * Delay before an immediate restart, so that the node can still send its REPLY to the POOL_RESTART
   * (clients must not count on it, §8.1).
   */
  immediateDelayMs: number;
}

export const defaultRestarterOptions = {
  immediateDelayMs: 500,
};

/** POOL_RESTART `timeout` default, in minutes. */
export const DEFAULT_RESTART_TIMEOUT_MINUTES = 10;

export interface RestarterModules {
  clock: UpgradeClock;
  exit: ExitProcess;
  logger: UpgradeLogger;
}

/** What {@link Restarter.onPoolRestart} decided. */
export type RestartDecision = 'restarting' | 'scheduled' | 'unchanged' | 'cancelled' | 'nothing-to-cancel';

/** A restart waiting for its time. */
interface Scheduled {
  data: RestartLogData;
  timeoutMinutes: number;
  timer: ClockTimer;
}

export class Restarter {
  readonly log: RestartLog;
  private readonly opts: RestarterOptions;
  private scheduled: Scheduled | undefined;
  private pendingTimers = new Set<ClockTimer>();
  private closed = false;

  constructor(
    options: Pick<RestarterOptions, 'dataDir'> & Partial<RestarterOptions>,
    private readonly modules: RestarterModules,
  ) {
    this.opts = { ...defaultRestarterOptions, ...options };
    this.log = new RestartLog(this.opts.dataDir, (msg, data) => modules.logger.warn(data, msg));
  }

  /** The time (epoch ms) of the scheduled restart, if any. */
  get scheduledAt(): number | undefined {
    return this.scheduled?.data.whenMs;
  }

  /**
   * A POOL_RESTART that passed validation and authorization on this node. Throws UpgradeError
   * DATETIME_INVALID for a `datetime` the request validation should already have refused.
   */
  onPoolRestart(request: Request): RestartDecision {
    const op = request.operation;
    if (op.type !== TxnType.POOL_RESTART || this.closed) return 'unchanged';
    const clock = this.modules.clock;
    if (op.action === 'cancel') {
      if (this.scheduled === undefined) return 'nothing-to-cancel';
      this.unschedule(this.scheduled, 'cancelled by POOL_RESTART');
      return 'cancelled';
    }
    let whenSec: number | null;
    try {
      whenSec = restartTime(op.datetime);
    } catch {
      throw new UpgradeError(UpgradeErrorCode.DATETIME_INVALID, { value: op.datetime });
    }
    const whenMs = whenSec === null ? null : whenSec * 1000;
    if (this.scheduled !== undefined) {
      if (this.scheduled.data.whenMs === whenMs) return 'unchanged';
      this.unschedule(this.scheduled, 'replaced by another POOL_RESTART');
    }
    const timeout = op.timeout;
    const timeoutMinutes =
      (typeof timeout === 'number' || typeof timeout === 'bigint') && Number(timeout) > 0 ? Number(timeout) : DEFAULT_RESTART_TIMEOUT_MINUTES;
    if (whenMs === null || whenMs <= clock.now()) {
      this.modules.logger.info({ by: request.identifier }, 'restarting now (POOL_RESTART)');
      this.after(clock.now() + this.opts.immediateDelayMs, () => this.exit());
      return 'restarting';
    }
    const data: RestartLogData = { whenMs };
    this.log.append(ActionEvent.SCHEDULED, data, clock.now());
    const timer = clock.setTimer(whenMs, () => this.start(data, timeoutMinutes));
    this.scheduled = { data, timeoutMinutes, timer };
    this.modules.logger.info({ when: new Date(whenMs).toISOString(), by: request.identifier }, 'restart scheduled');
    return 'scheduled';
  }

  /** At process start: a restart logged `started` has happened; log `succeeded`. */
  onStartup(): boolean {
    const last = this.log.lastEvent();
    if (last?.event !== ActionEvent.STARTED) return false;
    this.log.append(ActionEvent.SUCCEEDED, last.data, this.modules.clock.now());
    this.modules.logger.info({ when: new Date(last.data.whenMs).toISOString() }, 'restart succeeded');
    return true;
  }

  /** Clears every timer; later requests are ignored. Idempotent. */
  close(): void {
    this.closed = true;
    if (this.scheduled) this.modules.clock.clearTimer(this.scheduled.timer);
    this.scheduled = undefined;
    for (const t of this.pendingTimers) this.modules.clock.clearTimer(t);
    this.pendingTimers.clear();
  }

  /** Cancels `s`, the scheduled restart. */
  private unschedule(s: Scheduled, reason: string): void {
    this.modules.clock.clearTimer(s.timer);
    this.scheduled = undefined;
    this.log.append(ActionEvent.CANCELLED, s.data, this.modules.clock.now());
    this.modules.logger.info({ when: new Date(s.data.whenMs).toISOString(), reason }, 'restart cancelled');
  }

  private start(data: RestartLogData, timeoutMinutes: number): void {
    if (this.closed || this.scheduled?.data !== data) return;
    this.scheduled = undefined;
    const clock = this.modules.clock;
    try {
      this.log.append(ActionEvent.STARTED, data, clock.now());
    } catch (err) {
      this.modules.logger.error(errorInfo(err), 'restart log not writable; restarting anyway');
    }
    this.modules.logger.info({ when: new Date(data.whenMs).toISOString() }, 'restart started');
    // still running after the timeout: the restart did not happen
    this.after(clock.now() + timeoutMinutes * 60_000, () => {
      this.log.append(ActionEvent.FAILED, data, clock.now());
      this.modules.logger.error({ when: new Date(data.whenMs).toISOString(), timeoutMinutes }, 'restart failed: the node is still running after the timeout');
    });
    this.exit();
  }

  private after(atMs: number, fn: () => void): void {
    const timer = this.modules.clock.setTimer(atMs, () => {
      this.pendingTimers.delete(timer);
      if (this.closed) return;
      try {
        fn();
      } catch (err) {
        this.modules.logger.error(errorInfo(err), 'restart scheduling failed');
      }
    });
    this.pendingTimers.add(timer);
  }

  private exit(): void {
    exitProcess(this.modules, RESTART_EXIT_CODE, 'restart failed');
  }
}
