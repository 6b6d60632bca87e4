// A deadline reached while the process was stalled (a busy event loop on a saturated machine) must not fire before
// the poll phase has read the answer that arrived during the stall: a plain timer fires first (the timers phase
// precedes the poll phase), a stall-tolerant one lets the socket be read, and still expires, within twice its time.
import { expect } from 'chai';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { stallTolerantTimeout, stallTolerantTimeoutSignal } from '../../src/transport/stall-timer.js';

/** Holds the event loop for `ms` (what a long synchronous task does). */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

/** A connected loopback socket pair. */
async function socketPair(): Promise<{ server: Server; a: Socket; b: Socket }> {
  const server = createServer();
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const a = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => a.once('connect', resolve));
  const b = await accepted;
  return { server, a, b };
}

/**
 * Arms a timer of 50 ms with `arm`, has the peer's answer written into the socket, then stalls for 300 ms: which came
 * first, the answer read or the timer's expiry.
 */
async function race(arm: (onExpire: () => void, ms: number) => void, timerMs = 50, stallMs = 300): Promise<string[]> {
  const { server, a, b } = await socketPair();
  try {
    const order: string[] = [];
    const settled = new Promise<void>((resolve) => {
      a.once('data', () => {
        order.push('answer read');
        if (order.length === 2) resolve();
      });
      arm(() => {
        order.push('expired');
        if (order.length === 2) resolve();
      }, timerMs);
    });
    b.write('answer'); // in the kernel's buffer of `a` at once
    stall(stallMs);
    await settled;
    return order;
  } finally {
    a.destroy();
    b.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('stallTolerantTimeout: a deadline reached during a stall', function () {
  this.timeout(10_000);

  it('control: a plain timer expires before the answer that arrived during the stall is read', async () => {
    expect(await race((f, ms) => setTimeout(f, ms))).to.deep.equal(['expired', 'answer read']);
  });

  it('the answer that arrived during the stall is read before the deadline expires', async () => {
    expect(await race((f, ms) => stallTolerantTimeout(f, ms))).to.deep.equal(['answer read', 'expired']);
  });

  it('an answer that arrived while the turn before ran is read before a deadline that fires on time', async () => {
    // the turn ends 10 ms after the deadline (within STALL_SLACK_MS: on time), with the answer in the socket's buffer
    expect(await race((f, ms) => stallTolerantTimeout(f, ms), 100, 110)).to.deep.equal(['answer read', 'expired']);
  });

  it('control: a plain timer that fires on time expires before that answer is read', async () => {
    expect(await race((f, ms) => setTimeout(f, ms), 100, 110)).to.deep.equal(['expired', 'answer read']);
  });

  it('on a free event loop it expires after its time, once', async () => {
    let n = 0;
    const t0 = performance.now();
    await new Promise<void>((resolve) =>
      stallTolerantTimeout(() => {
        n++;
        resolve();
      }, 40),
    );
    expect(performance.now() - t0).to.be.at.least(38);
    await new Promise((r) => setTimeout(r, 100));
    expect(n).to.equal(1);
  });

  it('after a stall it still expires: once it fires on time, as long after the stall as it was late', async () => {
    const t0 = performance.now();
    const expired = new Promise<number>((resolve) => stallTolerantTimeout(() => resolve(performance.now()), 60));
    stall(400);
    const stalledUntil = performance.now();
    const at = await expired;
    expect(at - t0).to.be.at.least(400);
    expect(at - stalledUntil).to.be.at.least(300); // late by about 340 ms: that much grace
    expect(at - stalledUntil).to.be.at.most(340 + 500); // the rest is a loaded machine's slack
  });

  it('clear() stops it', async () => {
    let fired = false;
    const t = stallTolerantTimeout(() => (fired = true), 20);
    t.clear();
    t.clear();
    await new Promise((r) => setTimeout(r, 80));
    expect(fired).to.equal(false);
  });

  it('the signal aborts as AbortSignal.timeout does (TimeoutError), and not once cleared', async () => {
    const d = stallTolerantTimeoutSignal(20);
    const reason = await new Promise<unknown>((resolve) => d.signal.addEventListener('abort', () => resolve(d.signal.reason), { once: true }));
    expect((reason as DOMException).name).to.equal('TimeoutError');
    expect((reason as DOMException).message).to.equal('The operation was aborted due to timeout');
    const c = stallTolerantTimeoutSignal(20);
    c.clear();
    await new Promise((r) => setTimeout(r, 80));
    expect(c.signal.aborted).to.equal(false);
  });
});
