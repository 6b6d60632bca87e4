// Where the devnet keeps things and which ports its nodes use.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (devnet/ is one level below it). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DEVNET_DIR = join(REPO_ROOT, 'devnet');
/** Default data directory (git-ignored). */
export const DEFAULT_DATA_DIR = join(DEVNET_DIR, '.data');
export const DEFAULT_BASE_PORT = 9701;
export const DEFAULT_NODE_COUNT = 4;
export const MAX_NODE_COUNT = 25;

export const STATE_FILE = 'devnet.json';
export const SUPERVISOR_LOG = 'devnet.log';
export const SETUP_FILE = 'devnet-setup.json';
export const NODE_LOG = 'node.log';
export const NODE_CONFIG = 'devnet-config.json';

export interface NodeLayout {
  /** Node1, Node2, ... */
  name: string;
  index: number;
  dataDir: string;
  logFile: string;
  configFile: string;
  nodePort: number;
  clientPort: number;
}

export function nodeName(i: number): string {
  return `Node${i}`;
}

/** Node i (1-based) listens on base+2(i-1) for nodes and base+2(i-1)+1 for clients (formats.md 11). */
export function nodeLayout(dataDir: string, i: number, basePort: number): NodeLayout {
  const name = nodeName(i);
  const dir = join(dataDir, name);
  return {
    name,
    index: i,
    dataDir: dir,
    logFile: join(dir, NODE_LOG),
    configFile: join(dir, NODE_CONFIG),
    nodePort: basePort + 2 * (i - 1),
    clientPort: basePort + 2 * (i - 1) + 1,
  };
}

export function poolLayout(dataDir: string, count: number, basePort: number): NodeLayout[] {
  return Array.from({ length: count }, (_, k) => nodeLayout(dataDir, k + 1, basePort));
}

/** f = floor((n-1)/3): the faults the pool tolerates. */
export function maxFaulty(n: number): number {
  return Math.floor((n - 1) / 3);
}
