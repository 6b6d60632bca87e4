// How the devnet runs a node: the built bin when it is up to date with the sources, else the
// TypeScript sources through tsx (no build step needed).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { builtPackagesFresh } from './build-fresh.js';
import { REPO_ROOT } from './layout.js';

const SOURCE_FLAGS = ['--conditions=quire-source', '--import', 'tsx', '--import', '@quire/common/polyfill'];

/** The built CLI when it exists and every package's build is up to date with its sources. */
function upToDateBuild(): string | undefined {
  const bin = join(REPO_ROOT, 'packages', 'node', 'dist', 'cli.js');
  return existsSync(bin) && builtPackagesFresh() ? bin : undefined;
}

/** argv that starts one node: `<node> [flags] <cli> start --data-dir DIR --config FILE`. */
export function nodeArgv(dataDir: string, configFile: string, mode: 'auto' | 'source' | 'build' = 'auto'): string[] {
  const build = mode === 'source' ? undefined : upToDateBuild();
  if (mode === 'build' && build === undefined) throw new Error('packages/node/dist/cli.js is missing or older than the sources: run "npm run build" first');
  const cli = build !== undefined ? ['--import', '@quire/common/polyfill', build] : [...SOURCE_FLAGS, join(REPO_ROOT, 'packages', 'node', 'src', 'cli.ts')];
  return [process.execPath, ...cli, 'start', '--data-dir', dataDir, '--config', configFile];
}
