// Whether the built packages (packages/*/dist) are up to date with their TypeScript sources, so that the devnet, the
// whole-pool tests and the benchmarks may run the built bins instead of the sources through tsx. A package is fresh
// when its dist/.tsbuildinfo, which `tsc -b` rewrites whenever it rebuilds that package, is newer than every one of
// its source files. The emitted .js files are no measure: `tsc -b` leaves an output whose content did not change with
// its old time, so comparing them with the newest source of the whole repository called a fresh build stale.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './layout.js';

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/** True when every package with sources has a build record newer than each of its sources (`root`: the repository). */
export function builtPackagesFresh(root: string = REPO_ROOT): boolean {
  const packages = join(root, 'packages');
  for (const pkg of readdirSync(packages)) {
    const src = join(packages, pkg, 'src');
    if (!existsSync(src)) continue;
    const info = join(packages, pkg, 'dist', '.tsbuildinfo');
    if (!existsSync(info) || newestSource(src) > statSync(info).mtimeMs) return false;
  }
  return true;
}
