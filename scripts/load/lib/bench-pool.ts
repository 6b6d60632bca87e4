// The node processes of a benchmark pool: a devnet-shaped pool (standard local keys, devnet layout)
// in a temporary directory on free ports, each node started directly so that one can be stopped,
// killed and restarted on its own, with the node's default configuration (a metrics port and the
// log level aside; consensus options only when a tuned run asks for them) and optionally a CPU profile.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { poolLayout, REPO_ROOT, type NodeLayout } from '../../../devnet/lib/layout.js';
import { nodeArgv } from '../../../devnet/lib/node-command.js';
import { ensureDevnet, nodeConfig } from '../../../devnet/lib/setup.js';
import { defaultNodeConfig } from '@quire/node';

export interface BenchNode {
  layout: NodeLayout;
  metricsPort: number;
  child: ChildProcess | undefined;
  exited: Promise<void>;
  startedAt: number;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.once('error', () => res(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => res(true)));
  });
}

/**
 * A base port with 2n node/client ports and n metrics ports (base+100..) free, below Linux's ephemeral range (32768+)
 * so that the pool's own outgoing connections cannot take one of them before the node that listens on it starts.
 */
export async function findFreeBasePort(n: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 12_000 + 2 * Math.floor(Math.random() * 9_900);
    const ports = [...Array.from({ length: 2 * n }, (_, i) => base + i), ...Array.from({ length: n }, (_, i) => base + 100 + i)];
    let ok = true;
    for (const p of ports) if (!(await portFree(p))) ok = false;
    if (ok) return base;
  }
  throw new Error('no free range of ports found');
}

export interface BenchPoolOptions {
  dataDir: string;
  nodes: number;
  basePort: number;
  nodeBin: 'auto' | 'source' | 'build';
  /** Directory for --cpu-prof output (one .cpuprofile per node process), or undefined. */
  cpuProfDir?: string;
  logLevel: string;
  /** consensus options of every node's config (the node checks them at start): a tuned run, not the default */
  consensus?: Record<string, number>;
}

/** The node configuration a benchmark pool runs with: the defaults, `consensus` over them. */
export function effectiveNodeConfig(consensus: Record<string, number> = {}): { consensus: Record<string, unknown>; limits: Record<string, unknown> } {
  return { consensus: { ...defaultNodeConfig.consensus, ...consensus }, limits: { ...defaultNodeConfig.limits } };
}

export class BenchPool {
  readonly nodes: BenchNode[];

  private constructor(
    readonly opts: BenchPoolOptions,
    layout: NodeLayout[],
  ) {
    this.nodes = layout.map((l, i) => ({ layout: l, metricsPort: opts.basePort + 100 + i, child: undefined, exited: Promise.resolve(), startedAt: 0 }));
  }

  /** Creates the pool's keys, genesis and configs (the defaults, a metrics port). */
  static async create(opts: BenchPoolOptions): Promise<BenchPool> {
    await ensureDevnet(opts.dataDir, opts.nodes, opts.basePort);
    const layout = poolLayout(opts.dataDir, opts.nodes, opts.basePort);
    const pool = new BenchPool(opts, layout);
    for (const n of pool.nodes) {
      const cfg = {
        ...nodeConfig(n.layout.name),
        logLevel: opts.logLevel,
        metricsPort: n.metricsPort,
        ...(opts.consensus !== undefined && Object.keys(opts.consensus).length > 0 ? { consensus: opts.consensus } : {}),
      };
      writeFileSync(n.layout.configFile, JSON.stringify(cfg, null, 2) + '\n');
    }
    return pool;
  }

  get genesisFile(): string {
    return join(this.opts.dataDir, 'pool_transactions_genesis');
  }

  genesisText(): string {
    return readFileSync(this.genesisFile, 'utf8');
  }

  node(name: string): BenchNode {
    const n = this.nodes.find((x) => x.layout.name === name);
    if (n === undefined) throw new Error(`no node ${name}`);
    return n;
  }

  /** Starts one node process, its output appended to its node.log. */
  start(name: string): void {
    const n = this.node(name);
    if (n.child !== undefined && n.child.exitCode === null && n.child.signalCode === null) return;
    const argv = nodeArgv(n.layout.dataDir, n.layout.configFile, this.opts.nodeBin);
    // one directory per node; Node's default file names (pid, thread id, sequence) keep the main thread's profile
    // apart from the module loader's worker thread and from the node's earlier runs
    if (this.opts.cpuProfDir !== undefined) argv.splice(1, 0, '--cpu-prof', '--cpu-prof-dir', join(this.opts.cpuProfDir, name));
    const fd = openSync(n.layout.logFile, 'a');
    const child = spawn(argv[0]!, argv.slice(1), { cwd: REPO_ROOT, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    n.child = child;
    n.startedAt = performance.now();
    n.exited = new Promise((r) => child.once('exit', () => r()));
  }

  startAll(): void {
    for (const n of this.nodes) this.start(n.layout.name);
  }

  /** SIGTERM (graceful) or SIGKILL one node and wait until it has exited (SIGKILL after graceMs). */
  async stop(name: string, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM', graceMs = 20_000): Promise<void> {
    const n = this.node(name);
    const c = n.child;
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
    c.kill(signal);
    const timer = setTimeout(() => c.kill('SIGKILL'), graceMs);
    await n.exited;
    clearTimeout(timer);
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.nodes.map((n) => this.stop(n.layout.name)));
  }

  /** The node's Prometheus metrics as name{labels} -> value (undefined when it does not answer). */
  async metrics(name: string): Promise<Map<string, number> | undefined> {
    const n = this.node(name);
    try {
      const res = await fetch(`http://127.0.0.1:${n.metricsPort}/metrics`, { signal: AbortSignal.timeout(2000) });
      if (!res.ok) return undefined;
      return parseMetrics(await res.text());
    } catch {
      return undefined;
    }
  }
}

/** Prometheus text format -> `name{labels}` (labels as written) -> value. */
export function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const sp = line.lastIndexOf(' ');
    if (sp < 0) continue;
    const v = Number(line.slice(sp + 1));
    if (!Number.isNaN(v)) out.set(line.slice(0, sp), v);
  }
  return out;
}

/** Sum of every series of a metric (all label sets). */
export function metricSum(m: Map<string, number> | undefined, name: string): number | undefined {
  if (m === undefined) return undefined;
  let sum: number | undefined;
  for (const [k, v] of m) if (k === name || k.startsWith(`${name}{`)) sum = (sum ?? 0) + v;
  return sum;
}
