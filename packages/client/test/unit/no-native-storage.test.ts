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

/** Resolution hooks that refuse `refused` and its subpaths, naming the importer. */
function hooks(refused: string): string {
  return `export async function resolve(specifier, context, next) {
  if (specifier === '${refused}' || specifier.startsWith('${refused}/')) throw new Error('${refused} refused: ' + context.parentURL);
  return next(specifier, context);
}
`;
}

function importWithoutClassicLevel(specifier: string, refused = 'classic-level'): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'quire-no-native-'));
  try {
    const hooksFile = join(dir, 'hooks.mjs');
    const register = join(dir, 'register.mjs');
    writeFileSync(hooksFile, hooks(refused));
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

  // the package map: the client owns its dialer and its libp2p stack, and never loads the validators' transport (#22)
  it('@quire/client imports with @quire/network unresolvable', () => {
    const r = importWithoutClassicLevel('@quire/client', '@quire/network');
    expect(r.ok, r.output).to.equal(true);
  });

  it('control: @quire/node (the validators) does not', () => {
    const r = importWithoutClassicLevel('@quire/node', '@quire/network');
    expect(r.ok).to.equal(false);
    expect(r.output).to.contain('@quire/network refused');
  });

  it('control: @quire/storage (the stores) does not', () => {
    const r = importWithoutClassicLevel('@quire/storage');
    expect(r.ok).to.equal(false);
    expect(r.output).to.contain('classic-level refused');
  });
});
