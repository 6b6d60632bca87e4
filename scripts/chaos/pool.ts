// The pool of a chaos run: real `quire-node` processes, each in its own network namespace with its
// own address (genesis made with those addresses), or all on 127.0.0.1 in the loopback variant.
// Each node runs under its own devnet Supervisor (a node that exits with the restart code 75 is
// started again at once); a node the harness did not kill that exits is recorded as a crash and
// started again, so the run goes on and the report names it. The harness kills, pauses, restarts,
// wipes and skews nodes through this class.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, maxFaulty, nodeLayout, type NodeLayout } from '../../devnet/lib/layout.js';
import {
  DOMAIN_GENESIS_FILE,
  POOL_GENESIS_FILE,
  RESTART_EXIT_CODE,
  deriveNodeKeys,
  nodeSeed,
  poolGenesis,
  standardDomainGenesis,
  writeKeyFile,
} from '../../devnet/lib/node-api.js';
import { nodeArgv } from '../../devnet/lib/node-command.js';
import { NODE_KEY_FILE, genesisNodes, nodeConfig } from '../../devnet/lib/setup.js';
import { Supervisor, type SupervisorEvent } from '../../devnet/lib/supervisor.js';
import type { ChaosNetwork } from './netns.js';

/** The supervisor never restarts a crash by itself: the harness decides (and counts it). */
const NO_AUTO_RESTART_MS = 24 * 3600_000;

export interface NodeExit {
  node: string;
  code: number | null;
  signal: string | null;
  at: number;
  /** true when the harness caused it (kill -9, stop) */
  expected: boolean;
}

export class ChaosNode {
  private sup: Supervisor | undefined;
  /** set while the harness is ending the process itself */
  private ending = false;
  paused = false;
  clockOffsetMs = 0;
  /** a spare: its NODE txn is on the pool ledger (a later promotion sends only the services) */
  registered = false;
  readonly rssSamplesMb: number[] = [];
  maxRssMb = 0;
  starts = 0;

  constructor(
    readonly layout: NodeLayout,
    readonly ip: string,
    readonly dest: string,
    private readonly pool: ChaosPool,
  ) {}

  get name(): string {
    return this.layout.name;
  }

  get pid(): number | undefined {
    return this.sup?.status()[0]?.pid;
  }

  get running(): boolean {
    return this.sup?.status()[0]?.state === 'running';
  }

  writeConfig(): void {
    const cfg: Record<string, unknown> = {
      ...nodeConfig(this.name),
      ...this.pool.configOverride,
      nodeHost: this.ip,
      clientHost: this.ip,
      clockOffsetMs: this.clockOffsetMs,
    };
    writeFileSync(this.layout.configFile, JSON.stringify(cfg, null, 2) + '\n');
  }

  start(): void {
    if (this.sup !== undefined) throw new Error(`${this.name} is already running`);
    this.writeConfig();
    const argv = [...this.pool.execPrefix(this.name), ...nodeArgv(this.layout.dataDir, this.layout.configFile)];
    this.ending = false;
    this.paused = false;
    this.starts++;
    this.sup = new Supervisor(
      [{ name: this.name, argv, cwd: REPO_ROOT, logFile: this.layout.logFile }],
      { restartExitCode: RESTART_EXIT_CODE, initialBackoffMs: NO_AUTO_RESTART_MS, maxBackoffMs: NO_AUTO_RESTART_MS, stopGraceMs: 15_000 },
      (e) => this.onEvent(e),
    );
    this.sup.start();
  }

  private onEvent(e: SupervisorEvent): void {
    if (e.kind === 'crashed' || e.kind === 'exited') {
      const expected = this.ending;
      const exit: NodeExit = {
        node: this.name,
        code: e.kind === 'crashed' ? e.code : 0,
        signal: e.kind === 'crashed' ? e.signal : null,
        at: Date.now(),
        expected,
      };
      this.pool.exits.push(exit);
      if (!expected) {
        this.pool.onUnexpectedExit(this, exit);
        // go on: detach this supervisor and start again after a short pause
        const sup = this.sup;
        this.sup = undefined;
        void sup?.stop();
        setTimeout(() => {
          if (!this.pool.closed && this.sup === undefined) this.start();
        }, 2_000);
      }
    } else if (e.kind === 'restart-requested') {
      this.pool.restartRequests++;
    }
  }

  /** kill -9; resolves when the process is gone. */
  async kill9(): Promise<void> {
    const pid = this.pid;
    if (pid === undefined) return;
    this.ending = true;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await this.detach();
  }

  /** Graceful stop (SIGTERM, SIGKILL after 15 s). */
  async stop(): Promise<void> {
    this.ending = true;
    if (this.paused) this.cont();
    await this.detach();
  }

  private async detach(): Promise<void> {
    const sup = this.sup;
    if (sup === undefined) return;
    await sup.stop();
    this.sup = undefined;
    this.paused = false;
  }

  pause(): void {
    const pid = this.pid;
    if (pid === undefined) return;
    process.kill(pid, 'SIGSTOP');
    this.paused = true;
  }

  cont(): void {
    const pid = this.pid;
    this.paused = false;
    if (pid === undefined) return;
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // gone
    }
  }

  /** Deletes the node's database (keys, genesis and config stay): it must catch up from nothing. */
  wipeData(): void {
    rmSync(join(this.layout.dataDir, 'db'), { recursive: true, force: true });
  }

  /** Samples the resident set size of the process from /proc (MiB). */
  sampleRss(): number | undefined {
    const pid = this.pid;
    if (pid === undefined || this.paused) return undefined;
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m === null) return undefined;
      const mb = Number(m[1]) / 1024;
      this.rssSamplesMb.push(mb);
      if (mb > this.maxRssMb) this.maxRssMb = mb;
      return mb;
    } catch {
      return undefined;
    }
  }
}

