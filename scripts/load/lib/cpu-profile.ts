// Where the time goes: self time of V8 .cpuprofile files (node --cpu-prof), summed over processes,
// by function and by package (a workspace package, an npm dependency, node internals, or idle/GC).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileSummary {
  files: number;
  /** Sampled milliseconds, all processes and threads. */
  totalMs: number;
  /** Sampled milliseconds not idle: shares are of this busy time. */
  busyMs: number;
  byPackage: { name: string; ms: number; share: number }[];
  byFunction: { name: string; ms: number; share: number }[];
  /**
   * Busy time by area of the node (network, crypto, consensus, execution, storage, encodings, client path,
   * GC, module loading): a sample counts for the innermost frame that belongs to a package, so the time spent in
   * Node.js internals and V8 builtins counts for the package that called them.
   */
  byArea: { name: string; ms: number; share: number }[];
}

/** The areas of a node's work, by the package a frame belongs to (first match). */
const AREAS: [RegExp, string][] = [
  [
    /^@quire\/network$|^@libp2p\/|^libp2p$|^@chainsafe\/libp2p-|^@chainsafe\/as-|^@chainsafe\/netmask$|^uint8arraylist$|^uint8arrays$|^it-|^main-event$|^race-|^weald$|^@multiformats\/|^multiformats$|^progress-events$|^p-queue$|^p-event$|^@noble\/|^any-signal$|^abort-error$|^datastore-|^interface-datastore$|^protons-runtime$|^@leichtgewicht\/|^delay$|^mortice$|^uint8-varint$|^denque$|^netmask$|^cborg$|^p-defer$|^@opentelemetry\/|^interface-store$/,
    'network (libp2p: TCP, Noise, Yamux, gossipsub; framing)',
  ],
  [/^@quire\/crypto$|^@chainsafe\/blst$/, 'crypto (ed25519, BLS)'],
  [/^@quire\/consensus$/, 'consensus'],
  [/^@quire\/requests$/, 'execution (validation, authorization, state updates)'],
  [/^@quire\/storage$|level/, 'storage (ledgers, trie, LevelDB)'],
  [/^@quire\/common$|^bs58$|^base-x$/, 'encodings and digests (@quire/common)'],
  [/^node-gyp-build$/, 'module loading (start-up)'],
  [
    /^@quire\/node$|^prom-client$|^pino|^commander$|^sonic-boom$|^thread-stream$|^on-exit-leak-free$|^atomic-sleep$|^safe-stable-stringify$|^bintrees$|^tdigest$/,
    'node (client path, replies, metrics, logs)',
  ],
];

function areaOf(pkg: string): string {
  for (const [re, name] of AREAS) if (re.test(pkg)) return name;
  return `other (${pkg})`;
}

/** The package a script URL belongs to. */
export function packageOf(url: string): string {
  if (url === '') return '(native / V8)';
  let m = /\/packages\/([^/]+)\/(?:src|dist)\//.exec(url);
  if (m) return `@quire/${m[1]}`;
  m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (m) return m[1]!;
  if (url.startsWith('node:')) return 'node internals';
  return url
    .replace(/^file:\/\//, '')
    .split('/')
    .slice(-2)
    .join('/');
}

function profileFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? profileFiles(join(dir, e.name)) : e.name.endsWith('.cpuprofile') ? [join(dir, e.name)] : [],
  );
}

/** Sums self time of every .cpuprofile under `dir` (idle time counted apart: shares are of busy time). */
export function summarizeProfiles(dir: string, top = 15): ProfileSummary {
  const files = profileFiles(dir);
  const byPkg = new Map<string, number>();
  const byFn = new Map<string, number>();
  const byArea = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const f of files) {
    const p = JSON.parse(readFileSync(f, 'utf8')) as CpuProfile;
    const hits = new Map<number, number>();
    // time per sample from timeDeltas when present, else the profile's mean interval
    if (p.samples !== undefined && p.timeDeltas !== undefined) {
      for (let i = 0; i < p.samples.length; i++) hits.set(p.samples[i]!, (hits.get(p.samples[i]!) ?? 0) + Math.max(0, p.timeDeltas[i] ?? 0) / 1000);
    } else {
      const count = p.nodes.reduce((a, n) => a + (n.hitCount ?? 0), 0);
      const per = count > 0 ? (p.endTime - p.startTime) / 1000 / count : 0;
      for (const n of p.nodes) hits.set(n.id, (n.hitCount ?? 0) * per);
    }
    const area = areasOf(p);
    for (const n of p.nodes) {
      const ms = hits.get(n.id) ?? 0;
      if (ms === 0) continue;
      total += ms;
      const fn = n.callFrame.functionName;
      if (fn === '(idle)') {
        idle += ms;
        continue;
      }
      const special = fn === '(garbage collector)' || fn === '(program)' ? fn : undefined;
      const pkg = special ?? packageOf(n.callFrame.url);
      byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + ms);
      const a = area.get(n.id)!;
      byArea.set(a, (byArea.get(a) ?? 0) + ms);
      const where = n.callFrame.url === '' ? '' : ` ${n.callFrame.url.split('/').slice(-1)[0]}:${n.callFrame.lineNumber + 1}`;
      const key = special ?? `${fn || '(anonymous)'}${where}`;
      byFn.set(key, (byFn.get(key) ?? 0) + ms);
    }
  }
  const rank = (m: Map<string, number>): { name: string; ms: number; share: number }[] =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms, share: total - idle > 0 ? ms / (total - idle) : 0 }));
  return { files: files.length, totalMs: total, busyMs: total - idle, byPackage: rank(byPkg), byFunction: rank(byFn), byArea: rank(byArea) };
}

/** The area of every node of a profile: its own package's, else its caller's (module loading and GC apart). */
function areasOf(p: CpuProfile): Map<number, string> {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const out = new Map<number, string>();
  const visit = (id: number, inherited: string): void => {
    const n = byId.get(id);
    if (n === undefined) return;
    const { functionName: fn, url } = n.callFrame;
    let a = inherited;
    if (fn === '(garbage collector)') a = 'garbage collector';
    else if (url.startsWith('node:internal/modules') || fn === 'compileSourceTextModule') a = 'module loading (start-up)';
    else if (url !== '' && !url.startsWith('node:')) {
      const pkg = packageOf(url);
      if (pkg.startsWith('@') || !pkg.includes('/')) a = areaOf(pkg);
    }
    out.set(id, a);
    for (const c of n.children ?? []) visit(c, a);
  };
  // the root is the first node; iterative depth would be safer for deep stacks, but V8 caps them well below
  visit(p.nodes[0]!.id, 'runtime (no package frame: timers, event loop, V8)');
  return out;
}
