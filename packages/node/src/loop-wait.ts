// How long a frame arriving at a random instant waits before the event loop is free to read it. The event-loop delay
// of perf_hooks counts one sample per timer firing: a 400 ms task is one sample among the hundred short ones of the
// same second, yet a client's frame arriving in that second waits behind it with a probability of 0.4. This weights
// each busy interval by its length, as the arrivals see it: a frame arriving in a busy interval of b ms waits, on
// average, b / 2 ms (uniformly 0 to b), and one arriving while the loop is free waits nothing.

/** Busy intervals are kept in buckets of 1 ms up to this (longer ones in the last bucket, with their exact sum). */
const MAX_BUCKET_MS = 10_000;

export interface LoopWaitSummary {
  /** wall time observed, ms */
  windowMs: number;
  /** share of the window the loop was busy (a timer firing later than its interval) */
  busy: number;
  /** the wait of an arrival at a random instant, ms: mean and quantiles (time-weighted) */
  mean: number;
  p50: number;
  p90: number;
  p99: number;
}

/**
 * Accumulates the busy intervals of an event loop, measured as the lateness of a timer firing every `resolutionMs`
 * (the gap between two firings less the interval; resolution +-`resolutionMs`), in fixed buckets (memory bounded
 * whatever the window), and summarises the wait a random arrival sees over the window since the last `take`.
 */
export class LoopWaitHistogram {
  private readonly counts = new Float64Array(MAX_BUCKET_MS + 1);
  private readonly sums = new Float64Array(MAX_BUCKET_MS + 1);
  private windowMs = 0;

  /** One gap between two firings of a timer set to fire every `resolutionMs`, ms. */
  addGap(gapMs: number, resolutionMs: number): void {
    if (!(gapMs > 0)) return;
    this.windowMs += gapMs;
    const busy = gapMs - resolutionMs;
    if (busy <= 0) return;
    const i = Math.min(MAX_BUCKET_MS, Math.floor(busy));
    this.counts[i] = (this.counts[i] ?? 0) + 1;
    this.sums[i] = (this.sums[i] ?? 0) + busy;
  }

  /** The summary of the window since the last `take` (or the start), then a new window. */
  take(): LoopWaitSummary {
    const s = this.summary();
    this.counts.fill(0);
    this.sums.fill(0);
    this.windowMs = 0;
    return s;
  }

  summary(): LoopWaitSummary {
    const t = this.windowMs;
    if (t <= 0) return { windowMs: 0, busy: 0, mean: 0, p50: 0, p90: 0, p99: 0 };
    let busy = 0;
    let sq = 0;
    for (let i = 0; i <= MAX_BUCKET_MS; i++) {
      const n = this.counts[i] ?? 0;
      if (n === 0) continue;
      const s = this.sums[i] ?? 0;
      busy += s;
      // the sum of squares within a bucket from its mean (exact for one interval, within 1 ms otherwise)
      sq += (s * s) / n;
    }
    return { windowMs: t, busy: busy / t, mean: sq / 2 / t, p50: this.quantile(0.5, t), p90: this.quantile(0.9, t), p99: this.quantile(0.99, t) };
  }

  /** The least w with P(wait > w) <= 1 - q, where P(wait > w) = sum over busy intervals b of max(0, b - w) / window. */
  private quantile(q: number, t: number): number {
    const target = (1 - q) * t;
    // walk the buckets from the longest; for w between the value v of a bucket and that of the longer bucket before it,
    // above(w) = sum - w * count over the intervals of the longer buckets (those of length v add nothing at w >= v)
    let count = 0;
    let sum = 0;
    for (let i = MAX_BUCKET_MS; i >= 0; i--) {
      const n = this.counts[i] ?? 0;
      if (n === 0) continue;
      const v = (this.sums[i] ?? 0) / n;
      if (sum - v * count >= target) return count === 0 ? v : (sum - target) / count;
      count += n;
      sum += this.sums[i] ?? 0;
    }
    // above(0), every busy interval, is below the target share: an arrival at quantile q finds the loop free
    return count > 0 ? Math.max(0, (sum - target) / count) : 0;
  }
}

/** Samples this process's event loop into a `LoopWaitHistogram` with an unref'd timer every `resolutionMs`. */
export class LoopWaitMonitor {
  readonly histogram = new LoopWaitHistogram();
  private timer: NodeJS.Timeout | undefined;
  private last = 0;

  constructor(private readonly resolutionMs = 10) {}

  start(): void {
    if (this.timer !== undefined) return;
    this.last = performance.now();
    this.timer = setInterval(() => {
      const now = performance.now();
      this.histogram.addGap(now - this.last, this.resolutionMs);
      this.last = now;
    }, this.resolutionMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
