// The consensus core's 3PC vote journal on disk (#15 F8): the BatchIDs this node pre-prepared and
// prepared above its stable checkpoint, and the PRE-PREPAREs it pre-prepared and has not ordered
// with their requests. The core calls save() synchronously at the end of an event, before the
// PREPAREs and COMMITs of that event are sent, so the writes are synchronous too, in the page cache
// when save() returns, hence durable against a crash of the process (kill -9); `fsync: true` also
// survives a power loss, at the cost of synced writes per batch.
//
// The votes are a log of JSON lines, each the whole journal as saved, appended to a file kept open:
// the last line that parses is the journal (a line torn by a crash during its write is the only one
// that may not parse, and its PREPAREs or COMMITs were never sent, so the line before it is the
// journal). The log is rewritten as its one current line, by a file replaced by rename, at the first
// save of a process and whenever it would pass VOTES_LOG_MAX_BYTES: a replace by rename costs about
// 0.5 ms (ext4 writes the new file's blocks out at the rename over an existing file) and the core
// saves two or three times per ordered batch, an append about 20 us.
//
// Each journaled PRE-PREPARE is a file of its own in `<file>.batches/` (canonical MessagePack of
// {pp, requests}, the encoding of the peer wire), replaced by rename (never torn), written once when
// the batch is pre-prepared and removed once it is no longer journaled (ordered). A file that cannot
// be read is reported and treated as absent; the core checks what it reads back as it checks a
// peer's message.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { decodeMsgpack, encodeMsgpack } from '@quire/common';
import type { JournaledBatch, ThreePcVoteJournal, ThreePcVoteStore } from '@quire/consensus';
import { definedFields } from './peer-wire.js';

type BatchId = ThreePcVoteJournal['prepared'][number];

const BATCH_FILE = /^(\d+)-(\d+)-([0-9a-f]{64})\.mpk$/;

/** Size the votes log may reach before it is rewritten as its current line (a journal line is 10-50 KB). */
export const VOTES_LOG_MAX_BYTES = 1 << 20;

export class FileVoteJournalStore implements ThreePcVoteStore {
  private readonly batchDir: string;
  /** names of the batch files on disk (known after load() or the first save()) */
  private batchFiles: Set<string> | undefined;
  /** the votes log, open for appending once this process rewrote it (the first save) */
  private votesFd: number | undefined;
  /** bytes in the votes log */
  private votesBytes = 0;

  constructor(
    private readonly file: string,
    private readonly opts: { fsync?: boolean } = {},
    private readonly onError: (reason: string) => void = () => undefined,
  ) {
    this.batchDir = `${file}.batches`;
  }

