// Public names exported by two packages with different definitions: the same name meaning two things
// across the package graph (a rule written twice, two shapes of one message) is how the signer and
// the verifier drift apart. `npm run check:exports` lists them; test/lint/exported-twice.test.ts
// fails on any such name not in KNOWN_EXPORTED_TWICE, the list of those still to be merged, which
// only shrinks. A name re-exported from the package that defines it is one definition, not two.
import ts from 'typescript';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The packages whose entries are checked (the suites' shared helpers too: a name they export means one thing). */
export const PACKAGES = ['common', 'crypto', 'storage', 'requests', 'consensus', 'network', 'node', 'client', 'gateway', 'testing'] as const;

/** Exported twice with different definitions today; to be merged into one definition each (#22). */
export const KNOWN_EXPORTED_TWICE: readonly string[] = [];

export interface ExportedTwice {
  name: string;
  /** package -> file:offset of the declaration its export resolves to */
  definitions: Record<string, string>;
}

/** The names that entries of different packages export with different declarations. */
export function exportedTwice(entries: readonly { pkg: string; file: string }[], root = process.cwd()): ExportedTwice[] {
  const program = ts.createProgram(
    entries.map((e) => e.file),
    {
      noEmit: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2023,
      customConditions: ['quire-source'],
      skipLibCheck: true,
      strict: true,
    },
  );
  const checker = program.getTypeChecker();
  const byName = new Map<string, Map<string, string>>();
  for (const e of entries) {
    const sf = program.getSourceFile(e.file);
    const mod = sf === undefined ? undefined : checker.getSymbolAtLocation(sf);
    if (mod === undefined) throw new Error(`no module for ${e.file}`);
    for (const sym of checker.getExportsOfModule(mod)) {
      const target = sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym;
      const decl = target.declarations?.[0];
      const where = decl === undefined ? `${e.pkg}:?` : `${decl.getSourceFile().fileName.replace(`${root}/`, '')}:${decl.getStart()}`;
      const m = byName.get(sym.name) ?? new Map<string, string>();
      m.set(e.pkg, where);
      byName.set(sym.name, m);
    }
  }
  const out: ExportedTwice[] = [];
  for (const [name, m] of byName) if (new Set(m.values()).size > 1) out.push({ name, definitions: Object.fromEntries(m) });
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Every public entry of the packages: the main one and each subpath of the `exports` map (`@quire/storage/proofs`,
 * `@quire/consensus/sim`...), by its `quire-source` file; an entry is named `<package>` or `<package>/<subpath>`.
 */
export function packageEntries(root = process.cwd()): { pkg: string; file: string }[] {
  return PACKAGES.flatMap((pkg) => {
    const dir = resolve(root, `packages/${pkg}`);
    const manifest = JSON.parse(readFileSync(resolve(dir, 'package.json'), 'utf8')) as { exports?: Record<string, unknown> };
    const entries: { pkg: string; file: string }[] = [];
    for (const [subpath, target] of Object.entries(manifest.exports ?? { '.': {} })) {
      const source = typeof target === 'object' && target !== null ? (target as Record<string, unknown>)['quire-source'] : undefined;
      if (typeof source !== 'string' || !source.endsWith('.ts')) continue;
      entries.push({ pkg: subpath === '.' ? pkg : `${pkg}/${subpath.replace(/^\.\//, '')}`, file: resolve(dir, source) });
    }
    return entries;
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const found = exportedTwice(packageEntries());
  for (const f of found)
    console.log(
      `${KNOWN_EXPORTED_TWICE.includes(f.name) ? 'known' : 'NEW  '}  ${f.name}: ${Object.entries(f.definitions)
        .map(([p, d]) => `${p} ${d}`)
        .join(', ')}`,
    );
  const fresh = found.filter((f) => !KNOWN_EXPORTED_TWICE.includes(f.name));
  console.log(`${found.length} names exported twice with different definitions (${fresh.length} not in the known list)`);
  process.exitCode = fresh.length > 0 ? 1 : 0;
}
