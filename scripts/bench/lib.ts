// Small benchmark harness shared by every script under scripts/bench: warm up, run for a fixed
// time, report the median rate of several rounds, compare it with a target.
import { performance } from 'node:perf_hooks';

export interface BenchResult {
  name: string;
  opsPerSec: number;
  target?: number;
  unit: string;
}

export interface MeasureOptions {
  /** Operations done by one call of fn (e.g. a batch of 100 appends counts 100). */
  opsPerCall?: number;
  /** Rounds whose median is reported. */
  rounds?: number;
  /** Milliseconds per round. */
  roundMs?: number;
  target?: number;
  unit?: string;
}

export async function measure(name: string, fn: () => unknown | Promise<unknown>, opts: MeasureOptions = {}): Promise<BenchResult> {
  const opsPerCall = opts.opsPerCall ?? 1;
  const rounds = opts.rounds ?? 5;
  const roundMs = opts.roundMs ?? 400;
  // warm-up: let the JIT settle
  const warmEnd = performance.now() + Math.min(300, roundMs);
  while (performance.now() < warmEnd) await fn();
  const rates: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let calls = 0;
    const start = performance.now();
    let now = start;
    while (now - start < roundMs) {
      await fn();
      calls++;
      now = performance.now();
    }
    rates.push((calls * opsPerCall * 1000) / (now - start));
  }
  rates.sort((a, b) => a - b);
  const result: BenchResult = { name, opsPerSec: rates[Math.floor(rates.length / 2)]!, unit: opts.unit ?? 'ops/s' };
  if (opts.target !== undefined) result.target = opts.target;
  print(result);
  return result;
}

export function print(r: BenchResult): void {
  const rate = Math.round(r.opsPerSec).toLocaleString('en-US');
  const verdict = r.target === undefined ? '' : `  (target >= ${r.target.toLocaleString('en-US')}: ${r.opsPerSec >= r.target ? 'met' : 'NOT MET'})`;
  console.log(`${r.name.padEnd(58)} ${rate.padStart(12)} ${r.unit}${verdict}`);
}

/** Records a measured result without running fn through `measure` (for rates computed by the script itself). */
export function record(name: string, opsPerSec: number, target?: number, unit = 'ops/s'): BenchResult {
  const r: BenchResult = { name, opsPerSec, unit };
  if (target !== undefined) r.target = target;
  print(r);
  return r;
}
