// Dependencies are tidy (#18, item 6): a package's runtime dependencies are exactly what its runtime (src/, bin/)
// imports, type-only imports included (they appear in the published declarations); every package a test, script or
// the devnet imports is declared where it is imported. The test tools (mocha, chai, fast-check, tsx) are declared
// once, at the root, whose test command runs every package's suite.
import { expect } from 'chai';
import { builtinModules } from 'node:module';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Test tools every suite uses, declared at the root. */
const ROOT_TEST_TOOLS = ['chai', 'fast-check', 'mocha', 'tsx'];

/**
 * Declared runtime dependencies nothing imports, kept for a reason outside this check (package, dependency, why).
 * Each is a follow-up, not a rule.
 */
const KNOWN_UNUSED: readonly [string, string, string][] = [];

const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', '.data', 'coverage']);
const SOURCE = /\.(?:[cm]?[jt]s)$/;
const BUILTIN = new Set(builtinModules);

function sourceFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) {
      if (!SKIP_DIRS.has(name)) out.push(...sourceFiles(full));
    } else if (SOURCE.test(name) && !name.endsWith('.d.ts')) {
      out.push(full);
    }
  }
  return out;
}

/** The package a module specifier names (`@scope/name/sub` -> `@scope/name`), or undefined for relative and built-in ones. */
export function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  return BUILTIN.has(name) ? undefined : name;
}

