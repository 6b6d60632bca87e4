// VALIDATOR_INFO (requests.md §7.5): the `data` a node answers with, built from its live state:
// node (identity, addresses, uptime, view, primary, last ordered batch, ledger sizes and roots,
// catch-up), pool (validators, n, f, quorums, reachable and unreachable peers), protocol (request
// protocol version, wire protocols, pool id), software (running and package versions, Node.js,
// OS), hardware (CPUs, memory, disk use of the data directory) and configuration (the effective
// config, without anything secret). Nothing here changes the node; every read is local.
import { lstat, readdir, statfs } from 'node:fs/promises';
import { arch, availableParallelism, cpus, freemem, hostname, loadavg, platform, release, totalmem, type as osType } from 'node:os';
import { join } from 'node:path';
import { CLIENT_PROTOCOL, b58encode } from '@quire/common';
import type { ConsensusStatus } from '@quire/consensus';
import { NODE_PROTOCOL } from '@quire/network';
import type { Ledger, StateTrie } from '@quire/storage';
import type { NodeConfig } from './config.js';
import type { PoolRegistry } from './pool-registry.js';

/** The request protocol version every client request carries (requests.md §1.1). */
const REQUEST_PROTOCOL_VERSION = 2;
/** Version of the layout of this object; bumped when a field changes meaning or goes away. */
export const VALIDATOR_INFO_VERSION = '1';

/** Bounds of the data-directory walk (disk use): beyond them the figure is a lower bound. */
const DISK_WALK_MAX_ENTRIES = 20_000;
const DISK_WALK_MAX_DEPTH = 6;

/** Config keys never answered, whatever their group (defence in depth: the config holds no secret today). */
const SECRET_KEY = /seed|secret|private|password|passphrase|token|credential/i;

const LEDGER_NAMES = { 0: 'pool', 1: 'domain', 2: 'config', 3: 'audit' } as const;

/** Everything the answer is built from; the node passes its live state. */
export interface ValidatorInfoSource {
  name: string;
  /** NODE.dest: the node's base58 Ed25519 verkey */
  dest: string;
  dataDir: string;
  /** the database is in memory (tests): the data directory holds logs only */
  inMemory: boolean;
  /** epoch ms when the node started */
  startedAtMs: number;
  config: NodeConfig;
  /** bound ports (metrics undefined when off) */
  ports: { node: number; client: number; metrics: number | undefined };
  status: ConsensusStatus;
  /** the committed validator registry (pool ledger) */
  registry: PoolRegistry;
  stores: { ledgers: Record<0 | 1 | 2 | 3, Ledger>; states: Record<0 | 1 | 2, StateTrie> };
  /** aliases of the peers connected now */
  connectedPeers: readonly string[];
  /** POOL_CONFIG writes flag */
  writable: boolean;
  /** the running software version (installed_version, else the package version) */
  runningVersion: string;
  packageName: string;
  packageVersion: string;
  poolId: string;
  /** client writes waiting for their REPLY on this node */
  pendingClientWrites: number;
}

/** The node info object of a VALIDATOR_INFO REPLY (`result.data`). */
export async function validatorInfo(src: ValidatorInfoSource, nowMs: number = Date.now()): Promise<Record<string, unknown>> {
  return {
    version: VALIDATOR_INFO_VERSION,
    timestamp: Math.floor(nowMs / 1000),
    node: nodeSection(src, nowMs),
    pool: poolSection(src),
    protocol: protocolSection(src),
    software: softwareSection(src),
    hardware: await hardwareSection(src),
    configuration: configurationSection(src),
  };
}

function nodeSection(src: ValidatorInfoSource, nowMs: number): Record<string, unknown> {
  const st = src.status;
  const rec = src.registry.node(src.name)?.data ?? {};
  const ledgers: Record<string, unknown> = {};
  for (const lid of [0, 1, 2, 3] as const) {
    const l = src.stores.ledgers[lid];
    const entry: Record<string, unknown> = { id: lid, size: l.size, root: b58encode(l.root), uncommittedSize: l.uncommittedSize };
    if (lid !== 3) entry.stateRoot = b58encode(src.stores.states[lid].committedRoot);
    ledgers[LEDGER_NAMES[lid]] = entry;
  }
  return {
    alias: src.name,
    dest: src.dest,
    blskey: typeof rec.blskey === 'string' ? rec.blskey : null,
    addresses: {
      node: { ip: str(rec.node_ip), port: num(rec.node_port) },
      client: { ip: str(rec.client_ip), port: num(rec.client_port) },
    },
    ports: { node: src.ports.node, client: src.ports.client, metrics: src.ports.metrics ?? null },
    dataDir: src.dataDir,
    startedAt: Math.floor(src.startedAtMs / 1000),
    uptimeSec: Math.max(0, Math.floor((nowMs - src.startedAtMs) / 1000)),
    mode: st.catchingUp ? 'catching-up' : st.waitingForNewView ? 'view-change' : 'participating',
    writable: src.writable,
    view: { viewNo: st.viewNo, waitingForNewView: st.waitingForNewView },
    primary: st.primary,
    isPrimary: st.isPrimary,
    lastOrdered: { viewNo: st.lastOrdered.viewNo, ppSeqNo: st.lastOrdered.ppSeqNo },
    stableCheckpoint: st.stableCheckpoint,
    watermarks: { low: st.watermarks[0], high: st.watermarks[1] },
    ledgers,
    catchup: { catchingUp: st.catchingUp, rounds: st.catchupRounds, lagging: st.lagging },
    requests: {
      pendingInConsensus: st.pendingRequests,
      admissionLimit: st.admissionLimit,
      pendingClientWrites: src.pendingClientWrites,
      stashedMessages: st.stashed,
      threePcLog: st.logSize,
    },
  };
}

