// A small process supervisor for the devnet's nodes: starts each node, appends its output to its
// log file, starts it again at once when it exits with the restart code (upgrade, POOL_RESTART),
// and after a crash with an exponential backoff; it gives up on a node that keeps crashing right
// after starting, and says so. stop() ends every node with SIGTERM (SIGKILL after a grace period).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export interface SupervisedProcess {
  name: string;
  /** argv: the executable and its arguments. */
  argv: string[];
  cwd: string;
  logFile: string;
  env?: NodeJS.ProcessEnv;
}

export interface SupervisorOptions {
  /** Exit code that asks for an immediate restart. */
  restartExitCode: number;
  /** First crash backoff; doubled per consecutive crash up to maxBackoffMs. */
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** A crash this soon after starting counts as a fast crash. */
  fastCrashMs: number;
  /** Give up after this many consecutive fast crashes. */
  maxFastCrashes: number;
  /** SIGKILL a node that has not stopped this long after SIGTERM. */
  stopGraceMs: number;
}

export const defaultSupervisorOptions: SupervisorOptions = {
  restartExitCode: 75,
  initialBackoffMs: 1000,
  maxBackoffMs: 30_000,
  fastCrashMs: 15_000,
  maxFastCrashes: 5,
  stopGraceMs: 20_000,
};

export type ProcessState = 'starting' | 'running' | 'restarting' | 'backoff' | 'failed' | 'exited' | 'stopped';

export interface ProcessStatus {
  name: string;
  state: ProcessState;
  pid: number | undefined;
  /** Restarts asked for by the process (restart code). */
  restarts: number;
  /** Crashes so far. */
  crashes: number;
  lastExit: { code: number | null; signal: string | null; at: string } | undefined;
  logFile: string;
}

export type SupervisorEvent =
  | { kind: 'started'; name: string; pid: number }
  | { kind: 'restart-requested'; name: string }
  | { kind: 'crashed'; name: string; code: number | null; signal: string | null; retryInMs: number }
  | { kind: 'gave-up'; name: string; crashes: number; logFile: string }
  | { kind: 'exited'; name: string }
  | { kind: 'stopped'; name: string };

interface Slot {
  spec: SupervisedProcess;
  status: ProcessStatus;
  child: ChildProcess | undefined;
  startedAt: number;
  fastCrashes: number;
  consecutiveCrashes: number;
  retryTimer: NodeJS.Timeout | undefined;
  exited: Promise<void> | undefined;
}

export class Supervisor {
  private readonly opts: SupervisorOptions;
  private readonly slots: Slot[];
  private stopping: Promise<void> | undefined;

  constructor(
    processes: readonly SupervisedProcess[],
    options: Partial<SupervisorOptions>,
    private readonly onEvent: (e: SupervisorEvent) => void = () => undefined,
  ) {
    this.opts = { ...defaultSupervisorOptions, ...options };
    this.slots = processes.map((spec) => ({
      spec,
      status: { name: spec.name, state: 'starting', pid: undefined, restarts: 0, crashes: 0, lastExit: undefined, logFile: spec.logFile },
      child: undefined,
      startedAt: 0,
      fastCrashes: 0,
      consecutiveCrashes: 0,
      retryTimer: undefined,
      exited: undefined,
    }));
  }

  /** Starts every process. */
  start(): void {
    for (const s of this.slots) this.spawn(s);
  }

  status(): ProcessStatus[] {
    return this.slots.map((s) => ({ ...s.status }));
  }

  /** True when every process was given up on or exited by itself. */
  get allDown(): boolean {
    return this.slots.every((s) => s.status.state === 'failed' || s.status.state === 'exited');
  }

