// A minimal reader of a LevelDB MANIFEST (the descriptor log of version edits), enough to know which
// table files a copy of the database needs and which file numbers a copy may allocate. Format:
// LevelDB's log format (32 KiB blocks of records with a 7-byte header: crc32c, length, type) whose
// records are VersionEdits (tagged fields, varint-encoded).

const BLOCK_SIZE = 32768;
const HEADER_SIZE = 7;
const enum RecordType {
  ZERO = 0,
  FULL = 1,
  FIRST = 2,
  MIDDLE = 3,
  LAST = 4,
}
const enum Tag {
  COMPARATOR = 1,
  LOG_NUMBER = 2,
  NEXT_FILE_NUMBER = 3,
  LAST_SEQUENCE = 4,
  COMPACT_POINTER = 5,
  DELETED_FILE = 6,
  NEW_FILE = 7,
  PREV_LOG_NUMBER = 9,
}

// internal control flow, never seen by a caller: readManifest's only caller, the snapshot, retries on it
export class ManifestFormatError extends Error {}

/** What a MANIFEST says about the files of the database. */
export interface ManifestSummary {
  /** Numbers of the table files of the current version. */
  liveTables: Set<number>;
  /** The next file number the database will allocate; every live file is below it. */
  nextFileNumber: number;
  /** Logs numbered at least this (or equal to prevLogNumber) hold writes not yet in tables. */
  logNumber: number;
  prevLogNumber: number;
}

/** Splits the log-format bytes into records (payloads), reassembling fragmented ones. */
function* records(bytes: Uint8Array): Generator<Uint8Array> {
  let pos = 0;
  let pending: Uint8Array[] | undefined;
  while (pos + HEADER_SIZE <= bytes.length) {
    const blockLeft = BLOCK_SIZE - (pos % BLOCK_SIZE);
    if (blockLeft < HEADER_SIZE) {
      pos += blockLeft; // trailer padding
      continue;
    }
    const length = bytes[pos + 4] | (bytes[pos + 5] << 8);
    const type = bytes[pos + 6];
    const start = pos + HEADER_SIZE;
    if (type === RecordType.ZERO && length === 0) {
      pos += blockLeft; // preallocated zero area
      continue;
    }
    if (start + length > bytes.length || length > blockLeft - HEADER_SIZE) throw new ManifestFormatError('truncated record');
    const payload = bytes.subarray(start, start + length);
    pos = start + length;
    switch (type) {
      case RecordType.FULL:
        pending = undefined;
        yield payload;
        break;
      case RecordType.FIRST:
        pending = [payload];
        break;
      case RecordType.MIDDLE:
        if (pending === undefined) throw new ManifestFormatError('fragment without a start');
        pending.push(payload);
        break;
      case RecordType.LAST: {
        if (pending === undefined) throw new ManifestFormatError('fragment without a start');
        pending.push(payload);
        yield Buffer.concat(pending);
        pending = undefined;
        break;
      }
      default:
        throw new ManifestFormatError(`record type ${type}`);
    }
  }
}

class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array) {}
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.buf.length) throw new ManifestFormatError('truncated varint');
      const b = this.buf[this.pos++];
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return result;
      scale *= 128;
    }
    throw new ManifestFormatError('varint too long');
  }
  skipSlice(): void {
    const n = this.varint();
    if (this.pos + n > this.buf.length) throw new ManifestFormatError('truncated slice');
    this.pos += n;
  }
}

/** Reads the version edits of a MANIFEST and folds them into the current version. */
export function readManifest(bytes: Uint8Array): ManifestSummary {
  const live = new Set<number>();
  let nextFileNumber = 0;
  let logNumber = 0;
  let prevLogNumber = 0;
  for (const record of records(bytes)) {
    const r = new Reader(record);
    while (!r.done) {
      const tag = r.varint();
      switch (tag) {
        case Tag.COMPARATOR:
          r.skipSlice();
          break;
        case Tag.LOG_NUMBER:
          logNumber = r.varint();
          break;
        case Tag.NEXT_FILE_NUMBER:
          nextFileNumber = r.varint();
          break;
        case Tag.LAST_SEQUENCE:
          r.varint();
          break;
        case Tag.COMPACT_POINTER:
          r.varint();
          r.skipSlice();
          break;
        case Tag.DELETED_FILE:
          r.varint();
          live.delete(r.varint());
          break;
        case Tag.NEW_FILE:
          r.varint(); // level
          live.add(r.varint());
          r.varint(); // file size
          r.skipSlice(); // smallest key
          r.skipSlice(); // largest key
          break;
        case Tag.PREV_LOG_NUMBER:
          prevLogNumber = r.varint();
          break;
        default:
          throw new ManifestFormatError(`unknown version-edit tag ${tag}`);
      }
    }
  }
  if (nextFileNumber === 0) throw new ManifestFormatError('no next file number');
  return { liveTables: live, nextFileNumber, logNumber, prevLogNumber };
}
