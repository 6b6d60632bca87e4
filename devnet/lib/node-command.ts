// How the devnet runs a node: the built bin when it is up to date with the sources, else the
// TypeScript sources through tsx (no build step needed).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './layout.js';

const SOURCE_FLAGS = ['--conditions=quire-source', '--import', 'tsx', '--import', '@quire/common/polyfill'];

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(p));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/** The built CLI when it exists and is newer than every package source file. */
function upToDateBuild(): string | undefined {
  const bin = join(REPO_ROOT, 'packages', 'node', 'dist', 'cli.js');
  if (!existsSync(bin)) return undefined;
  const built = statSync(bin).mtimeMs;
  const packages = join(REPO_ROOT, 'packages');
  for (const pkg of readdirSync(packages)) {
    const src = join(packages, pkg, 'src');
    if (existsSync(src) && newestMtime(src) > built) return undefined;
  }
  return bin;
}

/** argv that starts one node: `<node> [flags] <cli> start --data-dir DIR --config FILE`. */
export function nodeArgv(dataDir: string, configFile: string, mode: 'auto' | 'source' | 'build' = 'auto'): string[] {
  const build = mode === 'source' ? undefined : upToDateBuild();
  if (mode === 'build' && build === undefined) throw new Error('packages/node/dist/cli.js is missing or older than the sources: run "npm run build" first');
  const cli = build !== undefined ? ['--import', '@quire/common/polyfill', build] : [...SOURCE_FLAGS, join(REPO_ROOT, 'packages', 'node', 'src', 'cli.ts')];
  return [process.execPath, ...cli, 'start', '--data-dir', dataDir, '--config', configFile];
}
