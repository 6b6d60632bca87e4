// Bounded queues of decoded peer messages waiting for the consensus core (#15, F9). The network
// lets each validator peer send up to NODE_RATE messages/s; the node handles one core event at a
// time, and a write or a catch-up can hold it for a while. Messages wait here, one FIFO per peer,
// bounded in count and bytes per peer: past a bound a peer's new messages are dropped (and counted),
// never another peer's, and the queues are served round-robin, so a flooding peer delays the others
// by at most one message per turn. What is dropped is recovered as any lost message is
// (MESSAGE_REQUEST, catch-up).

export interface PeerQueueOptions {
  /** messages one peer may have waiting; past it its new messages are dropped */
  maxMessagesPerPeer: number;
  /** encoded bytes one peer may have waiting; past it its new messages are dropped */
  maxBytesPerPeer: number;
}

/**
 * 10,000 messages (one second at the network's default NODE_RATE) and 16 MiB (128 MSG_LEN_LIMIT
 * messages; an honest peer at 1,000 writes/s sends about 1 MiB/s) per peer.
 */
export const defaultPeerQueueOptions: PeerQueueOptions = {
  maxMessagesPerPeer: 10_000,
  maxBytesPerPeer: 16 * 1024 * 1024,
};

interface PeerFifo<T> {
  /** the peer whose messages these are */
  peer: string;
  items: (T | undefined)[];
  sizes: number[];
  head: number;
  bytes: number;
  dropped: number;
}

export class PeerMessageQueue<T> {
  private readonly peers = new Map<string, PeerFifo<T>>();
  /** peers with waiting messages, in serving order (round-robin) */
  private turns: PeerFifo<T>[] = [];
  private turnHead = 0;
  private total = 0;
  private droppedTotal = 0;

  constructor(private readonly opts: PeerQueueOptions = defaultPeerQueueOptions) {}

  /** Messages waiting, all peers together. */
  get size(): number {
    return this.total;
  }

  /** Messages dropped since creation, all peers together. */
  get dropped(): number {
    return this.droppedTotal;
  }

  /** Messages waiting from `peer`. */
  waiting(peer: string): number {
    const q = this.peers.get(peer);
    return q === undefined ? 0 : q.items.length - q.head;
  }

  /** Messages of `peer` dropped since creation. */
  droppedFrom(peer: string): number {
    return this.peers.get(peer)?.dropped ?? 0;
  }

  /** True when a message of `bytes` from `peer` would be dropped (checked before decoding it). */
  full(peer: string, bytes: number): boolean {
    const q = this.peers.get(peer);
    if (q === undefined) return bytes > this.opts.maxBytesPerPeer;
    return q.items.length - q.head >= this.opts.maxMessagesPerPeer || q.bytes + bytes > this.opts.maxBytesPerPeer;
  }

  /** Counts a message of `peer` dropped without queueing it; returns that peer's drops so far. */
  drop(peer: string): number {
    let q = this.peers.get(peer);
    if (q === undefined) {
      q = { peer, items: [], sizes: [], head: 0, bytes: 0, dropped: 0 };
      this.peers.set(peer, q);
    }
    this.droppedTotal++;
    return ++q.dropped;
  }

  /** Queues `item` (of `bytes` encoded) from `peer`; false when it is dropped (the peer's queue is full). */
  push(peer: string, item: T, bytes: number): boolean {
    let q = this.peers.get(peer);
    if (q === undefined) {
      q = { peer, items: [], sizes: [], head: 0, bytes: 0, dropped: 0 };
      this.peers.set(peer, q);
    }
    if (this.full(peer, bytes)) {
      this.drop(peer);
      return false;
    }
    if (q.items.length === q.head) this.turns.push(q);
    q.items.push(item);
    q.sizes.push(bytes);
    q.bytes += bytes;
    this.total++;
    return true;
  }

  /** The next message, taking peers in turn; undefined when none waits. */
  shift(): { peer: string; item: T } | undefined {
    if (this.turnHead >= this.turns.length) return undefined;
    const q = this.turns[this.turnHead++];
    const peer = q.peer;
    const item = q.items[q.head] as T;
    q.items[q.head] = undefined;
    q.bytes -= q.sizes[q.head];
    q.head++;
    this.total--;
    if (q.head === q.items.length) {
      q.items = [];
      q.sizes = [];
      q.head = 0;
    } else {
      if (q.head >= 1024 && q.head * 2 >= q.items.length) {
        q.items = q.items.slice(q.head);
        q.sizes = q.sizes.slice(q.head);
        q.head = 0;
      }
      this.turns.push(q);
    }
    if (this.turnHead >= 1024 && this.turnHead * 2 >= this.turns.length) {
      this.turns = this.turns.slice(this.turnHead);
      this.turnHead = 0;
    }
    return { peer, item };
  }

  /** Drops every waiting message (the node is closing). */
  clear(): void {
    for (const q of this.peers.values()) {
      q.items = [];
      q.sizes = [];
      q.head = 0;
      q.bytes = 0;
    }
    this.turns = [];
    this.turnHead = 0;
    this.total = 0;
  }
}
