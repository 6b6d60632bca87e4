// The PROPAGATEs a node receives while it catches up, held as their bytes until the catch-up ends. A catching-up node
// cannot order anything: the requests the pool orders meanwhile reach it in its catch-up anyway, as committed txns. Were
// it to take in their PROPAGATEs as they come (decode, parse, check the signature, store, count, propagate its own), it
// would spend a quarter of its catch-up on requests it then drops (consensus's dropCaughtUp). Held here instead, unparsed
// and unverified; after the catch-up those whose payload is committed by then are dropped without a signature check, and
// the others (the requests in flight at the end of the catch-up) go to the core as any PROPAGATE does.
//
// Not taking part while catching up is the safe side of the intake's rules: the node neither counts nor refuses these
// requests meanwhile, as a slow peer would not; what it handles afterwards goes through the intake's usual checks
// (refusal memory, admission). Bounded in count and bytes; the oldest go first (the most likely to be committed by the
// end), counted. A PROPAGATE dropped here is recovered as any lost one is (the pool's n-f PROPAGATEs finalise it without
// this node, and a PRE-PREPARE naming it is served by MESSAGE_REQUEST).

export interface CatchupPropagateStashOptions {
  /** distinct PROPAGATE encodings held (default 16,384: more than the requests an overloaded pool holds in flight) */
  maxEntries: number;
  /** bytes of the encodings held, all together (default 16 MiB) */
  maxBytes: number;
}

export const defaultCatchupPropagateStashOptions: CatchupPropagateStashOptions = { maxEntries: 16_384, maxBytes: 16 * 1024 * 1024 };

/** One PROPAGATE encoding held, with the peers that sent it (the validators encode a request to the same bytes). */
export interface HeldPropagate {
  data: Uint8Array;
  peers: string[];
}

const latin1Slice = (Buffer.prototype as unknown as { latin1Slice(this: Uint8Array, start: number, end: number): string }).latin1Slice;

export class CatchupPropagateStash {
  private readonly opts: CatchupPropagateStashOptions;
  /** encoding (latin1) -> its bytes and senders, oldest first */
  private readonly held = new Map<string, HeldPropagate>();
  private heldBytes = 0;
  /** encodings dropped (the oldest, past a bound; or one longer than the byte bound alone) since creation */
  dropped = 0;

  constructor(options: Partial<CatchupPropagateStashOptions> = {}) {
    this.opts = { ...defaultCatchupPropagateStashOptions, ...options };
  }

  /** Encodings held, and their bytes. */
  get size(): { entries: number; bytes: number } {
    return { entries: this.held.size, bytes: this.heldBytes };
  }

  /** Holds `data` (a PROPAGATE's bytes) from `peer`; returns how many encodings were dropped to make room. */
  add(peer: string, data: Uint8Array): number {
    if (data.length > this.opts.maxBytes) {
      this.dropped++;
      return 1;
    }
    const key = latin1Slice.call(data, 0, data.length);
    const known = this.held.get(key);
    if (known !== undefined) {
      if (!known.peers.includes(peer)) known.peers.push(peer);
      return 0;
    }
    let dropped = 0;
    while (this.held.size >= this.opts.maxEntries || this.heldBytes + data.length > this.opts.maxBytes) {
      const oldest = this.held.entries().next();
      if (oldest.done === true) break;
      this.held.delete(oldest.value[0]);
      this.heldBytes -= oldest.value[1].data.length;
      dropped++;
    }
    this.dropped += dropped;
    this.held.set(key, { data, peers: [peer] });
    this.heldBytes += data.length;
    return dropped;
  }

  /** Removes and returns everything held, oldest first. */
  take(): HeldPropagate[] {
    const out = [...this.held.values()];
    this.held.clear();
    this.heldBytes = 0;
    return out;
  }
}