function poolSection(src: ValidatorInfoSource): Record<string, unknown> {
  const validators = [...src.registry.validators];
  const n = validators.length;
  const f = Math.floor((n - 1) / 3);
  const connected = new Set(src.connectedPeers);
  const reachable = validators.filter((v) => v === src.name || connected.has(v));
  const unreachable = validators.filter((v) => v !== src.name && !connected.has(v));
  return {
    validators,
    n,
    f,
    quorums: { weak: f + 1, strong: n - f },
    readOnly: !src.writable,
    reachable: { count: reachable.length, nodes: reachable },
    unreachable: { count: unreachable.length, nodes: unreachable },
  };
}

function protocolSection(src: ValidatorInfoSource): Record<string, unknown> {
  return {
    requestProtocolVersion: REQUEST_PROTOCOL_VERSION,
    nodeProtocol: NODE_PROTOCOL,
    clientProtocol: CLIENT_PROTOCOL,
    orderedTopic: `/quire/${src.poolId}/ordered/1`,
    poolId: src.poolId,
  };
}

function softwareSection(src: ValidatorInfoSource): Record<string, unknown> {
  return {
    package: src.packageName,
    version: src.runningVersion,
    packageVersion: src.packageVersion,
    node: process.version,
    os: { type: osType(), platform: platform(), release: release(), arch: arch(), hostname: hostname() },
  };
}

async function hardwareSection(src: ValidatorInfoSource): Promise<Record<string, unknown>> {
  const mem = process.memoryUsage();
  return {
    cpus: { count: availableParallelism(), model: cpus()[0]?.model ?? null, loadAverage: loadavg().map((x) => Math.round(x * 100) / 100) },
    memory: { totalBytes: totalmem(), freeBytes: freemem(), processRssBytes: mem.rss, processHeapUsedBytes: mem.heapUsed },
    disk: await diskSection(src.dataDir, src.inMemory),
  };
}

/** Bytes used under the data directory (bounded walk), and the free / total bytes of its file system. */
async function diskSection(dataDir: string, inMemory: boolean): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { dataDir, databaseInMemory: inMemory };
  try {
    const walk = await directoryBytes(dataDir);
    out.dataDirBytes = walk.bytes;
    out.dataDirComplete = walk.complete;
  } catch (e) {
    out.dataDirBytes = null;
    out.dataDirError = (e as NodeJS.ErrnoException).code ?? String(e);
  }
  try {
    const fs = await statfs(dataDir);
    out.fileSystem = { totalBytes: fs.blocks * fs.bsize, freeBytes: fs.bavail * fs.bsize };
  } catch {
    out.fileSystem = null;
  }
  return out;
}

/** Sum of file sizes under `root` (symlinks not followed); `complete` false when a bound cut the walk short. */
export async function directoryBytes(root: string): Promise<{ bytes: number; complete: boolean }> {
  let bytes = 0;
  let entries = 0;
  let complete = true;
  const stack: [string, number][] = [[root, 0]];
  let next: [string, number] | undefined;
  while ((next = stack.pop()) !== undefined) {
    const [dir, depth] = next;
    let list;
    try {
      list = await readdir(dir, { withFileTypes: true });
    } catch (e) {
      if (dir === root) throw e;
      complete = false; // vanished or unreadable meanwhile (LevelDB compaction)
      continue;
    }
    for (const d of list) {
      if (++entries > DISK_WALK_MAX_ENTRIES) return { bytes, complete: false };
      const p = join(dir, d.name);
      if (d.isDirectory()) {
        if (depth + 1 < DISK_WALK_MAX_DEPTH) stack.push([p, depth + 1]);
        else complete = false;
      } else if (d.isFile()) {
        try {
          bytes += (await lstat(p)).size;
        } catch {
          complete = false;
        }
      }
    }
  }
  return { bytes, complete };
}

function configurationSection(src: ValidatorInfoSource): Record<string, unknown> {
  return withoutSecrets(src.config) as Record<string, unknown>;
}

/** A copy of a JSON-like value without the members whose names look secret. */
export function withoutSecrets(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutSecrets);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (SECRET_KEY.test(k) || x === undefined || typeof x === 'function') continue;
    out[k] = withoutSecrets(x);
  }
  return out;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null);
