/**
 * What a package loads: an import run in a child process whose module resolution refuses a package, so a test can
 * show that an entry does not load it (LevelDB's native binding, the validators' transport...) however deep the
 * import would be.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The outcome of {@link importRefusing}: whether the import completed, and what the child printed. */
export interface RefusedImport {
  ok: boolean;
  output: string;
}

/** Resolution hooks that refuse `refused` and its subpaths, naming the importer. */
function refusingHooks(refused: string): string {
  return `export async function resolve(specifier, context, next) {
  if (specifier === ${JSON.stringify(refused)} || specifier.startsWith(${JSON.stringify(`${refused}/`)})) throw new Error(${JSON.stringify(`${refused} refused: `)} + context.parentURL);
  return next(specifier, context);
}
`;
}

/**
 * Imports `specifier` (from the sources, as the suites run them) in a child process where `refused` and its subpaths
 * cannot be resolved. `ok` is true when the import completed; a refused import fails it with `<refused> refused:
 * <importer>` in `output`.
 */
export function importRefusing(specifier: string, refused: string, cwd = process.cwd()): RefusedImport {
  const dir = mkdtempSync(join(tmpdir(), 'quire-refusing-'));
  try {
    const hooksFile = join(dir, 'hooks.mjs');
    const register = join(dir, 'register.mjs');
    writeFileSync(hooksFile, refusingHooks(refused));
    writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooksFile).href)});\n`);
    const r = spawnSync(
      process.execPath,
      [
        '--conditions=quire-source',
        '--import',
        'tsx',
        '--import',
        pathToFileURL(register).href,
        '--input-type=module',
        '-e',
        `await import(${JSON.stringify(specifier)}); console.log('loaded');`,
      ],
      { cwd, encoding: 'utf8', timeout: 120_000 },
    );
    return { ok: r.status === 0 && r.stdout.includes('loaded'), output: `${r.stdout}${r.stderr}`.slice(0, 2000) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
