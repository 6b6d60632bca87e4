// bench:pool's load generator runs the built packages only when the build is current (pool-launch.ts,
// generator-code.ts), else the sources, and says which; --node-bin build without a current build is refused.
import { spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { generatorCode, nodeBinOf } from '../generator-code.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const fresh = (): boolean => true;
const stale = (): boolean => false;

describe('bench:pool load generator code', () => {
  it('reads --node-bin in both spellings, the last one given, auto by default', () => {
    expect(nodeBinOf([])).to.equal('auto');
    expect(nodeBinOf(['--phases', 'crypto', '--node-bin', 'build'])).to.equal('build');
    expect(nodeBinOf(['--node-bin=source'])).to.equal('source');
    expect(nodeBinOf(['--node-bin', 'build', '--node-bin=source'])).to.equal('source');
    expect(nodeBinOf(['--node-bin'])).to.equal('auto');
  });

  it('auto: the build when it is current, else the sources, saying why', () => {
    expect(generatorCode([], fresh).use).to.equal('build');
    const s = generatorCode([], stale);
    expect(s.use).to.equal('source');
    expect(s.why).to.match(/older than the sources/);
  });

  it('build: refused when the build is missing or stale, never the sources in its place', () => {
    expect(generatorCode(['--node-bin', 'build'], fresh).use).to.equal('build');
    expect(() => generatorCode(['--node-bin', 'build'], stale)).to.throw(/npm run build/);
  });

  it('source: the sources even with a current build; an unknown mode is refused', () => {
    expect(generatorCode(['--node-bin', 'source'], fresh).use).to.equal('source');
    expect(() => generatorCode(['--node-bin', 'dist'], fresh)).to.throw(/auto, source or build/);
  });

  it('the entry point runs pool.ts from the sources with --node-bin source, and exits 2 on an unknown mode', function () {
    this.timeout(60_000);
    const entry = join(ROOT, 'scripts', 'bench', 'pool-launch.ts');
    const help = spawnSync(process.execPath, ['--import', 'tsx', entry, '--node-bin', 'source', '--help'], { cwd: ROOT, encoding: 'utf8' });
    expect(help.status).to.equal(0);
    expect(help.stderr).to.include('load generator: TypeScript sources through tsx (--node-bin source)');
    expect(help.stdout).to.include('Usage: bench:pool');
    const bad = spawnSync(process.execPath, ['--import', 'tsx', entry, '--node-bin', 'dist'], { cwd: ROOT, encoding: 'utf8' });
    expect(bad.status).to.equal(2);
    expect(bad.stderr).to.include('--node-bin must be auto, source or build');
  });

  it('on the sources, a SIGINT sent to the entry point alone stops pool.ts, and the exit says which signal (128 + 2)', async function () {
    this.timeout(60_000);
    const entry = join(ROOT, 'scripts', 'bench', 'pool-launch.ts');
    // the crypto phase runs for seconds before any node starts; pool.ts, without a handler yet, ends on the signal
    const launcher = spawn(process.execPath, ['--import', 'tsx', entry, '--node-bin', 'source', '--phases', 'crypto'], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const exited = new Promise<number | null>((done) => launcher.on('exit', (status) => done(status)));
    try {
      await new Promise<void>((started, failed) => {
        launcher.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
          // pool.ts is running in the child: the signal goes to the entry point's pid only
          if (stderr.includes('load generator SDK:')) started();
        });
        launcher.on('exit', () => failed(new Error(`exited before pool.ts started: ${stderr}`)));
      });
      launcher.kill('SIGINT');
      expect(await exited).to.equal(130);
    } finally {
      launcher.kill('SIGKILL');
    }
  });
});
