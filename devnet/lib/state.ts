// The devnet's state file (<data>/devnet.json): who supervises the pool and how its nodes are doing.
// `stop` and `status` read it; the supervisor rewrites it (atomically) on every change.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STATE_FILE } from './layout.js';
import type { ProcessStatus } from './supervisor.js';

export type DevnetStatus = 'starting' | 'ready' | 'not-ordering' | 'stopping' | 'failed';

export interface DevnetState {
  /** The supervisor's process id. */
  pid: number;
  status: DevnetStatus;
  /** Why the devnet is not ready, when it is not. */
  message?: string;
  startedAt: string;
  nodes: number;
  basePort: number;
  dataDir: string;
  poolGenesis: string;
  processes: (ProcessStatus & { nodePort: number; clientPort: number })[];
}

export function stateFile(dataDir: string): string {
  return join(dataDir, STATE_FILE);
}

export function readState(dataDir: string): DevnetState | undefined {
  const file = stateFile(dataDir);
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as DevnetState;
  } catch {
    return undefined;
  }
}

export function writeState(dataDir: string, state: DevnetState): void {
  const file = stateFile(dataDir);
  writeFileSync(`${file}.tmp`, JSON.stringify(state, null, 2) + '\n');
  renameSync(`${file}.tmp`, file);
}

export function removeState(dataDir: string): void {
  rmSync(stateFile(dataDir), { force: true });
}

/** True when a process with this id exists (and may be signalled by us). */
export function isAlive(pid: number | undefined): boolean {
  if (pid === undefined || !Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
