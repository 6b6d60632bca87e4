// A consistent copy of a LevelDB directory that another process holds open (and locked), for tools
// such as read_ledger that must read while the node runs. The table files (.ldb/.sst) of the current
// version, read from the MANIFEST, are immutable, so they are hard-linked; CURRENT, the MANIFEST and
// the write-ahead logs (*.log) are copied. Only the live tables are linked: a table still being
// written carries a file number at or above the MANIFEST's next file number, which the copy itself
// allocates when it opens, and the copy would truncate the shared file. LevelDB only deletes a
// table or a log after appending an edit to the MANIFEST, so a copy is consistent when CURRENT and
// the MANIFEST are unchanged from before the first file was taken to after the last: logs copied
// mid-write end in a torn record that recovery drops, which leaves a prefix of the committed write
// batches. Otherwise (or when a file vanished mid-copy) the copy is thrown away and taken again.
import { copyFile, link, mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodedError } from '@quire/common';
import { ManifestFormatError, readManifest } from './manifest.js';

export const SnapshotErrorCode = {
  /** The source is not a LevelDB directory (no CURRENT file) (data: `path`). */
  NOT_A_DATABASE: 'SNAPSHOT_NOT_A_DATABASE',
  /** No consistent copy could be taken in the allowed attempts (data: `path`, `attempts`, `reason`). */
  UNSTABLE: 'SNAPSHOT_UNSTABLE',
  /** A file system operation failed (data: `path`, `reason`). */
  IO_FAILED: 'SNAPSHOT_IO_FAILED',
} as const;
export type SnapshotErrorCode = (typeof SnapshotErrorCode)[keyof typeof SnapshotErrorCode];

/** The data of each {@link SnapshotErrorCode}, checked wherever a SnapshotError is made. */
export type SnapshotErrorData = {
  SNAPSHOT_NOT_A_DATABASE: { path: string };
  SNAPSHOT_UNSTABLE: { path: string; attempts: number; reason: string };
  SNAPSHOT_IO_FAILED: { path: string; reason: string };
};

/** A LevelDB directory that cannot be copied (read_ledger's snapshot of a running node's database). */
export class SnapshotError extends CodedError<SnapshotErrorCode, SnapshotErrorData> {}

export interface SnapshotOptions {
  /** Folder in which the temporary copy is made (default: the OS temp folder). */
  tmpDir?: string;
  /** Copies attempted before giving up (default 10). */
  attempts?: number;
  /** Pause between attempts in ms (default 20, doubled each time up to 500). */
  retryDelayMs?: number;
  /** Hard-link the live table files instead of copying them (default true). */
  link?: boolean;
}

export const defaultSnapshotOptions: Required<SnapshotOptions> = { tmpDir: '', attempts: 10, retryDelayMs: 20, link: true };

/** A copy of a database directory; `remove()` deletes it (idempotent). */
export interface DbSnapshot {
  readonly path: string;
  remove(): Promise<void>;
}

// internal control flow, never seen by a caller: thrown inside the snapshot's attempt and caught by its retry loop
class Retry extends Error {}

function codeOf(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : undefined;
}

const TABLE = /^\d+\.(ldb|sst)$/;
const LOG = /^\d+\.log$/;

async function readCurrent(src: string): Promise<string> {
  try {
    const text = await readFile(join(src, 'CURRENT'), 'utf8');
    const name = text.trim();
    if (!/^MANIFEST-\d+$/.test(name)) throw new Retry(`CURRENT names ${JSON.stringify(name)}`);
    return name;
  } catch (e) {
    if (e instanceof Retry) throw e;
    if (codeOf(e) === 'ENOENT') throw new Retry('CURRENT vanished');
    throw e;
  }
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (e) {
    if (codeOf(e) === 'ENOENT') throw new Retry(`${path} vanished`);
    throw e;
  }
}

/** Hard-links a file, copying instead when linking is impossible (another file system, no permission). */
async function linkOrCopy(from: string, to: string, state: { link: boolean }): Promise<void> {
  if (state.link) {
    try {
      await link(from, to);
      return;
    } catch (e) {
      const c = codeOf(e);
      if (c === 'ENOENT') throw new Retry(`${from} vanished`);
      if (c !== 'EXDEV' && c !== 'EPERM' && c !== 'EACCES' && c !== 'ENOTSUP' && c !== 'EMLINK') throw e;
      state.link = false;
    }
  }
  await copyOrRetry(from, to);
}

