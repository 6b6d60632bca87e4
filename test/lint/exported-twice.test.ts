// One definition per public name across the packages (#22): a name two packages export with
// different definitions fails the suite unless it is in the known list still to be merged, and the
// list holds no name that has been merged already.
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KNOWN_EXPORTED_TWICE, exportedTwice, packageEntries } from '../../scripts/lint/exported-twice.js';

describe('public names exported twice with different definitions (#22)', function () {
  this.timeout(120_000);

  it('the packages export no such name beyond the known list, and every known one is still there', () => {
    const entries = packageEntries();
    // every entry of the exports maps, subpaths included
    expect(entries.map((e) => e.pkg)).to.include.members(['storage', 'storage/proofs', 'consensus', 'consensus/sim', 'client', 'testing']);
    const names = exportedTwice(entries).map((f) => f.name);
    expect(
      names.filter((n) => !KNOWN_EXPORTED_TWICE.includes(n)),
      'new names exported twice',
    ).to.deep.equal([]);
    expect(
      KNOWN_EXPORTED_TWICE.filter((n) => !names.includes(n)),
      'merged: remove from KNOWN_EXPORTED_TWICE',
    ).to.deep.equal([]);
  });

  it('reports a planted pair, not a re-export of the same definition', () => {
    const root = mkdtempSync(join(tmpdir(), 'quire-exports-'));
    try {
      const entry = (pkg: string, text: string): { pkg: string; file: string } => {
        mkdirSync(join(root, pkg), { recursive: true });
        const file = join(root, pkg, 'index.ts');
        writeFileSync(file, text);
        return { pkg, file };
      };
      const a = entry('a', 'export function twice(): number {\n  return 1;\n}\nexport const once = 1;\n');
      const b = entry('b', 'export function twice(): number {\n  return 2;\n}\n');
      const c = entry('c', "export { once } from '../a/index.js';\n");
      const found = exportedTwice([a, b, c], root);
      expect(found.map((f) => f.name)).to.deep.equal(['twice']);
      expect(Object.keys(found[0]!.definitions)).to.deep.equal(['a', 'b']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
