// Waiting for a condition with a deadline (never a bare sleep as synchronisation).
import { waitFor as waitForCondition } from '@quire/testing';

/** Calls `fn` every `everyMs` until it returns a value other than undefined; the last error is named on timeout (@quire/testing's waitFor, polling every 250 ms by default). */
export function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs: number, everyMs = 250): Promise<T> {
  return waitForCondition(what, fn, timeoutMs, everyMs);
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
