// The explorer's search index over the domain ledger, built by the gateway itself from verified reads and kept in
// memory within a configured bound. A listening gateway reads the domain ledger once in the background (the newest
// txns first, then downward) and follows it as it grows; each txn leaves behind
//
//   - 32-bit hashes of its txnId, its target DID (`dest`) and its author (`from`): 12 bytes a txn, in typed arrays of
//     4,096 txns each, so that an exact txnId or DID (any of its did:sov / did:indy forms) is found in the whole ledger;
//   - the lower-cased text of its NYM alias or schema name, only for txns that have one, for a substring search.
//
// A hash hit is only a candidate: the txn is read again (verified, usually from the cache) and matched on its real
// fields before it is shown, so a collision costs a read and never a wrong answer. The newest `maxTxns` txns are kept
// (and at most `maxNameChars` characters of names): older blocks are dropped whole and the search says which seqNos
// it covered. Txns above the indexed range (written since the last look, or while the index is still being built) are
// scanned directly, newest first, within the explorer's search depth.
import { fnv1a32, isPlainObject } from '@quire/common';
import { GatewayError, GatewayErrorCode } from '../errors.js';
import { parseDid } from '../ids.js';
import type { Json, VerifiedTxn } from './data.js';

export interface SearchIndexOptions {
  /** Build the index when the gateway listens (default true); off: search scans the newest `searchDepth` txns only. */
  enabled: boolean;
  /** The most domain txns indexed (the newest ones). */
  maxTxns: number;
  /** The most characters of aliases and schema names kept (the oldest blocks go first when it is reached). */
  maxNameChars: number;
  /** GET_TXN reads in flight while the index catches up. */
  concurrency: number;
  /** Txns read per step (also the unit of progress). */
  step: number;
  /** How often a caught-up index looks for new txns (ms). */
  pollMs: number;
  /** Longest wait after failed reads before trying again (ms). */
  maxBackoffMs: number;
}

export const defaultSearchIndexOptions: SearchIndexOptions = {
  enabled: true,
  maxTxns: 2_000_000,
  maxNameChars: 16_000_000,
  concurrency: 4,
  step: 256,
  pollMs: 3000,
  maxBackoffMs: 60_000,
};

/** Txns per block (typed arrays are allocated and dropped a block at a time). */
export const BLOCK = 4096;

/** Longest alias or schema name kept (characters). */
export const MAX_NAME = 128;

/** FNV-1a over UTF-16 code units; never 0 (0 marks "no value"). */
export function hash32(s: string): number {
  const h = fnv1a32(s);
  return h === 0 ? 1 : h;
}

interface Block {
  txnId: Uint32Array;
  dest: Uint32Array;
  from: Uint32Array;
  /** seqNo -> lower-cased names, for txns that have any. */
  names: Map<number, string>;
  nameChars: number;
}

