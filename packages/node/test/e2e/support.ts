// Shared by the e2e tests of this package: free loopback ports, condition polling, the node CLI started as a process.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { waitFor as waitForValue, SOURCE_RUN_ARGS } from '@quire/testing';

function portFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const s = createServer();
    s.once('error', () => res(false));
    s.listen({ port, host: '127.0.0.1', exclusive: true }, () => s.close(() => res(true)));
  });
}

/** Ports handed out by this process, never twice. */
const given = new Set<number>();

/**
 * A TCP port on 127.0.0.1 that was free a moment ago. It is picked below Linux's ephemeral range
 * (32768+): a port the kernel hands out for `listen(0)` could meanwhile become the local port of one
 * of the pool's own outgoing connections, and the node meant to listen on it would fail to start.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 12_000 + Math.floor(Math.random() * 20_000);
    if (given.has(port) || !(await portFree(port))) continue;
    given.add(port);
    return port;
  }
  throw new Error('no free port found between 12000 and 32000');
}

/** Polls `fn` until it returns a value (errors count as "not yet"), or fails after `timeoutMs` (@quire/testing's). */
export function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number, intervalMs = 200): Promise<T> {
  return waitForValue(what, fn, timeoutMs, intervalMs);
}

/** The repository's root: the node CLI runs from its sources there. */
export const REPO = resolve(import.meta.dirname, '../../../..');

/**
 * Starts `quire-node start` from the sources, as an operator would run it, with its stdout and stderr piped. `env`
 * is added to this process's environment (LOG_LEVEL defaults to this process's, or info).
 */
export function spawnNodeStart(dataDir: string, configFile: string, env: NodeJS.ProcessEnv = {}): ChildProcess {
  const args = [...SOURCE_RUN_ARGS, 'packages/node/src/cli.ts'];
  return spawn(process.execPath, [...args, 'start', '--data-dir', dataDir, '--config', configFile], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', ...env },
  });
}
