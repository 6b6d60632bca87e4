// Seed sweep over the deterministic consensus simulator, on the real executor and storage (the
// node's ConsensusExecutor over @quire/requests and @quire/storage, real genesis, real signed
// requests); `--stand-in` runs the consensus package's fast in-memory stand-in instead.
//   npm run sim -- --seeds 50 [--nodes 4|7] [--faults MIX] [--start S | --random] [--jobs 2] [--json]
//   npm run sim -- --seed 17 --nodes 4 --faults net          (replay one run)
// While running, prints a progress line to stderr every --progress seeds (seeds done, failures so
// far, elapsed time) and the replay command of each failure as it happens; at the end, one summary
// line on stdout (and, for each failing seed, its violations and replay command); exits non-zero
// on any failure.
import { randomInt } from 'node:crypto';
import { loadavg } from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import { FAULT_MIXES, SWEEP_MIXES, replayCommand, runSweep, type SimulationOptions, type SimulationResult } from '@quire/consensus/sim';
import { SIM_RUNNER } from '../packages/node/src/sim/index.js';

function int(name: string, min: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer >= ${min}`);
    return n;
  };
}

const program = new Command()
  .name('sim')
  .description('Run seeded consensus simulations and check safety, liveness and multi-signatures.')
  .option('--seeds <n>', 'number of seeds to run', int('seeds', 1), 20)
  .option('--start <n>', 'first seed', int('start', 0), 1)
  .option('--random', 'start at a fresh random seed (printed, so that the sweep can be replayed with --start)')
  .option('--seed <n>', 'run exactly this seed (replay)', int('seed', 0))
  .option('--nodes <n>', 'pool size: 4 or 7 (default: alternate)', int('nodes', 1))
  .option('--faults <mix>', `fault mix: ${Object.keys(FAULT_MIXES).join(', ')} (default: cycle)`)
  .option('--mixes <list>', 'comma-separated fault mixes to cycle through (default: the sweep mixes)')
  .option('--stop-on-failure', 'stop at the first failing seed (mutation gate)')
  .option('--skip <list>', 'comma-separated runs to leave out, as seed/nodes/mix')
  .option('--requests <n>', 'client requests per run', int('requests', 0))
  .option('--jobs <n>', 'processes running seeds in parallel', int('jobs', 1), 1)
  .option('--stand-in', "the consensus package's in-memory stand-in executor instead of the real one")
  .option('--json', 'machine-readable output')
  .option('--progress <n>', 'progress line every n seeds (0: none)', int('progress', 0), 100)
  .option('--quiet', 'no progress output');

program.parse();
const o = program.opts<{
  seeds: number;
  start: number;
  random?: boolean;
  seed?: number;
  nodes?: number;
  faults?: string;
  mixes?: string;
  stopOnFailure?: boolean;
  skip?: string;
  requests?: number;
  jobs: number;
  progress: number;
  standIn?: boolean;
  json?: boolean;
  quiet?: boolean;
}>();

const cycle: readonly string[] = o.mixes !== undefined ? o.mixes.split(',').filter((m) => m !== '') : SWEEP_MIXES;
for (const m of [...(o.faults !== undefined ? [o.faults] : []), ...cycle]) {
  if (FAULT_MIXES[m] === undefined) {
    console.error(`sim: unknown fault mix "${m}" (known: ${Object.keys(FAULT_MIXES).join(', ')})`);
    process.exit(2);
  }
}
if (o.nodes !== undefined && o.nodes !== 4 && o.nodes !== 7) {
  console.error('sim: --nodes must be 4 or 7');
  process.exit(2);
}

const start = o.random === true ? randomInt(1, 2 ** 31 - o.seeds) : o.start;
if (o.random === true && o.seed === undefined)
  process.stderr.write(`sim: seeds ${start}..${start + o.seeds - 1} (replay: --start ${start} --seeds ${o.seeds})\n`);
const seeds = o.seed !== undefined ? [o.seed] : Array.from({ length: o.seeds }, (_, i) => start + i);
// n alternates 4 / 7 and shifts by one every cycle of the mixes, so that every mix runs at both sizes
// whether the number of mixes is odd or even
const skip = new Set((o.skip ?? '').split(',').filter((x) => x !== ''));
const runs: SimulationOptions[] = seeds
  .map((seed, i) => ({
    seed,
    nodes: o.nodes ?? ((i + Math.floor(i / cycle.length)) % 2 === 0 ? 4 : 7),
    faults: o.faults ?? cycle[i % cycle.length]!,
    ...(o.requests !== undefined ? { requests: o.requests } : {}),
  }))
  .filter((r) => !skip.has(`${r.seed}/${r.nodes}/${r.faults}`));
const started = Date.now();
const seconds = (): string => ((Date.now() - started) / 1000).toFixed(1);
const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const replay = (r: SimulationResult): string => `${replayCommand(r)}${o.standIn === true ? ' --stand-in' : ''}`;
const progress = !o.quiet && o.progress > 0 && runs.length > 1;
let failures = 0;
const stop = new AbortController();
const results: SimulationResult[] = await runSweep(runs, {
  jobs: o.jobs,
  ...(o.standIn === true ? {} : { runner: SIM_RUNNER }),
  ...(o.stopOnFailure === true ? { signal: stop.signal } : {}),
  onResult: (r, done) => {
    if (!r.ok) {
      failures++;
      stop.abort();
      if (!o.quiet) process.stderr.write(`sim: seed ${r.seed} failed (${r.violations[0] ?? 'no violation reported'}); replay: ${replay(r)}\n`);
    }
    if (progress && (done % o.progress === 0 || done === runs.length)) {
      process.stderr.write(`sim: ${done}/${runs.length} seeds done, ${failures} failed, ${seconds()} s, load average ${load()}\n`);
    }
  },
});

const failed = results.filter((r) => !r.ok);
const elapsed = (Date.now() - started) / 1000;
if (o.json) {
  console.log(JSON.stringify({ runs: results.length, failed: failed.length, seconds: elapsed, results }, null, 1));
} else {
  const batches = results.reduce((a, r) => a + r.orderedBatches, 0);
  const reqs = results.reduce((a, r) => a + r.orderedRequests, 0);
  const sum = (f: (a: NonNullable<SimulationResult['adversary']>) => number): number =>
    results.reduce((a, r) => a + (r.adversary !== undefined ? f(r.adversary) : 0), 0);
  const runsWith = (f: (a: NonNullable<SimulationResult['adversary']>) => number): number =>
    results.filter((r) => r.adversary !== undefined && f(r.adversary) > 0).length;
  const summary =
    `sim (${o.standIn === true ? 'stand-in' : 'real'} executor): ${results.length} runs, ${results.length - failed.length} passed, ${failed.length} failed; ` +
    `${batches} batches and ${reqs} requests ordered (per honest node, summed); ${results.filter((r) => r.maxView > 0).length} runs changed view; ` +
    `${elapsed.toFixed(1)} s, ${o.jobs} job(s), load average ${load()}`;
  console.log(
    `adversary: ${results.reduce((a, r) => a + r.maxView, 0)} view changes (highest view per run, summed); ` +
      `${sum((a) => a.crashStops)} crash-stops in ${runsWith((a) => a.crashStops)} runs; ${sum((a) => a.tornWrites)} torn writes in ${runsWith((a) => a.tornWrites)} runs; ` +
      `${sum((a) => a.restarts)} restarts; ${sum((a) => a.equivocations)} equivocating messages in ${runsWith((a) => a.equivocations)} runs; ` +
      `${sum((a) => a.usurpedPrePrepares)} PRE-PREPAREs from non-primaries; ${sum((a) => a.floodMessages)} flood messages in ${runsWith((a) => a.floodMessages)} runs; ` +
      `${sum((a) => a.pauses)} pauses; largest honest core footprint ${Math.max(0, ...results.map((r) => r.adversary?.maxFootprint ?? 0))} entries`,
  );
  console.log(summary);
  for (const r of failed) {
    console.log(`FAIL seed ${r.seed} nodes ${r.nodes} faults ${r.faults}:`);
    for (const v of r.violations.slice(0, 8)) console.log(`  ${v}`);
    console.log(`  replay: ${replay(r)}`);
  }
  // the summary stays the last line
  if (failed.length > 0) console.log(summary);
}
process.exit(failed.length > 0 ? 1 : 0);
