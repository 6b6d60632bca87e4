// The package graph of docs/architecture.md, enforced by the lint (eslint.config.js, `npm run lint`
// in `npm test`): planted imports that break it are reported, the imports the table allows are not.
import { expect } from 'chai';
import { ESLint } from 'eslint';

const eslint = new ESLint({ cwd: process.cwd() });

async function boundaryErrors(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${source}\nexport const planted = 1;\n`, { filePath: file });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('import boundaries of the package graph (#22)', function () {
  this.timeout(60_000);

  const planted: [string, string][] = [
    ['packages/consensus/src/lint-planted.ts', "import { Ledger } from '@quire/storage';"],
    ['packages/consensus/src/lint-planted.ts', "import { RequestExecutor } from '@quire/requests';"],
    ['packages/consensus/src/sim/lint-planted.ts', "export { NodeHost } from '@quire/network';"],
    ['packages/client/src/lint-planted.ts', "import { QuireNode } from '@quire/node';"],
    ['packages/client/src/lint-planted.ts', "export * from '@quire/storage';"],
    // the client owns its dialer and its libp2p stack: network is the validators' (#22)
    ['packages/client/src/lint-planted.ts', "import { NodeHost } from '@quire/network';"],
    ['packages/client/src/lint-planted.ts', "import { createQuireLibp2p } from '@quire/network/dial';"],
    ['packages/network/src/lint-planted.ts', "import { NodeConnection } from '@quire/client';"],
    ['packages/node/src/lint-planted.ts', "import { NodeConnection } from '@quire/client';"],
    ['packages/gateway/src/lint-planted.ts', "import { verifyTrieProofAt } from '@quire/storage/proofs';"],
    ['packages/common/src/lint-planted.ts', "import { sha256 } from '@quire/crypto';"],
    ['packages/network/src/lint-planted.ts', "import { batchDigest } from '@quire/common/src/digests.js';"],
    ['packages/storage/src/lint-planted.ts', "import type { ConsensusCore } from '@quire/consensus';"],
    ['packages/node/src/lint-planted.ts', "import { expectCode } from '@quire/testing';"],
  ];
  for (const [file, source] of planted) {
    it(`reports ${source} in ${file}`, async () => {
      const errors = await boundaryErrors(file, source);
      expect(errors, source).to.have.length(1);
      expect(errors[0]).to.contain('docs/architecture.md');
    });
  }

  const allowed: [string, string][] = [
    ['packages/consensus/src/lint-planted.ts', "import { multiSignatureProblem } from '@quire/storage/proofs';"],
    ['packages/client/src/lint-planted.ts', "import '@quire/common/polyfill';"],
    ['packages/node/src/lint-planted.ts', "import { ConsensusCore } from '@quire/consensus';\nimport { Ledger } from '@quire/storage';"],
    ['packages/gateway/src/lint-planted.ts', "import { Pool } from '@quire/client';"],
    ['test/planted.ts', "import { QuireNode } from '@quire/node';"],
    ['packages/storage/test/unit/planted.ts', "import { expectCodeAsync } from '@quire/testing';"],
    // the suites of the hosts dial them with the SDK's dialer, what users run
    ['packages/network/test/e2e/planted.ts', "import { NodeConnection } from '@quire/client';"],
    ['packages/node/test/e2e/planted.ts', "import { ClientRequestError, NodeConnection } from '@quire/client';"],
    ['packages/network/src/lint-planted.ts', "import { libp2pPrivateKeyFromSeed } from '@quire/crypto';"],
  ];
  for (const [file, source] of allowed) {
    it(`allows ${source.split('\n').join(' ')} in ${file}`, async () => {
      expect(await boundaryErrors(file, source)).to.deep.equal([]);
    });
  }
});

describe('typed lint of the sources (#22)', function () {
  this.timeout(120_000);

  async function ruleErrors(file: string, source: string, rule: string): Promise<string[]> {
    const [result] = await eslint.lintText(source, { filePath: file });
    expect(
      result!.messages.filter((m) => m.fatal === true).map((m) => m.message),
      'parse errors',
    ).to.deep.equal([]);
    return result!.messages.filter((m) => m.ruleId === rule).map((m) => m.message);
  }

  it('reports a floating promise in a package source, not one that is awaited, voided or caught', async () => {
    const head = 'export async function f(): Promise<void> {}\n';
    const rule = '@typescript-eslint/no-floating-promises';
    expect(await ruleErrors('packages/node/src/lint-planted.ts', `${head}export function g(): void {\n  f();\n}\n`, rule)).to.have.length(1);
    const handled = `${head}export async function g(): Promise<void> {\n  await f();\n  void f();\n  f().catch(() => undefined);\n}\n`;
    expect(await ruleErrors('packages/node/src/lint-planted.ts', handled, rule)).to.deep.equal([]);
  });

  it('refuses a non-null assertion in a package source as an error, not a narrowed value', async () => {
    const rule = '@typescript-eslint/no-non-null-assertion';
    const head = 'const m = new Map<string, number>();\n';
    const asserted = `${head}export function g(k: string): number {\n  return m.get(k)! + 1;\n}\n`;
    const [result] = await eslint.lintText(asserted, { filePath: 'packages/consensus/src/lint-planted.ts' });
    const found = result!.messages.filter((m) => m.ruleId === rule);
    expect(found).to.have.length(1);
    expect(found[0]!.severity, 'an error, not a warning').to.equal(2);
    const narrowed = `${head}export function g(k: string): number {\n  const v = m.get(k);\n  return v === undefined ? 0 : v + 1;\n}\n`;
    expect(await ruleErrors('packages/consensus/src/lint-planted.ts', narrowed, rule)).to.deep.equal([]);
  });
});
