// Which code the whole-pool tests run: the built packages (dist/) when they are newer than every
// package source file, else the TypeScript sources through tsx. A node started from dist is ready
// in a fraction of the time tsx needs to compile it, which matters when a test file starts and
// restarts a dozen processes; a stale dist would test old code, so it is used only when fresh.
// QUIRE_TEST_BIN=source|build|auto (default auto) forces a choice.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { builtPackagesFresh } from '../../devnet/lib/build-fresh.js';
import { REPO_ROOT } from '../../devnet/lib/layout.js';
import { SOURCE_RUN_ARGS } from '@quire/testing';

export type BinMode = 'auto' | 'source' | 'build';

export const SOURCE_FLAGS = [...SOURCE_RUN_ARGS];

let freshCache: boolean | undefined;

/** True when `distFile` (relative to the repository) exists and every package's build is up to date (computed once per run). */
export function distIsFresh(distFile: string): boolean {
  freshCache ??= builtPackagesFresh();
  return existsSync(join(REPO_ROOT, distFile)) && freshCache;
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
