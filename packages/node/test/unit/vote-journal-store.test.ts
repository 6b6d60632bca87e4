// The 3PC vote journal file (#15 F8): what save() wrote is what load() returns after a restart, the
// journaled PRE-PREPAREs with their requests included.
import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
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

  const pp = {
    op: 'PREPREPARE' as const,
    instId: 0,
    viewNo: 2,
    ppSeqNo: 42,
    ppTime: 1_700_000_000,
    reqIdr: ['c'.repeat(64)],
    discarded: '[]',
    digest: 'b'.repeat(64),
    ledgerId: 1,
    stateRootHash: 'S',
    txnRootHash: 'T',
    sub_seq_no: 0,
    final: true,
    poolStateRootHash: 'P',
    auditTxnRootHash: 'A',
    originalViewNo: undefined,
  };
  const request = {
    identifier: 'LibindyDid111111111111',
    reqId: 1795703067563113080n,
    operation: { type: '1', dest: 'RfoA7oboFMiFuJPEtPdvKP' },
    protocolVersion: 2,
    signature: 'sig',
  };

  it('keeps each journaled PRE-PREPARE with its requests in a file of its own, written once, removed once no longer journaled', () => {
    const file = join(dir, '3pc-votes.json');
    const store = new FileVoteJournalStore(file);
    store.save({ ...journal, batches: [{ pp, requests: [request] }] });
    store.save({ ...journal, batches: [{ pp, requests: [request] }] });
    expect(readdirSync(`${file}.batches`)).to.deep.equal([`2-42-${'b'.repeat(64)}.mpk`]);
    const loaded = new FileVoteJournalStore(file).load()!;
    const { originalViewNo: _omitted, ...wire } = pp;
    expect(loaded.batches).to.deep.equal([{ pp: wire, requests: [request] }]);
    expect(typeof (loaded.batches![0]!.requests[0] as { reqId: unknown }).reqId, 'a reqId above 2^53 stays exact').to.equal('bigint');
    // ordered: no longer journaled, the file goes (also from a store that only loaded it)
    const restarted = new FileVoteJournalStore(file);
    restarted.load();
    restarted.save({ ...journal, batches: [] });
    expect(readdirSync(`${file}.batches`)).to.deep.equal([]);
    expect(new FileVoteJournalStore(file).load()).to.deep.equal(journal);
  });

  it('reports a batch file that cannot be read and loads the rest', () => {
    const file = join(dir, '3pc-votes.json');
    new FileVoteJournalStore(file).save({ ...journal, batches: [{ pp, requests: [request] }] });
    writeFileSync(join(`${file}.batches`, `2-43-${'d'.repeat(64)}.mpk`), new Uint8Array([0xc1]));
    const errors: string[] = [];
    const loaded = new FileVoteJournalStore(file, {}, (r) => errors.push(r)).load()!;
    expect(loaded.batches).to.have.length(1);
    expect(errors).to.have.length(1);
    expect(errors[0]).to.match(/batch 2-43-d+\.mpk unreadable/);
  });
});
