// `npm run chaos -- [--seed S] [--minutes M] [--nodes N] [--clients C] [--loopback] [--kinds a,b] [--json FILE]`
//
// A pool of real quire-node processes, each in its own Linux network namespace with its own
// address (the client workload in another), perturbed by a seeded schedule of faults while several
// SDK clients write and read, then checked black-box: no acknowledged write lost, no fork, no stale
// or unverified read, liveness back after each heal, memory bounded. Prints the seed (`--seed S`
// replays the schedule), a summary table, and writes a JSON report. Needs root, `ip` and `nft`;
// `--loopback` runs the process faults only, on 127.0.0.1, without namespaces.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { cleanupStale, netnsUnavailableReason } from './netns.js';
import { runChaos } from './run.js';
import { summary } from './summary.js';
import { ALL_KINDS, type PerturbationKind, randomSeed } from './schedule.js';

const HELP = `Usage: npm run chaos -- [options]

  --seed S            replay the schedule of seed S (default: random, printed)
  --minutes M         how long to perturb (default 5)
  --nodes N           validators (default 4; f = floor((N-1)/3))
  --clients C         SDK clients of the workload (default 3)
  --concurrency K     writes in flight per client (default 2)
  --kinds a,b,...     perturbation kinds to draw from (default all: ${ALL_KINDS.join(', ')})
  --loopback          no namespaces: nodes on 127.0.0.1, process faults only
  --recovery-bound S  liveness must return within S seconds of each heal (default 60)
  --catchup-bound S   every node must catch up within S seconds of each heal (default 120)
  --rss-limit MB      a node above this resident size fails the run (default 1536)
  --setup-timeout S   time the pool gets to start and order the setup writes (default 600)
  --json FILE         the JSON report (default chaos-report-<seed>.json in the current directory)
  --keep              keep the data directory (always kept when the run fails)
  --cleanup           only remove namespaces left by killed runs, then exit
  -h, --help
`;

function fail(msg: string, code = 2): never {
  console.error(`chaos: ${msg}`);
  process.exit(code);
}

function num(name: string, v: string | undefined, dflt: number, min: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) fail(`--${name} must be a number >= ${min}, got "${v}"`);
  return n;
}

async function main(): Promise<void> {
  let a;
  try {
    a = parseArgs({
      options: {
        seed: { type: 'string' },
        minutes: { type: 'string' },
        nodes: { type: 'string' },
        clients: { type: 'string' },
        concurrency: { type: 'string' },
        kinds: { type: 'string' },
        loopback: { type: 'boolean' },
        'recovery-bound': { type: 'string' },
        'catchup-bound': { type: 'string' },
        'rss-limit': { type: 'string' },
        'setup-timeout': { type: 'string' },
        json: { type: 'string' },
        keep: { type: 'boolean' },
        cleanup: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (e) {
    fail(`${(e as Error).message}\n${HELP}`);
  }
  if (a.help === true) {
    console.log(HELP);
    return;
  }
  if (a.cleanup === true) {
    console.log(`removed: ${cleanupStale().join(' ') || '(nothing)'}`);
    return;
  }
  const loopback = a.loopback === true;
  if (!loopback) {
    const why = netnsUnavailableReason();
    if (why !== undefined) fail(`cannot make network namespaces: ${why}.\nThe loopback variant needs neither root nor namespaces: npm run chaos -- --loopback`);
  }
  const kinds = a.kinds?.split(',').map((k) => k.trim()) as PerturbationKind[] | undefined;
  for (const k of kinds ?? []) if (!(ALL_KINDS as readonly string[]).includes(k)) fail(`unknown kind "${k}" (known: ${ALL_KINDS.join(', ')})`);
  const seed = a.seed !== undefined ? num('seed', a.seed, 0, 1) : randomSeed();
  const minutes = num('minutes', a.minutes, 5, 0.2);
  const nodes = num('nodes', a.nodes, 4, 4);
  const same = [
    a.nodes !== undefined ? ` --nodes ${a.nodes}` : '',
    a.clients !== undefined ? ` --clients ${a.clients}` : '',
    a.concurrency !== undefined ? ` --concurrency ${a.concurrency}` : '',
    kinds !== undefined ? ` --kinds ${kinds.join(',')}` : '',
  ].join('');
  console.log(`chaos: seed ${seed} (replay: npm run chaos -- --seed ${seed} --minutes ${minutes}${loopback ? ' --loopback' : ''}${same})`);
  const ctl = new AbortController();
  let interrupts = 0;
  const onSignal = (sig: string): void => {
    interrupts++;
    if (interrupts === 1) {
      console.error(`chaos: ${sig}: healing, stopping and checking (again to abandon the checks)`);
      ctl.abort();
    } else {
      console.error('chaos: abandoned; the namespaces of this run are removed by the next run or by --cleanup');
      process.exit(130);
    }
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  const t0 = Date.now();
  const report = await runChaos({
    seed,
    minutes,
    nodes,
    clients: num('clients', a.clients, 3, 1),
    concurrency: num('concurrency', a.concurrency, 2, 1),
    loopback,
    ...(kinds !== undefined ? { kinds } : {}),
    recoveryBoundMs: num('recovery-bound', a['recovery-bound'], 60, 1) * 1000,
    catchupBoundMs: num('catchup-bound', a['catchup-bound'], 120, 1) * 1000,
    rssLimitMb: num('rss-limit', a['rss-limit'], 1536, 64),
    setupTimeoutMs: num('setup-timeout', a['setup-timeout'], 600, 10) * 1000,
    keep: a.keep === true,
    log: (line) => console.log(`[${((Date.now() - t0) / 1000).toFixed(0).padStart(5)} s] ${line}`),
    signal: ctl.signal,
  });
  const file = a.json ?? `chaos-report-${seed}.json`;
  writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
  console.log('\n' + summary(report));
  console.log(`\nJSON report: ${file}${report.dataDir !== null ? `\ndata and node logs kept in ${report.dataDir}` : ''}`);
  process.exit(report.ok ? 0 : 1);
}

main().catch((e: unknown) => fail(`${(e as Error).stack ?? String(e)}`, 1));