const IMPORT = /^\s*(?:import|export)\s(?:[^'";]*?\sfrom\s*)?['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/gm;

/** The packages a source text imports (static, side-effect, type-only and literal dynamic imports). */
export function importedPackages(text: string): Set<string> {
  const found = new Set<string>();
  for (const m of text.matchAll(IMPORT)) {
    const name = packageOf(m[1] ?? m[2] ?? m[3]!);
    if (name !== undefined) found.add(name);
  }
  return found;
}

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const manifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

/** Which file first imports each package, over the files under `dirs` of `root`. */
function importsUnder(root: string, dirs: string[], skip: (file: string) => boolean = () => false): Map<string, string> {
  const found = new Map<string, string>();
  for (const d of dirs) {
    for (const f of sourceFiles(join(root, d))) {
      if (skip(f)) continue;
      for (const p of importedPackages(readFileSync(f, 'utf8'))) if (!found.has(p)) found.set(p, relative(root, f));
    }
  }
  return found;
}

/** Every problem of the monorepo at `root`: one line each, empty when tidy. */
export function dependencyProblems(root: string, knownUnused: readonly [string, string, string][] = KNOWN_UNUSED): string[] {
  const problems: string[] = [];
  const rootManifest = manifest(root);
  const rootDeps = new Set(Object.keys(rootManifest.dependencies ?? {}));
  const rootAll = new Set([...rootDeps, ...Object.keys(rootManifest.devDependencies ?? {})]);
  const tools = ROOT_TEST_TOOLS.filter((t) => rootAll.has(t));
  const packagesDir = join(root, 'packages');
  for (const name of readdirSync(packagesDir).sort()) {
    const dir = join(packagesDir, name);
    let m: Manifest;
    try {
      m = manifest(dir);
    } catch {
      continue;
    }
    const deps = new Set([...Object.keys(m.dependencies ?? {}), ...Object.keys(m.peerDependencies ?? {})]);
    const dev = new Set(Object.keys(m.devDependencies ?? {}));
    const runtime = importsUnder(root, [join('packages', name, 'src'), join('packages', name, 'bin')]);
    runtime.delete(m.name);
    for (const [p, file] of runtime) if (!deps.has(p)) problems.push(`${m.name}: ${p} is imported by ${file} but is not a dependency`);
    for (const p of Object.keys(m.dependencies ?? {})) {
      if (runtime.has(p) || knownUnused.some(([pkg, dep]) => pkg === m.name && dep === p)) continue;
      problems.push(`${m.name}: the dependency ${p} is imported by nothing in src/ or bin/`);
    }
    const tests = importsUnder(root, [join('packages', name, 'test')]);
    tests.delete(m.name);
    for (const [p, file] of tests) {
      if (!deps.has(p) && !dev.has(p) && !tools.includes(p)) problems.push(`${m.name}: ${p} is imported by ${file} but is not declared`);
    }
  }
  // the devnet runs as a root script (npm run devnet): what it imports is a root dependency
  const isDevnetTest = (f: string): boolean => relative(root, f).startsWith(join('devnet', 'test'));
  for (const [p, file] of importsUnder(root, ['devnet'], isDevnetTest)) {
    if (!rootDeps.has(p)) problems.push(`root: ${p} is imported by ${file} but is not a dependency`);
  }
  const rootFiles = readdirSync(root)
    .filter((f) => SOURCE.test(f))
    .map((f) => join(root, f));
  const others = importsUnder(root, ['scripts', 'test', join('devnet', 'test')]);
  for (const f of rootFiles) for (const p of importedPackages(readFileSync(f, 'utf8'))) if (!others.has(p)) others.set(p, relative(root, f));
  for (const [p, file] of others) if (!rootAll.has(p)) problems.push(`root: ${p} is imported by ${file} but is not declared`);
  return problems;
}

describe('repository: dependencies', () => {
  it('runtime dependencies are what each package imports; every imported package is declared where it is imported', () => {
    expect(dependencyProblems(ROOT)).to.deep.equal([]);
  });

  it('every known exception is still needed (a dependency that is declared and not imported)', () => {
    for (const [pkg, dep] of KNOWN_UNUSED) {
      const dir = readdirSync(join(ROOT, 'packages'))
        .map((n) => join(ROOT, 'packages', n))
        .find((d) => manifest(d).name === pkg)!;
      expect(manifest(dir).dependencies ?? {}, `${pkg} still declares ${dep}`).to.have.property(dep);
      expect(
        dependencyProblems(
          ROOT,
          KNOWN_UNUSED.filter(([p, d]) => p !== pkg || d !== dep),
        ),
      ).to.include(`${pkg}: the dependency ${dep} is imported by nothing in src/ or bin/`);
    }
  });

  it('reads import forms: static, type-only, side-effect, re-export, dynamic; scoped subpaths; not relative or built-in', () => {
    const text = [
      "import { a } from '@scope/one/sub';",
      "import type { T } from 'two';",
      "import 'three/polyfill';",
      "export { b } from 'four';",
      // split so that this file's own scan does not read it as an import of 'five'
      'const m = await im' + "port('five');",
      "import {\n  c,\n  d,\n} from 'six';",
      "import { e } from './local.js';",
      "import { f } from 'node:fs';",
      "import { g } from 'path';",
      '// the words import and from in a comment do not count',
    ].join('\n');
    expect([...importedPackages(text)].sort()).to.deep.equal(['@scope/one', 'five', 'four', 'six', 'three', 'two']);
  });

  it('finds an undeclared import, an unused runtime dependency, an undeclared test import and an undeclared devnet import', () => {
    const dir = mkdtempSync(join(tmpdir(), 'quire-deps-'));
    try {
      const put = (path: string, text: string): void => {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      };
      put('package.json', JSON.stringify({ name: 'root', dependencies: { '@x/a': '1' }, devDependencies: { chai: '1' } }));
      put('packages/a/package.json', JSON.stringify({ name: '@x/a', dependencies: { left: '1', used: '1' } }));
      put('packages/a/src/index.ts', "import { u } from 'used';\nimport type { M } from 'missing';\nimport { self } from '@x/a/sub';\n");
      put('packages/a/test/a.test.ts', "import { expect } from 'chai';\nimport fc from 'fast-check';\n");
      put('devnet/devnet.ts', "import { a } from '@x/a';\nimport { Command } from 'commander';\n");
      put('devnet/test/d.test.ts', "import { expect } from 'chai';\n");
      put('scripts/s.ts', "import { x } from 'nowhere';\n");
      expect(dependencyProblems(dir, [])).to.deep.equal([
        `@x/a: missing is imported by ${join('packages', 'a', 'src', 'index.ts')} but is not a dependency`,
        '@x/a: the dependency left is imported by nothing in src/ or bin/',
        `@x/a: fast-check is imported by ${join('packages', 'a', 'test', 'a.test.ts')} but is not declared`,
        `root: commander is imported by ${join('devnet', 'devnet.ts')} but is not a dependency`,
        `root: nowhere is imported by ${join('scripts', 's.ts')} but is not declared`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
