// Bounded stash of 3PC messages that cannot be processed yet (future view, above the high
// watermark), consensus.md §4.3: one slot per (op, viewNo, ppSeqNo, sender), a global cap, a cap per
// sender, and re-processing when the condition clears.
import { BoundedFifoSet } from '@quire/common';
import type { NodeMessage } from './messages.js';

export interface Stashed {
  from: string;
  msg: NodeMessage & { viewNo: number; ppSeqNo: number };
}

/**
 * Default share of the global cap one sender may hold: a quarter (#15, F11), the fair share of a
 * pool of 4, and more than an honest validator has stashed at a time in practice.
 */
export const STASH_SENDER_SHARE = 4;

/** The default per-sender cap for a global cap `limit`. */
export function defaultStashSenderLimit(limit: number): number {
  return Math.max(1, Math.ceil(limit / STASH_SENDER_SHARE));
}

/**
 * The stash. Bounds (#15, F11): at most `limit` messages in all, at most `senderLimit` from one
 * sender; when full, a message from a sender holding fewer than the largest holder (more than one
 * fewer) takes the place of that holder's oldest message, so that a few Byzantine senders that filled
 * the stash cannot keep an honest one out: every sender can hold its fair share, limit / senders.
 */
export class MessageStash {
  /** key -> the message and its sender's key set in `bySender` (removed together) */
  private readonly items = new Map<string, { item: Stashed; senderKeys: BoundedFifoSet<string> }>();
  /** sender -> its keys in insertion order (its oldest found without walking the ones taken before) */
  private readonly bySender = new Map<string, BoundedFifoSet<string>>();
  /** a sender's key set's capacity, never reached: `add` refuses a sender at `senderLimit` first */
  private readonly senderKeysCapacity: number;
  /** messages refused or evicted since creation (diagnostics) */
  dropped = 0;

  constructor(
    private readonly limit: number,
    private readonly senderLimit = defaultStashSenderLimit(limit),
  ) {
    this.senderKeysCapacity = Number.isSafeInteger(senderLimit) && senderLimit >= 1 ? senderLimit : Number.MAX_SAFE_INTEGER;
  }

  get size(): number {
    return this.items.size;
  }

  /** Number of messages held from `from`. */
  heldFrom(from: string): number {
    return this.bySender.get(from)?.size ?? 0;
  }

  /** Returns false when the message is dropped (MESSAGE_REQUEST recovers it). */
  add(item: Stashed): boolean {
    const key = `${item.msg.op}|${item.msg.viewNo}|${item.msg.ppSeqNo}|${item.from}`;
    if (this.items.has(key)) return true;
    const own = this.heldFrom(item.from);
    if (own >= this.senderLimit) {
      this.dropped++;
      return false;
    }
    if (this.items.size >= this.limit && !this.evictFromLargest(item.from, own)) {
      this.dropped++;
      return false;
    }
    let keys = this.bySender.get(item.from);
    if (keys === undefined) {
      keys = new BoundedFifoSet(this.senderKeysCapacity);
      this.bySender.set(item.from, keys);
    }
    keys.add(key);
    this.items.set(key, { item, senderKeys: keys });
    return true;
  }

  /** Makes room for a message of `from` (holding `own`): drops the oldest of the largest holder. */
  private evictFromLargest(from: string, own: number): boolean {
    let largest: string | undefined;
    let largestKeys: BoundedFifoSet<string> | undefined;
    let most = 0;
    for (const [sender, keys] of this.bySender) {
      if (keys.size > most || (keys.size === most && largest !== undefined && sender < largest)) {
        largest = sender;
        largestKeys = keys;
        most = keys.size;
      }
    }
    if (largestKeys === undefined || largest === from || most <= own + 1) return false;
    // most > own + 1 >= 1: the holder has a first key
    const oldest = largestKeys.shift();
    if (oldest === undefined) return false;
    this.remove(oldest);
    this.dropped++;
    return true;
  }

  private remove(key: string): void {
    const e = this.items.get(key);
    if (e === undefined) return;
    this.items.delete(key);
    e.senderKeys.delete(key);
    if (e.senderKeys.size === 0) this.bySender.delete(e.item.from);
  }

  /** Removes and returns the stashed messages `ready` accepts, in ppSeqNo order. */
  take(ready: (s: Stashed) => boolean): Stashed[] {
    const out: Stashed[] = [];
    for (const [k, { item }] of this.items) {
      if (ready(item)) {
        out.push(item);
        this.remove(k);
      }
    }
    out.sort((a, b) => a.msg.viewNo - b.msg.viewNo || a.msg.ppSeqNo - b.msg.ppSeqNo);
    return out;
  }

  /** Drops what can never become processable. */
  prune(drop: (s: Stashed) => boolean): void {
    for (const [k, { item }] of this.items) if (drop(item)) this.remove(k);
  }
}
