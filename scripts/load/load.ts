// npm run load -- --genesis FILE --rate R --duration S --mix nym|attrib|schema|read|mixed
// A load generator for a Quire pool built on @quire/client: requests pre-signed, open loop at a fixed
// rate (or closed loop with --closed), exact latency percentiles, rejections and timeouts, and a
// check that every acknowledged write is on every node's ledger with equal roots. See docs/load.md.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { PoolLedger } from '@quire/client';
import { checkDataDirs, checkNetwork, devnetNodeDirs, type LedgerCheck } from './lib/ledger-check.js';
import { formatLedgerCheck, formatLoadReport, reportJson } from './lib/report.js';
import { LOAD_LEDGER, runLoad } from './lib/run.js';
import { LoadTarget } from './lib/target.js';
import { MIXES, parseMix } from './lib/workload.js';

function positive(name: string, integer: boolean) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isSafeInteger(n)))
      throw new InvalidArgumentError(`${name} must be a positive ${integer ? 'integer' : 'number'}`);
    return n;
  };
}

interface Cli {
  genesis: string;
  rate?: number;
  closed?: boolean;
  concurrency?: number;
  duration: number;
  mix: string;
  connections: number;
  presign?: number;
  timeout: number;
  check: 'network' | 'data-dirs' | 'none';
  dataDir?: string;
  json?: boolean;
}

const program = new Command('load')
  .description('Drive a Quire pool with pre-signed requests and measure throughput, latency and durability.')
  .requiredOption('--genesis <file>', 'pool genesis file (NODE txns)')
  .option('--rate <n>', 'open loop: requests per second offered', positive('--rate', false))
  .option('--closed', 'closed loop at maximum: --concurrency requests in flight')
  .option('--concurrency <n>', 'closed loop: requests in flight (64); open loop: cap on requests in flight', positive('--concurrency', true))
  .option('--duration <s>', 'seconds of load', positive('--duration', false), 10)
  .option('--mix <mix>', `request mix: ${MIXES.join(' | ')}`, 'nym')
  .option('--connections <n>', 'client connections to every node (nodes rate-limit per connection)', positive('--connections', true), 4)
  .option('--presign <n>', 'closed loop: requests to pre-sign (2,000 per second of duration)', positive('--presign', true))
  .option('--timeout <ms>', 'deadline of one request', positive('--timeout', true), 30_000)
  .option('--check <how>', "after the run: network (GET_TXN to every node), data-dirs (read each node's database) or none", 'network')
  .option('--data-dir <dir>', "with --check data-dirs: the directory holding one data directory per node alias (a devnet's data dir)")
  .option('--json', 'print the report as JSON')
  .showHelpAfterError();

async function main(): Promise<number> {
  const o = program.parse(process.argv).opts<Cli>();
  if (o.rate === undefined && o.closed !== true) throw new InvalidArgumentError('give --rate R (open loop) or --closed (closed loop)');
  if (o.rate !== undefined && o.closed === true) throw new InvalidArgumentError('--rate and --closed exclude each other');
  if (!['network', 'data-dirs', 'none'].includes(o.check)) throw new InvalidArgumentError('--check must be network, data-dirs or none');
  if (o.check === 'data-dirs' && o.dataDir === undefined) throw new InvalidArgumentError('--check data-dirs needs --data-dir');
  const mix = parseMix(o.mix);
  let genesisText: string;
  try {
    genesisText = readFileSync(resolve(o.genesis), 'utf8');
  } catch (e) {
    throw new InvalidArgumentError(`cannot read the genesis file ${o.genesis}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  const log = (l: string): void => void process.stderr.write(`load: ${l}\n`);
  const target = await LoadTarget.open(genesisText, o.connections, { writeTimeoutMs: o.timeout, readTimeoutMs: o.timeout });
  const ac = new AbortController();
  process.once('SIGINT', () => {
    log('interrupted: no new requests; waiting for those in flight');
    ac.abort();
  });
  let check: LedgerCheck | undefined;
  try {
    const report = await runLoad(target, {
      mix,
      ...(o.rate !== undefined ? { rate: o.rate } : {}),
      ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
      ...(o.presign !== undefined ? { presign: o.presign } : {}),
      durationMs: o.duration * 1000,
      requestTimeoutMs: o.timeout,
      log,
      signal: ac.signal,
    });
    const validators = PoolLedger.fromGenesis(genesisText).validators();
    if (o.check === 'data-dirs') {
      log(`checking ${report.acks.length} acknowledged txns in each node's data directory ...`);
      check = await checkDataDirs(
        devnetNodeDirs(
          resolve(o.dataDir!),
          validators.map((v) => v.alias),
        ),
        report.acks,
        LOAD_LEDGER,
        report.unacked,
      );
    } else if (o.check === 'network') {
      log(`checking ${report.acks.length} acknowledged txns on every node with GET_TXN ...`);
      check = await checkNetwork(
        validators
          .filter((v) => v.clientIp !== undefined && v.clientPort !== undefined)
          .map((v) => ({ alias: v.alias, dest: v.dest, host: v.clientIp!, port: v.clientPort! })),
        report.acks,
        { ledgerId: LOAD_LEDGER },
      );
    }
    if (o.json === true) {
      console.log(JSON.stringify(reportJson(report, check), (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2));
    } else {
      for (const l of formatLoadReport(report)) console.log(l);
      if (check !== undefined) for (const l of formatLedgerCheck(check)) console.log(l);
    }
    return check !== undefined && (check.lost > 0 || !check.rootsEqual) ? 2 : 0;
  } finally {
    await target.close();
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`load: ${e instanceof Error ? `${(e as { code?: string }).code ?? e.name}: ${e.message}` : String(e)}`);
    process.exit(1);
  },
);
