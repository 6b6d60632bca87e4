// The refusal mark of admission control on disk (consensus intake.ts (3), RefusalMarkStore): the UTC second until
// which this node may remember refusals of client writes, one JSON number in a file beside the database. The core
// saves it synchronously before the refusal it covers is answered, at most once per 10 s of refusals; the file is
// replaced by rename (never torn), in the page cache when save() returns, hence durable against a crash of the
// process (kill -9). A node that starts before that time takes in from PROPAGATEs alone only what n-f others took in.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { NodeError, NodeErrorCode, reasonOf } from './errors.js';

export class FileRefusalMarkStore {
  constructor(private readonly file: string) {}

  /**
   * The saved mark; undefined when none was ever saved. Throws NodeError STORAGE_INCONSISTENT when the file cannot be
   * read or holds no mark.
   */
  load(): number | undefined {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new NodeError(NodeErrorCode.STORAGE_INCONSISTENT, { reason: `${this.file}: ${reasonOf(e)}` }, { cause: e });
    }
    let until: unknown;
    try {
      until = (JSON.parse(text) as { until?: unknown } | null)?.until;
    } catch (e) {
      throw new NodeError(NodeErrorCode.STORAGE_INCONSISTENT, { reason: `${this.file}: ${reasonOf(e)}` }, { cause: e });
    }
    if (typeof until !== 'number' || !Number.isSafeInteger(until)) {
      throw new NodeError(NodeErrorCode.STORAGE_INCONSISTENT, { reason: `${this.file}: no refusal mark ('until', integer UTC seconds)` });
    }
    return until;
  }

  save(untilUtcSeconds: number): void {
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ until: untilUtcSeconds })}\n`, 'utf8');
    renameSync(tmp, this.file);
  }
}
