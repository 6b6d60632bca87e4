// Where a node's time goes, node by node: reads the directory that `bench:pool --cpu-prof <dir>` fills (one
// subdirectory of .cpuprofile files per node) and prints, for each node, its busy time, the shares by area and the
// functions with the most self time (the same split as bench:pool's summary of all nodes together, which mixes
// the primary with the backups). `--callers <text>` adds, for the functions whose name or location contains the
// text, the chains of Quire functions that called them, by self time. `--long-tasks [ms]` lists each node's long
// tasks instead: the stretches of busy samples at least that long (default 50 ms) in which its event loop did not
// turn (nothing else, a refusal, a timer, a socket read, ran meanwhile), and the functions inside the longest ones.
//
//   node --import tsx scripts/bench/profile-split.ts /tmp/prof [--top 15] [--callers verifyOneShot] [--long-tasks 50]
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { summarizeProfiles } from '../load/lib/cpu-profile.js';
import { formatLongTasks, longTasks, type CpuProfile as LongTaskProfile } from '../load/lib/long-tasks.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
}

const opts = new Command('profile-split')
  .description('Per-node CPU profile summary of a bench:pool --cpu-prof directory.')
  .argument('<dir>', 'the --cpu-prof directory (one subdirectory per node)')
  .option(
    '--top <n>',
    'functions and caller chains listed',
    (v) => {
      const n = Number(v);
      if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError('--top takes a positive integer');
      return n;
    },
    15,
  )
  .option('--callers <text>', 'also list who called the functions whose name or location contains this text')
  .option('--node <name>', 'only this node (a subdirectory name)')
  .option('--long-tasks [ms]', 'list the long tasks (busy stretches without a turn of the event loop) at least this long, ms', (v) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('--long-tasks takes a positive number of ms');
    return n;
  })
  .option('--longest <n>', 'with --long-tasks: the longest tasks detailed per profile', (v) => {
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError('--longest takes a positive integer');
    return n;
  })
  .showHelpAfterError()
  .parse(process.argv);
const dir = opts.args[0]!;
const o = opts.opts<{ top: number; callers?: string; node?: string; longTasks?: number | true; longest?: number }>();

// output piped into head and the like: stop quietly once the reader is gone
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

const pct = (x: number): string => `${(100 * x).toFixed(1).padStart(5)} %`;
const where = (n: ProfileNode): string => {
  const u = n.callFrame.url;
  const m = /\/packages\/([^/]+)\/(?:src|dist)\/(.*)$/.exec(u) ?? /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(u);
  const file = m === null ? u : `${m[1]}/${m[2]}`;
  return `${n.callFrame.functionName || '(anonymous)'}${file === '' ? '' : ` ${file}:${n.callFrame.lineNumber + 1}`}`;
};

/** Self time of the functions matching `text`, by the chain of (up to 3) Quire frames that called them. */
function callers(files: string[], text: string): { chain: string; ms: number }[] {
  const out = new Map<string, number>();
  for (const f of files) {
    const p = JSON.parse(readFileSync(f, 'utf8')) as CpuProfile;
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const samples = p.samples ?? [];
    for (let i = 0; i < samples.length; i++) {
      const n = byId.get(samples[i]!);
      if (n === undefined || !where(n).includes(text)) continue;
      const chain: string[] = [];
      for (let c = parent.get(n.id); c !== undefined && chain.length < 3; c = parent.get(c)) {
        const up = byId.get(c)!;
        if (/\/packages\/[^/]+\/(src|dist)\//.test(up.callFrame.url)) chain.push(where(up));
      }
      const key = chain.join(' < ') || '(no Quire caller)';
      out.set(key, (out.get(key) ?? 0) + Math.max(0, p.timeDeltas?.[i] ?? 0) / 1000);
    }
  }
  return [...out].map(([chain, ms]) => ({ chain, ms })).sort((a, b) => b.ms - a.ms);
}

const nodes = readdirSync(dir)
  .filter((d) => statSync(join(dir, d)).isDirectory() && (o.node === undefined || d === o.node))
  .sort();
if (nodes.length === 0) {
  process.stderr.write(`profile-split: no node subdirectory in ${dir}\n`);
  process.exit(1);
}
for (const name of nodes) {
  const nodeDir = join(dir, name);
  if (o.longTasks !== undefined) {
    const minMs = o.longTasks === true ? 50 : o.longTasks;
    for (const f of readdirSync(nodeDir)
      .filter((x) => x.endsWith('.cpuprofile'))
      .sort()) {
      const r = longTasks(JSON.parse(readFileSync(join(nodeDir, f), 'utf8')) as LongTaskProfile, { minMs, longest: o.longest ?? 5, top: Math.min(o.top, 8) });
      console.log(`${name} ${f}:`);
      for (const l of formatLongTasks(r)) console.log(l);
    }
    continue;
  }
  const s = summarizeProfiles(nodeDir, o.top);
  console.log(`${name}: ${(s.busyMs / 1000).toFixed(1)} s busy of ${(s.totalMs / 1000).toFixed(1)} s sampled (${s.files} profiles); shares of busy time`);
  console.log('  by area:');
  for (const a of s.byArea) console.log(`   ${pct(a.share)}  ${a.name}`);
  console.log('  top functions (self time):');
  for (const f of s.byFunction) console.log(`   ${pct(f.share)}  ${f.name}`);
  if (o.callers !== undefined) {
    const files = readdirSync(nodeDir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => join(nodeDir, f));
    console.log(`  callers of "${o.callers}" (self time):`);
    for (const c of callers(files, o.callers).slice(0, o.top)) console.log(`   ${pct(s.busyMs > 0 ? c.ms / s.busyMs : 0)}  ${c.chain}`);
  }
}
