// The consensus core's 3PC vote journal on disk (#15 F8): the BatchIDs this node pre-prepared and
// prepared above its stable checkpoint, and the PRE-PREPAREs it pre-prepared and has not ordered
// with their requests. The core calls save() synchronously at the end of an event, before the
// PREPAREs and COMMITs of that event are sent, so the writes are synchronous too, in the page cache
// when save() returns, hence durable against a crash of the process (kill -9); `fsync: true` also
// survives a power loss, at the cost of synced writes per batch.
//
// The votes are a small JSON file written in two copies taken in turn, `<file>` and `<file>.b`, each
// with a sequence number: a save overwrites the older copy in place through a descriptor kept open,
// and load() takes the whole copy with the higher number. Each copy ends with the SHA-256 of its JSON
// line, so a copy torn by a crash (or by a power loss before an fsync) reads as unreadable, and the
// other copy is the journal as it was before the event whose messages were then never sent. (Replacing one
// file by rename cost an open, a close and a rename over the old file per save, several times per
// ordered batch: 4-5 % of a node's CPU at 300 writes/s, #16.) A journal of the earlier single-file
// layout loads as sequence number 0.
//
// Each journaled PRE-PREPARE is a file of its own in `<file>.batches/` (canonical MessagePack of
// {pp, requests}, the encoding of the peer wire), written once (by rename, never torn) when the
// batch is pre-prepared and removed once it is no longer journaled (ordered). A file that cannot be
// read is reported and treated as absent; the core checks what it reads back as it checks a peer's
// message.
import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { decodeMsgpack, encodeMsgpack } from '@quire/common';
import type { JournaledBatch, ThreePcVoteJournal, ThreePcVoteStore } from '@quire/consensus';
import { definedFields } from './peer-wire.js';

type BatchId = ThreePcVoteJournal['prepared'][number];

const BATCH_FILE = /^(\d+)-(\d+)-([0-9a-f]{64})\.mpk$/;

/** One of the two copies of the votes: its path, and once opened for writing, its descriptor and length. */
interface VotesCopy {
  readonly path: string;
  fd?: number;
  length: number;
}

export class FileVoteJournalStore implements ThreePcVoteStore {
  private readonly batchDir: string;
  /** names of the batch files on disk (known after load() or the first save()) */
  private batchFiles: Set<string> | undefined;
  /** the two copies of the votes, `<file>` and `<file>.b` */
  private readonly copies: [VotesCopy, VotesCopy];
  /** sequence number of the newest copy and which copy holds it (known after load() or the first save()) */
  private newest: { seq: number; copy: 0 | 1 } | undefined;
  /** the JSON text of each BatchID saved, with the values it was made of */
  private readonly entryText = new WeakMap<BatchId, BatchId & { text: string }>();

  constructor(
    file: string,
    private readonly opts: { fsync?: boolean } = {},
    private readonly onError: (reason: string) => void = () => undefined,
  ) {
    this.batchDir = `${file}.batches`;
    this.copies = [
      { path: file, length: 0 },
      { path: `${file}.b`, length: 0 },
    ];
  }

  load(): ThreePcVoteJournal | undefined {
    const batches = this.loadBatches();
    const votes = this.readNewest(true);
    if (votes === undefined) return undefined;
    return { preprepared: votes.preprepared, prepared: votes.prepared, ...(batches.length > 0 ? { batches } : {}) };
  }

  save(journal: ThreePcVoteJournal): void {
    // the PRE-PREPAREs first: the votes never name a batch whose file is not written yet
    if (journal.batches !== undefined) this.saveBatches(journal.batches);
    if (this.newest === undefined) this.readNewest(false);
    const seq = (this.newest?.seq ?? 0) + 1;
    // the copy that does not hold the newest votes: if this write is torn, that one is still whole
    const target: 0 | 1 = this.newest?.copy === 0 ? 1 : 0;
    const line = Buffer.from(`{"seq":${seq},"preprepared":${this.listJson(journal.preprepared)},"prepared":${this.listJson(journal.prepared)}}`, 'utf8');
    this.overwrite(this.copies[target], Buffer.concat([line, Buffer.from(`\n${sha256Hex(line)}\n`, 'latin1')]));
    this.newest = { seq, copy: target };
  }

  /**
   * JSON.stringify of a list of BatchIDs, each entry's text kept from the save before: the lists run up to the stable
   * checkpoint (up to a few hundred entries) and change by one entry per save.
   */
  private listJson(list: readonly BatchId[]): string {
    const parts: string[] = [];
    for (const b of list) {
      let e = this.entryText.get(b);
      if (e === undefined || e.view_no !== b.view_no || e.pp_view_no !== b.pp_view_no || e.pp_seq_no !== b.pp_seq_no || e.pp_digest !== b.pp_digest) {
        e = { ...b, text: JSON.stringify(b) };
        this.entryText.set(b, e);
      }
      parts.push(e.text);
    }
    return `[${parts.join(',')}]`;
  }

