// The freshness rule that lets the devnet, the whole-pool tests and the benchmarks run the built packages: each
// package's build record against its own sources, not the emitted files' times (tsc -b keeps an unchanged output's
// old time, which made a fresh build look stale and every pool run from the sources through tsx).
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { builtPackagesFresh } from '../../devnet/lib/build-fresh.js';

describe('builtPackagesFresh', () => {
  let root: string;
  const at = (file: string, seconds: number): void => utimesSync(join(root, file), seconds, seconds);
  const write = (file: string, seconds: number): void => {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), '');
    at(file, seconds);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'quire-build-fresh-'));
    write('packages/a/src/index.ts', 1_000);
    write('packages/a/src/deep/part.ts', 1_000);
    write('packages/a/dist/.tsbuildinfo', 2_000);
    write('packages/a/dist/index.js', 500); // an output tsc -b left unchanged keeps its old time
    write('packages/b/src/index.ts', 3_000);
    write('packages/b/dist/.tsbuildinfo', 4_000);
    mkdirSync(join(root, 'packages/docs-only'), { recursive: true }); // no src: not a built package
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("is fresh when every package was built after its own sources, whatever the outputs' times", () => {
    expect(builtPackagesFresh(root)).to.equal(true);
  });

  it("is stale when a source (at any depth) is newer than its package's build record", () => {
    at('packages/a/src/deep/part.ts', 2_500);
    expect(builtPackagesFresh(root)).to.equal(false);
  });

  it('is stale when a package has never been built', () => {
    rmSync(join(root, 'packages/b/dist'), { recursive: true });
    expect(builtPackagesFresh(root)).to.equal(false);
  });
});