  load(): ThreePcVoteJournal | undefined {
    const batches = this.loadBatches();
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      this.onError(`3PC vote journal unreadable: ${e instanceof Error ? e.message : String(e)}`);
      return undefined;
    }
    const parsed = this.lastRecord(text);
    if (parsed === undefined) return undefined;
    if (parsed === null || !Array.isArray(parsed.preprepared) || !Array.isArray(parsed.prepared)) {
      this.onError('3PC vote journal unreadable: not a journal');
      return undefined;
    }
    return { preprepared: parsed.preprepared.filter(isBatchId), prepared: parsed.prepared.filter(isBatchId), ...(batches.length > 0 ? { batches } : {}) };
  }

  save(journal: ThreePcVoteJournal): void {
    // the PRE-PREPAREs first: the votes never name a batch whose file is not written yet
    if (journal.batches !== undefined) this.saveBatches(journal.batches);
    this.appendVotes(Buffer.from(`${JSON.stringify({ preprepared: journal.preprepared, prepared: journal.prepared })}\n`, 'utf8'));
  }

  /** Closes the votes log (idempotent); a later save() rewrites it first. */
  close(): void {
    if (this.votesFd === undefined) return;
    const fd = this.votesFd;
    this.votesFd = undefined;
    closeSync(fd);
  }

  /**
   * The last line of the votes log that parses as JSON (lines before it are earlier saves). A last
   * line that does not parse is a write torn by a crash: reported, and the line before it taken.
   */
  private lastRecord(text: string): { preprepared?: unknown; prepared?: unknown } | null | undefined {
    const lines = text.split('\n');
    let torn: string | undefined;
    for (const line of lines.reverse()) {
      if (line.trim() === '') continue;
      try {
        const parsed = JSON.parse(line) as { preprepared?: unknown; prepared?: unknown } | null;
        if (torn !== undefined) this.onError(`3PC vote journal: a torn last record skipped (${torn}), the one before it taken`);
        return parsed;
      } catch (e) {
        torn ??= e instanceof Error ? e.message : String(e);
      }
    }
    if (torn !== undefined) this.onError(`3PC vote journal unreadable: ${torn}`);
    else this.onError('3PC vote journal unreadable: empty');
    return undefined;
  }

  /** Appends one line to the votes log; rewrites the log as that line at the first save and past VOTES_LOG_MAX_BYTES. */
  private appendVotes(line: Uint8Array): void {
    if (this.votesFd !== undefined && this.votesBytes + line.length <= VOTES_LOG_MAX_BYTES) {
      try {
        writeAll(this.votesFd, line);
        if (this.opts.fsync === true) fsyncSync(this.votesFd);
      } catch (e) {
        // a line may be half written: the next save starts the log again
        this.close();
        throw e;
      }
      this.votesBytes += line.length;
      return;
    }
    this.close();
    this.writeReplacing(this.file, line);
    this.votesFd = openSync(this.file, 'a');
    this.votesBytes = line.length;
  }

  private saveBatches(batches: readonly JournaledBatch[]): void {
    const files = this.knownBatchFiles();
    const keep = new Set<string>();
    for (const b of batches) {
      const name = batchFileName(b);
      keep.add(name);
      if (files.has(name)) continue;
      this.writeReplacing(join(this.batchDir, name), encodeMsgpack({ pp: definedFields(b.pp), requests: b.requests }));
      files.add(name);
    }
    for (const name of [...files]) {
      if (keep.has(name)) continue;
      try {
        unlinkSync(join(this.batchDir, name));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
      files.delete(name);
    }
  }

  private knownBatchFiles(): Set<string> {
    if (this.batchFiles === undefined) {
      mkdirSync(this.batchDir, { recursive: true });
      this.batchFiles = new Set(readdirSync(this.batchDir).filter((n) => BATCH_FILE.test(n)));
    }
    return this.batchFiles;
  }

  private loadBatches(): JournaledBatch[] {
    let names: string[];
    try {
      names = readdirSync(this.batchDir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
        this.onError(`3PC vote journal: batch directory unreadable: ${e instanceof Error ? e.message : String(e)}`);
      return [];
    }
    this.batchFiles = new Set();
    const out: JournaledBatch[] = [];
    for (const name of names) {
      if (!BATCH_FILE.test(name)) continue;
      this.batchFiles.add(name);
      let rec: { pp?: unknown; requests?: unknown } | null;
      try {
        rec = decodeMsgpack(readFileSync(join(this.batchDir, name))) as { pp?: unknown; requests?: unknown } | null;
      } catch (e) {
        this.onError(`3PC vote journal: batch ${name} unreadable: ${e instanceof Error ? e.message : String(e)}`);
        continue;
      }
      if (typeof rec !== 'object' || rec === null || !Array.isArray(rec.requests)) {
        this.onError(`3PC vote journal: batch ${name} unreadable: not a journaled batch`);
        continue;
      }
      // checked by the core as a peer's PRE-PREPARE and PROPAGATEs are
      out.push(rec as JournaledBatch);
    }
    return out;
  }

  private writeReplacing(path: string, data: Uint8Array): void {
    const tmp = `${path}.tmp`;
    const fd = openSync(tmp, 'w');
    try {
      writeAll(fd, data);
      if (this.opts.fsync === true) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let off = 0; off < bytes.length;) off += writeSync(fd, bytes, off);
}

function batchFileName(b: JournaledBatch): string {
  return `${b.pp.originalViewNo ?? b.pp.viewNo}-${b.pp.ppSeqNo}-${b.pp.digest}.mpk`;
}

function isBatchId(v: unknown): v is BatchId {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return Number.isSafeInteger(o.view_no) && Number.isSafeInteger(o.pp_view_no) && Number.isSafeInteger(o.pp_seq_no) && typeof o.pp_digest === 'string';
}
