// Discrete-event queue ordered by (virtual time, insertion sequence): a binary min-heap.

interface Item {
  time: number;
  seq: number;
  fn: () => void;
}

export class EventQueue {
  private readonly heap: Item[] = [];
  private seq = 0;
  /** current virtual time, milliseconds */
  now = 0;

  get size(): number {
    return this.heap.length;
  }

  nextTime(): number {
    return this.heap[0]?.time ?? Number.POSITIVE_INFINITY;
  }

  schedule(time: number, fn: () => void): void {
    const item = { time: Math.max(time, this.now), seq: this.seq++, fn };
    const h = this.heap;
    h.push(item);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }

  /** Pops and runs the earliest event. */
  runNext(): void {
    const h = this.heap;
    const top = h[0];
    if (top === undefined) return;
    const last = h.pop();
    if (last !== undefined && h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && less(h[l], h[m])) m = l;
        if (r < h.length && less(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    this.now = top.time;
    top.fn();
  }
}

function less(a: Item, b: Item): boolean {
  return a.time < b.time || (a.time === b.time && a.seq < b.seq);
}
