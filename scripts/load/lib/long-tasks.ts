// Long tasks of a V8 .cpuprofile (node --cpu-prof): the stretches in which a process's event loop did not turn.
// A sample whose innermost frame is "(idle)" is the loop waiting for I/O or a timer; every other sample keeps it busy.
// A task is a run of busy samples that belong to one macrotask: the run ends at an idle sample, at a "(program)" sample
// (native work with no JavaScript on the stack: between two callbacks), and where the outermost JavaScript frame
// changes (another callback: a timer after a socket read); "(garbage collector)" samples continue the task they
// interrupt. Two callbacks of the same kind back to back (two socket reads) are not told apart, so a task may be
// longer than the macrotask it starts with, never shorter. A task longer than the threshold is a long task: nothing
// else (a timer, a socket read, a refusal that costs microseconds) ran meanwhile. For the longest ones the functions
// inside are listed by self time (where the samples were) and by total time (the frames on the stack, each counted
// once per sample), which names the caller that ran so long without yielding.

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface FunctionTime {
  name: string;
  ms: number;
}

export interface LongTask {
  /** ms from the start of the profile */
  startMs: number;
  durationMs: number;
  /** functions by self time inside the task, most first */
  bySelf: FunctionTime[];
  /** functions by total time inside the task (each frame once per sample), most first */
  byTotal: FunctionTime[];
}

export interface LongTaskReport {
  /** wall time covered by the samples, ms */
  sampledMs: number;
  /** busy (non-idle) time, ms */
  busyMs: number;
  /** threshold used, ms */
  minMs: number;
  /** how many long tasks, and their time together */
  count: number;
  totalMs: number;
  /** how many tasks fall in each band: [50, 100), [100, 250), [250, 1000), >= 1000 ms (lower bounds) */
  histogram: { fromMs: number; count: number; ms: number }[];
  /** the longest tasks, longest first, with their functions */
  longest: LongTask[];
  /** functions by total time over all long tasks together, most first */
  byTotalInLongTasks: FunctionTime[];
}

export interface LongTaskOptions {
  /** a busy stretch at least this long is a long task (ms; default 50) */
  minMs?: number;
  /** the longest tasks detailed (default 5) */
  longest?: number;
  /** functions listed per task and overall (default 8) */
  top?: number;
}

const BANDS = [0, 100, 250, 1000];

/** `name file:line` of a frame, the file shortened to its package path. */
export function frameName(n: ProfileNode): string {
  const u = n.callFrame.url;
  const m = /\/packages\/([^/]+)\/(?:src|dist)\/(.*)$/.exec(u) ?? /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(u);
  const file = m === null ? u : `${m[1]}/${m[2]}`;
  return `${n.callFrame.functionName || '(anonymous)'}${file === '' ? '' : ` ${file}:${n.callFrame.lineNumber + 1}`}`;
}

function rank(m: Map<string, number>, top: number): FunctionTime[] {
  return [...m]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, top)
    .map(([name, ms]) => ({ name, ms }));
}

/**
 * The long tasks of one profile. The time of sample i is timeDeltas[i] (the time since the previous sample), so a
 * task's duration is the sum of its samples' deltas; a profile without samples has no long tasks.
 */
