// A pool of real `quire-node` processes for whole-pool tests, built from the devnet's own library:
// keys and genesis from devnet/lib/setup (the standard local seeds), one devnet Supervisor per node
// (so that one node can be killed -9, stopped or started alone while the others run, and a node
// that exits with the restart code 75 is started again at once, as on the devnet), and the
// devnet's ordering probe. Ports are a random free run on 127.0.0.1, data lives in a temp dir, and
// everything is torn down by close() — also when the test process exits early.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool, type PoolOptions } from '@quire/client';
import { REPO_ROOT, maxFaulty, nodeLayout, poolLayout, type NodeLayout } from '../../devnet/lib/layout.js';
import { DOMAIN_GENESIS_FILE, POOL_GENESIS_FILE, RESTART_EXIT_CODE, deriveNodeKeys, nodeSeed, writeKeyFile } from '../../devnet/lib/node-api.js';
import { nodeArgv } from '../../devnet/lib/node-command.js';
import { NODE_KEY_FILE, ensureDevnet, nodeConfig } from '../../devnet/lib/setup.js';
import { Supervisor, type ProcessStatus, type SupervisorEvent } from '../../devnet/lib/supervisor.js';
import { readPoolGenesis, waitForOrdering, type GenesisNode, type OrderingResult } from '../../devnet/lib/wait-ordering.js';
import { binMode, distIsFresh } from './build.js';
import { freePortRun } from './ports.js';
import { waitFor } from './wait.js';