  /** Stops every process (SIGTERM, then SIGKILL after the grace period). Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await Promise.all(
        this.slots.map(async (s) => {
          if (s.retryTimer !== undefined) clearTimeout(s.retryTimer);
          s.retryTimer = undefined;
          const child = s.child;
          if (child === undefined || s.exited === undefined) {
            if (s.status.state !== 'failed' && s.status.state !== 'exited') s.status.state = 'stopped';
            return;
          }
          child.kill('SIGTERM');
          const kill = setTimeout(() => child.kill('SIGKILL'), this.opts.stopGraceMs);
          await s.exited;
          clearTimeout(kill);
        }),
      );
    })();
    return this.stopping;
  }

  private log(s: Slot, line: string): void {
    try {
      mkdirSync(dirname(s.spec.logFile), { recursive: true });
      const fd = openSync(s.spec.logFile, 'a');
      writeSync(fd, `--- devnet supervisor ${new Date().toISOString()}: ${line}\n`);
      closeSync(fd);
    } catch {
      // the log is a convenience; supervision goes on without it
    }
  }

  private spawn(s: Slot): void {
    if (this.stopping !== undefined) return;
    mkdirSync(dirname(s.spec.logFile), { recursive: true });
    const fd = openSync(s.spec.logFile, 'a');
    const [file, ...args] = s.spec.argv;
    let child: ChildProcess;
    try {
      child = spawn(file!, args, { cwd: s.spec.cwd, env: s.spec.env ?? process.env, stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    s.child = child;
    s.startedAt = Date.now();
    s.status.state = 'running';
    s.status.pid = child.pid;
    let resolveExited!: () => void;
    s.exited = new Promise<void>((r) => (resolveExited = r));
    child.once('error', (err) => {
      // spawn failure: reported through 'close' as well; note the reason in the log
      this.log(s, `could not start: ${err.message}`);
    });
    child.once('close', (code, signal) => {
      s.child = undefined;
      s.status.pid = undefined;
      s.status.lastExit = { code, signal, at: new Date().toISOString() };
      s.exited = undefined;
      resolveExited();
      this.onExit(s, code, signal);
    });
    if (child.pid !== undefined) this.onEvent({ kind: 'started', name: s.spec.name, pid: child.pid });
  }

  private onExit(s: Slot, code: number | null, signal: string | null): void {
    if (this.stopping !== undefined) {
      s.status.state = 'stopped';
      this.onEvent({ kind: 'stopped', name: s.spec.name });
      return;
    }
    if (code === this.opts.restartExitCode) {
      s.status.restarts++;
      s.consecutiveCrashes = 0;
      s.fastCrashes = 0;
      s.status.state = 'restarting';
      this.log(s, `exited with the restart code ${code}; restarting`);
      this.onEvent({ kind: 'restart-requested', name: s.spec.name });
      this.spawn(s);
      return;
    }
    if (code === 0) {
      s.status.state = 'exited';
      this.log(s, 'exited normally; not restarting');
      this.onEvent({ kind: 'exited', name: s.spec.name });
      return;
    }
    s.status.crashes++;
    const fast = Date.now() - s.startedAt < this.opts.fastCrashMs;
    s.fastCrashes = fast ? s.fastCrashes + 1 : 0;
    s.consecutiveCrashes = fast ? s.consecutiveCrashes + 1 : 1;
    if (s.fastCrashes >= this.opts.maxFastCrashes) {
      s.status.state = 'failed';
      this.log(s, `crashed ${s.fastCrashes} times in a row within ${this.opts.fastCrashMs} ms of starting; giving up`);
      this.onEvent({ kind: 'gave-up', name: s.spec.name, crashes: s.fastCrashes, logFile: s.spec.logFile });
      return;
    }
    const retryInMs = Math.min(this.opts.initialBackoffMs * 2 ** (s.consecutiveCrashes - 1), this.opts.maxBackoffMs);
    s.status.state = 'backoff';
    this.log(s, `crashed (exit code ${code}, signal ${signal}); restarting in ${retryInMs} ms`);
    this.onEvent({ kind: 'crashed', name: s.spec.name, code, signal, retryInMs });
    s.retryTimer = setTimeout(() => {
      s.retryTimer = undefined;
      this.spawn(s);
    }, retryInMs);
  }
}
