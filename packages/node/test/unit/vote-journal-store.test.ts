// The 3PC vote journal file (#15 F8): what save() wrote is what load() returns after a restart, the
// journaled PRE-PREPAREs with their requests included.
import { expect } from 'chai';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileVoteJournalStore, VOTES_LOG_MAX_BYTES } from '../../src/vote-journal-store.js';

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
  const id = (s: number): (typeof journal.prepared)[number] => ({ view_no: 0, pp_view_no: 0, pp_seq_no: s, pp_digest: s.toString(16).padStart(64, '0') });

  it('appends the votes of each save to the file it rewrote at its first save (no replace per save), and loads the last', () => {
    const file = join(dir, '3pc-votes.json');
    writeFileSync(file, `${JSON.stringify(journal)}\n{"preprepared": [`);
    const store = new FileVoteJournalStore(file);
    store.save({ preprepared: [id(1)], prepared: [] });
    const ino = statSync(file).ino;
    expect(readFileSync(file, 'utf8'), 'what the first save found is rewritten').to.equal(`${JSON.stringify({ preprepared: [id(1)], prepared: [] })}\n`);
    for (let s = 2; s <= 20; s++) store.save({ preprepared: [id(s - 1), id(s)], prepared: [id(s - 1)] });
    expect(statSync(file).ino, 'appended in place').to.equal(ino);
    expect(readFileSync(file, 'utf8').split('\n')).to.have.length(21);
    store.close();
    store.close();
    const errors: string[] = [];
    expect(new FileVoteJournalStore(file, {}, (r) => errors.push(r)).load()).to.deep.equal({ preprepared: [id(19), id(20)], prepared: [id(19)] });
    expect(errors).to.deep.equal([]);
    // after close(), a save starts the file again
    store.save(journal);
    expect(statSync(file).ino).to.not.equal(ino);
    expect(new FileVoteJournalStore(file).load()).to.deep.equal(journal);
    store.close();
  });

  it('takes the record before a torn last one (a crash during its write), and reports it', () => {
    const file = join(dir, '3pc-votes.json');
    const store = new FileVoteJournalStore(file);
    store.save({ preprepared: [id(1)], prepared: [] });
    store.save(journal);
    store.close();
    const full = `${JSON.stringify({ preprepared: [id(7)], prepared: [id(7)] })}\n`;
    for (const cut of [1, 20, full.length - 2]) {
      const before = readFileSync(file, 'utf8');
      appendFileSync(file, full.slice(0, cut));
      const errors: string[] = [];
      expect(new FileVoteJournalStore(file, {}, (r) => errors.push(r)).load(), `cut at ${cut}`).to.deep.equal(journal);
      expect(errors).to.have.length(1);
      expect(errors[0]).to.match(/torn last record/);
      writeFileSync(file, before);
    }
  });

  it('keeps the votes file bounded: rewritten as its last record once it would pass VOTES_LOG_MAX_BYTES', () => {
    const file = join(dir, '3pc-votes.json');
    const store = new FileVoteJournalStore(file);
    const ids = Array.from({ length: 150 }, (_, k) => id(k + 1));
    const line = JSON.stringify({ preprepared: ids, prepared: ids }).length + 1;
    const saves = Math.ceil((3 * VOTES_LOG_MAX_BYTES) / line);
    let replaced = 0;
    let ino = -1;
    for (let i = 0; i < saves; i++) {
      store.save({ preprepared: ids.slice(0, 100 + (i % 50)), prepared: ids.slice(0, 99 + (i % 50)) });
      const now = statSync(file);
      expect(now.size).to.be.at.most(VOTES_LOG_MAX_BYTES);
      if (now.ino !== ino) replaced++;
      ino = now.ino;
    }
    expect(replaced).to.be.within(3, 5);
    const last = saves - 1;
    expect(new FileVoteJournalStore(file).load()).to.deep.equal({ preprepared: ids.slice(0, 100 + (last % 50)), prepared: ids.slice(0, 99 + (last % 50)) });
    store.close();
  });
});