export interface ChaosPoolOptions {
  dir: string;
  nodes: number;
  /** the network (namespaces); undefined = loopback */
  net: ChaosNetwork | undefined;
  /** loopback variant: base port of the run of free ports */
  basePort: number;
  /** merged over the devnet's node config of every node */
  configOverride?: Record<string, unknown>;
  onUnexpectedExit?: (node: ChaosNode, exit: NodeExit) => void;
}

export const NODE_PORT = 9701;
export const CLIENT_PORT = 9702;

export class ChaosPool {
  /** the validators of genesis (Node1..N); the invariants are checked over them */
  readonly nodes: ChaosNode[] = [];
  /** extra nodes (Node N+1...) that perturbations add to the pool and demote again */
  readonly spares: ChaosNode[] = [];
  readonly exits: NodeExit[] = [];
  restartRequests = 0;
  closed = false;
  readonly configOverride: Record<string, unknown>;

  private constructor(private readonly opts: ChaosPoolOptions) {
    this.configOverride = opts.configOverride ?? {};
  }

  get f(): number {
    return maxFaulty(this.nodes.length);
  }

  get genesisFile(): string {
    return join(this.opts.dir, POOL_GENESIS_FILE);
  }

  execPrefix(name: string): string[] {
    return this.opts.net?.execPrefix(name) ?? [];
  }

  onUnexpectedExit(node: ChaosNode, exit: NodeExit): void {
    this.opts.onUnexpectedExit?.(node, exit);
  }

  node(name: string): ChaosNode {
    const n = [...this.nodes, ...this.spares].find((x) => x.name === name);
    if (n === undefined) throw new Error(`no node ${name}`);
    return n;
  }

  /**
   * Keys, genesis (each node on its own address in namespaces, all on 127.0.0.1 on loopback), data
   * dirs and configs of Node1..N; nothing is started.
   */
  static async create(opts: ChaosPoolOptions): Promise<ChaosPool> {
    const pool = new ChaosPool(opts);
    mkdirSync(opts.dir, { recursive: true });
    const layouts: NodeLayout[] = [];
    const ips: string[] = [];
    for (let i = 1; i <= opts.nodes; i++) {
      const base = nodeLayout(opts.dir, i, opts.basePort);
      const ip = opts.net !== undefined ? opts.net.host(base.name).ip : '127.0.0.1';
      layouts.push(opts.net !== undefined ? { ...base, nodePort: NODE_PORT, clientPort: CLIENT_PORT } : base);
      ips.push(ip);
    }
    const specs = genesisNodes(layouts, '127.0.0.1').map((s, k) => ({ ...s, nodeIp: ips[k]!, clientIp: ips[k]! }));
    const genesis = poolGenesis(specs);
    const domain = standardDomainGenesis(opts.nodes);
    writeFileSync(join(opts.dir, POOL_GENESIS_FILE), genesis);
    writeFileSync(join(opts.dir, DOMAIN_GENESIS_FILE), domain);
    for (let k = 0; k < layouts.length; k++) {
      const l = layouts[k]!;
      mkdirSync(l.dataDir, { recursive: true });
      const keyFile = join(l.dataDir, NODE_KEY_FILE);
      if (!existsSync(keyFile)) await writeKeyFile(keyFile, l.name, new Uint8Array(Buffer.from(nodeSeed(l.name), 'utf8')));
      writeFileSync(join(l.dataDir, POOL_GENESIS_FILE), genesis);
      writeFileSync(join(l.dataDir, DOMAIN_GENESIS_FILE), domain);
      pool.nodes.push(new ChaosNode(l, ips[k]!, deriveNodeKeys(l.name, Buffer.from(nodeSeed(l.name), 'utf8')).dest, pool));
    }
    return pool;
  }

  /**
   * The spare node N+1 (made once): its own keys, the domain genesis, and in namespaces a host of its
   * own on the bridge. Its pool genesis is written by whoever adds it (the pool ledger with its NODE
   * txn, the operator's way); nothing is started.
   */
  async spare(): Promise<ChaosNode> {
    const existing = this.spares[0];
    if (existing !== undefined) return existing;
    const i = this.nodes.length + 1;
    const base = nodeLayout(this.opts.dir, i, this.opts.basePort);
    // host octets: Node1..N are 1..N, the client N+1, the spare N+2
    const ip = this.opts.net !== undefined ? (this.opts.net.hosts.get(base.name) ?? this.opts.net.addHost(base.name, i + 1)).ip : '127.0.0.1';
    const l = this.opts.net !== undefined ? { ...base, nodePort: NODE_PORT, clientPort: CLIENT_PORT } : base;
    mkdirSync(l.dataDir, { recursive: true });
    const keyFile = join(l.dataDir, NODE_KEY_FILE);
    if (!existsSync(keyFile)) await writeKeyFile(keyFile, l.name, new Uint8Array(Buffer.from(nodeSeed(l.name), 'utf8')));
    writeFileSync(join(l.dataDir, DOMAIN_GENESIS_FILE), readFileSync(join(this.opts.dir, DOMAIN_GENESIS_FILE)));
    const n = new ChaosNode(l, ip, deriveNodeKeys(l.name, Buffer.from(nodeSeed(l.name), 'utf8')).dest, this);
    this.spares.push(n);
    return n;
  }

  startAll(): void {
    for (const n of this.nodes) n.start();
  }

  sampleRss(): void {
    for (const n of [...this.nodes, ...this.spares]) n.sampleRss();
  }

  /** Stops every node (SIGCONT first for paused ones, SIGTERM, SIGKILL after 15 s). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.nodes, ...this.spares].map((n) => n.stop()));
  }
}
