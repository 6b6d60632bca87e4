// The mutation gate (issue #15): plants each bug of the catalogue (catalogue.ts), one at a time, in
// a temporary copy of the repository (never in the work tree), runs a bounded simulator sweep of
// the mixes meant to catch it with the copy's code, and prints which were caught. A mutant's
// failing seed counts only when the same seed passes without the mutation (checked on the
// unmutated copy; a seed that fails there too is skipped and the sweep goes on). An entry may also
// name scenario tests (mocha files: deterministic simulator runs or scripted cores built for that
// mutation), run first with the mutant: a test that fails with it and passes without it catches it.
//   npm run mutate [-- --only id,id] [--jobs 2] [--seeds N] [--from-worktree] [--keep] [--json] [--sweep-only]
// Exits non-zero when a mutation that changes behaviour survives.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { MUTATIONS, type Mutation } from './catalogue.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function int(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`${name} must be a positive integer`);
    return n;
  };
}

const program = new Command()
  .name('mutate')
  .description('Plant each bug of the catalogue in a copy of the repository and check that a bounded simulator sweep catches it.')
  .option('--only <ids>', 'comma-separated mutation ids')
  .option('--jobs <n>', 'simulation processes per sweep', int('jobs'), 2)
  .option('--seeds <n>', 'seeds per mutation (default: the catalogue’s, 8)', int('seeds'))
  .option('--start <n>', 'first seed', int('start'), 1)
  .option('--from-worktree', 'copy the work tree as it is (default: the committed HEAD)')
  .option('--keep', 'keep the temporary copy')
  .option('--sweep-only', 'skip the scenario tests (what the sweeps alone catch)')
  .option('--json', 'machine-readable output');
program.parse();
const o = program.opts<{
  only?: string;
  jobs: number;
  seeds?: number;
  start: number;
  fromWorktree?: boolean;
  keep?: boolean;
  json?: boolean;
  sweepOnly?: boolean;
}>();

const only = o.only?.split(',').filter((x) => x !== '');
const selected = MUTATIONS.filter((m) => only === undefined || only.includes(m.id));
if (only !== undefined && selected.length !== only.length) {
  console.error(`mutate: unknown mutation id(s): ${only.filter((id) => !MUTATIONS.some((m) => m.id === id)).join(', ')}`);
  process.exit(2);
}

/** A copy of the repository with its own node_modules links (workspace packages point into the copy). */
function makeCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'quire-mutate-'));
  if (o.fromWorktree === true) {
    for (const entry of ['packages', 'scripts', 'package.json', 'tsconfig.base.json', 'tsconfig.json', '.mocharc.json']) {
      cpSync(join(ROOT, entry), join(dir, entry), { recursive: true, filter: (src) => !/[/\\](node_modules|dist)([/\\]|$)/.test(src) });
    }
  } else {
    const tar = execFileSync(
      'git',
      ['-C', ROOT, 'archive', '--format=tar', 'HEAD', 'packages', 'scripts', 'package.json', 'tsconfig.base.json', 'tsconfig.json', '.mocharc.json'],
      { maxBuffer: 1 << 30 },
    );
    execFileSync('tar', ['-x', '-C', dir], { input: tar });
  }
  const nm = join(dir, 'node_modules');
  mkdirSync(join(nm, '@quire'), { recursive: true });
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    if (entry === '@quire' || entry === '.bin' || entry.startsWith('.package-lock')) continue;
    symlinkSync(join(ROOT, 'node_modules', entry), join(nm, entry));
  }
  for (const pkg of readdirSync(join(dir, 'packages'))) symlinkSync(join('..', '..', 'packages', pkg), join(nm, '@quire', pkg));
  return dir;
}

interface RunOutcome {
  seed: number;
  nodes: number;
  faults: string;
  ok: boolean;
  violations: string[];
}

