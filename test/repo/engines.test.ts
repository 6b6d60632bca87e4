// No engine warning on the oldest Node the README supports (#18, item 6): `npm ci` on Node 20.19 warned
// `EBADENGINE p-retry@8.0.1 requires node >=22`. Every package the lock file installs must accept the lowest version
// of the root's `engines.node`.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** npm's own range rules (the `semver` package npm uses), typed for what this test calls. */
interface Semver {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string, options?: { includePrerelease?: boolean }): boolean;
}
const semver = createRequire(import.meta.url)('semver') as Semver;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface LockEntry {
  version?: string;
  engines?: unknown;
}

/** The lowest Node version a range accepts (`>=20.19` -> `20.19.0`). */
export function lowestNode(range: string): string {
  const v = semver.minVersion(range);
  if (v === null) throw new Error(`engines.node ${JSON.stringify(range)} accepts no version`);
  return v.version;
}

/** Every locked package whose `engines.node` refuses `node` (`<path>@<version> requires node <range>`). */
export function engineProblems(lock: { packages?: Record<string, LockEntry> }, node: string): string[] {
  const problems: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    const engines = entry.engines;
    const range = engines !== null && typeof engines === 'object' && !Array.isArray(engines) ? (engines as { node?: unknown }).node : undefined;
    if (typeof range !== 'string') continue;
    if (!semver.satisfies(node, range, { includePrerelease: true })) problems.push(`${path || '(root)'}@${entry.version ?? '?'} requires node ${range}`);
  }
  return problems;
}

describe('repository: engines', () => {
  const rootEngines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;

  it('the root names the Node versions it supports, and the README the same lowest one', () => {
    expect(lowestNode(rootEngines)).to.equal('20.19.0');
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).to.match(/Node(?:\.js)? (?:>= ?)?20\.19/);
  });

  it('every package in package-lock.json accepts the lowest supported Node (npm ci warns EBADENGINE otherwise)', () => {
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
    expect(Object.keys(lock.packages).length).to.be.greaterThan(100);
    expect(engineProblems(lock, lowestNode(rootEngines))).to.deep.equal([]);
  });

  it('finds a package that needs a newer Node (p-retry 8 needs 22)', () => {
    const lock = {
      packages: {
        '': { version: '0.1.0', engines: { node: '>=20.19' } },
        'node_modules/p-retry': { version: '8.0.1', engines: { node: '>=22' } },
        'node_modules/old': { version: '1.0.0', engines: { node: '>=0.10' } },
        'node_modules/listed': { version: '1.0.0', engines: ['node >= 0.8'] },
      },
    };
    expect(engineProblems(lock, '20.19.0')).to.deep.equal(['node_modules/p-retry@8.0.1 requires node >=22']);
  });
});
