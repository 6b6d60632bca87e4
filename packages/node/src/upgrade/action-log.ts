/**
 * The node's upgrade and restart logs (requests.md §6.1): append-only text files in the data
 * directory, one TAB-separated line per event: UTC time of writing (`YYYY-MM-DD HH:MM:SS.ffffff`),
 * event, scheduled time (`YYYY-MM-DD HH:MM:SS+00:00`), and for upgrades version, upgrade_id and
 * package name. Each append is synced, so an event that was logged survives a crash; a torn last
 * line (crash mid-write) is skipped when the log is read.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { UpgradeError, UpgradeErrorCode } from './errors.js';

export const UPGRADE_LOG_FILE = 'upgrade_log';
export const RESTART_LOG_FILE = 'restart_log';

export const ActionEvent = {
  SCHEDULED: 'scheduled',
  STARTED: 'started',
  SUCCEEDED: 'succeeded',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
} as const;
export type ActionEvent = (typeof ActionEvent)[keyof typeof ActionEvent];
const EVENTS = new Set<string>(Object.values(ActionEvent));

/** The data of an upgrade-log line. */
export interface UpgradeLogData {
  /** Scheduled time, epoch ms. */
  whenMs: number;
  version: string;
  /** Decimal reqId followed by the decimal seqNo of the POOL_UPGRADE (reqId alone for a forced one handled before ordering). */
  upgradeId: string;
  pkgName: string;
}

/** The data of a restart-log line. */
export interface RestartLogData {
  whenMs: number;
}

export interface LogEntry<D> {
  /** Time of writing, epoch ms. */
  loggedAtMs: number;
  event: ActionEvent;
  data: D;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

function datePart(d: Date): string {
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** `YYYY-MM-DD HH:MM:SS.ffffff` (UTC), the time-of-writing column. */
export function formatLogTimestamp(ms: number): string {
  const d = new Date(ms);
  return `${datePart(d)}.${pad(d.getUTCMilliseconds() * 1000, 6)}`;
}

/** `YYYY-MM-DD HH:MM:SS[.ffffff]+00:00`, the scheduled-time column (Python's rendering of an aware datetime). */
export function formatWhen(ms: number): string {
  const d = new Date(ms);
  const frac = d.getUTCMilliseconds() === 0 ? '' : `.${pad(d.getUTCMilliseconds() * 1000, 6)}`;
  return `${datePart(d)}${frac}+00:00`;
}

const LOG_TIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/;

/** Parses either time column (an absent offset means UTC); undefined when malformed. */
export function parseLogTime(text: string): number | undefined {
  const m = LOG_TIME.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, off] = m;
  const ms = Number(((frac ?? '') + '000').slice(0, 3));
  let t = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  if (off !== undefined && off !== 'Z') {
    const digits = off.slice(1).replace(':', '');
    const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4));
    t -= (off.startsWith('-') ? -1 : 1) * minutes * 60_000;
  }
  return Number.isFinite(t) ? t : undefined;
}

/** What a log reports about lines it could not read. */
export type LogWarn = (msg: string, data: Record<string, unknown>) => void;

/**
 * One append-only action log. `encode` / `decode` map the data columns (after event and when).
 */
abstract class ActionLog<D extends { whenMs: number }> {
  readonly path: string;
  #entries: LogEntry<D>[] | undefined;
  /** The file ends in a torn line: the next append starts a fresh line. */
  #torn = false;

  protected constructor(
    path: string,
    private readonly warn: LogWarn,
  ) {
    this.path = path;
  }

  protected abstract encodeExtra(data: D): string[];
  protected abstract decodeExtra(whenMs: number, cols: string[]): D | undefined;

  /** Every readable entry, oldest first. */
  entries(): readonly LogEntry<D>[] {
    this.#entries ??= this.load();
    return this.#entries;
  }

  /** The most recent entry, if any. */
  lastEvent(): LogEntry<D> | undefined {
    const e = this.entries();
    return e[e.length - 1];
  }

  /** Appends one line and syncs it to disk. Throws UpgradeError LOG_IO. */
  append(event: ActionEvent, data: D, nowMs: number): LogEntry<D> {
    const entry: LogEntry<D> = { loggedAtMs: nowMs, event, data };
    const entries = this.entries() as LogEntry<D>[];
    const line = (this.#torn ? '\n' : '') + [formatLogTimestamp(nowMs), event, formatWhen(data.whenMs), ...this.encodeExtra(data)].join('\t') + '\n';
    let fd: number | undefined;
    try {
      fd = openSync(this.path, 'a');
      writeSync(fd, line);
      fsyncSync(fd);
    } catch (err) {
      throw new UpgradeError(UpgradeErrorCode.LOG_IO, { path: this.path, reason: (err as Error).message });
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    this.#torn = false;
    entries.push(entry);
    return entry;
  }

  private load(): LogEntry<D>[] {
    if (!existsSync(this.path)) return [];
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      throw new UpgradeError(UpgradeErrorCode.LOG_IO, { path: this.path, reason: (err as Error).message });
    }
    const lines = text.split('\n');
    const complete = text.endsWith('\n') ? lines.slice(0, -1) : lines;
    if (!text.endsWith('\n') && text.length > 0) {
      this.warn('action log ends with a torn line; ignoring it', { path: this.path, line: lines[lines.length - 1] });
      complete.pop();
      this.#torn = true;
    }
    const out: LogEntry<D>[] = [];
    complete.forEach((line, i) => {
      if (line.trim() === '') return;
      const cols = line.split('\t');
      const loggedAtMs = parseLogTime(cols[0] ?? '');
      const whenMs = parseLogTime(cols[2] ?? '');
      const data = whenMs === undefined ? undefined : this.decodeExtra(whenMs, cols.slice(3));
      if (loggedAtMs === undefined || !EVENTS.has(cols[1] ?? '') || data === undefined) {
        this.warn('unreadable action log line ignored', { path: this.path, lineNumber: i + 1, line });
        return;
      }
      out.push({ loggedAtMs, event: cols[1] as ActionEvent, data });
    });
    return out;
  }
}

/** `<dataDir>/upgrade_log`. */
export class UpgradeLog extends ActionLog<UpgradeLogData> {
  constructor(dataDir: string, warn: LogWarn = () => undefined) {
    super(join(dataDir, UPGRADE_LOG_FILE), warn);
  }

  protected encodeExtra(d: UpgradeLogData): string[] {
    return [d.version, d.upgradeId, d.pkgName];
  }

  protected decodeExtra(whenMs: number, cols: string[]): UpgradeLogData | undefined {
    if (cols.length !== 3 || cols.some((c) => c === '')) return undefined;
    return { whenMs, version: cols[0], upgradeId: cols[1], pkgName: cols[2] };
  }
}

/** `<dataDir>/restart_log`. */
export class RestartLog extends ActionLog<RestartLogData> {
  constructor(dataDir: string, warn: LogWarn = () => undefined) {
    super(join(dataDir, RESTART_LOG_FILE), warn);
  }

  protected encodeExtra(): string[] {
    return [];
  }

  protected decodeExtra(whenMs: number, cols: string[]): RestartLogData | undefined {
    return cols.length === 0 ? { whenMs } : undefined;
  }
}