/** One sweep with the copy's code; resolves with the results of the runs done. */
function sweep(dir: string, args: string[]): Promise<RunOutcome[]> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      ['--conditions=quire-source', '--import', 'tsx', '--import', '@quire/common/polyfill', 'scripts/sim.ts', '--json', '--quiet', ...args],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', fail);
    child.on('close', () => {
      try {
        done((JSON.parse(out) as { results: RunOutcome[] }).results);
      } catch {
        // a mutant that does not even load fails every run: report its error as the violation
        done([{ seed: -1, nodes: 0, faults: '-', ok: false, violations: [`sweep did not run: ${(err || out).trim().split('\n').slice(-3).join(' | ')}`] }]);
      }
    });
  });
}

/**
 * Runs the scenario tests `tests` (paths from the repository root, each under packages/<pkg>/) with
 * the copy's code, one mocha process per package; undefined when they pass, else the first failure.
 */
async function runTests(dir: string, tests: string[]): Promise<string | undefined> {
  const mocha = join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
  const byPackage = new Map<string, string[]>();
  for (const t of tests) {
    const m = /^(packages\/[^/]+)\/(.+)$/.exec(t);
    if (m === null) return `test ${t} is not under packages/<pkg>/`;
    byPackage.set(m[1]!, [...(byPackage.get(m[1]!) ?? []), m[2]!]);
  }
  for (const [pkg, files] of byPackage) {
    const failure = await new Promise<string | undefined>((done, fail) => {
      const child = spawn(process.execPath, [mocha, '--config', join(dir, '.mocharc.json'), '--reporter', 'spec', ...files], {
        cwd: join(dir, pkg),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', fail);
      child.on('close', (code) => {
        if (code === 0) return done(undefined);
        // the first failure's title and message, as mocha's spec reporter prints them
        const lines = out.split('\n').map((l) => l.trim());
        const failing = lines.findIndex((l) => /^\d+ failing/.test(l));
        const at = failing < 0 ? -1 : lines.findIndex((l, i) => i > failing && /^1\) /.test(l));
        const what =
          at >= 0
            ? lines
                .slice(at, at + 6)
                .filter((l) => l !== '')
                .join(' ')
            : lines
                .filter((l) => l !== '')
                .slice(-3)
                .join(' | ');
        done(`${pkg}/${files.join(',')}: ${what}`);
      });
    });
    if (failure !== undefined) return failure;
  }
  return undefined;
}

interface Verdict {
  id: string;
  what: string;
  status: 'caught' | 'SURVIVED' | 'equivalent' | 'SITE MOVED';
  runs: number;
  seconds: number;
  /** the failing run and its first violation */
  by?: string;
}

const key = (r: { seed: number; nodes: number; faults: string }): string => `${r.seed}/${r.nodes}/${r.faults}`;

async function main(): Promise<void> {
  const dir = makeCopy();
  const baseline = new Map<string, boolean>();
  const verdicts: Verdict[] = [];
  try {
    for (const m of selected) {
      const v = await gate(dir, m, baseline);
      verdicts.push(v);
      process.stderr.write(`mutate: ${v.id}: ${v.status} after ${v.runs} runs, ${v.seconds.toFixed(0)} s${v.by !== undefined ? ` (${v.by})` : ''}\n`);
    }
  } finally {
    if (o.keep !== true) rmSync(dir, { recursive: true, force: true });
    else console.error(`mutate: copy kept in ${dir}`);
  }
  const survived = verdicts.filter((v) => v.status === 'SURVIVED' || v.status === 'SITE MOVED');
  if (o.json === true) console.log(JSON.stringify({ verdicts, survived: survived.length }, null, 1));
  else {
    console.log('');
    for (const v of verdicts)
      console.log(`${v.status.padEnd(10)} ${v.id.padEnd(24)} ${String(v.runs).padStart(3)} runs ${v.seconds.toFixed(0).padStart(5)} s  ${v.by ?? v.what}`);
    const caught = verdicts.filter((v) => v.status === 'caught').length;
    const eq = verdicts.filter((v) => v.status === 'equivalent').length;
    console.log(`mutate: ${verdicts.length} mutations, ${caught} caught, ${eq} equivalent, ${survived.length} survived or not applied`);
  }
  process.exit(survived.length > 0 ? 1 : 0);
}

async function gate(dir: string, m: Mutation, baseline: Map<string, boolean>): Promise<Verdict> {
  const started = Date.now();
  const seconds = (): number => (Date.now() - started) / 1000;
  if (m.equivalent !== undefined) return { id: m.id, what: m.what, status: 'equivalent', runs: 0, seconds: 0, by: m.equivalent };
  const file = join(dir, m.file);
  const original = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (original.split(m.find).length !== 2)
    return { id: m.id, what: m.what, status: 'SITE MOVED', runs: 0, seconds: 0, by: `"${m.find.slice(0, 60)}" is not in ${m.file} exactly once` };
  if (m.tests !== undefined && m.tests.length > 0 && o.sweepOnly !== true) {
    process.stderr.write(`mutate: ${m.id}: ${m.what} (scenario tests: ${m.tests.join(', ')})\n`);
    writeFileSync(file, original.replace(m.find, m.replace));
    let failure: string | undefined;
    try {
      failure = await runTests(dir, m.tests);
    } finally {
      writeFileSync(file, original);
    }
    if (failure !== undefined) {
      const without = await runTests(dir, m.tests);
      if (without === undefined) return { id: m.id, what: m.what, status: 'caught', runs: 0, seconds: seconds(), by: `test ${failure}`.slice(0, 200) };
      process.stderr.write(`mutate: ${m.id}: the scenario tests fail without any mutation too (${without.slice(0, 160)}); not counted\n`);
    }
  }
  // an entry caught only by its scenario tests has no sweep
  if (m.mixes.length === 0) return { id: m.id, what: m.what, status: 'SURVIVED', runs: 0, seconds: seconds() };
  const seeds = o.seeds ?? m.seeds ?? 8;
  // a single mix is listed twice: npm run sim alternates n = 4 / 7 over cycles of the list, and a
  // cycle of one would keep n = 4
  const mixes = m.mixes.length === 1 ? [m.mixes[0]!, m.mixes[0]!] : m.mixes;
  const base = ['--seeds', String(seeds), '--start', String(o.start), '--mixes', mixes.join(','), '--jobs', String(o.jobs)];
  const skip: string[] = [];
  let runs = 0;
  process.stderr.write(`mutate: ${m.id}: ${m.what}\n`);
  for (;;) {
    writeFileSync(file, original.replace(m.find, m.replace));
    let results: RunOutcome[];
    try {
      results = await sweep(dir, [...base, '--stop-on-failure', ...(skip.length > 0 ? ['--skip', skip.join(',')] : [])]);
    } finally {
      writeFileSync(file, original);
    }
    runs += results.length;
    const failed = results.find((r) => !r.ok);
    if (failed === undefined) return { id: m.id, what: m.what, status: 'SURVIVED', runs, seconds: seconds() };
    if (failed.seed < 0) return { id: m.id, what: m.what, status: 'caught', runs, seconds: seconds(), by: failed.violations[0] };
    // does the seed pass without the mutation?
    let passes = baseline.get(key(failed));
    if (passes === undefined) {
      const [b] = await sweep(dir, ['--seed', String(failed.seed), '--nodes', String(failed.nodes), '--faults', failed.faults]);
      passes = b?.ok === true;
      baseline.set(key(failed), passes);
      if (!passes) process.stderr.write(`mutate: ${key(failed)} fails without any mutation too (${b?.violations[0] ?? '?'}); skipped\n`);
    }
    if (passes)
      return { id: m.id, what: m.what, status: 'caught', runs, seconds: seconds(), by: `${key(failed)}: ${failed.violations[0] ?? ''}`.slice(0, 160) };
    skip.push(key(failed));
  }
}

await main();
