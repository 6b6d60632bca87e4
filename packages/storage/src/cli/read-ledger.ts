// read_ledger (formats.md 12.2): prints a node's ledger, one canonical-JSON txn per line. It works
// while the node that owns the data directory is running: LevelDB locks an open database, so when
// the lock is held the tool reads a consistent copy instead (snapshot.ts).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { canonicalJson } from '@quire/common';
import type { KvStore } from '../kv/kv-store.js';
import { openLevelKvStore } from '../kv/level-kv-store.js';
import { Ledger } from '../ledger/ledger.js';
import { snapshotLevelDb, type DbSnapshot } from '../snapshot.js';
import { NODE_DATABASE_DIRNAME, defaultDataDir, findDatabase } from './data-dir.js';

/** Ledger names accepted by --type, with their ids. */
export const LEDGER_TYPES: Readonly<Record<string, number>> = { pool: 0, domain: 1, config: 2, audit: 3 };

/** Where the tool writes; the process streams by default, buffers in tests. */
export interface ReadLedgerIo {
  out(text: string): void | Promise<void>;
  err(text: string): void;
}

interface ReadLedgerOptions {
  type: string;
  frm: number;
  to: number;
  seq_no?: number;
  count?: boolean;
  data_dir?: string;
  config?: string;
}

/** A user-facing failure: one line on stderr and a non-zero exit code. */
// internal control flow, never seen by a caller: this CLI's main prints its message as that one line
class UserError extends Error {}

function positiveInt(name: string) {
  return (value: string): number => {
    if (!/^[0-9]+$/.test(value)) throw new InvalidArgumentError(`${name} must be a positive integer.`);
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`${name} must be a positive integer.`);
    return n;
  };
}

function isLockError(e: unknown): boolean {
  for (let c: unknown = e, depth = 0; c !== undefined && c !== null && depth < 8; depth++) {
    if (typeof c === 'object' && 'code' in c && (c as { code: unknown }).code === 'LEVEL_LOCKED') return true;
    if (c instanceof Error && /\block\b.*already held|LOCK: already held/i.test(c.message)) return true;
    c = typeof c === 'object' ? (c as { cause?: unknown }).cause : undefined;
  }
  return false;
}

interface OpenedDb {
  kv: KvStore;
  close(): Promise<void>;
}

/** Opens the database directly, or a consistent copy of it when a running node holds its lock. */
async function openForReading(path: string): Promise<OpenedDb> {
  try {
    const kv = await openLevelKvStore(path, { createIfMissing: false });
    return { kv, close: () => kv.close() };
  } catch (e) {
    if (!isLockError(e)) throw e;
  }
  const snapshot: DbSnapshot = await snapshotLevelDb(path);
  try {
    const kv = await openLevelKvStore(snapshot.path, { createIfMissing: false });
    return {
      kv,
      close: async () => {
        try {
          await kv.close();
        } finally {
          await snapshot.remove();
        }
      },
    };
  } catch (e) {
    await snapshot.remove();
    throw e;
  }
}

function buildCommand(io: ReadLedgerIo): Command {
  return new Command('read_ledger')
    .description("Print the transactions of a node's ledger, one canonical JSON txn per line.")
    .addOption(new Option('--type <type>', 'ledger to read: pool, domain, config, audit, or the id of a plugin ledger (1000 and above)').makeOptionMandatory())
    .option('--frm <n>', 'first seqNo, inclusive', positiveInt('--frm'), 1)
    .option('--to <n>', 'last seqNo, inclusive', positiveInt('--to'), 100)
    .option('--seq_no <n>', 'print the one txn with this seqNo', positiveInt('--seq_no'))
    .option('--count', 'print the number of txns in the ledger and nothing else')
    .option('--data_dir <dir>', `node data directory (default: $QUIRE_DATA_DIR or ~/.quire, now ${defaultDataDir()})`)
    .option('--config <file>', "the node's JSON config file (quire-node start --config): its dbDir names the database")
    .helpOption('-h, --help', 'show this help')
    .allowExcessArguments(false)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void io.out(s),
      writeErr: (s) => io.err(s),
      outputError: (s, write) => write(s),
    });
}

/** commander's codes of a command line that does not parse: the error, then a usage line and where to read more */
const USAGE_ERRORS = new Set([
  'commander.unknownOption',
  'commander.missingArgument',
  'commander.optionMissingArgument',
  'commander.missingMandatoryOptionValue',
  'commander.excessArguments',
  'commander.invalidArgument',
]);

/** A write to a reader that went away (`read_ledger ... | head -1`): the reader has what it wanted. */
function isClosedPipe(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED';
}

/**
 * The database a node config names: its `dbDir` (the node's default `db` when absent), relative to
 * the data directory unless absolute, exactly as `quire-node start --config` resolves it.
 */
