// The 3PC vote journal file (#15 F8): what save() wrote is what load() returns after a restart.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileVoteJournalStore } from '../../src/vote-journal-store.js';

describe('FileVoteJournalStore (#15 F8)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'quire-votes-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const journal = {
    preprepared: [
      { view_no: 2, pp_view_no: 1, pp_seq_no: 41, pp_digest: 'a'.repeat(64) },
      { view_no: 2, pp_view_no: 2, pp_seq_no: 42, pp_digest: 'b'.repeat(64) },
    ],
    prepared: [{ view_no: 2, pp_view_no: 1, pp_seq_no: 41, pp_digest: 'a'.repeat(64) }],
  };

  it('loads nothing before the first save, then the last journal saved (a new store: a restarted process)', () => {
    const file = join(dir, '3pc-votes.json');
    expect(new FileVoteJournalStore(file).load()).to.equal(undefined);
    new FileVoteJournalStore(file).save({ preprepared: [], prepared: [] });
    new FileVoteJournalStore(file, { fsync: true }).save(journal);
    expect(new FileVoteJournalStore(file).load()).to.deep.equal(journal);
    expect(existsSync(`${file}.tmp`)).to.equal(false);
  });

  it('reports an unreadable file and starts without a journal; drops entries that are not BatchIDs', () => {
    const file = join(dir, '3pc-votes.json');
    writeFileSync(file, '{"preprepared": [');
    const errors: string[] = [];
    expect(new FileVoteJournalStore(file, {}, (r) => errors.push(r)).load()).to.equal(undefined);
    expect(errors).to.have.length(1);
    writeFileSync(file, JSON.stringify({ preprepared: [journal.preprepared[0], { view_no: 'x' }], prepared: [null] }));
    expect(new FileVoteJournalStore(file).load()).to.deep.equal({ preprepared: [journal.preprepared[0]], prepared: [] });
  });
});
