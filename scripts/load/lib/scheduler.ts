// Load schedules. Open loop: request i is due at start + i/rate and is sent when due whatever the
// replies do, and its latency is measured from that due time (not from when it actually left), so a
// stalled pool or a late generator shows up in the latency instead of silently lowering the offered
// rate (no coordinated omission). Closed loop: K requests in flight, each completion sends the next.

import { LatencyRecorder } from './stats.js';

/** Milliseconds on a monotonic clock, and a sleep. Injected so that schedules can be tested in virtual time. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realClock: Clock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms))),
};

/** Ends the current turn of the event loop: resolves after the I/O already waiting (the sockets' answers) was read. */
const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * Requests an open loop sends in one turn of the event loop at most (see {@link OpenLoopOptions.maxBurst}): at 2,500/s
 * a turn every 10 ms sends 25, and 64 writes cost the SDK about 20-30 ms of CPU.
 */
export const DEFAULT_MAX_BURST = 64;

export class ScheduleError extends Error {
  constructor(
    readonly code: 'INVALID_RATE' | 'INVALID_DURATION' | 'INVALID_CONCURRENCY' | 'INVALID_BURST' | 'INVALID_COUNT',
    message: string,
  ) {
    super(message);
    this.name = 'ScheduleError';
  }
}

/** Sends request `index`, due at `dueAt` (clock ms); resolves when its outcome is known. Must not reject. */
export type SendFn = (index: number, dueAt: number) => Promise<void>;

export interface OpenLoopOptions {
  /** Requests per second offered. */
  rate: number;
  durationMs: number;
  /** Requests available (pre-signed); the schedule stops early when they run out. Default: rate x duration. */
  available?: number;
  /** Requests allowed in flight; a due request beyond it is not sent and is counted as `shed`. Default unbounded. */
  maxInFlight?: number;
  clock?: Clock;
  /** Stops scheduling when aborted (requests in flight still complete). */
  signal?: AbortSignal;
  /**
   * Requests sent in one turn of the event loop at most (default {@link DEFAULT_MAX_BURST}): the rest of what is overdue
   * goes out in the next turns, each after the I/O already waiting was read. A generator that fell behind (a stall of its
   * process) sent everything overdue in one synchronous burst, 5 s behind at 2,500/s being 12,500 writes, each to every
   * node: a task of seconds in which no answer was read, and a burst as long in the next turn.
   */
  maxBurst?: number;
}

export interface ScheduleResult {
  /** Requests sent. */
  sent: number;
  /** Due requests not sent because maxInFlight requests were outstanding (open loop only). */
  shed: number;
  /** Clock ms of the first due time and of the last send. */
  startedAt: number;
  lastSendAt: number;
  /** Clock ms when every request sent had completed. */
  completedAt: number;
  /** How late sends left relative to their due time, ms (the generator's own lag). */
  sendLag: LatencyRecorder;
}

function checkPositive(code: ScheduleError['code'], name: string, v: number, integer = false): void {
  if (!Number.isFinite(v) || v <= 0 || (integer && !Number.isSafeInteger(v)))
    throw new ScheduleError(code, `${name} must be a positive ${integer ? 'integer' : 'number'}, got ${v}`);
}

/** The number of requests an open-loop run of `rate` per second for `durationMs` offers. */
export function openLoopCount(rate: number, durationMs: number): number {
  return Math.floor((rate * durationMs) / 1000);
}

/** Sends requests at a fixed rate regardless of completions; resolves when all sent requests have completed. */
export async function runOpenLoop(opts: OpenLoopOptions, send: SendFn): Promise<ScheduleResult> {
  checkPositive('INVALID_RATE', 'rate', opts.rate);
  checkPositive('INVALID_DURATION', 'duration', opts.durationMs);
  if (opts.maxInFlight !== undefined) checkPositive('INVALID_CONCURRENCY', 'maxInFlight', opts.maxInFlight, true);
  if (opts.maxBurst !== undefined) checkPositive('INVALID_BURST', 'maxBurst', opts.maxBurst, true);
  if (opts.available !== undefined && (!Number.isSafeInteger(opts.available) || opts.available < 0))
    throw new ScheduleError('INVALID_COUNT', `available must be an integer >= 0, got ${opts.available}`);
  const clock = opts.clock ?? realClock;
  const total = Math.min(openLoopCount(opts.rate, opts.durationMs), opts.available ?? Number.MAX_SAFE_INTEGER);
  const interval = 1000 / opts.rate;
  const maxInFlight = opts.maxInFlight ?? Number.MAX_SAFE_INTEGER;
  const maxBurst = opts.maxBurst ?? DEFAULT_MAX_BURST;
  const sendLag = new LatencyRecorder(Math.min(total, 1 << 20) || 16);
  const pending = new Set<Promise<void>>();
  const startedAt = clock.now();
  let lastSendAt = startedAt;
  let sent = 0;
  let shed = 0;
  let i = 0;
  while (i < total && opts.signal?.aborted !== true) {
    const now = clock.now();
    // what is due by now goes out in this turn, up to maxBurst; the rest after the I/O waiting meanwhile was read
    let burst = 0;
    while (i < total) {
      const dueAt = startedAt + i * interval;
      if (dueAt > now) break;
      if (burst === maxBurst) break;
      if (pending.size >= maxInFlight) {
        shed++;
      } else {
        burst++;
        sendLag.record(now - dueAt);
        const p = send(i, dueAt).finally(() => pending.delete(p));
        pending.add(p);
        sent++;
        lastSendAt = now;
      }
      i++;
    }
    if (i >= total) break;
    if (burst === maxBurst) await nextTurn();
    else await clock.sleep(startedAt + i * interval - clock.now());
  }
  while (pending.size > 0) await Promise.all([...pending]);
  return { sent, shed, startedAt, lastSendAt, completedAt: clock.now(), sendLag };
}

export interface ClosedLoopOptions {
  /** Requests kept in flight. */
  concurrency: number;
  durationMs: number;
  /** Requests available (pre-signed); the run stops early when they run out. */
  available: number;
  clock?: Clock;
  signal?: AbortSignal;
}

/** Keeps `concurrency` requests in flight until the duration is over or the requests run out. */
export async function runClosedLoop(opts: ClosedLoopOptions, send: SendFn): Promise<ScheduleResult> {
  checkPositive('INVALID_CONCURRENCY', 'concurrency', opts.concurrency, true);
  checkPositive('INVALID_DURATION', 'duration', opts.durationMs);
  if (!Number.isSafeInteger(opts.available) || opts.available < 0)
    throw new ScheduleError('INVALID_COUNT', `available must be an integer >= 0, got ${opts.available}`);
  const clock = opts.clock ?? realClock;
  const startedAt = clock.now();
  const endAt = startedAt + opts.durationMs;
  const sendLag = new LatencyRecorder();
  let next = 0;
  let lastSendAt = startedAt;
  const worker = async (): Promise<void> => {
    while (next < opts.available && opts.signal?.aborted !== true) {
      const now = clock.now();
      if (now >= endAt) return;
      const i = next++;
      lastSendAt = now;
      sendLag.record(0);
      await send(i, now);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  return { sent: next, shed: 0, startedAt, lastSendAt, completedAt: clock.now(), sendLag };
}

/** Virtual time for tests: sleep advances the clock at once. */
export class VirtualClock implements Clock {
  constructor(private t = 0) {}
  now(): number {
    return this.t;
  }
  sleep(ms: number): Promise<void> {
    this.t += Math.max(0, ms);
    return Promise.resolve();
  }
  advance(ms: number): void {
    this.t += ms;
  }
}
