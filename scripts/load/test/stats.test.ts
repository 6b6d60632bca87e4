import { expect } from 'chai';
import fc from 'fast-check';
import { LatencyRecorder, OutcomeCounter, RateTimeline, StatsError } from '../lib/stats.js';

/** Nearest-rank percentile computed the slow, obvious way. */
function reference(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(1, Math.ceil(Math.round((p / 100) * s.length * 1e9) / 1e9)) - 1]!;
}

describe('LatencyRecorder', () => {
  it('exact nearest-rank percentiles of 1..100', () => {
    const r = new LatencyRecorder(4);
    for (let i = 100; i >= 1; i--) r.record(i); // reverse order; growth past the initial capacity
    expect(r.percentile(50)).to.equal(50);
    expect(r.percentile(95)).to.equal(95);
    expect(r.percentile(99)).to.equal(99);
    expect(r.percentile(100)).to.equal(100);
    expect(r.percentile(0.5)).to.equal(1);
    const s = r.summary()!;
    expect(s).to.include({ count: 100, min: 1, max: 100, p50: 50, p90: 90, p99: 99, p999: 100 });
    expect(s.mean).to.equal(50.5);
  });

  it('one slow request in 1,000 shows in p99.9 and max, not in p99', () => {
    const r = new LatencyRecorder();
    for (let i = 0; i < 999; i++) r.record(10);
    r.record(5000);
    expect(r.percentile(99)).to.equal(10);
    expect(r.percentile(99.9)).to.equal(10);
    expect(r.percentile(100)).to.equal(5000);
    r.record(5000);
    expect(r.percentile(99.9)).to.equal(5000);
  });

  it('matches a sorted-array reference for any samples and percentile (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 300 }),
        fc.double({ min: 0.001, max: 100, noNaN: true }),
        (xs, p) => {
          const r = new LatencyRecorder(1);
          for (const x of xs) r.record(x);
          expect(r.percentile(p)).to.equal(reference(xs, p));
          r.record(xs[0]!); // recording after a read keeps it exact
          expect(r.percentile(p)).to.equal(reference([...xs, xs[0]!], p));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses bad samples and percentiles with stable codes', () => {
    const r = new LatencyRecorder();
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => r.record(bad))
        .to.throw(StatsError)
        .with.property('code', 'INVALID_SAMPLE');
    expect(() => r.percentile(50))
      .to.throw(StatsError)
      .with.property('code', 'NO_SAMPLES');
    expect(r.summary()).to.equal(undefined);
    r.record(1);
    for (const bad of [0, -5, 101, Number.NaN])
      expect(() => r.percentile(bad))
        .to.throw(StatsError)
        .with.property('code', 'INVALID_PERCENTILE');
  });

  it('merges recorders', () => {
    const a = new LatencyRecorder();
    const b = new LatencyRecorder();
    [3, 1].forEach((x) => a.record(x));
    [2, 4].forEach((x) => b.record(x));
    a.merge(b);
    expect(a.count).to.equal(4);
    expect(a.percentile(50)).to.equal(2);
  });
});

describe('OutcomeCounter and RateTimeline', () => {
  it('counts outcomes and keeps one example reason per code', () => {
    const c = new OutcomeCounter();
    c.add('ok');
    c.add('rejected', 'REQUEST_NACKED', 'first');
    c.add('rejected', 'REQUEST_NACKED', 'second');
    c.add('timeout', 'TIMEOUT');
    expect(c.counts).to.deep.equal({ ok: 1, rejected: 2, timeout: 1, error: 0 });
    expect(c.total).to.equal(4);
    expect(c.reasons.get('rejected:REQUEST_NACKED')).to.deep.equal({ count: 2, example: 'first' });
  });

  it('bins completions per second', () => {
    const t = new RateTimeline();
    [0, 999, 1000, 2500, 2999].forEach((ms) => t.add(ms));
    t.add(-1);
    expect(t.perSecond()).to.deep.equal([2, 1, 2]);
  });
});
