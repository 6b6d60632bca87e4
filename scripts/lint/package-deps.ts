// Each package declares the packages of ours it imports, and only those (#22): the @quire/* packages its src/
// imports equal its `dependencies`, and its tests import nothing it declares in neither `dependencies` nor
// `devDependencies`. A dependency declared and never imported ("consensus depends on requests without importing it")
// and an import resting on a hoisted workspace link are both reported. Run: npm run check:deps (and test/lint).
import ts from 'typescript';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface DependencyProblem {
  pkg: string;
  problem: 'imported, not a dependency' | 'a dependency, never imported' | 'imported by a test, not declared';
  name: string;
}

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    if (e === 'node_modules' || e === 'dist') continue;
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (/\.(ts|mts|js|mjs)$/.test(e) && !e.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The packages of ours (`@quire/<name>`, subpaths folded into their package) that the files under `dir` import. */
export function quireImports(dir: string): Set<string> {
  const found = new Set<string>();
  for (const file of sourceFiles(dir)) {
    for (const ref of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      const m = /^(@quire\/[^/]+)/.exec(ref.fileName);
      if (m?.[1] !== undefined) found.add(m[1]);
    }
  }
  return found;
}

function declared(pkgJson: Record<string, unknown>, field: 'dependencies' | 'devDependencies'): Set<string> {
  const deps = pkgJson[field];
  return new Set(typeof deps === 'object' && deps !== null ? Object.keys(deps).filter((d) => d.startsWith('@quire/')) : []);
}

/** The mismatches between what the package in `dir` imports and what its package.json declares. */
export function dependencyProblems(dir: string): DependencyProblem[] {
  const pkgJson = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  const pkg = String(pkgJson.name);
  const deps = declared(pkgJson, 'dependencies');
  const devDeps = declared(pkgJson, 'devDependencies');
  const fromSrc = quireImports(join(dir, 'src'));
  fromSrc.delete(pkg);
  const fromTests = quireImports(join(dir, 'test'));
  fromTests.delete(pkg);
  const out: DependencyProblem[] = [];
  for (const name of [...fromSrc].sort()) if (!deps.has(name)) out.push({ pkg, problem: 'imported, not a dependency', name });
  for (const name of [...deps].sort()) if (!fromSrc.has(name)) out.push({ pkg, problem: 'a dependency, never imported', name });
  for (const name of [...fromTests].sort()) if (!deps.has(name) && !devDeps.has(name)) out.push({ pkg, problem: 'imported by a test, not declared', name });
  return out;
}

/** The package folders of the workspace. */
export function packageDirs(root = process.cwd()): string[] {
  const base = resolve(root, 'packages');
  return readdirSync(base)
    .map((d) => join(base, d))
    .filter((d) => existsSync(join(d, 'package.json')))
    .sort();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const problems = packageDirs().flatMap(dependencyProblems);
  for (const p of problems) console.log(`${p.pkg}: ${p.name}: ${p.problem}`);
  console.log(`${problems.length} dependency mismatches`);
  process.exitCode = problems.length > 0 ? 1 : 0;
}
