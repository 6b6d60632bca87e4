// Exact latency statistics: every sample is kept (a growable Float64Array, 8 bytes per sample, so a
// 60 s run at 2,000/s holds 960 KB), and percentiles are read from the sorted samples by the
// nearest-rank rule. No bucketing, so p99 of a run is the p99 of that run, not a bucket edge.

export interface LatencySummary {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  p999: number;
  max: number;
}

export class StatsError extends Error {
  constructor(
    readonly code: 'INVALID_SAMPLE' | 'INVALID_PERCENTILE' | 'NO_SAMPLES',
    message: string,
  ) {
    super(message);
    this.name = 'StatsError';
  }
}

/** Latency samples in milliseconds. */
export class LatencyRecorder {
  private samples: Float64Array;
  private n = 0;
  private sorted = true;
  private sum = 0;

  constructor(initialCapacity = 1024) {
    this.samples = new Float64Array(Math.max(16, initialCapacity));
  }

  get count(): number {
    return this.n;
  }

  /** Adds one sample (ms, finite, >= 0). Throws StatsError INVALID_SAMPLE otherwise. */
  record(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new StatsError('INVALID_SAMPLE', `latency sample must be a finite number >= 0, got ${ms}`);
    if (this.n === this.samples.length) {
      const bigger = new Float64Array(this.samples.length * 2);
      bigger.set(this.samples);
      this.samples = bigger;
    }
    if (this.n > 0 && ms < this.samples[this.n - 1]!) this.sorted = false;
    this.samples[this.n++] = ms;
    this.sum += ms;
  }

  /** Adds every sample of another recorder. */
  merge(other: LatencyRecorder): void {
    for (const v of other.values()) this.record(v);
  }

  /** The samples in recording order, or sorted after a percentile was read. */
  values(): Float64Array {
    return this.samples.subarray(0, this.n);
  }

  private sortedValues(): Float64Array {
    const v = this.samples.subarray(0, this.n);
    if (!this.sorted) {
      v.sort();
      this.sorted = true;
    }
    return v;
  }

  /**
   * The p-th percentile (0 < p <= 100) by nearest rank: the smallest sample such that at least p% of
   * the samples are <= it. Throws StatsError NO_SAMPLES when empty, INVALID_PERCENTILE for p outside (0, 100].
   */
  percentile(p: number): number {
    if (!(p > 0 && p <= 100)) throw new StatsError('INVALID_PERCENTILE', `percentile must be in (0, 100], got ${p}`);
    if (this.n === 0) throw new StatsError('NO_SAMPLES', 'no latency samples');
    const v = this.sortedValues();
    // rounded first so that binary floating point does not push e.g. 99.9% of 1,000 (= 999) to rank 1,000
    const rank = Math.ceil(Math.round((p / 100) * this.n * 1e9) / 1e9);
    return v[Math.min(this.n, Math.max(1, rank)) - 1]!;
  }

  /** Summary of all samples, or undefined when there are none. */
  summary(): LatencySummary | undefined {
    if (this.n === 0) return undefined;
    const v = this.sortedValues();
    return {
      count: this.n,
      min: v[0]!,
      mean: this.sum / this.n,
      p50: this.percentile(50),
      p90: this.percentile(90),
      p95: this.percentile(95),
      p99: this.percentile(99),
      p999: this.percentile(99.9),
      max: v[this.n - 1]!,
    };
  }
}

/** Outcome classes a load run counts. */
export type OutcomeKind = 'ok' | 'rejected' | 'timeout' | 'error';

/** Counts of outcomes and the reasons behind the failures (first reason text per code kept as an example). */
export class OutcomeCounter {
  readonly counts: Record<OutcomeKind, number> = { ok: 0, rejected: 0, timeout: 0, error: 0 };
  readonly reasons = new Map<string, { count: number; example: string }>();

  add(kind: OutcomeKind, code?: string, reason?: string): void {
    this.counts[kind]++;
    if (kind !== 'ok') {
      const key = `${kind}:${code ?? 'UNKNOWN'}`;
      const r = this.reasons.get(key);
      if (r === undefined) this.reasons.set(key, { count: 1, example: reason ?? '' });
      else r.count++;
    }
  }

  get total(): number {
    return this.counts.ok + this.counts.rejected + this.counts.timeout + this.counts.error;
  }
}

/** Per-second throughput: completions counted in one-second bins from the run's start. */
export class RateTimeline {
  private readonly bins: number[] = [];

  add(offsetMs: number): void {
    if (!Number.isFinite(offsetMs) || offsetMs < 0) return;
    const i = Math.floor(offsetMs / 1000);
    while (this.bins.length <= i) this.bins.push(0);
    this.bins[i]!++;
  }

  /** Completions per second, second by second. */
  perSecond(): number[] {
    return [...this.bins];
  }
}

/** A number for a table: integers with thousands separators, small values with up to 2 decimals. */
export function fmt(x: number | undefined, decimals = 1): string {
  if (x === undefined || Number.isNaN(x)) return '-';
  if (Math.abs(x) >= 100) return Math.round(x).toLocaleString('en-US');
  return x.toFixed(decimals);
}
