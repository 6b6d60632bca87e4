// The pieces of the VALIDATOR_INFO answer that do not need a running pool: the configuration is
// answered without secret-looking members, and the disk use of the data directory is the sum of
// its files (symlinks not followed), bounded. The whole answer is checked on a real pool in
// test/e2e/validator-info.test.ts.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { defaultNodeConfig } from '../../src/config.js';
import { directoryBytes, withoutSecrets } from '../../src/validator-info.js';

describe('validator info helpers', () => {
  it('withoutSecrets keeps the config as is and drops secret-looking members at any depth', () => {
    expect(withoutSecrets(defaultNodeConfig)).to.deep.equal(JSON.parse(JSON.stringify(defaultNodeConfig)));
    const v = { a: 1, seed: 'x', nested: { privateKey: 'k', apiToken: 't', keep: [{ Password: 'p', ok: true }] }, blsSecret: 's', keysFile: 'node-keys.json' };
    expect(withoutSecrets(v)).to.deep.equal({ a: 1, nested: { keep: [{ ok: true }] }, keysFile: 'node-keys.json' });
    expect(withoutSecrets(null)).to.equal(null);
    expect(withoutSecrets([1, 'a'])).to.deep.equal([1, 'a']);
  });

  it('directoryBytes sums the files of a tree, does not follow symlinks, and refuses a missing root', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quire-vinfo-unit-'));
    try {
      writeFileSync(join(dir, 'a'), Buffer.alloc(1000));
      mkdirSync(join(dir, 'db', 'sub'), { recursive: true });
      writeFileSync(join(dir, 'db', 'b'), Buffer.alloc(234));
      writeFileSync(join(dir, 'db', 'sub', 'c'), Buffer.alloc(66));
      const outside = mkdtempSync(join(tmpdir(), 'quire-vinfo-out-'));
      writeFileSync(join(outside, 'big'), Buffer.alloc(50_000));
      symlinkSync(outside, join(dir, 'link'));
      try {
        expect(await directoryBytes(dir)).to.deep.equal({ bytes: 1300, complete: true });
      } finally {
        rmSync(outside, { recursive: true, force: true });
      }
      let err: unknown;
      await directoryBytes(join(dir, 'nope')).catch((e: unknown) => (err = e));
      expect((err as NodeJS.ErrnoException).code).to.equal('ENOENT');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
