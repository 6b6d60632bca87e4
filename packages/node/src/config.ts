// The node's configuration: one object of documented defaults, a JSON file merged over it, and a
// validation that names the first bad option in one line. Paths in the file are relative to the
// data directory unless absolute.
import { readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { b58decodeOrUndefined } from '@quire/common';
import { defaultConsensusOptions } from '@quire/consensus';
import type { ConsensusOptions } from '@quire/consensus';
import { NodeError, NodeErrorCode, reasonOf } from './errors.js';

/**
 * The consensus options a config sets. `msgLenLimit` is not one of them: it is derived from
 * `limits.maxMessageLength` (`consensusOptionsOf`), so catch-up replies always fit the transport.
 */
export type ConsensusTimers = Omit<ConsensusOptions, 'name' | 'validators' | 'msgLenLimit' | 'pluginLedgers'>;
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface NodeLimits {
  /** largest encoded message of any kind, bytes (MSG_LEN_LIMIT, consensus.md §9.5) */
  maxMessageLength: number;
  /** client requests per second per connection (token bucket rate) */
  clientRate: number;
  /** client token bucket burst */
  clientBurst: number;
  /** requests one client session may have in flight (sent, not yet answered) */
  clientMaxPending: number;
  /** connected clients in total (MAX_CONNECTED_CLIENTS_NUM) */
  maxConnectedClients: number;
  /** connected clients per remote IP */
  maxConnectionsPerIp: number;
  /** idle client sessions are closed after this long, ms */
  clientIdleTimeoutMs: number;
}

export interface UpgradeConfig {
  /** command run to install a scheduled POOL_UPGRADE (`null`: upgrades are logged and refused) */
  actionCommand: string | null;
  /** the upgrade command is killed after this many seconds */
  timeoutSec: number;
}

/** A peer admitted to the node host to follow the ordered-batch topic (consensus.md §9.1), never to take part. */
export interface ObserverConfig {
  /** the observer's name (distinct from every validator alias and every other observer) */
  name: string;
  /** base58 of the observer's 32-byte ed25519 public key; its libp2p PeerId is derived from it */
  dest: string;
}

export interface NodeConfig {
  /** the node's alias; `null` takes the name written by `quire-node init` into the key file */
  name: string | null;
  /** LevelDB directory (one database for every ledger, state and side store) */
  dbDir: string;
  /** the key file written by `quire-node init` (0600) */
  keysFile: string;
  /** pool genesis (NODE txns), loaded into an empty pool ledger */
  poolGenesisFile: string;
  /** domain genesis (trustees, stewards), loaded into an empty domain ledger */
  domainGenesisFile: string;
  /** optional config ledger genesis; `null` = none (formats.md §11) */
  configGenesisFile: string | null;
  /** listen address of the node-to-node host; `null` = `node_ip` of this node's NODE txn */
  nodeHost: string | null;
  /** listen port of the node-to-node host; `null` = `node_port` of this node's NODE txn */
  nodePort: number | null;
  /** listen address of the client host; `null` = `client_ip` of this node's NODE txn */
  clientHost: string | null;
  /** listen port of the client host; `null` = `client_port` of this node's NODE txn */
  clientPort: number | null;
  /** peers admitted to connect to the node host and follow `/quire/<poolId>/ordered/1` (no consensus streams) */
  observers: ObserverConfig[];
  /** consensus timers and sizes (consensus.md §10, Quire column) */
  consensus: ConsensusTimers;
  limits: NodeLimits;
  /** one synced write per ordered batch (EnsureLedgerDurability) */
  durable: boolean;
  /** pino level; the LOG_LEVEL environment variable overrides it */
  logLevel: LogLevel;
  /** Prometheus metrics on http://127.0.0.1:<port>/metrics; `null` = off */
  metricsPort: number | null;
  /** a graceful shutdown that takes longer than this is abandoned (exit 1), ms */
  shutdownTimeoutMs: number;
  upgrade: UpgradeConfig;
  /**
   * added to the system's wall clock wherever the node reads it (PRE-PREPARE times, freshness,
   * receipts), ms; 0 in production: a skewed node for fault tests (`npm run chaos`)
   */
  clockOffsetMs: number;
  /**
   * ledger plugins loaded at start (plugins.ts): module specifiers, or paths of ES modules (relative to the
   * data directory unless absolute). Every node of a pool must run the same plugins.
   */
  plugins: string[];
}

export const defaultNodeConfig: NodeConfig = {
  name: null,
  dbDir: 'db',
  keysFile: 'node-keys.json',
  poolGenesisFile: 'pool_transactions_genesis',
  domainGenesisFile: 'domain_transactions_genesis',
  configGenesisFile: null,
  nodeHost: null,
  nodePort: null,
  clientHost: null,
  clientPort: null,
  observers: [],
  consensus: consensusDefaults(),
  limits: {
    maxMessageLength: 128 * 1024,
    // one client application (one connection per node) may carry the pool's whole write and read
    // rates: overload is refused at the door by admission control, these only bound a runaway client
    clientRate: 5_000,
    clientBurst: 10_000,
    clientMaxPending: 4096,
    maxConnectedClients: 400,
    maxConnectionsPerIp: 16,
    clientIdleTimeoutMs: 60_000,
  },
  durable: true,
  logLevel: 'info',
  metricsPort: null,
  shutdownTimeoutMs: 30_000,
  upgrade: { actionCommand: null, timeoutSec: 600 },
  clockOffsetMs: 0,
  plugins: [],
};

function consensusDefaults(): ConsensusTimers {
  const { msgLenLimit: _derived, ...rest } = defaultConsensusOptions;
  return rest;
}

/**
 * The consensus core's options of a config: `consensus.*` plus `msgLenLimit` = the transport's
 * `limits.maxMessageLength` (MSG_LEN_LIMIT, consensus.md §9.5: one limit for both).
 */
export function consensusOptionsOf(c: NodeConfig): Omit<ConsensusOptions, 'name' | 'validators'> {
  return { ...c.consensus, msgLenLimit: c.limits.maxMessageLength };
}

const LOG_LEVELS: readonly string[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function bad(option: string, reason: string): never {
  throw new NodeError(NodeErrorCode.CONFIG_INVALID, { option, reason });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function checkInt(option: string, v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) bad(option, `expected an integer in [${min}, ${max}], got ${JSON.stringify(v)}`);
}

function checkString(option: string, v: unknown, nullable: boolean): void {
  if (v === null && nullable) return;
  if (typeof v !== 'string' || v.length === 0) bad(option, `expected a non-empty string${nullable ? ' or null' : ''}, got ${JSON.stringify(v)}`);
}

function checkPort(option: string, v: unknown): void {
  if (v === null) return;
  checkInt(option, v, 0, 65535);
}

function checkObservers(v: unknown): void {
  if (!Array.isArray(v)) bad('observers', `expected a list of {name, dest}, got ${JSON.stringify(v)}`);
  const names = new Set<string>();
  const dests = new Set<string>();
  v.forEach((o: unknown, i) => {
    const at = `observers[${i}]`;
    if (!isObject(o)) bad(at, 'expected an object {name, dest}');
    for (const k of Object.keys(o)) if (k !== 'name' && k !== 'dest') bad(`${at}.${k}`, 'unknown option');
    if (typeof o.name !== 'string' || o.name.length === 0 || o.name.length > 256) bad(`${at}.name`, 'expected a name of 1..256 characters');
    if (b58decodeOrUndefined(o.dest)?.length !== 32) bad(`${at}.dest`, `expected the base58 of a 32-byte ed25519 key, got ${JSON.stringify(o.dest)}`);
    if (names.has(o.name)) bad(`${at}.name`, `duplicate observer ${o.name}`);
    if (dests.has(o.dest as string)) bad(`${at}.dest`, 'duplicate observer key');
    names.add(o.name);
    dests.add(o.dest as string);
  });
}

/**
 * Options of earlier versions that are gone, each with why: a config naming one is refused with that reason (rather
 * than "unknown option"), so that the operator knows to delete the key and that nothing replaces it.
 */
const REMOVED_OPTIONS: ReadonlyMap<string, string> = new Map([
  [
    'limits.clientReplyTimeoutMs',
    "removed: a write's REPLY target is kept until the write is answered, its client session closes or consensus can no longer order it (CLIENT_REPLY_TIMEOUT is the client's own timeout); delete this key",
  ],
]);

/** Merges `override` over `base` one level into the nested groups; unknown and removed keys are refused. */
export function mergeConfig(base: NodeConfig, override: unknown): NodeConfig {
  if (!isObject(override)) bad('(root)', 'expected a JSON object');
  const out: Record<string, unknown> = { ...base };
  const nested: Record<string, Record<string, unknown>> = {
    consensus: base.consensus as unknown as Record<string, unknown>,
    limits: base.limits as unknown as Record<string, unknown>,
    upgrade: base.upgrade as unknown as Record<string, unknown>,
  };
  for (const [k, v] of Object.entries(override)) {
    const removed = REMOVED_OPTIONS.get(k);
    if (removed !== undefined) bad(k, removed);
    if (!Object.prototype.hasOwnProperty.call(base, k)) bad(k, 'unknown option');
    const group = nested[k];
    if (group !== undefined) {
      if (!isObject(v)) bad(k, 'expected an object');
      if (k === 'consensus' && Object.prototype.hasOwnProperty.call(v, 'msgLenLimit'))
        bad('consensus.msgLenLimit', 'derived from limits.maxMessageLength: set that instead');
      for (const sub of Object.keys(v)) {
        const gone = REMOVED_OPTIONS.get(`${k}.${sub}`);
        if (gone !== undefined) bad(`${k}.${sub}`, gone);
        if (!Object.prototype.hasOwnProperty.call(group, sub)) bad(`${k}.${sub}`, 'unknown option');
      }
      out[k] = { ...group, ...v };
    } else {
      out[k] = v;
    }
  }
  const cfg = out as unknown as NodeConfig;
  validateConfig(cfg);
  return cfg;
}

/** Checks every option; throws NodeError CONFIG_INVALID naming the first bad one. */
export function validateConfig(c: NodeConfig): void {
  if (c.name !== null && (typeof c.name !== 'string' || c.name.length === 0 || c.name.length > 256))
    bad('name', 'expected an alias of 1..256 characters or null');
  checkString('dbDir', c.dbDir, false);
  checkString('keysFile', c.keysFile, false);
  checkString('poolGenesisFile', c.poolGenesisFile, false);
  checkString('domainGenesisFile', c.domainGenesisFile, false);
  checkString('configGenesisFile', c.configGenesisFile, true);
  checkString('nodeHost', c.nodeHost, true);
  checkString('clientHost', c.clientHost, true);
  checkPort('nodePort', c.nodePort);
  checkPort('clientPort', c.clientPort);
  checkObservers(c.observers);
  for (const [k, v] of Object.entries(c.consensus)) {
    if (k === 'throughputDelta') {
      // a ratio (monitor M3)
      if (typeof v !== 'number' || !(v >= 0 && v <= 1)) bad(`consensus.${k}`, `expected a number in [0, 1], got ${JSON.stringify(v)}`);
    } else {
      checkInt(`consensus.${k}`, v, k === 'max3pcBatchWaitMs' ? 0 : 1);
    }
  }
  if (c.consensus.logSize < c.consensus.chkFreq) bad('consensus.logSize', 'must be at least consensus.chkFreq');
  checkInt('limits.maxMessageLength', c.limits.maxMessageLength, 1024, 16 * 1024 * 1024);
  checkInt('limits.clientRate', c.limits.clientRate, 1);
  checkInt('limits.clientBurst', c.limits.clientBurst, 1);
  checkInt('limits.clientMaxPending', c.limits.clientMaxPending, 1, 65_536);
  checkInt('limits.maxConnectedClients', c.limits.maxConnectedClients, 1);
  checkInt('limits.maxConnectionsPerIp', c.limits.maxConnectionsPerIp, 1);
  checkInt('limits.clientIdleTimeoutMs', c.limits.clientIdleTimeoutMs, 1000);
  if (typeof c.durable !== 'boolean') bad('durable', 'expected true or false');
  if (!LOG_LEVELS.includes(c.logLevel)) bad('logLevel', `expected one of ${LOG_LEVELS.join(', ')}`);
  checkPort('metricsPort', c.metricsPort);
  checkInt('shutdownTimeoutMs', c.shutdownTimeoutMs, 100);
  checkString('upgrade.actionCommand', c.upgrade.actionCommand, true);
  checkInt('upgrade.timeoutSec', c.upgrade.timeoutSec, 1);
  checkInt('clockOffsetMs', c.clockOffsetMs, -86_400_000, 86_400_000);
  if (!Array.isArray(c.plugins) || c.plugins.length > MAX_PLUGINS) bad('plugins', `expected a list of at most ${MAX_PLUGINS} module specifiers or paths`);
  c.plugins.forEach((p: unknown, i) => checkString(`plugins[${i}]`, p, false));
  if (new Set(c.plugins).size !== c.plugins.length) bad('plugins', 'a plugin is listed twice');
}

/** The most ledger plugins a node loads. */
const MAX_PLUGINS = 16;

/** Reads a JSON config file and merges it over the defaults. */
export async function loadConfigFile(file: string, base: NodeConfig = defaultNodeConfig): Promise<NodeConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new NodeError(NodeErrorCode.CONFIG_UNREADABLE, { file, reason: (e as NodeJS.ErrnoException).code ?? reasonOf(e) });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new NodeError(NodeErrorCode.CONFIG_INVALID_JSON, { file, reason: reasonOf(e) });
  }
  if (!isObject(value)) throw new NodeError(NodeErrorCode.CONFIG_INVALID_JSON, { file, reason: 'the top level is not an object' });
  return mergeConfig(base, value);
}

/** A path option resolved against the data directory. */
export function resolvePath(dataDir: string, p: string): string {
  return isAbsolute(p) ? p : join(dataDir, p);
}
