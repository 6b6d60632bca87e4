// Small benchmark harness shared by every script under scripts/bench: warm up, run for a fixed time, and report
// every rate the same way, because the machine running benchmarks is often shared:
//
// - wall: the wall-clock rate (for `measure`, the median of several rounds);
// - CPU: the rate per CPU-second of the whole process (every thread: LevelDB's compaction and write threads,
//   V8's garbage-collector helpers, libuv's pool), which a busy machine does not inflate by time spent waiting
//   for a core;
// - main thread: on Linux, the rate per CPU-second of the main JS thread alone, which bounds the wall-clock rate
//   on an idle machine where the background threads run on another core (n/a elsewhere, or when the run was
//   shorter than the kernel's 10 ms accounting tick);
// - load: the one-minute load average when the figure was taken.
//
// A target, when given, is judged on the wall-clock and on the CPU rate.
import { readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';

/** Readings of the wall clock, the process's CPU time and the main thread's CPU time; or the difference of two. */
export interface CpuClock {
  wallMs: number;
  /** User + system CPU time of the whole process, microseconds. */
  cpuUs: number;
  /** User + system CPU time of the main thread, milliseconds (Linux only). */
  mainMs: number | undefined;
}

export interface BenchResult {
  name: string;
  /** Wall-clock rate (the median of the rounds for `measure`). */
  opsPerSec: number;
  /** Rate per CPU-second of the whole process; undefined when no CPU time was accounted. */
  cpuOpsPerSec?: number;
  /** Rate per CPU-second of the main thread (Linux); undefined when not measurable. */
  mainOpsPerSec?: number;
  /** One-minute load average when the figure was taken. */
  load: number;
  target?: number;
  unit: string;
}

export interface MeasureOptions {
  /** Operations done by one call of fn (e.g. a batch of 100 appends counts 100). */
  opsPerCall?: number;
  /** Rounds whose median wall-clock rate is reported. */
  rounds?: number;
  /** Milliseconds per round. */
  roundMs?: number;
  target?: number;
  unit?: string;
}

export interface ReportOptions {
  target?: number;
  unit?: string;
  /** Wall-clock rate to report instead of ops / elapsed wall time (e.g. the median of rounds). */
  wallRate?: number;
}

/** CPU time (ms) of the calling thread, from /proc (Linux); undefined elsewhere. */
function mainThreadCpuMs(): number | undefined {
  try {
    const st = readFileSync('/proc/thread-self/stat', 'utf8');
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime in clock ticks (USER_HZ = 100)
  } catch {
    return undefined;
  }
}

/**
 * CPU time (ms) of the main thread and of all other threads of the process together (LevelDB's
 * compaction and write threads, libuv's pool, V8's helpers), from /proc (Linux); undefined elsewhere.
 */
export function threadCpuMs(): { main: number; others: number } | undefined {
  try {
    let main = 0;
    let others = 0;
    for (const tid of readdirSync('/proc/self/task')) {
      const st = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      const ms = ((Number(f[11]) + Number(f[12])) * 1000) / 100;
      if (tid === String(process.pid)) main += ms;
      else others += ms;
    }
    return { main, others };
  } catch {
    return undefined;
  }
}

/** The clocks now. */
export function sample(): CpuClock {
  const c = process.cpuUsage();
  return { wallMs: performance.now(), cpuUs: c.user + c.system, mainMs: mainThreadCpuMs() };
}

/** Time spent on every clock since `start` (a {@link sample}). */
export function since(start: CpuClock): CpuClock {
  const e = sample();
  return {
    wallMs: e.wallMs - start.wallMs,
    cpuUs: e.cpuUs - start.cpuUs,
    mainMs: start.mainMs === undefined || e.mainMs === undefined ? undefined : e.mainMs - start.mainMs,
  };
}

/** The sum of two elapsed times (to add up the timed parts of a run). */
export function addTimes(a: CpuClock, b: CpuClock): CpuClock {
  return { wallMs: a.wallMs + b.wallMs, cpuUs: a.cpuUs + b.cpuUs, mainMs: a.mainMs === undefined || b.mainMs === undefined ? undefined : a.mainMs + b.mainMs };
}

/** An elapsed time of zero on every clock, to start a sum with {@link addTimes}. */
export const NO_TIME: CpuClock = { wallMs: 0, cpuUs: 0, mainMs: 0 };

/** The one-minute, five-minute and fifteen-minute load averages, for a script's opening line. */
export function loadAverages(): string {
  return loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
}

const fmt = (n: number | undefined): string => (n === undefined ? 'n/a' : Math.round(n).toLocaleString('en-US'));
const met = (rate: number | undefined, target: number): string => (rate === undefined ? 'n/a' : rate >= target ? 'met' : 'NOT MET');

/** Prints one rate: `ops` operations done in `elapsed` (see {@link since}); returns what it printed. */
export function report(name: string, ops: number, elapsed: CpuClock, opts: ReportOptions = {}): BenchResult {
  const result: BenchResult = { name, opsPerSec: opts.wallRate ?? (ops * 1000) / elapsed.wallMs, load: loadavg()[0]!, unit: opts.unit ?? 'ops/s' };
  if (elapsed.cpuUs > 0) result.cpuOpsPerSec = (ops * 1e6) / elapsed.cpuUs;
  if (elapsed.mainMs !== undefined && elapsed.mainMs > 0) result.mainOpsPerSec = (ops * 1000) / elapsed.mainMs;
  if (opts.target !== undefined) result.target = opts.target;
  const t = result.target;
  const verdict = t === undefined ? '' : `  target >= ${fmt(t)}: ${met(result.opsPerSec, t)} (wall), ${met(result.cpuOpsPerSec, t)} (CPU)`;
  console.log(
    `${name.padEnd(60)} wall ${fmt(result.opsPerSec).padStart(10)}  CPU ${fmt(result.cpuOpsPerSec).padStart(10)}  main thread ${fmt(result.mainOpsPerSec).padStart(10)} ${result.unit}  load ${result.load.toFixed(1)}${verdict}`,
  );
  return result;
}

/**
 * Runs `fn` (doing `opsPerCall` operations per call) for a warm-up and then `rounds` rounds of `roundMs`; reports the
 * median wall-clock rate of the rounds and the CPU rates over all rounds.
 */
export async function measure(name: string, fn: () => unknown, opts: MeasureOptions = {}): Promise<BenchResult> {
  const opsPerCall = opts.opsPerCall ?? 1;
  const rounds = opts.rounds ?? 5;
  const roundMs = opts.roundMs ?? 400;
  // warm-up: let the JIT settle
  const warmEnd = performance.now() + Math.min(300, roundMs);
  while (performance.now() < warmEnd) await fn();
  const rates: number[] = [];
  let ops = 0;
  const start = sample();
  for (let r = 0; r < rounds; r++) {
    let calls = 0;
    const t0 = performance.now();
    let now = t0;
    while (now - t0 < roundMs) {
      await fn();
      calls++;
      now = performance.now();
    }
    rates.push((calls * opsPerCall * 1000) / (now - t0));
    ops += calls * opsPerCall;
  }
  rates.sort((a, b) => a - b);
  const reportOpts: ReportOptions = { unit: opts.unit ?? 'ops/s', wallRate: rates[Math.floor(rates.length / 2)]! };
  if (opts.target !== undefined) reportOpts.target = opts.target;
  return report(name, ops, since(start), reportOpts);
}

/**
 * Prints a figure that is not a rate of timed work (a latency, a size, a cost derived from a rate), with the load
 * average; `target` is a lower bound.
 */
export function record(name: string, value: number, target?: number, unit = 'ops/s'): void {
  const verdict = target === undefined ? '' : `  (target >= ${target.toLocaleString('en-US')}: ${value >= target ? 'met' : 'NOT MET'})`;
  const shown = Math.abs(value) >= 100 ? fmt(value) : value.toPrecision(3);
  console.log(`${name.padEnd(60)} ${shown.padStart(15)} ${unit}  load ${loadavg()[0]!.toFixed(1)}${verdict}`);
}
