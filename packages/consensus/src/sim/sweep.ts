// Parallel seed sweeps: runs simulations in child processes (one per job), handing out one run at a
// time so that slow fault mixes do not leave a process idle. Results come back in seed order.
import { fork } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type SimulationOptions, type SimulationResult, runSimulation } from './simulator.js';

export interface SweepOptions {
  /** child processes; 1 runs in this process */
  jobs: number;
  /** called after each finished run (progress) */
  onResult?: (r: SimulationResult, done: number) => void;
}

/** Worker protocol: parent -> {run} | {done: true}; worker -> {ready: true} | {result}. */
type ToWorker = { run: SimulationOptions } | { done: true };
type FromWorker = { ready: true } | { result: SimulationResult };

const workerPath = fileURLToPath(new URL(`./sweep-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url));

export async function runSweep(runs: readonly SimulationOptions[], opts: SweepOptions): Promise<SimulationResult[]> {
  const results: SimulationResult[] = [];
  const jobs = Math.max(1, Math.min(opts.jobs, runs.length));
  if (jobs === 1) {
    for (const run of runs) {
      results.push(runSimulation(run));
      opts.onResult?.(results[results.length - 1]!, results.length);
    }
    return results;
  }
  let next = 0;
  await Promise.all(
    Array.from(
      { length: jobs },
      () =>
        new Promise<void>((resolve, reject) => {
          // the child inherits this process's loader flags (tsx, export conditions)
          const child = fork(workerPath, [], { execArgv: process.execArgv, serialization: 'advanced' });
          const feed = (): void => {
            const msg: ToWorker = next < runs.length ? { run: runs[next++]! } : { done: true };
            child.send(msg);
          };
          child.on('message', (m: FromWorker) => {
            if ('result' in m) {
              results.push(m.result);
              opts.onResult?.(m.result, results.length);
            }
            feed();
          });
          child.on('error', reject);
          child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`simulation worker exited with ${code}`))));
        }),
    ),
  );
  const order = new Map(runs.map((r, i) => [`${r.seed}|${r.nodes}|${r.faults}`, i]));
  return results.sort((a, b) => order.get(`${a.seed}|${a.nodes}|${a.faults}`)! - order.get(`${b.seed}|${b.nodes}|${b.faults}`)!);
}
