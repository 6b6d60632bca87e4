// The refusal mark file of admission control (consensus intake.ts (3)): what save() wrote is what load() returns after
// a restart; no file is no mark; a file that holds no mark is an error (the core then takes its refusals as remembered
// for their whole time).
import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeError, NodeErrorCode } from '../../src/errors.js';
import { FileRefusalMarkStore } from '../../src/refusal-mark-store.js';

describe('FileRefusalMarkStore (#16)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'quire-refusal-mark-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('loads nothing before the first save, then the last mark saved (a new store: a restarted process)', () => {
    const file = join(dir, 'refusal-mark.json');
    expect(new FileRefusalMarkStore(file).load()).to.equal(undefined);
    new FileRefusalMarkStore(file).save(1_800_000_000);
    new FileRefusalMarkStore(file).save(1_800_000_131);
    expect(new FileRefusalMarkStore(file).load()).to.equal(1_800_000_131);
    expect(existsSync(`${file}.tmp`)).to.equal(false);
  });

  for (const [what, text] of [
    ['not JSON', '{"until": 18'],
    ['no until', '{}'],
    ['a string', '{"until": "1800000000"}'],
    ['a fraction', '{"until": 1800000000.5}'],
    ['null', 'null'],
  ] as const) {
    it(`throws on a file that holds no mark (${what})`, () => {
      const file = join(dir, 'refusal-mark.json');
      writeFileSync(file, text);
      expect(() => new FileRefusalMarkStore(file).load())
        .to.throw(NodeError)
        .with.property('code', NodeErrorCode.STORAGE_INCONSISTENT);
    });
  }
});
