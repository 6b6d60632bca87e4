// The wait of a random arrival for the event loop: busy intervals weighted by their length, not counted once each.
import { expect } from 'chai';
import { LoopWaitHistogram } from '../../src/loop-wait.js';

describe('LoopWaitHistogram', () => {
  it('weights a long task by its length: one 400 ms task in a second of 10 ms ticks', () => {
    const h = new LoopWaitHistogram();
    // 60 free ticks (600 ms), then one gap of 410 ms: 400 ms busy
    for (let i = 0; i < 60; i++) h.addGap(10, 10);
    h.addGap(410, 10);
    const s = h.take();
    expect(s.windowMs).to.equal(1010);
    expect(s.busy).to.be.closeTo(400 / 1010, 1e-9);
    // an arrival waits b / 2 on average within the busy interval: 400^2 / 2 / 1010
    expect(s.mean).to.be.closeTo((400 * 400) / 2 / 1010, 1e-6);
    // P(wait > w) = (400 - w) / 1010: the median arrival finds the loop free, p90 and p99 wait most of the task
    expect(s.p50).to.equal(0);
    expect(s.p90).to.be.closeTo(400 - 0.1 * 1010, 1e-6);
    expect(s.p99).to.be.closeTo(400 - 0.01 * 1010, 1e-6);
  });

  it('several busy intervals: the quantile solves sum of max(0, b - w) = (1 - q) x window', () => {
    const h = new LoopWaitHistogram();
    h.addGap(110, 10); // 100 busy
    h.addGap(310, 10); // 300 busy
    for (let i = 0; i < 58; i++) h.addGap(10, 10); // free
    const s = h.take();
    expect(s.windowMs).to.equal(1000);
    expect(s.busy).to.be.closeTo(0.4, 1e-9);
    expect(s.mean).to.be.closeTo((100 * 100 + 300 * 300) / 2 / 1000, 1e-6);
    // above(w) for w >= 100: 300 - w; = 100 at p90 -> 200; = 10 at p99 -> 290
    expect(s.p90).to.be.closeTo(200, 1e-6);
    expect(s.p99).to.be.closeTo(290, 1e-6);
    // p50: above(0) = 400 is below 500, half the window: the median arrival finds the loop free
    expect(s.p50).to.equal(0);
  });

  it('p50 inside two busy intervals', () => {
    const h = new LoopWaitHistogram();
    for (let i = 0; i < 50; i++) h.addGap(10, 10);
    h.addGap(510, 10); // 500 busy
    const s = h.take();
    // window 1010, busy 500: above(w) = 500 - w = 505 has no w >= 0 -> 0; p90: 500 - 101 = 399
    expect(s.p50).to.equal(0);
    expect(s.p90).to.be.closeTo(399, 1e-6);
  });

  it('take starts a new window, and an idle loop waits nothing', () => {
    const h = new LoopWaitHistogram();
    h.addGap(1000, 10);
    expect(h.take().p99).to.be.greaterThan(900);
    for (let i = 0; i < 100; i++) h.addGap(10.5, 10);
    const s = h.take();
    expect(s.windowMs).to.equal(1050);
    // 0.5 ms late per tick: sub-millisecond jitter, not a wait
    expect(s.p99).to.be.lessThan(1);
    expect(s.mean).to.be.lessThan(0.5);
  });

  it('an interval longer than the last bucket keeps its exact length', () => {
    const h = new LoopWaitHistogram();
    h.addGap(20_010, 10);
    const s = h.take();
    expect(s.busy).to.be.closeTo(20_000 / 20_010, 1e-9);
    expect(s.p99).to.be.closeTo(20_000 - 0.01 * 20_010, 1e-6);
  });
});
