// Each package's package.json declares the packages of ours it imports, and only those (#22; run in npm test): the
// workspace as it is has no mismatch, and planted ones of each kind are reported.
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dependencyProblems, packageDirs } from '../../scripts/lint/package-deps.js';

describe("packages' declared dependencies match their imports (#22)", function () {
  this.timeout(60_000);

  it('no package of the workspace imports an undeclared package of ours or declares one it never imports', () => {
    const dirs = packageDirs();
    expect(dirs.map((d) => d.split('/').pop())).to.include.members(['consensus', 'client', 'node', 'testing']);
    expect(dirs.flatMap(dependencyProblems)).to.deep.equal([]);
  });

  it('reports a planted dependency never imported, an undeclared import and an undeclared test import', () => {
    const root = mkdtempSync(join(tmpdir(), 'quire-deps-'));
    try {
      mkdirSync(join(root, 'src', 'sim'), { recursive: true });
      mkdirSync(join(root, 'test', 'unit'), { recursive: true });
      const deps = { '@quire/common': '0.1.0', '@quire/requests': '0.1.0' };
      writeFileSync(join(root, 'package.json'), JSON.stringify({ name: '@quire/planted', dependencies: deps, devDependencies: { '@quire/testing': '0.1.0' } }));
      writeFileSync(join(root, 'src', 'index.ts'), "import { TxnType } from '@quire/common';\nexport { TxnType };\n");
      writeFileSync(join(root, 'src', 'sim', 'index.ts'), "export async function load(): Promise<unknown> {\n  return import('@quire/storage/proofs');\n}\n");
      writeFileSync(join(root, 'test', 'unit', 'a.test.ts'), "import { expectCode } from '@quire/testing';\nimport { QuireNode } from '@quire/node';\n");
      expect(dependencyProblems(root)).to.deep.equal([
        { pkg: '@quire/planted', problem: 'imported, not a dependency', name: '@quire/storage' },
        { pkg: '@quire/planted', problem: 'a dependency, never imported', name: '@quire/requests' },
        { pkg: '@quire/planted', problem: 'imported by a test, not declared', name: '@quire/node' },
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
