// The 3PC vote journal file (#15 F8): what save() wrote is what load() returns after a restart, the
// journaled PRE-PREPAREs with their requests included; a save torn by a crash loads as the journal
// saved before it.
import { expect } from 'chai';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
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
  const request = { identifier: 'LibindyDid111111111111', reqId: 1795703067563113080n, operation: { type: '1', dest: 'RfoA7oboFMiFuJPEtPdvKP' }, protocolVersion: 2, signature: 'sig' };

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

  const id = (seq: number): { view_no: number; pp_view_no: number; pp_seq_no: number; pp_digest: string } => ({ view_no: 0, pp_view_no: 0, pp_seq_no: seq, pp_digest: seq.toString(16).padStart(64, '0') });
  /** the journal after `n` batches pre-prepared, the first half of them prepared */
  const votes = (n: number): { preprepared: ReturnType<typeof id>[]; prepared: ReturnType<typeof id>[] } => ({
    preprepared: Array.from({ length: n }, (_, i) => id(i + 1)),
    prepared: Array.from({ length: Math.floor(n / 2) }, (_, i) => id(i + 1)),
  });

  it('saves the votes in two copies taken in turn, overwritten in place (no temporary file, no rename), and loads the newer', () => {
    const file = join(dir, '3pc-votes.json');
    const store = new FileVoteJournalStore(file);
    for (let n = 0; n < 5; n++) {
      store.save(votes(n));
      expect(new FileVoteJournalStore(file).load(), `after save ${n}`).to.deep.equal(votes(n));
    }
    store.save(votes(1)); // shorter than the copy it overwrites: cut to its length
    expect(new FileVoteJournalStore(file).load()).to.deep.equal(votes(1));
    expect(readdirSync(dir).sort()).to.deep.equal(['3pc-votes.json', '3pc-votes.json.b']);
    store.close();
    store.close();
    // a store that did not load first goes on from the newer copy
    new FileVoteJournalStore(file).save(votes(7));
    expect(new FileVoteJournalStore(file).load()).to.deep.equal(votes(7));
  });

  it('writes each copy as its JSON line and the SHA-256 of that line; an entry changed after a save is saved as it is now', () => {
    const file = join(dir, '3pc-votes.json');
    const store = new FileVoteJournalStore(file);
    const j = votes(3);
    store.save(j);
    const line = JSON.stringify({ seq: 1, ...j });
    expect(readFileSync(file, 'utf8')).to.equal(`${line}\n${createHash('sha256').update(line).digest('hex')}\n`);
    j.preprepared[1]!.view_no = 5;
    store.save(j);
    expect(new FileVoteJournalStore(file).load()).to.deep.equal(j);
  });

  it('loads a journal of the single-file layout (no sequence number, no checksum) and saves the next one beside it', () => {
    const file = join(dir, '3pc-votes.json');
    writeFileSync(file, JSON.stringify(votes(3)));
    const store = new FileVoteJournalStore(file);
    expect(store.load()).to.deep.equal(votes(3));
    store.save(votes(4));
    expect(readFileSync(file, 'utf8'), 'the old copy is kept until the next save').to.equal(JSON.stringify(votes(3)));
    expect(new FileVoteJournalStore(file).load()).to.deep.equal(votes(4));
  });

  it('a copy torn by a crash (cut anywhere, or a byte changed) loads as the journal saved before it, and the torn copy is reported', () => {
    const file = join(dir, '3pc-votes.json');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 30 }), fc.nat(), fc.boolean(), (saves, shrinkTo, at, cut) => {
        rmSync(file, { force: true });
        rmSync(`${file}.b`, { force: true });
        const store = new FileVoteJournalStore(file);
        const sizes: number[] = [];
        // the journals grow and shrink, so a torn copy may hold the tail of an older, longer one
        for (let i = 0; i < saves; i++) sizes.push(i === saves - 1 ? shrinkTo : (i * 7) % 23);
        for (const n of sizes) store.save(votes(n));
        store.close();
        const last = saves % 2 === 1 ? file : `${file}.b`;
        const bytes = readFileSync(last);
        const pos = at % bytes.length;
        if (cut) writeFileSync(last, bytes.subarray(0, pos));
        else writeFileSync(last, Buffer.concat([bytes.subarray(0, pos), Buffer.from([bytes[pos]! ^ 0x01]), bytes.subarray(pos + 1)]));
        const errors: string[] = [];
        const loaded = new FileVoteJournalStore(file, {}, (r) => errors.push(r)).load();
        if (saves === 1) expect(loaded).to.equal(undefined);
        else expect(loaded).to.deep.equal(votes(sizes[saves - 2]!));
        expect(errors).to.have.length(1);
        // and the next save goes on from the whole copy, over the torn one
        const next = new FileVoteJournalStore(file);
        next.save(votes(5));
        next.close();
        expect(new FileVoteJournalStore(file).load()).to.deep.equal(votes(5));
      }),
      { numRuns: 150 },
    );
  });

  it('a copy with a sequence number and no checksum is not taken for a journal of the single-file layout', () => {
    const file = join(dir, '3pc-votes.json');
    writeFileSync(file, JSON.stringify({ seq: 9, ...votes(2) }));
    const errors: string[] = [];
    expect(new FileVoteJournalStore(file, {}, (r) => errors.push(r)).load()).to.equal(undefined);
    expect(errors).to.have.length(1);
  });
});
