// The PROPAGATEs a node receives while it catches up, held as their bytes until the catch-up ends. A catching-up node
// cannot order anything: the requests the pool orders meanwhile reach it in its catch-up anyway, as committed txns. Were
// it to take in their PROPAGATEs as they come (decode, parse, check the signature, store, count, propagate its own), it
// would spend time on requests it then drops (consensus's dropCaughtUp): about a tenth of the restarted node's catch-up
// time, measured at 4d15f0a with 700 writes/s offered (bench:pool --phases crypto,catchup; docs/benchmarks.md, catch-up
// under load). Held here instead, unparsed and unverified; after the catch-up those whose payload is committed by then
// are dropped without a signature check, and the others (the requests in flight at the end of the catch-up) go to the
// core as any PROPAGATE does.
//
// Not taking part while catching up is the safe side of the intake's rules: the node neither counts nor refuses these
// requests meanwhile, as a slow peer would not; what it handles afterwards goes through the intake's usual checks
// (refusal memory, admission). Those rules assume a request's PROPAGATEs reach a node within about
// propagatesPhaseReqTimeoutMs of its refusal there (the refusal memory is twice that): a PROPAGATE held longer could be
// handled after the node forgot that it refused the request at its door, and make a write its client was told refused
// reach n-f and be ordered. So each entry carries its first arrival (the consensus core's clock) and `take` hands on only
// those held at most `maxAgeMs`; the older are dropped unhandled, counted. (The other way, keeping the door's refusals
// until the replay ran, would reach into the consensus intake's memory; the age bound stays here and only drops, which
// is always safe: the pool's n-f PROPAGATEs finalise a request without this node.)
//
// Bounded in count and bytes (the bytes of a copy of the encoding, and of its latin1 key), all together and per sending
// peer: a peer past its share drops its own oldest (the most likely to be committed by the end), so one peer cannot push
// out what the others sent; past the overall bound the peer holding the most drops its oldest. Drops are counted per
// message and peer. A PROPAGATE dropped here is recovered as any lost one is (the pool's n-f PROPAGATEs finalise it
// without this node, and a PRE-PREPARE naming it is served by MESSAGE_REQUEST).
import { latin1Slice } from './peer-wire.js';

export interface CatchupPropagateStashOptions {
  /** distinct PROPAGATE encodings held (default 16,384: more than the requests an overloaded pool holds in flight) */
  maxEntries: number;
  /** entries one peer may hold at most, whatever its share (default 10,000, a peer's queue bound in peer-queue.ts: what
   *  one peer held fits its empty queue at the replay) */
  maxEntriesPerPeer: number;
  /** bytes held, all together: each encoding's copy and its key (default 16 MiB) */
  maxBytes: number;
  /** how many peers share the bounds: each sender may hold maxEntries / peers entries (at most maxEntriesPerPeer) and
   *  maxBytes / peers bytes */
  peers: () => number;
  /** entries held longer than this (ms, `now`'s clock) are dropped at `take` (the node: propagatesPhaseReqTimeoutMs) */
  maxAgeMs: number;
  /** the clock of arrivals and of `take` (ms; the node: the consensus core's clock) */
  now: () => number;
}

export const defaultCatchupPropagateStashOptions: CatchupPropagateStashOptions = {
  maxEntries: 16_384,
  maxEntriesPerPeer: 10_000,
  maxBytes: 16 * 1024 * 1024,
  peers: () => 1,
  maxAgeMs: 60_000,
  now: () => performance.now(),
};

/** One PROPAGATE encoding held, with the peers that sent it (the validators encode a request to the same bytes). */
export interface HeldPropagate {
  data: Uint8Array;
  peers: string[];
}

/** What a catch-up held, handed over once: every count is of messages from one peer (an encoding x its senders). */
export interface TakenPropagates {
  /** the entries to hand on, oldest first */
  entries: HeldPropagate[];
  /** dropped now, held longer than maxAgeMs */
  tooOld: number;
  /** dropped while held, past a bound, since the previous take */
  dropped: number;
}

interface Entry extends HeldPropagate {
  key: string;
  /** bytes counted for it, per sender: the copy and the key */
  cost: number;
  /** its first arrival */
  at: number;
}

interface PeerShare {
  /** keys of the entries this peer sent, oldest first */
  keys: Set<string>;
  bytes: number;
}

