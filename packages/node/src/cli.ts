// quire-node: `init` writes the node's key file and prints its public keys; `start` runs the
// validator in the foreground, logging JSON lines, until SIGTERM/SIGINT (graceful, exit 0).
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError } from 'commander';
import { defaultDataDir } from '@quire/storage';
import { type NodeConfig, defaultNodeConfig, loadConfigFile, mergeConfig, resolvePath } from './config.js';
import { QuireError } from '@quire/common';
import { parseSeedArgument, publicKeys, readKeyFile, writeKeyFile } from './keys.js';
import { genesisCeremony, parseIdentity } from './genesis-ceremony.js';
import { DOMAIN_GENESIS_FILE, POOL_GENESIS_FILE } from './genesis-gen.js';
import { createLogger } from './logger.js';
import { COMMIT_FAILED_EXIT_CODE, QuireNode, WRITE_FAILED_EXIT_CODE } from './node.js';
import { RESTART_EXIT_CODE } from './upgrade/index.js';
import { NodeError, NodeErrorCode } from './errors.js';

/** Exit code reserved for "restart me" (upgrade / POOL_RESTART): the supervisor starts the node again. */
export { RESTART_EXIT_CODE };
/** Exit code after the node stopped itself because a committed batch could not be written. */
export { WRITE_FAILED_EXIT_CODE };

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** Whose SIGTERM / SIGINT stop `start` (default: this process). */
  signals?: Pick<NodeJS.EventEmitter, 'on' | 'off'>;
}

const stdio: CliIo = { out: (l) => process.stdout.write(l + '\n'), err: (l) => process.stderr.write(l + '\n') };

