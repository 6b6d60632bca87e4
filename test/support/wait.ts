// Waiting for a condition with a deadline (never a bare sleep as synchronisation).

/** Calls `fn` every `everyMs` until it returns a value other than undefined; the last error is named on timeout. */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs: number, everyMs = 250): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() >= end) break;
    await delay(everyMs);
  }
  const why = last instanceof Error ? `: ${last.message}` : last !== undefined ? `: ${String(last)}` : '';
  throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${why}`);
}

/** A pause between polls or a deliberate quiet period; never used to wait for a condition. */
export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Seconds with one decimal, for the timing lines the tests print. */
export function secs(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * Runs the tasks with at most `limit` in flight, results in task order. The whole-pool tests use it
 * for CLI processes: a handful at once saves wall time, dozens at once only starve each other (and
 * the nodes) of CPU on a small machine.
 */
export async function inParallel<T>(tasks: readonly (() => Promise<T>)[], limit = 3): Promise<T[]> {
  const out: T[] = new Array<T>(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return out;
}