export class CatchupPropagateStash {
  private readonly opts: CatchupPropagateStashOptions;
  /** encoding (latin1) -> its bytes and senders, oldest first */
  private readonly held = new Map<string, Entry>();
  private readonly shares = new Map<string, PeerShare>();
  private heldBytes = 0;
  /** messages (an encoding from one peer) dropped past a bound since the last take */
  private droppedSinceTake = 0;

  constructor(options: Partial<CatchupPropagateStashOptions> = {}) {
    this.opts = { ...defaultCatchupPropagateStashOptions, ...options };
  }

  /** Encodings held, and their bytes. */
  get size(): { entries: number; bytes: number } {
    return { entries: this.held.size, bytes: this.heldBytes };
  }

  /** Holds `data` (a PROPAGATE's bytes, copied) from `peer`; returns how many messages were dropped to make room. */
  add(peer: string, data: Uint8Array): number {
    const peers = Math.max(1, this.opts.peers());
    const maxPerPeer = Math.max(1, Math.min(this.opts.maxEntriesPerPeer, Math.floor(this.opts.maxEntries / peers)));
    const maxBytesPerPeer = Math.floor(this.opts.maxBytes / peers);
    const cost = 2 * data.length;
    if (cost > maxBytesPerPeer) return this.count(1);
    const key = latin1Slice.call(data, 0, data.length);
    const known = this.held.get(key);
    if (known?.peers.includes(peer) === true) return 0;
    let dropped = 0;
    let share = this.shares.get(peer);
    if (share === undefined) {
      share = { keys: new Set(), bytes: 0 };
      this.shares.set(peer, share);
    }
    while (share.keys.size >= maxPerPeer || share.bytes + cost > maxBytesPerPeer) {
      const oldest = share.keys.values().next();
      if (oldest.done === true) break;
      const entry = this.held.get(oldest.value);
      if (entry === undefined) share.keys.delete(oldest.value);
      else {
        this.removeSender(entry, peer);
        dropped++;
      }
    }
    if (known !== undefined) {
      known.peers.push(peer);
      share.keys.add(key);
      share.bytes += cost;
      return this.count(dropped);
    }
    // past the bounds in all (more senders than `peers`, e.g. a peer that is no validator): the peer holding the most
    // drops its oldest, so senders beyond the count cannot push out the validators' shares either
    for (;;) {
      const overCount = this.held.size >= this.opts.maxEntries;
      if (!overCount && this.heldBytes + cost <= this.opts.maxBytes) break;
      let victim: [string, PeerShare] | undefined;
      for (const e of this.shares) if (victim === undefined || (overCount ? e[1].keys.size > victim[1].keys.size : e[1].bytes > victim[1].bytes)) victim = e;
      const oldest = victim?.[1].keys.values().next();
      if (victim === undefined || oldest === undefined || oldest.done === true) break;
      const entry = this.held.get(oldest.value);
      if (entry === undefined) victim[1].keys.delete(oldest.value);
      else {
        this.removeSender(entry, victim[0]);
        dropped++;
      }
    }
    this.held.set(key, { data: data.slice(), peers: [peer], key, cost, at: this.opts.now() });
    this.heldBytes += cost;
    share.keys.add(key);
    share.bytes += cost;
    return this.count(dropped);
  }

  /**
   * Removes everything held and returns what to hand on, oldest first: the entries held at most maxAgeMs. Those held
   * longer are dropped here, unhandled, and counted.
   */
  take(): TakenPropagates {
    const now = this.opts.now();
    const entries: HeldPropagate[] = [];
    let tooOld = 0;
    for (const e of this.held.values()) {
      if (now - e.at > this.opts.maxAgeMs) tooOld += e.peers.length;
      else entries.push({ data: e.data, peers: e.peers });
    }
    const dropped = this.droppedSinceTake;
    this.clear();
    return { entries, tooOld, dropped };
  }

  /** Drops everything held, uncounted. */
  clear(): void {
    this.held.clear();
    this.shares.clear();
    this.heldBytes = 0;
    this.droppedSinceTake = 0;
  }

  private count(dropped: number): number {
    this.droppedSinceTake += dropped;
    return dropped;
  }

  /** `peer` no longer holds `entry`; the entry goes when nobody does. */
  private removeSender(entry: Entry, peer: string): void {
    const i = entry.peers.indexOf(peer);
    if (i >= 0) entry.peers.splice(i, 1);
    const share = this.shares.get(peer);
    if (share !== undefined && share.keys.delete(entry.key)) share.bytes -= entry.cost;
    if (entry.peers.length === 0) {
      this.held.delete(entry.key);
      this.heldBytes -= entry.cost;
    }
  }
}