  /** Closes the descriptors of the votes' copies (a later save() opens them again). Idempotent. */
  close(): void {
    for (const c of this.copies) {
      if (c.fd === undefined) continue;
      const fd = c.fd;
      c.fd = undefined;
      closeSync(fd);
    }
  }

  /** The readable copy with the higher sequence number; remembers which one it is. Reports unreadable copies when `report`. */
  private readNewest(report: boolean): { preprepared: BatchId[]; prepared: BatchId[] } | undefined {
    let best: { seq: number; copy: 0 | 1; preprepared: BatchId[]; prepared: BatchId[] } | undefined;
    for (const copy of [0, 1] as const) {
      const path = this.copies[copy].path;
      let bytes: Buffer;
      try {
        bytes = readFileSync(path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT' && report) this.onError(`3PC vote journal ${path} unreadable: ${e instanceof Error ? e.message : String(e)}`);
        continue;
      }
      try {
        const { line, checked } = splitChecksum(bytes);
        const parsed = JSON.parse(line.toString('utf8')) as { seq?: unknown; preprepared?: unknown; prepared?: unknown };
        if (!Array.isArray(parsed.preprepared) || !Array.isArray(parsed.prepared)) throw new Error('not a journal');
        // a journal of the single-file layout has neither a sequence number nor a checksum
        if (checked !== (parsed.seq !== undefined)) throw new Error('torn or not a journal');
        const seq = parsed.seq === undefined ? 0 : parsed.seq;
        if (!Number.isSafeInteger(seq) || (seq as number) < 0) throw new Error('not a journal');
        if (best === undefined || (seq as number) > best.seq) {
          best = { seq: seq as number, copy, preprepared: parsed.preprepared.filter(isBatchId), prepared: parsed.prepared.filter(isBatchId) };
        }
      } catch (e) {
        if (report) this.onError(`3PC vote journal ${path} unreadable: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    this.newest = best === undefined ? undefined : { seq: best.seq, copy: best.copy };
    return best;
  }

  /** Writes `bytes` over a copy, in place, through its descriptor (opened once); the file is cut to their length. */
  private overwrite(c: VotesCopy, bytes: Uint8Array): void {
    if (c.fd === undefined) {
      c.fd = openSync(c.path, constants.O_WRONLY | constants.O_CREAT, 0o644);
      c.length = fstatSync(c.fd).size;
    }
    for (let off = 0; off < bytes.length; ) off += writeSync(c.fd, bytes, off, bytes.length - off, off);
    if (bytes.length < c.length) ftruncateSync(c.fd, bytes.length);
    c.length = bytes.length;
    if (this.opts.fsync === true) fsyncSync(c.fd);
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
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') this.onError(`3PC vote journal: batch directory unreadable: ${e instanceof Error ? e.message : String(e)}`);
      return [];
    }
    this.batchFiles = new Set();
    const out: JournaledBatch[] = [];
    for (const name of names) {
      if (!BATCH_FILE.test(name)) continue;
      this.batchFiles.add(name);
      try {
        const rec = decodeMsgpack(readFileSync(join(this.batchDir, name))) as { pp?: unknown; requests?: unknown };
        if (typeof rec !== 'object' || rec === null || !Array.isArray(rec.requests)) throw new Error('not a journaled batch');
        // checked by the core as a peer's PRE-PREPARE and PROPAGATEs are
        out.push(rec as JournaledBatch);
      } catch (e) {
        this.onError(`3PC vote journal: batch ${name} unreadable: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    return out;
  }

  private writeReplacing(path: string, data: string | Uint8Array): void {
    const tmp = `${path}.tmp`;
    const fd = openSync(tmp, 'w');
    try {
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off);
      if (this.opts.fsync === true) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  }
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const CHECKSUM_TAIL = 1 + 64 + 1;

/**
 * A copy's JSON line and whether it carried a checksum (`<json>\n<sha256 hex>\n`); throws when the
 * checksum does not match. Bytes without a checksum tail are returned whole (the single-file layout).
 */
function splitChecksum(bytes: Buffer): { line: Buffer; checked: boolean } {
  const n = bytes.length;
  if (n < CHECKSUM_TAIL || bytes[n - 1] !== 0x0a || bytes[n - CHECKSUM_TAIL] !== 0x0a) return { line: bytes, checked: false };
  const line = bytes.subarray(0, n - CHECKSUM_TAIL);
  if (bytes.toString('latin1', n - CHECKSUM_TAIL + 1, n - 1) !== sha256Hex(line)) throw new Error('checksum mismatch (torn write)');
  return { line, checked: true };
}

function batchFileName(b: JournaledBatch): string {
  return `${b.pp.originalViewNo ?? b.pp.viewNo}-${b.pp.ppSeqNo}-${b.pp.digest}.mpk`;
}

function isBatchId(v: unknown): v is BatchId {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return Number.isSafeInteger(o.view_no) && Number.isSafeInteger(o.pp_view_no) && Number.isSafeInteger(o.pp_seq_no) && typeof o.pp_digest === 'string';
}
