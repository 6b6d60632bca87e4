import { expect } from 'chai';
import { DEFAULT_MAX_BURST, ScheduleError, VirtualClock, openLoopCount, runClosedLoop, runOpenLoop } from '../lib/scheduler.js';

describe('open-loop scheduler', () => {
  it('sends rate x duration requests, each exactly at its due time, without waiting for completions', async () => {
    const clock = new VirtualClock(1000);
    const due: number[] = [];
    const sentAt: number[] = [];
    const completions: (() => void)[] = [];
    const run = runOpenLoop({ rate: 250, durationMs: 2000, clock }, (i, dueAt) => {
      expect(i).to.equal(due.length);
      due.push(dueAt);
      sentAt.push(clock.now());
      // no request completes until every one was sent: a closed loop would stall here
      return new Promise<void>((r) => completions.push(r));
    });
    await new Promise((r) => setImmediate(r));
    expect(due).to.have.length(500);
    due.forEach((d, i) => expect(d).to.be.closeTo(1000 + i * 4, 1e-9));
    expect(sentAt).to.deep.equal(due);
    completions.forEach((c) => c());
    const res = await run;
    expect(res).to.include({ sent: 500, shed: 0, startedAt: 1000 });
    expect(res.sendLag.percentile(100)).to.be.closeTo(0, 1e-9);
  });

  it('a late generator sends what is overdue at once and reports the lag (due time kept for latency)', async () => {
    const clock = new VirtualClock(0);
    const seen: { dueAt: number; now: number }[] = [];
    const res = await runOpenLoop({ rate: 1000, durationMs: 20, clock }, async (_i, dueAt) => {
      seen.push({ dueAt, now: clock.now() });
      if (seen.length === 5) clock.advance(10); // the process stalls for 10 ms after the 5th send
    });
    expect(res.sent).to.equal(20);
    // requests 5..14 were due during the stall and leave together at t = 14 (the 5th one left at t = 4)
    expect(seen[5]).to.deep.equal({ dueAt: 5, now: 14 });
    expect(seen[14]).to.deep.equal({ dueAt: 14, now: 14 });
    expect(seen[15]).to.deep.equal({ dueAt: 15, now: 15 });
    expect(res.sendLag.percentile(100)).to.equal(9);
  });

  it('sends what is overdue in bursts of maxBurst, each in its own turn of the event loop after the waiting I/O', async () => {
    const clock = new VirtualClock(0);
    const seen: { i: number; dueAt: number; now: number; turn: number }[] = [];
    // a macrotask queued by a send (as a socket's answer is) counts the turns: it runs before the next burst goes out
    let turn = 0;
    const res = await runOpenLoop({ rate: 1000, durationMs: 20, clock, maxBurst: 4 }, async (i, dueAt) => {
      seen.push({ i, dueAt, now: clock.now(), turn });
      setImmediate(() => (turn = Math.max(turn, seen.length)));
      if (seen.length === 5) clock.advance(10); // the process stalls for 10 ms after the 5th send
    });
    expect(res.sent).to.equal(20);
    // requests 5..14 were due during the stall: they leave at t = 14 in bursts of 4, 4 and 2, one per turn
    const late = seen.slice(5, 15);
    expect(late.map((s) => s.now)).to.deep.equal(Array(10).fill(14));
    expect(late.map((s) => s.dueAt)).to.deep.equal([5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
    const turns = late.map((s) => s.turn);
    expect(new Set(turns.slice(0, 4)).size).to.equal(1);
    expect(turns[4]).to.be.greaterThan(turns[3]!);
    expect(new Set(turns.slice(4, 8)).size).to.equal(1);
    expect(turns[8]).to.be.greaterThan(turns[7]!);
    expect(res.sendLag.percentile(100)).to.equal(9);
    // the default bounds a burst too: 1,000 overdue requests do not leave in one turn
    const clock2 = new VirtualClock(0);
    let turns2 = 0;
    let inTurn = 0;
    let most = 0;
    await runOpenLoop({ rate: 1000, durationMs: 1000, clock: clock2 }, async (i) => {
      if (i === 0) return clock2.advance(999); // (a virtual sleep does not end the turn: the stall's burst is counted alone)
      if (inTurn++ === 0)
        setImmediate(() => {
          turns2++;
          inTurn = 0;
        });
      most = Math.max(most, inTurn);
    });
    expect(most).to.equal(DEFAULT_MAX_BURST);
    expect(turns2).to.be.greaterThan(1000 / DEFAULT_MAX_BURST - 1);
  });

  it('sheds due requests beyond maxInFlight and stops at the available count or on abort', async () => {
    const clock = new VirtualClock();
    const never = new Promise<void>(() => undefined);
    const pending: Promise<void>[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const run = runOpenLoop({ rate: 100, durationMs: 1000, maxInFlight: 10, clock }, () => {
      const p = gate;
      pending.push(p);
      return p;
    });
    await new Promise((r) => setImmediate(r));
    release();
    const res = await run;
    expect(res.sent).to.equal(10);
    expect(res.shed).to.equal(90);
    const few = await runOpenLoop({ rate: 100, durationMs: 1000, available: 7, clock }, () => Promise.resolve());
    expect(few.sent).to.equal(7);
    const ac = new AbortController();
    let n = 0;
    const stopped = await runOpenLoop({ rate: 100, durationMs: 1000, clock, signal: ac.signal }, () => {
      if (++n === 3) ac.abort();
      return Promise.resolve();
    });
    expect(stopped.sent).to.equal(3);
    void never;
  });

  it('validates its inputs with stable codes', async () => {
    const send = (): Promise<void> => Promise.resolve();
    for (const [opts, code] of [
      [{ rate: 0, durationMs: 1 }, 'INVALID_RATE'],
      [{ rate: Number.NaN, durationMs: 1 }, 'INVALID_RATE'],
      [{ rate: 1, durationMs: -1 }, 'INVALID_DURATION'],
      [{ rate: 1, durationMs: 1, maxInFlight: 1.5 }, 'INVALID_CONCURRENCY'],
      [{ rate: 1, durationMs: 1, maxBurst: 0 }, 'INVALID_BURST'],
      [{ rate: 1, durationMs: 1, available: -1 }, 'INVALID_COUNT'],
    ] as const) {
      try {
        await runOpenLoop(opts, send);
        expect.fail('accepted');
      } catch (e) {
        expect(e).to.be.instanceOf(ScheduleError).with.property('code', code);
      }
    }
    expect(openLoopCount(300, 60_000)).to.equal(18_000);
    expect(openLoopCount(0.5, 3000)).to.equal(1);
  });
});

describe('closed-loop scheduler', () => {
  it('keeps exactly K requests in flight until the duration is over', async () => {
    const clock = new VirtualClock();
    let inFlight = 0;
    let maxInFlight = 0;
    const res = await runClosedLoop({ concurrency: 8, durationMs: 100, available: 10_000, clock }, async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setImmediate(r));
      clock.advance(1); // every completion moves time on by 1 ms
      inFlight--;
    });
    expect(maxInFlight).to.equal(8);
    expect(res.sent).to.be.within(100, 108);
    expect(res.completedAt - res.startedAt).to.be.at.least(100);
  });

  it('stops when the pre-signed requests run out, and validates inputs', async () => {
    const clock = new VirtualClock();
    const res = await runClosedLoop({ concurrency: 4, durationMs: 1e9, available: 9, clock }, () => Promise.resolve());
    expect(res.sent).to.equal(9);
    try {
      await runClosedLoop({ concurrency: 0, durationMs: 1, available: 1 }, () => Promise.resolve());
      expect.fail('accepted');
    } catch (e) {
      expect(e).to.be.instanceOf(ScheduleError).with.property('code', 'INVALID_CONCURRENCY');
    }
  });
});
