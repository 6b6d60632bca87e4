import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ManifestFormatError, readManifest } from '../../src/manifest.js';
import { openLevelKvStore } from '../../src/index.js';

describe('LevelDB MANIFEST reader', () => {
  it('lists exactly the table files of the current version', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quire-manifest-'));
    try {
      const kv = await openLevelKvStore(dir, { writeBufferSize: 16 * 1024 });
      const value = new Uint8Array(512).fill(1);
      for (let b = 0; b < 20; b++) {
        const batch = kv.batch();
        for (let i = 0; i < 50; i++) batch.put('x', new TextEncoder().encode(`k${b}-${i}`), value);
        await batch.write();
      }
      await kv.close();
      const files = readdirSync(dir);
      const current = readFileSync(join(dir, 'CURRENT'), 'utf8').trim();
      const summary = readManifest(readFileSync(join(dir, current)));
      const tables = files
        .filter((f) => /\.(ldb|sst)$/.test(f))
        .map((f) => Number(f.split('.')[0]))
        .sort((a, b) => a - b);
      expect(tables.length).to.be.greaterThan(0);
      // every live table is on disk; a table the MANIFEST does not list (a flush that had not been
      // recorded yet) carries a number the database had not yet recorded as allocated
      for (const n of summary.liveTables) expect(tables).to.include(n);
      expect(summary.liveTables.size).to.be.greaterThan(0);
      for (const n of tables) if (!summary.liveTables.has(n)) expect(n).to.be.at.least(summary.nextFileNumber);
      expect(summary.nextFileNumber).to.be.greaterThan(Math.max(...summary.liveTables));
      expect(summary.logNumber).to.be.greaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects bytes that are not a MANIFEST', () => {
    expect(() => readManifest(new Uint8Array([1, 2, 3, 4, 200, 0, 1, 9]))).to.throw(ManifestFormatError);
    expect(() => readManifest(new Uint8Array(0))).to.throw(ManifestFormatError);
  });
});
