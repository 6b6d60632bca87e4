/**
 * A token bucket: `rate` tokens per second, at most `burst` stored. `take(n)` spends n tokens when available.
 * Time comes from an injected monotonic clock in milliseconds (performance.now by default).
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly rate: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  /** Spends `n` tokens and returns true, or returns false and spends nothing. */
  take(n = 1): boolean {
    const t = this.now();
    if (t > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) * this.rate) / 1000);
      this.last = t;
    }
    if (this.tokens < n) return false;
    this.tokens -= n;
    return true;
  }

  /** Tokens available now (for diagnostics). */
  get available(): number {
    this.take(0);
    return this.tokens;
  }
}
