import type { NodeUpgradeData } from './node-upgrade-request.js';

/** The process exit code that asks the node's supervisor to start it again at once (EX_TEMPFAIL). */
export const RESTART_EXIT_CODE = 75;

/** The logging the schedulers need (a pino logger fits). */
export interface UpgradeLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Builds, signs and submits a NODE_UPGRADE with the node's key; resolves once it is on its way to ordering. */
export type SubmitNodeUpgrade = (data: NodeUpgradeData) => Promise<void>;

/** Ends the process with `code` after a graceful shutdown. */
export type ExitProcess = (code: number) => void | Promise<void>;

/** Describes an error for a log line. */
export function errorInfo(err: unknown): Record<string, unknown> {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    const data = (err as { data?: unknown }).data;
    return { err: err.message, ...(code !== undefined ? { code } : {}), ...(data !== undefined ? { data } : {}) };
  }
  return { err: String(err) };
}

/** Calls `exit` without waiting for it (a graceful shutdown may wait for the caller); failures are logged. */
export function exitProcess(modules: { exit: ExitProcess; logger: UpgradeLogger }, code: number, failMsg: string): void {
  void (async () => {
    try {
      await modules.exit(code);
    } catch (err) {
      modules.logger.error(errorInfo(err), failMsg);
    }
  })();
}