export function longTasks(p: CpuProfile, o: LongTaskOptions = {}): LongTaskReport {
  const minMs = o.minMs ?? 50;
  const top = o.top ?? 8;
  const samples = p.samples ?? [];
  const deltas = p.timeDeltas ?? [];
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const idle = (id: number): boolean => byId.get(id)?.callFrame.functionName === '(idle)';
  // the outermost frame of a sample (the child of the root), cached per node; '' for the root itself
  const outer = new Map<number, number>();
  const outermost = (id: number): number => {
    let o = outer.get(id);
    if (o !== undefined) return o;
    o = id;
    for (let c = parent.get(id); c !== undefined && byId.get(c)?.callFrame.functionName !== '(root)'; c = parent.get(c)) o = c;
    outer.set(id, o);
    return o;
  };
  const fnOf = (id: number): string => byId.get(id)?.callFrame.functionName ?? '';
  // the names on the stack of a node (innermost first), cached per node
  const stacks = new Map<number, string[]>();
  const stackOf = (id: number): string[] => {
    let s = stacks.get(id);
    if (s !== undefined) return s;
    s = [];
    const seen = new Set<string>();
    for (let c: number | undefined = id; c !== undefined; c = parent.get(c)) {
      const n = byId.get(c);
      if (n === undefined || n.callFrame.functionName === '(root)') break;
      const name = frameName(n);
      if (!seen.has(name)) {
        seen.add(name);
        s.push(name);
      }
    }
    stacks.set(id, s);
    return s;
  };

  // runs of busy samples: [first index, end index (exclusive), duration]
  const runs: { from: number; to: number; ms: number; startMs: number }[] = [];
  let sampledMs = 0;
  let busyMs = 0;
  let runFrom = -1;
  let runMs = 0;
  let runStart = 0;
  /** the outermost frame of the current task (-1: none yet, e.g. a task that began with GC samples) */
  let runOuter = -1;
  const endRun = (i: number): void => {
    if (runFrom >= 0 && runMs >= minMs) runs.push({ from: runFrom, to: i, ms: runMs, startMs: runStart });
    runFrom = -1;
  };
  for (let i = 0; i <= samples.length; i++) {
    const ms = i < samples.length ? Math.max(0, deltas[i] ?? 0) / 1000 : 0;
    const id = i < samples.length ? (samples[i] ?? 0) : 0;
    const busy = i < samples.length && !idle(id);
    if (!busy) {
      endRun(i);
      sampledMs += ms;
      continue;
    }
    busyMs += ms;
    const fn = fnOf(id);
    if (fn === '(program)') {
      // no JavaScript on the stack: the end of a callback; counted busy, in no task
      endRun(i);
      sampledMs += ms;
      continue;
    }
    const o = fn === '(garbage collector)' ? -1 : outermost(id);
    if (runFrom >= 0 && o >= 0 && runOuter >= 0 && o !== runOuter) endRun(i);
    if (runFrom < 0) {
      runFrom = i;
      runMs = 0;
      runStart = sampledMs;
      runOuter = -1;
    }
    if (o >= 0) runOuter = o;
    runMs += ms;
    sampledMs += ms;
  }

  const overall = new Map<string, number>();
  const detail = (r: (typeof runs)[number], into?: Map<string, number>): LongTask => {
    const self = new Map<string, number>();
    const total = new Map<string, number>();
    for (let i = r.from; i < r.to; i++) {
      const id = samples[i] ?? 0;
      const ms = Math.max(0, deltas[i] ?? 0) / 1000;
      const stack = stackOf(id);
      const innermost = stack[0] ?? '(root)';
      self.set(innermost, (self.get(innermost) ?? 0) + ms);
      for (const name of stack) {
        total.set(name, (total.get(name) ?? 0) + ms);
        if (into !== undefined) into.set(name, (into.get(name) ?? 0) + ms);
      }
    }
    return { startMs: r.startMs, durationMs: r.ms, bySelf: rank(self, top), byTotal: rank(total, top) };
  };
  for (const r of runs) detail(r, overall);
  const histogram = BANDS.map((b, k) => ({ fromMs: Math.max(b, k === 0 ? minMs : b), count: 0, ms: 0 }));
  for (const r of runs) {
    let k = BANDS.length - 1;
    while (k > 0 && r.ms < BANDS[k]!) k--;
    histogram[k]!.count++;
    histogram[k]!.ms += r.ms;
  }
  const longest = [...runs]
    .sort((a, b) => b.ms - a.ms || a.startMs - b.startMs)
    .slice(0, o.longest ?? 5)
    .map((r) => detail(r));
  return {
    sampledMs,
    busyMs,
    minMs,
    count: runs.length,
    totalMs: runs.reduce((a, r) => a + r.ms, 0),
    histogram,
    longest,
    byTotalInLongTasks: rank(overall, top),
  };
}

/** The report as text lines (indented by `indent`). */
export function formatLongTasks(r: LongTaskReport, indent = '  '): string[] {
  const f = (ms: number): string => (ms >= 100 ? Math.round(ms).toLocaleString('en-US') : ms.toFixed(1));
  const out: string[] = [];
  out.push(
    `${indent}long tasks (busy >= ${r.minMs} ms without a turn of the event loop): ${r.count}, ${f(r.totalMs)} ms together, ${((100 * r.totalMs) / Math.max(1e-9, r.sampledMs)).toFixed(1)} % of ${f(r.sampledMs)} ms sampled (busy ${((100 * r.busyMs) / Math.max(1e-9, r.sampledMs)).toFixed(1)} %)`,
  );
  out.push(
    `${indent}  by length: ${r.histogram
      .map((h, k) => `${k + 1 < r.histogram.length ? `${h.fromMs}-${r.histogram[k + 1]!.fromMs}` : `>= ${h.fromMs}`} ms: ${h.count} (${f(h.ms)} ms)`)
      .join('; ')}`,
  );
  if (r.byTotalInLongTasks.length > 0) {
    out.push(`${indent}  functions by total time over all long tasks:`);
    for (const x of r.byTotalInLongTasks) out.push(`${indent}    ${f(x.ms).padStart(9)} ms  ${x.name}`);
  }
  for (const t of r.longest) {
    out.push(`${indent}  task at ${(t.startMs / 1000).toFixed(2)} s: ${f(t.durationMs)} ms`);
    out.push(`${indent}    self:  ${t.bySelf.map((x) => `${x.name} ${f(x.ms)}`).join('; ')}`);
    out.push(`${indent}    total: ${t.byTotal.map((x) => `${x.name} ${f(x.ms)}`).join('; ')}`);
  }
  return out;
}
