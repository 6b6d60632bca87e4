// The consensus core's 3PC vote journal on disk (#15 F8): the BatchIDs this node pre-prepared and
// prepared above its stable checkpoint. The core calls save() synchronously at the end of an event,
// before the PREPAREs and COMMITs of that event are sent, so the write is synchronous too: a small
// JSON file replaced by rename (never torn), in the page cache when save() returns, hence durable
// against a crash of the process (kill -9); `fsync: true` also survives a power loss, at the cost
// of two synced writes per batch. A file that cannot be read is reported and treated as empty.
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import type { ThreePcVoteJournal, ThreePcVoteStore } from '@quire/consensus';

type BatchId = ThreePcVoteJournal['prepared'][number];

export class FileVoteJournalStore implements ThreePcVoteStore {
  constructor(
    private readonly file: string,
    private readonly opts: { fsync?: boolean } = {},
    private readonly onError: (reason: string) => void = () => undefined,
  ) {}

  load(): ThreePcVoteJournal | undefined {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      this.onError(`3PC vote journal unreadable: ${e instanceof Error ? e.message : String(e)}`);
      return undefined;
    }
    try {
      const parsed = JSON.parse(text) as { preprepared?: unknown; prepared?: unknown };
      if (!Array.isArray(parsed.preprepared) || !Array.isArray(parsed.prepared)) throw new Error('not a journal');
      return { preprepared: parsed.preprepared.filter(isBatchId), prepared: parsed.prepared.filter(isBatchId) };
    } catch (e) {
      this.onError(`3PC vote journal unreadable: ${e instanceof Error ? e.message : String(e)}`);
      return undefined;
    }
  }

  save(journal: ThreePcVoteJournal): void {
    const tmp = `${this.file}.tmp`;
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, JSON.stringify({ preprepared: journal.preprepared, prepared: journal.prepared }));
      if (this.opts.fsync === true) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.file);
  }
}

function isBatchId(v: unknown): v is BatchId {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return Number.isSafeInteger(o.view_no) && Number.isSafeInteger(o.pp_view_no) && Number.isSafeInteger(o.pp_seq_no) && typeof o.pp_digest === 'string';
}
