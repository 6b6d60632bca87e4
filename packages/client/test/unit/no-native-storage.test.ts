// The light client and the consensus core use storage's pure verifiers only: importing them must not
// load LevelDB's native binding (classic-level), so that they run where no native module can be
// built (a browser bundle, a restricted host). A child process whose module resolution refuses
// `classic-level` imports each package's entry; the main entry of @quire/storage, which opens
// databases, is the control.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const HOOKS = `export async function resolve(specifier, context, next) {
  if (specifier === 'classic-level' || specifier.startsWith('classic-level/')) throw new Error('classic-level refused: ' + context.parentURL);
  return next(specifier, context);
}
`;

function importWithoutClassicLevel(specifier: string): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'quire-no-native-'));
  try {
    const hooks = join(dir, 'hooks.mjs');
    const register = join(dir, 'register.mjs');
    writeFileSync(hooks, HOOKS);
    writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
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
      {
        cwd: process.cwd(),
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    return { ok: r.status === 0 && r.stdout.includes('loaded'), output: `${r.stdout}${r.stderr}`.slice(0, 2000) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the light client and consensus load no native storage binding (#22)', function () {
  this.timeout(240_000);

  for (const specifier of ['@quire/client', '@quire/consensus', '@quire/storage/proofs']) {
    it(`${specifier} imports with classic-level unresolvable`, () => {
      const r = importWithoutClassicLevel(specifier);
      expect(r.ok, r.output).to.equal(true);
    });
  }

  it('control: @quire/storage (the stores) does not', () => {
    const r = importWithoutClassicLevel('@quire/storage');
    expect(r.ok).to.equal(false);
    expect(r.output).to.contain('classic-level refused');
  });
});
