// First-run creation of a devnet: the node key files, the pool genesis (NODE txns of formats.md 11
// for Node1..NodeN, owned by Steward1..N) and the standard domain genesis (Trustee1, Steward1..4;
// pools above 4 nodes add the NYMs of Steward5..N in the same shape), plus each node's config.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { b58encode } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { DEVNET_DIR, SETUP_FILE, poolLayout } from './layout.js';
import type { NodeLayout } from './layout.js';
import { DOMAIN_GENESIS_FILE, POOL_GENESIS_FILE, deriveNodeKeys, nodeSeed, poolGenesis, standardDomainGenesis, stewardSeed, writeKeyFile } from './node-api.js';
import type { GenesisNodeSpec } from './node-api.js';

export const NODE_KEY_FILE = 'node-keys.json';

/** What the setup file records; a later start must use the same values. */
export interface DevnetSetup {
  nodes: number;
  basePort: number;
  ip: string;
  createdAt: string;
}

// internal control flow of the devnet tool, never seen by a caller of a package: devnet.ts prints it as a one-line user error
export class DevnetSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DevnetSetupError';
  }
}

/** The pool genesis NODE specs of the devnet's nodes. */
export function genesisNodes(layout: readonly NodeLayout[], ip: string): GenesisNodeSpec[] {
  return layout.map((n) => ({
    alias: n.name,
    keys: deriveNodeKeys(n.name, Buffer.from(nodeSeed(n.name), 'utf8')),
    steward: Ed25519Signer.fromSeed(stewardSeed(n.index)).did,
    nodeIp: ip,
    nodePort: n.nodePort,
    clientIp: ip,
    clientPort: n.clientPort,
  }));
}

/** What a start asks of every node beyond the defaults: metrics, observers. */
export interface NodeExtras {
  /** Prometheus port of the node, when metrics are on */
  metricsPort?: number;
  /** observers admitted to the ordered-batch topic */
  observers?: { name: string; dest: string }[];
}

/** The node config the devnet passes with --config: the alias, the devnet's upgrade action, and the start's extras. */
export function nodeConfig(name: string, extras: NodeExtras = {}): Record<string, unknown> {
  return {
    name,
    upgrade: { actionCommand: `"${process.execPath}" "${join(DEVNET_DIR, 'upgrade-action.mjs')}"`, timeoutSec: 120 },
    ...(extras.metricsPort !== undefined ? { metricsPort: extras.metricsPort } : {}),
    ...(extras.observers !== undefined && extras.observers.length > 0 ? { observers: extras.observers } : {}),
  };
}

/** The seed of the devnet's observer i (1-based): `Observer<i>` padded with zeros to 32 characters, like the other local seeds. */
export function observerSeed(i: number): string {
  return `Observer${i}`.padStart(32, '0');
}

/** The devnet's observers Obs1..ObsN: name, seed and the dest the validators admit (base58 of the ed25519 public key). */
export function devnetObservers(count: number): { name: string; seed: string; dest: string }[] {
  return Array.from({ length: count }, (_, k) => {
    const seed = observerSeed(k + 1);
    return { name: `Obs${k + 1}`, seed, dest: b58encode(Ed25519Signer.fromSeed(seed).publicKey) };
  });
}

/** Rewrites every node's config for this start (the flags of the start decide metrics and observers). */
export function writeNodeConfigs(layout: readonly NodeLayout[], extras: (n: NodeLayout) => NodeExtras): void {
  for (const n of layout) writeFileSync(n.configFile, JSON.stringify(nodeConfig(n.name, extras(n)), null, 2) + '\n');
}

export function readSetup(dataDir: string): DevnetSetup | undefined {
  const file = join(dataDir, SETUP_FILE);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as DevnetSetup;
}

/**
 * Creates the devnet in `dataDir` unless it exists; returns the setup in force. Throws
 * DevnetSetupError when an existing devnet was made with another node count or base port.
 */
export async function ensureDevnet(dataDir: string, count: number, basePort: number, ip = '127.0.0.1'): Promise<{ setup: DevnetSetup; created: boolean }> {
  const existing = readSetup(dataDir);
  if (existing !== undefined) {
    if (existing.nodes !== count || existing.basePort !== basePort) {
      throw new DevnetSetupError(
        `the devnet in ${dataDir} has ${existing.nodes} nodes on base port ${existing.basePort}; ` +
          `start it with --nodes ${existing.nodes} --base-port ${existing.basePort}, or run "npm run devnet -- reset" first`,
      );
    }
    return { setup: existing, created: false };
  }
  const layout = poolLayout(dataDir, count, basePort);
  const pool = poolGenesis(genesisNodes(layout, ip));
  const domain = standardDomainGenesis(count);
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, POOL_GENESIS_FILE), pool);
  writeFileSync(join(dataDir, DOMAIN_GENESIS_FILE), domain);
  for (const n of layout) {
    mkdirSync(n.dataDir, { recursive: true });
    const keyFile = join(n.dataDir, NODE_KEY_FILE);
    if (!existsSync(keyFile)) await writeKeyFile(keyFile, n.name, new Uint8Array(Buffer.from(nodeSeed(n.name), 'utf8')));
    writeFileSync(join(n.dataDir, POOL_GENESIS_FILE), pool);
    writeFileSync(join(n.dataDir, DOMAIN_GENESIS_FILE), domain);
    writeFileSync(n.configFile, JSON.stringify(nodeConfig(n.name), null, 2) + '\n');
  }
  const setup: DevnetSetup = { nodes: count, basePort, ip, createdAt: new Date().toISOString() };
  // written last: a devnet without it is incomplete and is created again
  writeFileSync(join(dataDir, SETUP_FILE), JSON.stringify(setup, null, 2) + '\n');
  return { setup, created: true };
}
