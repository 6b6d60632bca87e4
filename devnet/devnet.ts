// A local development pool.
//   npm run devnet                          start (creating it on first run), wait until it orders, stay in the foreground
//   npm run devnet -- --detach              the same in the background
//   npm run devnet -- status [--json]       what is running
//   npm run devnet -- stop                  stop a detached (or foreground) devnet
//   npm run devnet -- reset                 delete the devnet's data (keys, genesis, ledgers, logs)
// Options: --nodes N (4), --base-port P (9701; a created devnet remembers its own), --data-dir DIR (devnet/.data),
// --timeout SEC (180), --metrics [PORT] (Prometheus on PORT, PORT+1, ... per node), --observer N (1).
// Ready means "the pool orders": a verified read carrying a multi-signature newer than the start; nothing
// is written into any ledger (a fresh devnet's ledgers are its genesis files).
import { spawn } from 'node:child_process';
import { existsSync, openSync, closeSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, relative, resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { DEFAULT_BASE_PORT, DEFAULT_DATA_DIR, DEFAULT_NODE_COUNT, MAX_NODE_COUNT, REPO_ROOT, SUPERVISOR_LOG, maxFaulty, poolLayout } from './lib/layout.js';
import { POOL_GENESIS_FILE, RESTART_EXIT_CODE, TRUSTEE_SEED } from './lib/node-api.js';
import { nodeArgv } from './lib/node-command.js';
import { DevnetSetupError, devnetObservers, ensureDevnet, readSetup, writeNodeConfigs } from './lib/setup.js';
import { isAlive, readState, removeState, writeState } from './lib/state.js';
import type { DevnetState, DevnetStatus } from './lib/state.js';
import { Supervisor } from './lib/supervisor.js';
import { gatewayUrl, startDevnetGateway } from './lib/gateway.js';
import type { SupervisorEvent } from './lib/supervisor.js';
import { OrderingTimeoutError } from './lib/wait-ordering.js';
import { waitForReady } from './lib/wait-ready.js';

class UserError extends Error {}

function int(name: string, min: number, max: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}`);
    return n;
  };
}

function show(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel.startsWith('..') ? path : rel;
}

function say(line: string): void {
  console.log(`devnet: ${line}`);
}

function portFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.once('error', () => res(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => res(true)));
  });
}

interface StartOptions {
  nodes: number;
  basePort: number;
  dataDir: string;
  timeout: number;
  detach?: boolean;
  supervised?: boolean;
  nodeBin: 'auto' | 'source' | 'build';
  /** first metrics port (node i serves on metrics + i - 1); absent: metrics off */
  metrics?: number;
  /** observers Obs1..ObsN admitted to the ordered-batch topic (quire follow) */
  observer: number;
  /** the HTTP gateway (docs/gateway.md); false with --no-gateway */
  gateway?: boolean;
}

/** The metrics port of node `index` (1-based), when metrics are on. */
function metricsPortOf(o: StartOptions, index: number): number | undefined {
  return o.metrics === undefined ? undefined : o.metrics + index - 1;
}

function checkNotRunning(dataDir: string): void {
  const st = readState(dataDir);
  if (st !== undefined && isAlive(st.pid))
    throw new UserError(`a devnet is already running in ${show(dataDir)} (pid ${st.pid}); stop it with "npm run devnet -- stop"`);
}

async function prepare(o: StartOptions): Promise<void> {
  checkNotRunning(o.dataDir);
  let created: boolean;
  try {
    ({ created } = await ensureDevnet(o.dataDir, o.nodes, o.basePort));
  } catch (err) {
    if (err instanceof DevnetSetupError) throw new UserError(err.message);
    throw err;
  }
  if (created) say(`created a ${o.nodes}-node pool in ${show(o.dataDir)} (keys from the standard local seeds)`);
  const layout = poolLayout(o.dataDir, o.nodes, o.basePort);
  for (const n of layout) {
    const metricsPort = metricsPortOf(o, n.index);
    for (const port of [n.nodePort, n.clientPort, ...(metricsPort !== undefined ? [metricsPort] : [])]) {
      if (!(await portFree(port)))
        throw new UserError(
          `port ${port} (${n.name}) is in use; stop whatever holds it or choose other ports with --base-port${o.metrics !== undefined ? ' or --metrics PORT' : ''}`,
        );
    }
  }
  // every start writes the node configs: this start's flags decide metrics and observers
  const observers = devnetObservers(o.observer).map(({ name, dest }) => ({ name, dest }));
  writeNodeConfigs(layout, (n) => ({ ...(metricsPortOf(o, n.index) !== undefined ? { metricsPort: metricsPortOf(o, n.index)! } : {}), observers }));
}

function printUsage(o: StartOptions, state: DevnetState): void {
  const genesis = state.poolGenesis;
  console.log('');
  console.log(`The devnet is ordering: ${o.nodes} nodes (f = ${maxFaulty(o.nodes)}).`);
  console.log(`  pool genesis file : ${genesis}`);
  console.log(`  trustee           : seed ${TRUSTEE_SEED} (DID V4SGRU86Z58d6TV7PBUe6f)`);
  console.log(`  stewards          : seeds 000000000000000000000000Steward1 .. Steward${o.nodes}`);
  state.processes.forEach((p, k) => {
    const metricsPort = metricsPortOf(o, k + 1);
    console.log(
      `  ${p.name.padEnd(6)}            : client 127.0.0.1:${p.clientPort}, node port ${p.nodePort}, log ${show(p.logFile)}${metricsPort !== undefined ? `, metrics http://127.0.0.1:${metricsPort}/metrics` : ''}`,
    );
  });
  console.log('');
  if (o.gateway !== false)
    console.log(
      `HTTP gateway (indy-vdr-proxy API, did:indy resolution; the ledger explorer in a browser): ${gatewayUrl(o.basePort)}  (docs/gateway.md, docs/explorer.md)`,
    );
  console.log('Point a client at the genesis file, e.g. with the quire CLI or SDK of @quire/client:');
  console.log(`  npx quire --genesis ${show(genesis)} --seed ${TRUSTEE_SEED} nym --dest <DID> --verkey <verkey>`);
  const observers = devnetObservers(o.observer);
  if (observers.length > 0) {
    console.log(`Follow the ordered batches (observers ${observers.map((x) => x.name).join(', ')}):`);
    console.log(`  npx quire --genesis ${show(genesis)} --seed ${observers[0]!.seed} follow`);
  } else console.log('No observer: "quire follow" needs one; start with --observer 1.');
  if (o.metrics === undefined) console.log('Metrics are off; start with --metrics [PORT] to serve them.');
  console.log('Docs: docs/devnet.md.');
}

/** Runs the pool in this process until a signal; resolves with the exit code. */
async function supervise(o: StartOptions): Promise<number> {
  const layout = poolLayout(o.dataDir, o.nodes, o.basePort);
  const state: DevnetState = {
    pid: process.pid,
    status: 'starting',
    startedAt: new Date().toISOString(),
    nodes: o.nodes,
    basePort: o.basePort,
    dataDir: o.dataDir,
    poolGenesis: join(o.dataDir, POOL_GENESIS_FILE),
    processes: [],
  };
  const save = (status?: DevnetStatus, message?: string): void => {
    if (status !== undefined) state.status = status;
    if (message !== undefined) state.message = message;
    else if (status !== undefined) delete state.message;
    state.processes = supervisor.status().map((p, k) => ({ ...p, nodePort: layout[k]!.nodePort, clientPort: layout[k]!.clientPort }));
    writeState(o.dataDir, state);
  };
  const onEvent = (e: SupervisorEvent): void => {
    switch (e.kind) {
      case 'started':
        say(`${e.name} started (pid ${e.pid})`);
        break;
      case 'restart-requested':
        say(`${e.name} asked to be restarted (upgrade or POOL_RESTART); restarting it`);
        break;
      case 'crashed':
        say(`${e.name} crashed (exit code ${e.code}${e.signal ? `, signal ${e.signal}` : ''}); restarting in ${Math.round(e.retryInMs / 1000)} s`);
        break;
      case 'gave-up':
        say(`${e.name} crashed ${e.crashes} times right after starting; giving up on it. See ${show(e.logFile)}`);
        break;
      case 'exited':
        say(`${e.name} exited normally; not restarting it`);
        break;
      case 'stopped':
        break;
    }
    save();
  };
  const supervisor: Supervisor = new Supervisor(
    layout.map((n) => ({ name: n.name, argv: nodeArgv(n.dataDir, n.configFile, o.nodeBin), cwd: REPO_ROOT, logFile: n.logFile })),
    { restartExitCode: RESTART_EXIT_CODE },
    (e) => onEvent(e),
  );
  save();
  const abort = new AbortController();
  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((r) => (resolveDone = r));
  let shuttingDown = false;
  const shutdown = async (code: number): Promise<void> => {
    if (shuttingDown) return;
    shuttingDown = true;
    abort.abort();
    await gateway?.close();
    say('stopping every node ...');
    save('stopping');
    await supervisor.stop();
    removeState(o.dataDir);
    say('stopped');
    resolveDone(code);
  };
  let signals = 0;
  const onSignal = (): void => {
    signals++;
    if (signals === 1) void shutdown(0);
    else if (signals === 3) {
      say('forced exit: node processes may be left running; "npm run devnet -- stop" cleans up');
      process.exit(130);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);

  let gateway: Awaited<ReturnType<typeof startDevnetGateway>> | undefined;
  const sinceSec = Math.floor(Date.now() / 1000);
  supervisor.start();
  say(`waiting until the pool orders (a multi-signature newer than this start, read and verified; nothing is written) (up to ${o.timeout} s) ...`);
  try {
    const r = await waitForReady(state.poolGenesis, { sinceSec, timeoutMs: o.timeout * 1000, signal: abort.signal });
    if (o.gateway !== false) {
      try {
        gateway = await startDevnetGateway(state.poolGenesis, o.basePort);
      } catch (e) {
        say(`the HTTP gateway did not start (${(e as Error).message}); the pool runs without it`);
        o = { ...o, gateway: false };
      }
    }
    save('ready');
    say(
      `ordering: a multi-signature of ${r.participants.join(', ')} made at ${new Date(r.timestamp * 1000).toISOString()}, read from ${r.answeredBy} and verified, ${(r.elapsedMs / 1000).toFixed(1)} s after the start`,
    );
    printUsage(o, state);
    say(o.supervised ? 'running in the background; stop it with "npm run devnet -- stop"' : 'running; press Ctrl-C to stop every node');
  } catch (err) {
    if (shuttingDown) return done;
    const perNode = err instanceof OrderingTimeoutError ? err.perNode : {};
    const lines = Object.entries(perNode).map(([name, note]) => `  ${name}: ${note}`);
    const logs = layout.map((n) => show(n.logFile)).join(', ');
    const message = `${(err as Error).message}. Node logs: ${logs}`;
    save('not-ordering', message);
    say(message);
    for (const l of lines) console.log(l);
    say('the nodes keep running so that you can look at them; Ctrl-C (or "npm run devnet -- stop") stops them');
  }
  const watch = setInterval(() => {
    if (supervisor.allDown && !shuttingDown) {
      say('every node has stopped or been given up on');
      save('failed', 'every node has stopped or been given up on');
      void shutdown(1);
    }
  }, 1000);
  const code = await done;
  clearInterval(watch);
  return code;
}

/** Starts a supervisor in the background and waits until it reports ready (or not). */
async function detach(o: StartOptions): Promise<number> {
  const log = join(o.dataDir, SUPERVISOR_LOG);
  const fd = openSync(log, 'a');
  const args = [
    ...process.execArgv,
    process.argv[1]!,
    'start',
    '--supervised',
    '--nodes',
    String(o.nodes),
    '--base-port',
    String(o.basePort),
    '--data-dir',
    o.dataDir,
    '--timeout',
    String(o.timeout),
    '--node-bin',
    o.nodeBin,
    '--observer',
    String(o.observer),
    ...(o.metrics !== undefined ? ['--metrics', String(o.metrics)] : []),
    ...(o.gateway === false ? ['--no-gateway'] : []),
  ];
  const child = spawn(process.execPath, args, { cwd: process.cwd(), detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  child.unref();
  say(`started in the background (supervisor pid ${child.pid}, log ${show(log)}); waiting until the pool orders ...`);
  const deadline = Date.now() + (o.timeout + 30) * 1000;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    const st = readState(o.dataDir);
    if (st !== undefined && st.pid === child.pid && st.status === 'ready') {
      printUsage(o, st);
      say('stop it with "npm run devnet -- stop"');
      return 0;
    }
    if (st !== undefined && st.pid === child.pid && (st.status === 'not-ordering' || st.status === 'failed')) {
      say(st.message ?? 'the pool is not ordering');
      say('the nodes keep running; "npm run devnet -- stop" stops them');
      return 1;
    }
    if (!isAlive(child.pid)) {
      say(`the background supervisor exited; see ${show(log)}`);
      return 1;
    }
  }
  say(`no answer from the background supervisor; see ${show(log)}`);
  return 1;
}

async function start(o: StartOptions): Promise<number> {
  if (!o.supervised) await prepare(o);
  if (o.detach && !o.supervised) return detach(o);
  const code = await supervise(o);
  // client sessions of the ordering probe may hold handles for a moment; the pool is down, so leave
  process.exit(code);
}

async function stop(dataDir: string): Promise<number> {
  const st = readState(dataDir);
  if (st === undefined) {
    say(`no devnet is running in ${show(dataDir)}`);
    return 0;
  }
  if (isAlive(st.pid)) {
    process.kill(st.pid, 'SIGTERM');
    say(`stopping (supervisor pid ${st.pid}) ...`);
    const deadline = Date.now() + 60_000;
    while (isAlive(st.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    if (isAlive(st.pid)) {
      say(`the supervisor (pid ${st.pid}) did not stop within 60 s`);
      return 1;
    }
  }
  // a supervisor that died without cleaning up leaves its nodes behind
  for (const p of st.processes) {
    if (p.pid !== undefined && isAlive(p.pid)) {
      say(`${p.name} (pid ${p.pid}) outlived its supervisor; stopping it`);
      process.kill(p.pid, 'SIGTERM');
    }
  }
  removeState(dataDir);
  say('stopped');
  return 0;
}

function status(dataDir: string, json: boolean): number {
  const st = readState(dataDir);
  const setup = readSetup(dataDir);
  const running = st !== undefined && isAlive(st.pid);
  if (json) {
    console.log(JSON.stringify({ dataDir, created: setup !== undefined, running, ...(running ? { state: st } : {}) }, null, 2));
    return running ? 0 : 3;
  }
  if (setup === undefined) {
    console.log(`no devnet in ${show(dataDir)} (npm run devnet creates one)`);
    return 3;
  }
  if (!running || st === undefined) {
    console.log(`devnet in ${show(dataDir)}: ${setup.nodes} nodes, base port ${setup.basePort}; not running`);
    return 3;
  }
  console.log(`devnet in ${show(dataDir)}: ${st.status}${st.message ? ` (${st.message})` : ''}; supervisor pid ${st.pid}, since ${st.startedAt}`);
  console.log(`pool genesis: ${show(st.poolGenesis)}`);
  for (const p of st.processes) {
    const alive = p.pid !== undefined && isAlive(p.pid);
    console.log(
      `  ${p.name.padEnd(7)} ${(alive ? 'running' : p.state).padEnd(10)} pid ${String(p.pid ?? '-').padEnd(8)} client ${p.clientPort}  node ${p.nodePort}  restarts ${p.restarts}  crashes ${p.crashes}`,
    );
  }
  return 0;
}

function reset(dataDir: string): number {
  checkNotRunning(dataDir);
  if (!existsSync(dataDir)) {
    say(`nothing to reset in ${show(dataDir)}`);
    return 0;
  }
  rmSync(dataDir, { recursive: true, force: true });
  say(`deleted ${show(dataDir)}; the next start creates a fresh pool`);
  return 0;
}

const program = new Command()
  .name('devnet')
  .description('Run a local Quire pool of validator nodes (keys and genesis from the standard local seeds).')
  .option('--data-dir <dir>', 'where the devnet keeps keys, genesis, ledgers and logs', DEFAULT_DATA_DIR)
  .showHelpAfterError();

function dataDirOf(cmd: Command): string {
  return resolve(cmd.optsWithGlobals<{ dataDir: string }>().dataDir);
}

program
  .command('start', { isDefault: true })
  .description('start the pool (created on first run), wait until it orders, and stay in the foreground')
  .option('--nodes <n>', 'number of validator nodes', int('--nodes', 1, MAX_NODE_COUNT), DEFAULT_NODE_COUNT)
  .option('--base-port <port>', 'node i listens on base+2(i-1) (nodes) and base+2(i-1)+1 (clients)', int('--base-port', 1024, 65000), DEFAULT_BASE_PORT)
  .option('--timeout <seconds>', 'how long to wait for the pool to order', int('--timeout', 1, 3600), 180)
  .option('--detach', 'run in the background and return once the pool orders')
  .option('--metrics [port]', 'serve Prometheus metrics: node i on port+i-1 (default port: base port + 1000)', int('--metrics', 1024, 65000))
  .option('--observer <n>', 'admit observers Obs1..ObsN to the ordered-batch topic (quire follow with seed 000...Observer<i>)', int('--observer', 0, 16), 1)
  .addOption(
    new Command()
      .createOption('--node-bin <mode>', 'auto (build when up to date, else sources), source or build')
      .choices(['auto', 'source', 'build'])
      .default('auto'),
  )
  .option('--no-gateway', 'do not start the HTTP gateway (base port - 701: :9000 by default)')
  .addOption(new Command().createOption('--supervised', 'internal: the background supervisor').hideHelp())
  .action(async (opts: Omit<StartOptions, 'dataDir' | 'metrics'> & { metrics?: number | true }, cmd: Command) => {
    const dataDir = dataDirOf(cmd);
    // a created devnet remembers its node count and base port: they are taken from it unless given
    const setup = readSetup(dataDir);
    const nodes = setup !== undefined && cmd.getOptionValueSource('nodes') === 'default' ? setup.nodes : opts.nodes;
    const basePort = setup !== undefined && cmd.getOptionValueSource('basePort') === 'default' ? setup.basePort : opts.basePort;
    const { metrics: metricsFlag, ...rest } = opts;
    const metrics = metricsFlag === true ? basePort + 1000 : metricsFlag;
    process.exitCode = await start({ ...rest, nodes, basePort, dataDir, ...(metrics !== undefined ? { metrics } : {}) });
  });

program
  .command('stop')
  .description('stop a running devnet')
  .action(async (_opts: unknown, cmd: Command) => {
    process.exitCode = await stop(dataDirOf(cmd));
  });

program
  .command('status')
  .description('show whether the devnet runs, and its nodes (exit code 3 when not running)')
  .option('--json', 'machine-readable output')
  .action((opts: { json?: boolean }, cmd: Command) => {
    process.exitCode = status(dataDirOf(cmd), opts.json === true);
  });

program
  .command('reset')
  .description('delete the devnet data (refused while it runs)')
  .action((_opts: unknown, cmd: Command) => {
    process.exitCode = reset(dataDirOf(cmd));
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof UserError) console.error(`devnet: ${err.message}`);
  else console.error(`devnet: ${(err as Error).stack ?? String(err)}`);
  process.exitCode = 1;
});