/** Runs the CLI; resolves with the exit code (for `start`, when the node has stopped). */
export async function main(argv: string[], io: CliIo = stdio): Promise<number> {
  let exitCode = 0;
  const program = new Command('quire-node')
    .description('Quire validator node')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });

  program
    .command('init')
    .description('create the node key file (ed25519 seed; BLS key derived from it) and print the public keys')
    .requiredOption('--data-dir <dir>', 'node data directory')
    .requiredOption('--name <alias>', 'node alias (NODE.data.alias)')
    .option('--seed <seed>', '32 characters, 64 hex digits, or "random"', 'random')
    .option('--keys-file <file>', 'key file, relative to the data directory', defaultNodeConfig.keysFile)
    .option('--node-ip <ip>', "this host's address for the other validators (NODE.data.node_ip), for the genesis ceremony")
    .option('--node-port <port>', 'its port for the other validators (node_port)')
    .option('--client-ip <ip>', "this host's address for clients (client_ip)")
    .option('--client-port <port>', 'its port for clients (client_port)')
    .option('--json', 'print JSON (the input of quire-node genesis --node)')
    .action(
      async (o: {
        dataDir: string;
        name: string;
        seed: string;
        keysFile: string;
        json?: boolean;
        nodeIp?: string;
        nodePort?: string;
        clientIp?: string;
        clientPort?: string;
      }) => {
        const dataDir = resolve(o.dataDir);
        const keys = await writeKeyFile(resolvePath(dataDir, o.keysFile), o.name, parseSeedArgument(o.seed));
        const addresses: Record<string, string | number> = {};
        if (o.nodeIp !== undefined) addresses.node_ip = o.nodeIp;
        if (o.nodePort !== undefined) addresses.node_port = /^\d+$/.test(o.nodePort) ? Number(o.nodePort) : o.nodePort;
        if (o.clientIp !== undefined) addresses.client_ip = o.clientIp;
        if (o.clientPort !== undefined) addresses.client_port = /^\d+$/.test(o.clientPort) ? Number(o.clientPort) : o.clientPort;
        const pub = { ...publicKeys(keys), ...addresses };
        if (o.json === true) io.out(JSON.stringify(pub));
        else for (const [k, v] of Object.entries(pub)) io.out(`${k}: ${v}`);
      },
    );

  const collect = (v: string, all: string[] = []): string[] => [...all, v];
  program
    .command('genesis')
    .description("build the pool's genesis files from every node's `init --json` output and the trustee and steward DIDs, checking them all")
    .requiredOption('--node <file>', 'the output of `quire-node init --json` of one node, with its addresses (repeat, in pool order)', collect)
    .requiredOption('--trustee <did:verkey>', 'a trustee (repeat for more; the first authors the stewards)', collect)
    .requiredOption('--steward <did:verkey>', 'the steward owning the node of the same position (repeat, one per node)', collect)
    .option('--out <dir>', 'where to write pool_transactions_genesis and domain_transactions_genesis', '.')
    .action((o: { node: string[]; trustee: string[]; steward: string[]; out: string }) => {
      const nodes = o.node.map((file) => {
        let init: unknown;
        try {
          init = JSON.parse(readFileSync(file, 'utf8'));
        } catch (e) {
          throw new QuireError('GENESIS_GEN_INVALID', { file }, `genesis generation: ${file}: ${(e as NodeJS.ErrnoException).code ?? 'not valid JSON'}`);
        }
        return { init, source: file };
      });
      const out = genesisCeremony({
        nodes,
        trustees: o.trustee.map((t, i) => parseIdentity(t, `--trustee ${i + 1}`)),
        stewards: o.steward.map((t, i) => parseIdentity(t, `--steward ${i + 1}`)),
      });
      const dir = resolve(o.out);
      mkdirSync(dir, { recursive: true });
      const poolFile = join(dir, POOL_GENESIS_FILE);
      const domainFile = join(dir, DOMAIN_GENESIS_FILE);
      writeFileSync(poolFile, out.pool);
      writeFileSync(domainFile, out.domain);
      io.out(`wrote ${poolFile} (${out.nodes.length} validators) and ${domainFile} (${o.trustee.length} trustees, ${o.steward.length} stewards)`);
      io.out(`copy both files into the data directory of every node (${out.nodes.map((n) => `${n.alias} on ${n.nodeIp}`).join(', ')}), then start each node`);
      io.out(`give ${POOL_GENESIS_FILE} to every client (quire --genesis ${POOL_GENESIS_FILE} ...); ${DOMAIN_GENESIS_FILE} stays with the nodes`);
    });

  program
    .command('start')
    .description('run the validator in the foreground')
    .option('--data-dir <dir>', 'node data directory (default $QUIRE_DATA_DIR or ~/.quire)')
    .option('--config <file>', 'JSON config file merged over the defaults')
    .option('--metrics-port <port>', 'serve Prometheus metrics on 127.0.0.1:<port>/metrics (overrides metricsPort of the config)')
    .option('--log-level <level>', 'pino log level (overrides logLevel of the config)')
    .action(async (o: { dataDir?: string; config?: string; metricsPort?: string; logLevel?: string }) => {
      const dataDir = resolve(o.dataDir ?? defaultDataDir());
      let config: NodeConfig = o.config !== undefined ? await loadConfigFile(resolve(o.config)) : defaultNodeConfig;
      const flags: Record<string, unknown> = {};
      if (o.metricsPort !== undefined) flags.metricsPort = /^\d+$/.test(o.metricsPort) ? Number(o.metricsPort) : o.metricsPort;
      if (o.logLevel !== undefined) flags.logLevel = o.logLevel;
      if (Object.keys(flags).length > 0) config = mergeConfig(config, flags); // validates
      exitCode = await runNode(dataDir, config, io);
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 1;
    io.err(e instanceof QuireError ? e.message : `error: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}

/**
 * Runs the node until SIGTERM / SIGINT (exit 0; during the start, the start is aborted and what it
 * opened closed), a restart request of the upgrade service
 * (POOL_RESTART, an upgrade: RESTART_EXIT_CODE), a batch that could not be written
 * (WRITE_FAILED_EXIT_CODE) or a commit that failed half-way (COMMIT_FAILED_EXIT_CODE), each time after a graceful shutdown bounded by `shutdownTimeoutMs`
 * (exit 1 past it).
 */
async function runNode(dataDir: string, config: NodeConfig, io: CliIo): Promise<number> {
  const name = config.name ?? (await keyFileName(resolvePath(dataDir, config.keysFile)));
  const logger = createLogger({ level: config.logLevel, ...(name !== undefined ? { name } : {}) });
  let requestExit: ((reason: string, code: number) => void) | undefined;
  // an exit asked for before the signal handlers are in place waits for them
  let early: { reason: string; code: number } | undefined;
  const exitFor = (reason: string) => (code: number) => {
    if (requestExit !== undefined) requestExit(reason, code);
    else early ??= { reason, code };
  };
  // One listener per signal for the whole run, installed before the start: during the start a signal aborts it (what
  // it opened is closed, the exit is graceful), after it the node stops. Swapping listeners between the two phases
  // lost a signal that arrived while the last step of the start ran: removing a signal's last listener closes its
  // watcher, and a signal the watcher had received but not yet dispatched went with it.
  const signals = io.signals ?? process;
  const starting = new AbortController();
  let onSignal: (signal: NodeJS.Signals) => void = (signal) => starting.abort(signal);
  const dispatch = (signal: NodeJS.Signals): void => onSignal(signal);
  signals.on('SIGTERM', dispatch);
  signals.on('SIGINT', dispatch);
  try {
    let node: QuireNode;
    try {
      node = await QuireNode.create(
        { dataDir, config },
        { logger, exit: exitFor('restart'), onFatal: (code) => exitFor(code === COMMIT_FAILED_EXIT_CODE ? 'commit-failed' : 'write-failed')(code) },
        { signal: starting.signal },
      );
    } catch (e) {
      if (e instanceof NodeError && e.code === NodeErrorCode.ABORTED && starting.signal.aborted) {
        logger.info({ signal: String(starting.signal.reason) }, 'start aborted');
        return 0;
      }
      logger.fatal({ err: e }, 'node failed to start');
      io.err(e instanceof QuireError ? e.message : `error: ${e instanceof Error ? e.message : String(e)}`);
      return 1;
    }
    return await new Promise<number>((resolveExit) => {
      let stopping = false;
      const stop = (signal: string, code: number): void => {
        if (stopping) return;
        stopping = true;
        logger.info({ signal, code }, 'shutting down');
        const timer = setTimeout(() => {
          logger.error({}, 'shutdown timed out');
          resolveExit(1);
        }, config.shutdownTimeoutMs);
        node.close().then(
          () => {
            clearTimeout(timer);
            resolveExit(code);
          },
          (e: unknown) => {
            clearTimeout(timer);
            logger.error({ err: e }, 'shutdown failed');
            resolveExit(1);
          },
        );
      };
      requestExit = stop;
      // a second signal while stopping gives up waiting for the graceful shutdown
      onSignal = (signal) => {
        if (!stopping) return stop(signal, 0);
        logger.warn({ signal }, 'second signal: exiting without waiting for the shutdown');
        resolveExit(1);
      };
      // a signal that came after the start's last check of its AbortSignal
      if (starting.signal.aborted) stop(String(starting.signal.reason), 0);
      else if (early !== undefined) stop(early.reason, early.code);
    });
  } finally {
    signals.off('SIGTERM', dispatch);
    signals.off('SIGINT', dispatch);
  }
}

/** The alias in the key file, for the logger; undefined when it cannot be read (startup reports that). */
async function keyFileName(file: string): Promise<string | undefined> {
  try {
    return (await readKeyFile(file)).name;
  } catch {
    return undefined;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const code = await main(process.argv.slice(2));
  process.exit(code);
}
