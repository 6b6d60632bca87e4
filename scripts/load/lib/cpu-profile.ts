// Where the time goes: self time of V8 .cpuprofile files (node --cpu-prof), summed over processes,
// by function and by package (a workspace package, an npm dependency, node internals, or idle/GC).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
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
}

/** The package a script URL belongs to. */
export function packageOf(url: string): string {
  if (url === '') return '(native / V8)';
  let m = /\/packages\/([^/]+)\/src\//.exec(url);
  if (m) return `@quire/${m[1]}`;
  m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (m) return m[1]!;
  if (url.startsWith('node:')) return 'node internals';
  return url.replace(/^file:\/\//, '').split('/').slice(-2).join('/');
}

function profileFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? profileFiles(join(dir, e.name)) : e.name.endsWith('.cpuprofile') ? [join(dir, e.name)] : []));
}

/** Sums self time of every .cpuprofile under `dir` (idle time counted apart: shares are of busy time). */
export function summarizeProfiles(dir: string, top = 15): ProfileSummary {
  const files = profileFiles(dir);
  const byPkg = new Map<string, number>();
  const byFn = new Map<string, number>();
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
  return { files: files.length, totalMs: total, busyMs: total - idle, byPackage: rank(byPkg), byFunction: rank(byFn) };
}
