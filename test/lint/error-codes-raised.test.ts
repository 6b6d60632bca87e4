// Every code of the packages' error tables is raised (or at least named) by some source outside its table (#22): a
// code nothing reaches promises a refusal that never happens, and its documentation misleads whoever handles errors.
// A table is a `export const XErrorCode = { ... }` object (its keys) or, for @quire/requests, whose codes are the keys
// of its catalogue, the `export type RequestErrorData = { ... }` type. A code counts as used where a source file names
// it as `.CODE` or `'CODE'` on a line other than the table's, its data type's or its catalogue's entry for it.
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface Table {
  file: string;
  name: string;
  codes: string[];
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The error tables of a set of source files, by their shapes named above. */
export function errorTables(files: readonly { file: string; text: string }[]): Table[] {
  const tables: Table[] = [];
  for (const { file, text } of files) {
    for (const m of text.matchAll(/export const (\w+ErrorCode) = \{([\s\S]*?)\n\}/g)) {
      tables.push({ file, name: m[1] ?? '', codes: [...(m[2] ?? '').matchAll(/^\s*([A-Z][A-Z0-9_]*):/gm)].map((k) => k[1] ?? '') });
    }
    const data = /export type RequestErrorData = \{([\s\S]*?)\n\};/.exec(text);
    if (data !== null) tables.push({ file, name: 'RequestErrorCode', codes: [...(data[1] ?? '').matchAll(/^\s*([A-Z][A-Z0-9_]*):/gm)].map((k) => k[1] ?? '') });
  }
  return tables;
}

/** The codes of `tables` that no line of `files` names, other than their own entries. */
export function unusedCodes(files: readonly { file: string; text: string }[]): string[] {
  const lines = files.flatMap(({ file, text }) => text.split('\n').map((line) => ({ file, line })));
  const out: string[] = [];
  for (const t of errorTables(files)) {
    for (const code of t.codes) {
      const named = new RegExp(`(\\.${code}\\b|'${code}')`);
      const entry = new RegExp(`^\\s*${code}:`);
      if (!lines.some(({ file, line }) => named.test(line) && !(file === t.file && entry.test(line)))) out.push(`${t.name}.${code}`);
    }
  }
  return out;
}

describe("every code of the packages' error tables is raised somewhere (#22)", function () {
  this.timeout(60_000);

  it('names no code that no source of the packages, scripts or devnet reaches', () => {
    const roots = [...readdirSync('packages').map((p) => join('packages', p, 'src')), 'scripts', 'devnet'].filter((d) => {
      try {
        return statSync(d).isDirectory();
      } catch {
        return false;
      }
    });
    const files = roots.flatMap(sourceFiles).map((file) => ({ file, text: readFileSync(file, 'utf8') }));
    const tables = errorTables(files);
    expect(tables.map((t) => t.name)).to.include.members(['ConsensusErrorCode', 'NodeErrorCode', 'RequestErrorCode', 'StorageErrorCode']);
    expect(unusedCodes(files)).to.deep.equal([]);
  });

  it('reports a planted code that is only in its table, and not one raised elsewhere', () => {
    const files = [
      {
        file: 'a/errors.ts',
        text: "export const PlantedErrorCode = {\n  /** raised */\n  USED: 'PLANTED_USED',\n  NEVER: 'PLANTED_NEVER',\n} as const;\n",
      },
      { file: 'a/raise.ts', text: 'throw new PlantedError(PlantedErrorCode.USED, {});\nconst x = { NEVER: 1 };\n' },
      { file: 'b/errors.ts', text: 'export type RequestErrorData = {\n  RAISED: None;\n  DEAD: None;\n};\nconst CATALOGUE = {\n  DEAD: { kind },\n};\n' },
      { file: 'b/types.ts', text: "throw new RequestError(RequestErrorCode.RAISED);\nif (e.code === 'X') return;\n" },
    ];
    expect(unusedCodes(files)).to.deep.equal(['PlantedErrorCode.NEVER', 'RequestErrorCode.DEAD']);
  });
});
