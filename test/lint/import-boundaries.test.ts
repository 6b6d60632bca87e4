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
    ['packages/consensus/src/planted.ts', "import { Ledger } from '@quire/storage';"],
    ['packages/consensus/src/planted.ts', "import { RequestExecutor } from '@quire/requests';"],
    ['packages/consensus/src/sim/planted.ts', "export { NodeHost } from '@quire/network';"],
    ['packages/client/src/planted.ts', "import { QuireNode } from '@quire/node';"],
    ['packages/client/src/planted.ts', "export * from '@quire/storage';"],
    ['packages/gateway/src/planted.ts', "import { verifyTrieProofAt } from '@quire/storage/proofs';"],
    ['packages/common/src/planted.ts', "import { sha256 } from '@quire/crypto';"],
    ['packages/network/src/planted.ts', "import { batchDigest } from '@quire/common/src/digests.js';"],
    ['packages/storage/src/planted.ts', "import type { ConsensusCore } from '@quire/consensus';"],
    ['packages/node/src/planted.ts', "import { expectCode } from '@quire/testing';"],
  ];
  for (const [file, source] of planted) {
    it(`reports ${source} in ${file}`, async () => {
      const errors = await boundaryErrors(file, source);
      expect(errors, source).to.have.length(1);
      expect(errors[0]).to.contain('docs/architecture.md');
    });
  }

  const allowed: [string, string][] = [
    ['packages/consensus/src/planted.ts', "import { multiSignatureProblem } from '@quire/storage/proofs';"],
    ['packages/client/src/planted.ts', "import '@quire/common/polyfill';"],
    ['packages/node/src/planted.ts', "import { ConsensusCore } from '@quire/consensus';\nimport { Ledger } from '@quire/storage';"],
    ['packages/gateway/src/planted.ts', "import { Pool } from '@quire/client';"],
    ['test/planted.ts', "import { QuireNode } from '@quire/node';"],
    ['packages/storage/test/unit/planted.ts', "import { expectCodeAsync } from '@quire/testing';"],
  ];
  for (const [file, source] of allowed) {
    it(`allows ${source.split('\n').join(' ')} in ${file}`, async () => {
      expect(await boundaryErrors(file, source)).to.deep.equal([]);
    });
  }
});