async function copyOrRetry(from: string, to: string): Promise<void> {
  try {
    await copyFile(from, to);
  } catch (e) {
    if (codeOf(e) === 'ENOENT') throw new Retry(`${from} vanished`);
    throw e;
  }
}

async function copyOnce(src: string, dst: string, state: { link: boolean }): Promise<void> {
  const manifest = await readCurrent(src);
  const manifestSize = await sizeOf(join(src, manifest));
  await copyOrRetry(join(src, manifest), join(dst, manifest));
  let summary;
  try {
    summary = readManifest(await readFile(join(dst, manifest)));
  } catch (e) {
    if (e instanceof ManifestFormatError) throw new Retry(`MANIFEST unreadable: ${e.message}`);
    throw e;
  }
  const names = await readdir(src);
  const tables = new Map<number, string>();
  for (const name of names) if (TABLE.test(name)) tables.set(Number(name.slice(0, name.indexOf('.'))), name);
  for (const number of summary.liveTables) {
    const name = tables.get(number);
    if (name === undefined) throw new Retry(`table ${number} vanished`);
    await linkOrCopy(join(src, name), join(dst, name), state);
  }
  // the logs recovery replays, oldest first
  const logs = names
    .filter((n) => LOG.test(n))
    .map((name) => ({ name, number: Number(name.slice(0, -4)) }))
    .filter((l) => l.number >= summary.logNumber || l.number === summary.prevLogNumber)
    .sort((a, b) => a.number - b.number);
  for (const { name } of logs) await copyOrRetry(join(src, name), join(dst, name));
  // the copy is consistent only if no version edit happened while it was taken
  if ((await readCurrent(src)) !== manifest) throw new Retry('CURRENT changed');
  if ((await sizeOf(join(src, manifest))) !== manifestSize) throw new Retry('MANIFEST changed');
  if ((await sizeOf(join(dst, manifest))) !== manifestSize) throw new Retry('MANIFEST changed');
  await copyFile(join(src, 'CURRENT'), join(dst, 'CURRENT')).catch((e: unknown) => {
    throw codeOf(e) === 'ENOENT' ? new Retry('CURRENT vanished') : e;
  });
  if ((await readCurrent(dst)) !== manifest) throw new Retry('CURRENT changed');
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Takes a consistent copy of the LevelDB directory `src` (which may be open in another process) in a
 * fresh temporary folder. The caller opens the copy and must call `remove()` when done.
 */
export async function snapshotLevelDb(src: string, opts: SnapshotOptions = {}): Promise<DbSnapshot> {
  const o = { ...defaultSnapshotOptions, ...opts };
  try {
    await stat(join(src, 'CURRENT'));
  } catch {
    throw new SnapshotError(SnapshotErrorCode.NOT_A_DATABASE, { path: src }, `${src} is not a LevelDB database (no CURRENT file)`);
  }
  const state = { link: o.link };
  let delay = o.retryDelayMs;
  let lastReason = '';
  for (let attempt = 1; attempt <= o.attempts; attempt++) {
    let dst: string;
    try {
      dst = await mkdtemp(join(o.tmpDir || tmpdir(), 'quire-db-snapshot-'));
    } catch (e) {
      throw new SnapshotError(SnapshotErrorCode.IO_FAILED, { path: o.tmpDir || tmpdir(), reason: e instanceof Error ? e.message : String(e) });
    }
    const remove = async (): Promise<void> => {
      await rm(dst, { recursive: true, force: true });
    };
    try {
      await copyOnce(src, dst, state);
      let removed = false;
      return {
        path: dst,
        remove: async () => {
          if (removed) return;
          removed = true;
          await remove();
        },
      };
    } catch (e) {
      await remove();
      if (!(e instanceof Retry)) {
        throw new SnapshotError(SnapshotErrorCode.IO_FAILED, { path: src, reason: e instanceof Error ? e.message : String(e) });
      }
      lastReason = e.message;
      await sleep(delay);
      delay = Math.min(delay * 2, 500);
    }
  }
  throw new SnapshotError(
    SnapshotErrorCode.UNSTABLE,
    { path: src, attempts: o.attempts, reason: lastReason },
    `no consistent copy of ${src} after ${o.attempts} attempts: ${lastReason}`,
  );
}
