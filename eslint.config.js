// Lint configuration: typescript-eslint's recommended rules (syntax-only, fast enough for CI on
// every run) plus a few rules that keep the package graph and async code honest.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The package graph of docs/architecture.md: what each package's sources may import. A package's
// public face is its entry (`@quire/<name>`), or a subpath its package.json exports; deep paths into
// another package are never imported (a subpath is allowed where its package is). Checked by
// test/lint/import-boundaries.test.ts.
const PACKAGES = ['common', 'crypto', 'storage', 'requests', 'consensus', 'network', 'node', 'client', 'gateway', 'testing'];
const MAY_IMPORT = {
  common: [],
  crypto: ['common'],
  storage: ['common'],
  requests: ['common', 'crypto', 'storage'],
  consensus: ['common', 'crypto', 'storage/proofs'],
  network: ['common', 'crypto'],
  node: ['common', 'crypto', 'storage', 'requests', 'consensus', 'network'],
  client: ['common', 'crypto', 'storage/proofs'],
  gateway: ['common', 'client'],
  // the test helpers: imported by test suites only, never by a package's sources
  testing: ['common'],
};
const SUBPATHS = ['common/polyfill', 'storage/proofs', 'consensus/sim'];

function importBoundary(pkg) {
  const allowed = MAY_IMPORT[pkg];
  const forbidden = PACKAGES.filter((p) => p !== pkg && !allowed.includes(p));
  const why = `docs/architecture.md: @quire/${pkg} may import ${allowed.length > 0 ? allowed.map((a) => `@quire/${a}`).join(', ') : 'no other package'}`;
  return {
    files: [`packages/${pkg}/src/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: forbidden.map((p) => ({ name: `@quire/${p}`, message: why })),
          patterns: [
            // a subpath the package exports is allowed where the table allows it; any other deep path never is
            {
              group: ['@quire/*/**', ...SUBPATHS.filter((sp) => allowed.includes(sp) || allowed.includes(sp.split('/')[0])).map((sp) => `!@quire/${sp}`)],
              message: `${why}; a package is imported through its entry or an exported subpath`,
            },
          ],
        },
      ],
    },
  };
}

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'devnet/.data/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        URL: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        queueMicrotask: 'readonly',
        performance: 'readonly',
        structuredClone: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-constant-condition': ['error', { checkLoops: false }],
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression[callee.object.name='it'][callee.property.name='only']", message: 'focused test' },
        { selector: "CallExpression[callee.object.name='describe'][callee.property.name='only']", message: 'focused test' },
      ],
    },
  },
  {
    // typed rules, on the packages' sources (each package's tsconfig.json is their project)
    files: ['packages/*/src/**/*.ts'],
    // (lint-planted.ts: the file the lint's own test plants a violation in, linted as text, never on disk)
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['packages/*/src/lint-planted.ts', 'packages/*/src/*/lint-planted.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // none left in the sources: a value that may be absent is narrowed, or checked with a coded error
      '@typescript-eslint/no-non-null-assertion': 'error',
    },
  },
  {
    files: ['**/test/**/*.ts', 'test/**/*.ts'],
    languageOptions: {
      globals: { describe: 'readonly', it: 'readonly', before: 'readonly', after: 'readonly', beforeEach: 'readonly', afterEach: 'readonly' },
    },
    rules: { '@typescript-eslint/no-unused-expressions': 'off' },
  },
  ...PACKAGES.map(importBoundary),
);