function configuredDatabase(file: string, dataDir: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UserError(`Cannot read config file ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  let cfg: unknown;
  try {
    cfg = JSON.parse(text);
  } catch {
    throw new UserError(`Config file ${file} is not valid JSON`);
  }
  if (cfg === null || typeof cfg !== 'object' || Array.isArray(cfg)) throw new UserError(`Config file ${file} is not a JSON object`);
  const dbDir = (cfg as { dbDir?: unknown }).dbDir ?? NODE_DATABASE_DIRNAME;
  if (typeof dbDir !== 'string' || dbDir.length === 0) throw new UserError(`Config file ${file}: dbDir must be a non-empty string`);
  const path = isAbsolute(dbDir) ? dbDir : join(dataDir, dbDir);
  if (!existsSync(join(path, 'CURRENT'))) throw new UserError(`No ledger database at ${path} (dbDir of ${file})`);
  return path;
}

async function run(opts: ReadLedgerOptions, io: ReadLedgerIo): Promise<void> {
  // a ledger name, or the id of a plugin ledger (1000 to 2^31-1)
  const plugin = /^[1-9][0-9]{3,9}$/.test(opts.type) && Number(opts.type) <= 0x7fff_ffff ? Number(opts.type) : undefined;
  const ledgerId = Object.hasOwn(LEDGER_TYPES, opts.type) ? LEDGER_TYPES[opts.type] : plugin;
  if (ledgerId === undefined) throw new UserError(`Unknown ledger type: ${opts.type}`);
  const dataDir = opts.data_dir ?? defaultDataDir();
  if (!existsSync(dataDir) || !statSync(dataDir).isDirectory()) throw new UserError(`Data directory not found: ${dataDir}`);
  const dbPath = opts.config !== undefined ? configuredDatabase(opts.config, dataDir) : findDatabase(dataDir);
  if (dbPath === undefined) throw new UserError(`No ledger database in ${dataDir}`);

  const db = await openForReading(dbPath);
  try {
    const ledger = await Ledger.open({ ledgerId }, { kv: db.kv });
    const size = ledger.size;
    if (opts.count === true) {
      await io.out(`${size}\n`);
      return;
    }
    if (opts.seq_no !== undefined) {
      const txn = opts.seq_no <= size ? await ledger.get(opts.seq_no) : undefined;
      if (txn === undefined) throw new UserError(`No transactions found for seq_no=${opts.seq_no}`);
      await io.out(`${canonicalJson(txn)}\n`);
      return;
    }
    if (opts.frm > opts.to) throw new UserError(`--frm (${opts.frm}) is greater than --to (${opts.to})`);
    if (opts.frm > size) throw new UserError(`No transactions found in range ${opts.frm}-${opts.to}: the ${opts.type} ledger has ${size}`);
    let chunk = '';
    for await (const [, txn] of ledger.range(opts.frm, Math.min(opts.to, size))) {
      chunk += `${canonicalJson(txn)}\n`;
      if (chunk.length >= 64 * 1024) {
        await io.out(chunk);
        chunk = '';
      }
    }
    if (chunk.length > 0) await io.out(chunk);
  } finally {
    await db.close();
  }
}

function writeToStream(stream: NodeJS.WriteStream): (text: string) => Promise<void> {
  return (text) =>
    new Promise((resolve, reject) => {
      stream.write(text, (err) => (err ? reject(err) : resolve()));
    });
}

const processIo: ReadLedgerIo = {
  out: writeToStream(process.stdout),
  err: (text) => void process.stderr.write(text),
};

/**
 * Runs read_ledger with the arguments after the program name; resolves to the exit code: 0 on
 * success, 1 with a one-line reason on stderr for any user error or unreadable database.
 */
export async function main(argv: string[], io: ReadLedgerIo = processIo): Promise<number> {
  if (io === processIo) process.stdout.prependListener('error', (e) => isClosedPipe(e) && process.exit(0));
  const program = buildCommand(io);
  let opts: ReadLedgerOptions;
  try {
    program.parse(argv, { from: 'user' });
    opts = program.opts<ReadLedgerOptions>();
  } catch (e) {
    if (e instanceof CommanderError) {
      if (USAGE_ERRORS.has(e.code)) io.err(`usage: read_ledger ${program.usage()}\nsee 'read_ledger --help'\n`);
      return e.exitCode === 0 ? 0 : 1;
    }
    throw e;
  }
  try {
    await run(opts, io);
    return 0;
  } catch (e) {
    if (isClosedPipe(e)) return 0;
    // one line, as the quire CLI prints its errors: `error: <reason>`
    const message = e instanceof Error ? e.message : String(e);
    io.err(`error: ${e instanceof UserError ? message : message.split('\n')[0]}\n`);
    return 1;
  }
}
