// Which code bench:pool's load generator runs (see pool-launch.ts): the built packages or the TypeScript sources,
// chosen from --node-bin and whether the build is up to date with the sources. Pure, so that it is tested alone.

export interface GeneratorCode {
  use: 'build' | 'source';
  /** the line printed before the run */
  why: string;
}

/** The value of `--node-bin` in `argv` (`--node-bin X` or `--node-bin=X`, the last one given), default `auto`. */
export function nodeBinOf(argv: readonly string[]): string {
  let mode = 'auto';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') break;
    if (a === '--node-bin' && i + 1 < argv.length) mode = argv[++i] ?? mode;
    else if (a?.startsWith('--node-bin=') === true) mode = a.slice('--node-bin='.length);
  }
  return mode;
}

/**
 * The generator's code for `argv` (bench:pool's arguments): `fresh()` says whether every package's build is up to date.
 * Throws an Error with a one-line reason for `--node-bin build` without a current build, or an unknown mode.
 */
export function generatorCode(argv: readonly string[], fresh: () => boolean): GeneratorCode {
  const mode = nodeBinOf(argv);
  if (mode === 'source') return { use: 'source', why: 'TypeScript sources through tsx (--node-bin source)' };
  if (mode !== 'auto' && mode !== 'build') throw new Error(`--node-bin must be auto, source or build, got "${mode}"`);
  if (fresh()) return { use: 'build', why: 'the built packages (packages/*/dist, up to date with the sources)' };
  if (mode === 'build') throw new Error('--node-bin build: packages/*/dist is missing or older than the sources: run "npm run build" first');
  return {
    use: 'source',
    why: 'TypeScript sources through tsx: the build is missing or older than the sources (run "npm run build" to measure the built code)',
  };
}
