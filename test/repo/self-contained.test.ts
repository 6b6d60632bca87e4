// The repository is self-contained: no test, script, source or configuration file refers to a
// directory beside the clone (the folder that holds the specifications). A fresh clone with nothing
// beside it must build and pass `npm test`; the vectors the tests read are in test/vectors/.
import { expect } from 'chai';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** folders never scanned: installed or generated files */
const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', 'coverage', '.tsbuildinfo']);
/** files that code reads, runs or is configured by */
const CODE_FILE = /\.(?:[cm]?[jt]s|json|sh)$/;
/** a reference to the specifications folder beside the repository (parent directory, then `shared`, or its spec and design folders) */
const OUTSIDE = new RegExp(['\\.\\./', 'shared\\b|\\bshared/(?:spec|design)\\b'].join(''));

export interface OutsideReference {
  file: string;
  line: number;
  text: string;
}

/** Every line of a code file under `root` that refers to the folder beside the repository. */
export function findOutsideReferences(root: string): OutsideReference[] {
  const found: OutsideReference[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const st = statSync(full);
      if (st.isDirectory()) {
        if (!SKIP_DIRS.has(name)) walk(full);
        continue;
      }
      if (!CODE_FILE.test(name) || name === 'package-lock.json') continue;
      const lines = readFileSync(full, 'utf8').split('\n');
      lines.forEach((text, i) => {
        if (OUTSIDE.test(text)) found.push({ file: relative(root, full), line: i + 1, text: text.trim() });
      });
    }
  };
  walk(root);
  return found;
}

describe('repository: self-contained', () => {
  it('no test, script, source or configuration file refers to the specifications folder beside the clone', () => {
    const refs = findOutsideReferences(ROOT).filter((r) => r.file !== relative(ROOT, fileURLToPath(import.meta.url)));
    expect(refs.map((r) => `${r.file}:${r.line}: ${r.text}`)).to.deep.equal([]);
  });

  it('the check finds such a reference (a path built to the vectors beside the clone)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'quire-self-contained-'));
    try {
      mkdirSync(join(dir, 'packages', 'x', 'test'), { recursive: true });
      mkdirSync(join(dir, 'node_modules', 'y'), { recursive: true });
      const bad = ['new URL(', "'../../../", '..', '/', 'sha', 'red', '/', 'spec', '/vectors/identities.json', "'"].join('');
      writeFileSync(join(dir, 'packages', 'x', 'test', 'a.test.ts'), `const ok = 1;\nconst v = ${bad};\n`);
      writeFileSync(join(dir, 'node_modules', 'y', 'index.js'), `const v = ${bad};\n`);
      writeFileSync(join(dir, 'notes.md'), `see ${bad}\n`);
      const refs = findOutsideReferences(dir);
      expect(refs.map((r) => [r.file, r.line])).to.deep.equal([[join('packages', 'x', 'test', 'a.test.ts'), 2]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('every vector file the package tests read is in test/vectors/', () => {
    for (const f of [
      'identities.json',
      'rfc6962.json',
      'state_trie.json',
      'msgpack.json',
      'canonical_json.json',
      'signing_serialization.json',
      'auth-map.json',
      'real-genesis/sovrin_pool_transactions_live_genesis',
    ]) {
      expect(statSync(join(ROOT, 'test', 'vectors', f)).isFile(), f).to.equal(true);
    }
  });
});
