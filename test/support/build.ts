// Which code the whole-pool tests run: the built packages (dist/) when they are newer than every
// package source file, else the TypeScript sources through tsx. A node started from dist is ready
// in a fraction of the time tsx needs to compile it, which matters when a test file starts and
// restarts a dozen processes; a stale dist would test old code, so it is used only when fresh.
// QUIRE_TEST_BIN=source|build|auto (default auto) forces a choice.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../devnet/lib/layout.js';

export type BinMode = 'auto' | 'source' | 'build';

export const SOURCE_FLAGS = ['--conditions=quire-source', '--import', 'tsx', '--import', '@quire/common/polyfill'];

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

let newestCache: number | undefined;

/** Newest mtime of any packages/<name>/src/**.ts (computed once per test run). */
function newestPackageSource(): number {
  if (newestCache === undefined) {
    newestCache = 0;
    const packages = join(REPO_ROOT, 'packages');
    for (const pkg of readdirSync(packages)) {
      const src = join(packages, pkg, 'src');
      if (existsSync(src)) newestCache = Math.max(newestCache, newestSource(src));
    }
  }
  return newestCache;
}

/** True when `distFile` (relative to the repository) exists and is newer than every package source. */
export function distIsFresh(distFile: string): boolean {
  const file = join(REPO_ROOT, distFile);
  return existsSync(file) && statSync(file).mtimeMs > newestPackageSource();
}

export function binMode(): BinMode {
  const m = process.env.QUIRE_TEST_BIN ?? 'auto';
  if (m !== 'auto' && m !== 'source' && m !== 'build') throw new Error(`QUIRE_TEST_BIN must be auto, source or build, not ${m}`);
  return m;
}

/**
 * argv prefix (node and its flags, then the script) that runs a CLI: the built `bin` when dist is
 * fresh (or forced), else `source` through tsx.
 */
export function cliArgv(bin: { dist: string; built: string; source: string }): string[] {
  const mode = binMode();
  const fresh = distIsFresh(bin.dist);
  if (mode === 'build' && !fresh) throw new Error(`${bin.dist} is missing or older than the sources: run "npx tsc -b" first`);
  if (mode !== 'source' && fresh) return [process.execPath, join(REPO_ROOT, bin.built)];
  return [process.execPath, ...SOURCE_FLAGS, join(REPO_ROOT, bin.source)];
}