/** Every node process started by any TestPool of this test process: killed on exit as a last resort. */
const live = new Set<TestNode>();
process.once('exit', () => {
  for (const n of live) {
    const pid = n.pid;
    if (pid !== undefined) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
});

/** A crash is not restarted by itself in a test (a node that crashed stays down and the test says so). */
const NO_CRASH_RESTART_MS = 24 * 3600_000;

export type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Nested merge of plain objects (node config groups are merged key by key). */
export function mergeJson(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isObject(v) && isObject(out[k]) ? mergeJson(out[k] as Json, v) : v;
  return out;
}

/** One validator process under its own devnet Supervisor. */
export class TestNode {
  private sup: Supervisor | undefined;
  /** Supervisor events of every run of this node (started, restart-requested, crashed...). */
  readonly events: SupervisorEvent[] = [];
  /** Restarts asked for by the node (exit code 75) over all its runs. */
  private pastRestarts = 0;

  constructor(
    readonly layout: NodeLayout,
    readonly dest: string,
  ) {}

  get name(): string {
    return this.layout.name;
  }

  get clientPort(): number {
    return this.layout.clientPort;
  }

  get nodePort(): number {
    return this.layout.nodePort;
  }

  private status(): ProcessStatus | undefined {
    return this.sup?.status()[0];
  }

  get pid(): number | undefined {
    return this.status()?.pid;
  }

  get running(): boolean {
    return this.status()?.state === 'running';
  }

  /** True when the node was started and its process exited on its own (not through kill9/stop). */
  get crashed(): boolean {
    const st = this.status()?.state;
    return st === 'backoff' || st === 'failed' || st === 'exited';
  }

  get lastExit(): ProcessStatus['lastExit'] {
    return this.status()?.lastExit;
  }

  /** Restarts the node asked for (exit code 75: POOL_RESTART, upgrade) since the test pool started. */
  get restarts(): number {
    return this.pastRestarts + (this.status()?.restarts ?? 0);
  }

  /** Starts the node process (the built bin when dist is fresh, else the sources through tsx). */
  start(): void {
    if (this.sup !== undefined) throw new Error(`${this.name} is already supervised`);
    const argv = nodeArgv(this.layout.dataDir, this.layout.configFile, binMode());
    this.sup = new Supervisor(
      [{ name: this.name, argv, cwd: REPO_ROOT, logFile: this.layout.logFile }],
      { restartExitCode: RESTART_EXIT_CODE, initialBackoffMs: NO_CRASH_RESTART_MS, maxBackoffMs: NO_CRASH_RESTART_MS, stopGraceMs: 15_000 },
      (e) => this.events.push(e),
    );
    this.sup.start();
    live.add(this);
  }

  /** kill -9: the process dies at once, whatever it was doing. Resolves when it has exited. */
  async kill9(): Promise<void> {
    const pid = this.pid;
    if (pid === undefined) throw new Error(`${this.name} is not running`);
    process.kill(pid, 'SIGKILL');
    await waitFor(`${this.name} to die`, () => (this.status()?.state !== 'running' ? true : undefined), 10_000, 20);
    await this.detach();
  }

  /** Graceful stop (SIGTERM; SIGKILL after 15 s). Resolves with the exit of the last run. */
  async stop(): Promise<ProcessStatus['lastExit']> {
    const sup = this.sup;
    if (sup === undefined) return undefined;
    await sup.stop();
    const exit = sup.status()[0]!.lastExit;
    await this.detach();
    return exit;
  }

  private async detach(): Promise<void> {
    const sup = this.sup;
    if (sup === undefined) return;
    await sup.stop();
    this.pastRestarts += sup.status()[0]!.restarts;
    this.sup = undefined;
    live.delete(this);
  }

  /** The last `lines` lines of the node's log, condensed (time, level, module, message, fields). */
  logTail(lines = 25): string {
    if (!existsSync(this.layout.logFile)) return '(no log yet)';
    const all = readFileSync(this.layout.logFile, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    return all
      .slice(-lines)
      .map((l) => condense(l))
      .join('\n');
  }

  /** True when the node's log has a line whose message (or raw text) contains `text`. */
  logHas(text: string): boolean {
    return existsSync(this.layout.logFile) && readFileSync(this.layout.logFile, 'utf8').includes(text);
  }
}

const LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

function condense(line: string): string {
  let o: Json;
  try {
    o = JSON.parse(line) as Json;
  } catch {
    return line.slice(0, 400);
  }
  const { time, level, msg, module, node: _node, pid: _pid, hostname: _h, name: _n, ...rest } = o;
  const t = typeof time === 'number' || typeof time === 'string' ? new Date(time).toISOString().slice(11, 23) : '';
  const fields = Object.keys(rest).length > 0 ? ' ' + JSON.stringify(rest) : '';
  return `${t} ${LEVELS[level as number] ?? String(level)} [${String(module ?? '')}] ${String(msg)}${fields}`.slice(0, 400);
}

export interface TestPoolOptions {
  /** Short name used in the temp dir. */
  name: string;
  /** Validators in the genesis (default 4: f = 1). */
  nodes?: number;
  /** Ports kept free for nodes added later (Node5...). */
  spareNodes?: number;
  /** Merged over the devnet's node config (name + upgrade action) of every node. */
  config?: Json;
  /** How long the pool gets to order its first write (default 60 s). */
  orderingTimeoutMs?: number;
}

export class TestPool {
  readonly nodes: TestNode[] = [];
  private readonly clients: Pool[] = [];
  /** Time from spawning the processes to f+1 REPLYs of the first write. */
  startMs = 0;
  firstWrite: OrderingResult | undefined;
  private closed = false;

  private constructor(
    readonly dir: string,
    readonly basePort: number,
    readonly config: Json,
  ) {}

  get genesisFile(): string {
    return join(this.dir, POOL_GENESIS_FILE);
  }

  get f(): number {
    return maxFaulty(this.nodes.length);
  }

  /** How the node processes run, for the timing lines the tests print. */
  static binDescription(): string {
    const mode = binMode();
    const built = mode !== 'source' && distIsFresh('packages/node/dist/cli.js');
    return built ? 'built dist (packages/node/dist/cli.js)' : 'TypeScript sources through tsx';
  }

  /** Creates the pool (devnet setup in a temp dir), starts every node and waits until it orders a write. */
  static async start(opts: TestPoolOptions): Promise<TestPool> {
    const count = opts.nodes ?? 4;
    const dir = mkdtempSync(join(tmpdir(), `quire-${opts.name}-`));
    const base = await freePortRun(2 * (count + (opts.spareNodes ?? 0)));
    const pool = new TestPool(dir, base, opts.config ?? {});
    try {
      await ensureDevnet(dir, count, base);
      for (const layout of poolLayout(dir, count, base)) {
        pool.writeConfig(layout);
        pool.nodes.push(new TestNode(layout, readKeys(layout.dataDir)));
      }
      const started = Date.now();
      for (const n of pool.nodes) n.start();
      pool.firstWrite = await pool.waitOrdering(opts.orderingTimeoutMs ?? 60_000);
      pool.startMs = Date.now() - started;
      return pool;
    } catch (e) {
      pool.dumpLogs(
        `the pool did not start: ${(e as Error).message}${isObject((e as { perNode?: unknown }).perNode) ? ' ' + JSON.stringify((e as { perNode: unknown }).perNode) : ''}`,
      );
      await pool.close();
      throw e;
    }
  }

  private writeConfig(layout: NodeLayout): void {
    writeFileSync(layout.configFile, JSON.stringify(mergeJson(nodeConfig(layout.name), this.config), null, 2) + '\n');
  }

  /** The validators of the genesis file, as the devnet's probe wants them. */
  genesisNodes(): GenesisNode[] {
    return readPoolGenesis(this.genesisFile);
  }

  node(name: string): TestNode {
    const n = this.nodes.find((x) => x.name === name);
    if (n === undefined) throw new Error(`no node ${name} in the test pool`);
    return n;
  }

  /**
   * Waits until f+1 of `nodes` (default: the genesis validators) order a fresh probe NYM. Gives up
   * at once when so many started nodes have exited that the pool cannot order.
   */
  async waitOrdering(timeoutMs: number, nodes: GenesisNode[] = this.genesisNodes()): Promise<OrderingResult> {
    const abort = new AbortController();
    const watch = setInterval(() => {
      const down = this.nodes.filter((n) => n.crashed);
      if (down.length > this.f) abort.abort();
    }, 200);
    try {
      return await waitForOrdering(nodes, { timeoutMs, signal: abort.signal });
    } catch (e) {
      if (!abort.signal.aborted) throw e;
      const down = this.nodes.filter((n) => n.crashed).map((n) => `${n.name} (${JSON.stringify(n.lastExit)})`);
      throw new Error(`nodes exited while the pool was starting: ${down.join(', ')}`, { cause: e });
    } finally {
      clearInterval(watch);
    }
  }

  /**
   * Prepares the data dir of an extra node (Node5...) on the spare ports: its key file (standard
   * seed), the given pool genesis (it must already hold this node's NODE txn), the domain genesis
   * and the config. The node is not started.
   */
  async addNode(index: number, poolGenesisText: string): Promise<{ node: TestNode; keys: ReturnType<typeof deriveNodeKeys> }> {
    const layout = nodeLayout(this.dir, index, this.basePort);
    mkdirSync(layout.dataDir, { recursive: true });
    const keys = await writeKeyFile(join(layout.dataDir, NODE_KEY_FILE), layout.name, new Uint8Array(Buffer.from(nodeSeed(layout.name), 'utf8')));
    writeFileSync(join(layout.dataDir, POOL_GENESIS_FILE), poolGenesisText);
    writeFileSync(join(layout.dataDir, DOMAIN_GENESIS_FILE), readFileSync(join(this.dir, DOMAIN_GENESIS_FILE)));
    this.writeConfig(layout);
    const node = new TestNode(layout, keys.dest);
    this.nodes.push(node);
    return { node, keys };
  }

  /** The node and client ports an extra node `index` gets (from the spare run). */
  portsOf(index: number): { nodePort: number; clientPort: number } {
    const l = nodeLayout(this.dir, index, this.basePort);
    return { nodePort: l.nodePort, clientPort: l.clientPort };
  }

  /** A client (SDK pool handle) on this pool's genesis file, closed with the pool. */
  async client(options: Partial<PoolOptions> = {}): Promise<Pool> {
    const c = await Pool.open(this.genesisFile, { writeTimeoutMs: 30_000, ...options });
    this.clients.push(c);
    return c;
  }

  /** Prints the tail of every node's log on stderr (for failing tests). */
  dumpLogs(headline: string, lines = 25): void {
    const out = [`==== ${headline}`, `==== pool in ${this.dir} (base port ${this.basePort}, nodes run from ${TestPool.binDescription()})`];
    for (const n of this.nodes) out.push(`---- ${n.name} (${n.running ? `running, pid ${n.pid}` : 'not running'}; log ${n.layout.logFile})`, n.logTail(lines));
    console.error(out.join('\n'));
  }

  /** Stops every client and node (SIGTERM, SIGKILL after 15 s) and deletes the data dir. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled(this.clients.map((c) => c.close()));
    await Promise.allSettled(this.nodes.map((n) => n.stop()));
    if (process.env.QUIRE_TEST_KEEP === undefined) rmSync(this.dir, { recursive: true, force: true });
    else console.error(`test pool data kept in ${this.dir}`);
  }
}

function readKeys(dataDir: string): string {
  return (JSON.parse(readFileSync(join(dataDir, NODE_KEY_FILE), 'utf8')) as { dest: string }).dest;
}
