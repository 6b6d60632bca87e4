/**
 * Time for the upgrade and restart schedulers: a wall clock with one-shot timers at absolute times.
 * The system clock chains timeouts so that a date months away (beyond setTimeout's 2^31-1 ms limit)
 * still fires at its time; the manual clock is advanced explicitly (simulations, tests).
 */

/** An opaque timer handle. */
export interface ClockTimer {
  readonly at: number;
}

export interface UpgradeClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once at `atMs` (epoch ms), or as soon as possible when that is past. */
  setTimer(atMs: number, fn: () => void): ClockTimer;
  /** Cancels a timer; a no-op for one that fired or was cleared. */
  clearTimer(timer: ClockTimer): void;
}

/** The largest delay setTimeout honours; longer ones fire at once. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

interface SystemTimer extends ClockTimer {
  handle: NodeJS.Timeout | undefined;
  cleared: boolean;
}

/** The process clock. Timers are unref'd: a pending upgrade never keeps a stopping process alive. */
export const systemClock: UpgradeClock = {
  now: () => Date.now(),
  setTimer(atMs, fn) {
    const timer: SystemTimer = { at: atMs, handle: undefined, cleared: false };
    const arm = (): void => {
      const delay = Math.max(0, atMs - Date.now());
      timer.handle = setTimeout(
        () => {
          if (timer.cleared) return;
          if (Date.now() < atMs) arm();
          else fn();
        },
        Math.min(delay, MAX_TIMEOUT_MS),
      );
      timer.handle.unref();
    };
    arm();
    return timer;
  },
  clearTimer(timer) {
    const t = timer as SystemTimer;
    t.cleared = true;
    if (t.handle !== undefined) clearTimeout(t.handle);
  },
};

interface ManualTimer extends ClockTimer {
  readonly id: number;
  readonly fn: () => void;
}

/** A clock that moves only when told to; timers fire in time order (ties in creation order). */
export class ManualClock implements UpgradeClock {
  #now: number;
  #nextId = 1;
  readonly #timers = new Set<ManualTimer>();

  constructor(startMs: number) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimer(atMs: number, fn: () => void): ClockTimer {
    const t: ManualTimer = { at: atMs, id: this.#nextId++, fn };
    this.#timers.add(t);
    return t;
  }

  clearTimer(timer: ClockTimer): void {
    this.#timers.delete(timer as ManualTimer);
  }

  /** Number of timers not yet fired or cleared. */
  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** The time of the earliest pending timer, if any. */
  get nextTimerAt(): number | undefined {
    let best: number | undefined;
    for (const t of this.#timers) if (best === undefined || t.at < best) best = t.at;
    return best;
  }

  /** Moves the clock to `atMs` (never backwards), firing every timer due on the way, in order. */
  advanceTo(atMs: number): void {
    for (;;) {
      let due: ManualTimer | undefined;
      for (const t of this.#timers) {
        if (t.at <= atMs && (due === undefined || t.at < due.at || (t.at === due.at && t.id < due.id))) due = t;
      }
      if (due === undefined) break;
      this.#timers.delete(due);
      this.#now = Math.max(this.#now, due.at);
      due.fn();
    }
    this.#now = Math.max(this.#now, atMs);
  }

  /** Moves the clock forward by `ms`. */
  advance(ms: number): void {
    this.advanceTo(this.#now + ms);
  }
}
