// Parallel seed sweeps: runs simulations in child processes (one per job), handing out one run at a
// time so that slow fault mixes do not leave a process idle. Results come back in seed order.
//
// The world of the runs is chosen by `runner`: the path of a module exporting
// `simulate(opts): Promise<SimulationResult>` (the node package's real executor and storage, for
// example); without it, the stand-in world of this package. A module path, not a function, so
// that child processes can load it and this package imports nothing above it.
import { fork } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type SimulationOptions, type SimulationResult, runSimulation } from './simulator.js';
import { ConsensusError, ConsensusErrorCode } from '../errors.js';

export interface SweepOptions {
  /** child processes; 1 runs in this process */
  jobs: number;
  /** called after each finished run (progress) */
  onResult?: (r: SimulationResult, done: number) => void;
  /** file path of a module exporting `simulate(opts): Promise<SimulationResult>`; default: the stand-in world */
  runner?: string;
  /** once aborted, no further run starts (the runs under way finish); the results hold the runs done */
  signal?: AbortSignal;
}

/** Worker protocol: parent -> {run} | {done: true}; worker -> {ready: true} | {result}. */
export type ToWorker = { run: SimulationOptions } | { done: true };
export type FromWorker = { ready: true } | { result: SimulationResult };

export type SimulateFn = (opts: SimulationOptions) => SimulationResult | Promise<SimulationResult>;

const workerPath = fileURLToPath(new URL(`./sweep-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url));

/** The `simulate` of a runner module (default: the stand-in world, synchronously). */
export async function loadRunner(runner: string | undefined): Promise<SimulateFn> {
  if (runner === undefined) return runSimulation;
  const mod = (await import(pathToFileURL(runner).href)) as { simulate?: unknown };
  if (typeof mod.simulate !== 'function')
    throw new ConsensusError(ConsensusErrorCode.SIMULATION, { reason: `simulation runner ${runner} exports no simulate()` });
  return mod.simulate as SimulateFn;
}

export async function runSweep(runs: readonly SimulationOptions[], opts: SweepOptions): Promise<SimulationResult[]> {
  const results: SimulationResult[] = [];
  const jobs = Math.max(1, Math.min(opts.jobs, runs.length));
  if (jobs === 1) {
    const simulate = await loadRunner(opts.runner);
    for (const run of runs) {
      if (opts.signal?.aborted === true) break;
      const result = await simulate(run);
      results.push(result);
      opts.onResult?.(result, results.length);
    }
    return results;
  }
  let next = 0;
  /** results by the index of their run (a worker has one run at a time) */
  const byRun: (SimulationResult | undefined)[] = [];
  await Promise.all(
    Array.from(
      { length: jobs },
      () =>
        new Promise<void>((resolve, reject) => {
          // the child inherits this process's loader flags (tsx, export conditions)
          const child = fork(workerPath, opts.runner !== undefined ? [opts.runner] : [], { execArgv: process.execArgv, serialization: 'advanced' });
          /** index of the run this worker has */
          let running = -1;
          const feed = (): void => {
            running = next < runs.length && opts.signal?.aborted !== true ? next++ : -1;
            const msg: ToWorker = running >= 0 ? { run: runs[running] } : { done: true };
            child.send(msg);
          };
          child.on('message', (m: FromWorker) => {
            if ('result' in m) {
              results.push(m.result);
              if (running >= 0) byRun[running] = m.result;
              opts.onResult?.(m.result, results.length);
            }
            feed();
          });
          child.on('error', reject);
          child.on('exit', (code) =>
            code === 0 ? resolve() : reject(new ConsensusError(ConsensusErrorCode.SIMULATION, { reason: `simulation worker exited with ${code}` })),
          );
        }),
    ),
  );
  // in the order of their runs (the runs not started after an abort have none)
  return byRun.filter((r) => r !== undefined);
}
