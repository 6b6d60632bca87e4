// Bounded stash of 3PC messages that cannot be processed yet (future view, above the high
// watermark), consensus.md §4.3: one slot per (op, viewNo, ppSeqNo, sender), a global cap, and
// re-processing when the condition clears.
import type { NodeMessage } from './messages.js';

export interface Stashed {
  from: string;
  msg: NodeMessage & { viewNo: number; ppSeqNo: number };
}

export class MessageStash {
  private readonly items = new Map<string, Stashed>();

  constructor(private readonly limit: number) {}

  get size(): number {
    return this.items.size;
  }

  /** Returns false when the stash is full (the message is dropped; MESSAGE_REQUEST recovers it). */
  add(item: Stashed): boolean {
    const key = `${item.msg.op}|${item.msg.viewNo}|${item.msg.ppSeqNo}|${item.from}`;
    if (this.items.has(key)) return true;
    if (this.items.size >= this.limit) return false;
    this.items.set(key, item);
    return true;
  }

  /** Removes and returns the stashed messages `ready` accepts, in ppSeqNo order. */
  take(ready: (s: Stashed) => boolean): Stashed[] {
    const out: Stashed[] = [];
    for (const [k, s] of this.items) {
      if (ready(s)) {
        out.push(s);
        this.items.delete(k);
      }
    }
    out.sort((a, b) => a.msg.viewNo - b.msg.viewNo || a.msg.ppSeqNo - b.msg.ppSeqNo);
    return out;
  }

  /** Drops what can never become processable. */
  prune(drop: (s: Stashed) => boolean): void {
    for (const [k, s] of this.items) if (drop(s)) this.items.delete(k);
  }
}
