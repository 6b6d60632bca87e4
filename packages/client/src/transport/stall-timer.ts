/**
 * Deadlines that a stalled event loop does not turn into failures. A timer that fires after the process was busy
 * for seconds (a load generator or a node on a saturated machine, a long GC) fires in the timers phase of the
 * event loop, before the poll phase reads the sockets: the answer that arrived during the stall is in the socket's
 * buffer, yet the request, the dial or the session would be declared timed out. A {@link stallTolerantTimeout}
 * that fires late counts the time it is late as a stall, not as time the remote had: it waits that long again (its
 * grace, at most the larger of the timeout and a minute in all) so that the I/O waiting behind the stall is read first, and expires
 * only when it fires on time, or when its grace is used up, and then after the poll phase of that turn (the answers
 * that arrived while the turn before ran are read before the verdict).
 */

/** A timer firing later than this after its due time is late: the event loop was stalled, ms. */
export const STALL_SLACK_MS = 50;
/**
 * The grace a deadline may take in all, at least, ms: a client that stays seconds behind for a while (stall after
 * stall) would use up a grace of its own time (5 s of a dial) before its I/O is read.
 */
export const STALL_GRACE_MIN_MS = 60_000;

export interface StallTolerantTimer {
  /** Stops the timer (idempotent). */
  clear(): void;
}

/**
 * Calls `onExpire` after `ms` of time in which the event loop was not stalled: a firing more than
 * {@link STALL_SLACK_MS} after its due time is re-armed for as long as it was late (the deadline measured from the
 * stall's end), up to the larger of `ms` and {@link STALL_GRACE_MIN_MS} of extension in all: a deadline is at most
 * that much longer than nominal, and only when the process was stalled. `unref`:
 * the timer does not keep the process alive.
 */
export function stallTolerantTimeout(onExpire: () => void, ms: number, opts: { unref?: boolean } = {}): StallTolerantTimer {
  let graceLeft = Math.max(ms, STALL_GRACE_MIN_MS);
  let due = performance.now() + ms;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let verdict: ReturnType<typeof setImmediate> | undefined;
  const arm = (delay: number): void => {
    timer = setTimeout(fire, delay);
    if (opts.unref === true) timer.unref();
  };
  const fire = (): void => {
    timer = undefined;
    const now = performance.now();
    const late = now - due;
    if (late > STALL_SLACK_MS && graceLeft > 0) {
      const grace = Math.min(late, graceLeft);
      graceLeft -= grace;
      due = now + grace;
      arm(grace);
      return;
    }
    // on time: the verdict waits for this turn's poll phase (a timer fires in the timers phase, before it), so that an
    // answer that reached a socket's buffer while the process ran the turn before is read first
    verdict = setImmediate(() => {
      verdict = undefined;
      onExpire();
    });
    if (opts.unref === true) verdict.unref();
  };
  arm(ms);
  return {
    clear: () => {
      if (timer !== undefined) clearTimeout(timer);
      if (verdict !== undefined) clearImmediate(verdict);
      timer = undefined;
      verdict = undefined;
    },
  };
}

/**
 * An AbortSignal that aborts as `AbortSignal.timeout(ms)` does (a DOMException named TimeoutError, "The operation
 * was aborted due to timeout"), by a {@link stallTolerantTimeout} that does not keep the process alive; `clear()`
 * stops its timer once the operation it bounds has ended.
 */
export function stallTolerantTimeoutSignal(ms: number): { signal: AbortSignal; clear: () => void } {
  const ctl = new AbortController();
  const t = stallTolerantTimeout(() => ctl.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms, { unref: true });
  return { signal: ctl.signal, clear: t.clear };
}