const obj = (v: unknown): Json => (isPlainObject(v) ? v : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** What a domain txn leaves in the index. */
export function indexFields(t: VerifiedTxn): { txnId: string | undefined; dest: string | undefined; from: string | undefined; names: string | undefined } {
  const txn = obj(t.entry.txn);
  const data = obj(txn.data);
  const inner = obj(data.data);
  const names = [str(data.alias), str(inner.alias), str(inner.name)].filter((n): n is string => n !== undefined).map((n) => n.slice(0, MAX_NAME).toLowerCase());
  return {
    txnId: str(obj(t.entry.txnMetadata).txnId),
    dest: str(data.dest),
    from: str(obj(txn.metadata).from),
    names: names.length > 0 ? [...new Set(names)].join('\n') : undefined,
  };
}

/** The exact forms of a query looked up by hash: as typed, lower-cased (hex txnIds), and the DID of a did:sov / did:indy form. */
export function exactForms(q: string): string[] {
  const out = new Set([q, q.toLowerCase()]);
  if (q.startsWith('did:')) {
    try {
      out.add(parseDid(q, 'q').id);
    } catch {
      // not a DID: the other forms only
    }
  }
  return [...out];
}

export interface IndexHit {
  seqNo: number;
  on: 'txnId' | 'DID' | 'author' | 'alias or name';
}

export interface IndexStatus {
  /** Lowest and highest seqNo indexed (the range is contiguous); `from > to` when nothing is indexed yet. */
  from: number;
  to: number;
  /** Txns indexed. */
  count: number;
  /** The lowest seqNo the index means to reach (1 unless the ledger outgrew the bound). */
  floor: number;
  /** The ledger size last seen. */
  size: number;
  /** Whether the whole ledger below the newest look is indexed. */
  complete: boolean;
  running: boolean;
  /** The last read failure, while the index is waiting to try again. */
  error: string | undefined;
  nameChars: number;
}

export interface SearchIndexSource {
  /** The domain ledger's size (verified). */
  size(): Promise<number>;
  /** Domain txns by seqNo, verified; at most `concurrency` reads at once; not kept in the page cache. */
  read(seqNos: number[], concurrency: number): Promise<VerifiedTxn[]>;
}

export class SearchIndex {
  private readonly blocks = new Map<number, Block>();
  /** The contiguous indexed range [low, high]; empty while low > high. */
  private low = 1;
  private high = 0;
  private floor = 1;
  private size = 0;
  /** The ledger's size has been asked at least once. */
  private looked = false;
  private nameChars = 0;
  private started = false;
  private stopped = false;
  private failure: string | undefined;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly source: SearchIndexSource,
    readonly options: SearchIndexOptions = defaultSearchIndexOptions,
    private readonly onError: (e: unknown) => void = () => undefined,
  ) {
    if (!(options.maxTxns >= BLOCK))
      throw new GatewayError(GatewayErrorCode.INVALID_PARAMETER, { field: 'searchIndexMax', reason: `at least ${BLOCK} expected` });
  }

  status(): IndexStatus {
    const count = Math.max(0, this.high - this.low + 1);
    return {
      from: this.low,
      to: this.high,
      count,
      floor: this.floor,
      size: this.size,
      complete: count > 0 ? this.low <= this.floor && this.high >= this.size : this.looked && this.size === 0,
      running: this.started && !this.stopped,
      error: this.failure,
      nameChars: this.nameChars,
    };
  }

  /** Starts following the ledger (idempotent). */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.loop = this.run().catch((e: unknown) => this.onError(e));
  }

  /** Stops following; reads in flight are left to finish (their results are dropped). Idempotent. */
  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  /** Resolves when the loop has ended (after stop(), once the reads in flight settled). */
  async done(): Promise<void> {
    await this.loop;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(), ms);
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      timer.unref?.();
      this.wake = done;
    });
  }

  /** One step of work: true when there was something to do. */
  async step(): Promise<boolean> {
    const size = await this.source.size();
    this.looked = true;
    this.size = Math.max(this.size, size);
    this.floor = Math.max(this.floor, this.size - this.options.maxTxns + 1);
    if (this.high < this.low) {
      // nothing indexed yet: start at the newest txn and grow both ways from there
      if (this.size === 0) return false;
      this.low = this.size + 1;
      this.high = this.size;
    }
    // new txns first (what people look for most), then further down the ledger
    const up = this.high < this.size;
    let seqNos: number[];
    if (up) seqNos = range(this.high + 1, Math.min(this.size, this.high + this.options.step));
    else if (this.low > this.floor) seqNos = range(Math.max(this.floor, this.low - this.options.step), this.low - 1);
    else return false;
    const txns = await this.source.read(seqNos, this.options.concurrency);
    if (this.stopped) return false;
    const got = new Map(txns.map((t) => [t.seqNo, t]));
    // the range stays contiguous: a txn the pool did not give stops the step there (it is asked for again next time)
    if (up) {
      for (const s of seqNos) {
        const t = got.get(s);
        if (t === undefined) break;
        this.put(t);
        this.high = s;
      }
    } else {
      for (let i = seqNos.length - 1; i >= 0; i--) {
        const t = got.get(seqNos[i]);
        if (t === undefined) break;
        this.put(t);
        this.low = t.seqNo;
      }
    }
    this.evict();
    if (got.size < seqNos.length) {
      throw new GatewayError(GatewayErrorCode.POOL_UNAVAILABLE, {
        reason: `the pool gave ${got.size} of ${seqNos.length} domain txns from seqNo ${seqNos[0]}`,
      });
    }
    return true;
  }

  private async run(): Promise<void> {
    let backoff = this.options.pollMs;
    while (!this.stopped) {
      let busy: boolean;
      try {
        busy = await this.step();
        this.failure = undefined;
        backoff = this.options.pollMs;
      } catch (e) {
        if (this.stopped) return;
        this.failure = e instanceof Error ? e.message : String(e);
        this.onError(e);
        await this.sleep(backoff);
        backoff = Math.min(this.options.maxBackoffMs, backoff * 2);
        continue;
      }
      if (!busy && !this.stopped) await this.sleep(this.options.pollMs);
    }
  }

  private block(seqNo: number): Block {
    const b = Math.floor((seqNo - 1) / BLOCK);
    let blk = this.blocks.get(b);
    if (blk === undefined) {
      blk = { txnId: new Uint32Array(BLOCK), dest: new Uint32Array(BLOCK), from: new Uint32Array(BLOCK), names: new Map(), nameChars: 0 };
      this.blocks.set(b, blk);
    }
    return blk;
  }

  /** Adds one txn (tests and the loop). */
  put(t: VerifiedTxn): void {
    const f = indexFields(t);
    const blk = this.block(t.seqNo);
    const i = (t.seqNo - 1) % BLOCK;
    blk.txnId[i] = f.txnId === undefined ? 0 : hash32(f.txnId);
    blk.dest[i] = f.dest === undefined ? 0 : hash32(f.dest);
    blk.from[i] = f.from === undefined ? 0 : hash32(f.from);
    const old = blk.names.get(t.seqNo);
    if (old !== undefined) {
      blk.nameChars -= old.length;
      this.nameChars -= old.length;
      blk.names.delete(t.seqNo);
    }
    if (f.names !== undefined) {
      blk.names.set(t.seqNo, f.names);
      blk.nameChars += f.names.length;
      this.nameChars += f.names.length;
    }
  }

  /** Drops the oldest blocks while the bounds are exceeded; the floor rises with them and never comes down. */
  private evict(): void {
    while (this.high >= this.low && (this.high - this.low + 1 > this.options.maxTxns || this.nameChars > this.options.maxNameChars)) {
      const b = Math.floor((this.low - 1) / BLOCK);
      const blk = this.blocks.get(b);
      if (blk !== undefined) {
        this.nameChars -= blk.nameChars;
        this.blocks.delete(b);
      }
      this.low = (b + 1) * BLOCK + 1;
      this.floor = Math.max(this.floor, this.low);
    }
    if (this.high < this.low) {
      this.blocks.clear();
      this.nameChars = 0;
    }
  }

  /**
   * Candidates for a query, newest first, at most `limit`: txns whose txnId, DID or author hash equals that of one of
   * the query's exact forms, or whose alias or schema name contains it (case-insensitive).
   */
  search(q: string, limit: number): { hits: IndexHit[]; more: boolean } {
    const hashes = exactForms(q).map(hash32);
    const lc = q.toLowerCase();
    const hits: IndexHit[] = [];
    for (const [b, blk] of [...this.blocks].sort((x, y) => y[0] - x[0])) {
      const base = b * BLOCK + 1;
      const top = Math.min(this.high, base + BLOCK - 1);
      const bottom = Math.max(this.low, base);
      const found = new Map<number, IndexHit['on']>();
      for (let s = top; s >= bottom; s--) {
        const i = s - base;
        const tid = blk.txnId[i];
        const dest = blk.dest[i];
        const from = blk.from[i];
        for (const h of hashes) {
          const on = tid === h ? 'txnId' : dest === h ? 'DID' : from === h ? 'author' : undefined;
          if (on !== undefined) {
            found.set(s, on);
            break;
          }
        }
      }
      // names are kept only for the txns that have one: looked through apart from the hashes
      if (lc.length > 0) for (const [s, names] of blk.names) if (s >= bottom && s <= top && !found.has(s) && names.includes(lc)) found.set(s, 'alias or name');
      for (const [s, on] of [...found].sort((x, y) => y[0] - x[0])) {
        if (hits.length >= limit) return { hits, more: true };
        hits.push({ seqNo: s, on });
      }
    }
    return { hits, more: false };
  }
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let s = from; s <= to; s++) out.push(s);
  return out;
}
