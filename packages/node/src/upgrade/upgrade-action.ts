/**
 * Runs the node's upgrade action: the command configured for this node, with the target version as
 * its last argument, in place of Indy's node control service. The command installs the version (or,
 * on the devnet, records it) and exits 0; the node then exits with the restart code and its
 * supervisor starts the new version. A non-zero exit, a signal or the timeout is a failure.
 */
import { spawn } from 'node:child_process';
import { UpgradeError, UpgradeErrorCode } from './errors.js';

export interface UpgradeActionParams {
  /**
   * The command. An argv array runs without a shell; a string is a shell command line (it may hold
   * arguments), run by /bin/sh. Either way the version is passed as one more argument, never
   * through the shell's parser.
   */
  command: string | readonly string[];
  version: string;
  pkgName: string;
  nodeName: string;
  dataDir: string;
  timeoutMs: number;
}

/** Runs one upgrade action; resolves on success, rejects with UpgradeError otherwise. */
export type UpgradeActionRunner = (params: UpgradeActionParams) => Promise<void>;

/** How much of the command's output a failure keeps (the tail). */
const OUTPUT_TAIL_BYTES = 4096;
/** Grace between SIGTERM and SIGKILL for a command that outlived its timeout. */
const KILL_GRACE_MS = 3000;

/**
 * Spawns the command with the version as last argument and the environment variables
 * QUIRE_DATA_DIR, QUIRE_NODE_NAME, QUIRE_UPGRADE_VERSION and QUIRE_UPGRADE_PACKAGE.
 */
export const runUpgradeAction: UpgradeActionRunner = (p) =>
  new Promise<void>((resolve, reject) => {
    const argv = typeof p.command === 'string' ? ['/bin/sh', '-c', `${p.command} "$@"`, 'quire-upgrade-action'] : [...p.command];
    if (argv.length === 0 || (typeof p.command === 'string' && p.command.trim() === '')) {
      reject(new UpgradeError(UpgradeErrorCode.ACTION_NOT_CONFIGURED));
      return;
    }
    const [file, ...args] = argv;
    const shown = typeof p.command === 'string' ? p.command : p.command.join(' ');
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_BYTES);
    };
    let timedOut = false;
    let settled = false;
    const child = spawn(file, [...args, p.version], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        QUIRE_DATA_DIR: p.dataDir,
        QUIRE_NODE_NAME: p.nodeName,
        QUIRE_UPGRADE_VERSION: p.version,
        QUIRE_UPGRADE_PACKAGE: p.pkgName,
      },
    });
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let killTimer: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
    }, p.timeoutMs);
    const finish = (err?: UpgradeError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (killTimer !== undefined) clearTimeout(killTimer);
      if (err) reject(err);
      else resolve();
    };
    child.on('error', (err) => finish(new UpgradeError(UpgradeErrorCode.ACTION_SPAWN_FAILED, { command: shown, reason: err.message })));
    child.on('close', (exitCode, signal) => {
      if (timedOut) finish(new UpgradeError(UpgradeErrorCode.ACTION_TIMEOUT, { timeoutMs: p.timeoutMs, output: output.trim() }));
      else if (exitCode === 0) finish();
      else finish(new UpgradeError(UpgradeErrorCode.ACTION_FAILED, { exitCode, signal, output: output.trim() }));
    });
  });
