// The seeded schedule of a chaos run: a sequence of perturbations, each with its kind, its targets
// chosen when it starts (the primary is known only then), how long it holds and the quiet gap after
// its heal. The same seed gives the same schedule (`--seed S` replays it); what the pool does in
// between is not deterministic (real processes), so a replay re-creates the faults, not the run.

/** A small, fast, seedable PRNG (mulberry32): the same seed gives the same sequence. */
export class Rng {
  private s: number;

  constructor(seed: number) {
    this.s = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error('pick from an empty list');
    return xs[Math.floor(this.next() * xs.length)]!;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  /** `k` distinct elements of `xs`, in random order. */
  sample<T>(xs: readonly T[], k: number): T[] {
    const pool = [...xs];
    const out: T[] = [];
    while (out.length < k && pool.length > 0) out.push(pool.splice(Math.floor(this.next() * pool.length), 1)[0]!);
    return out;
  }

  /** A derived generator (independent stream for one purpose). */
  fork(): Rng {
    return new Rng(Math.floor(this.next() * 4294967296));
  }
}

/** Perturbations on namespaces and on loopback; the network kinds need namespaces. */
export const PROCESS_KINDS = [
  'kill9',
  'kill9-primary',
  'pause',
  'pause-primary',
  'restart',
  'wipe-restart',
  'clock-skew',
  'kill9-repeat',
  'pool-restart',
  'pool-upgrade',
  'node-add-demote',
] as const;
export const NETWORK_KINDS = ['isolate', 'isolate-primary', 'partition-minority', 'partition-bridge', 'flap', 'loss', 'dup', 'slow-link'] as const;
export const ALL_KINDS = [...PROCESS_KINDS, ...NETWORK_KINDS] as const;
export type PerturbationKind = (typeof ALL_KINDS)[number];

export interface PlannedPerturbation {
  index: number;
  kind: PerturbationKind;
  /** how long the fault holds before the heal, ms */
  holdMs: number;
  /** quiet time after the pool has recovered from the heal, ms */
  gapMs: number;
  /** a per-perturbation random stream (targets, amounts, instants) */
  rng: Rng;
}

/** A random 32-bit seed (printed so a run can be replayed). */
export function randomSeed(): number {
  return Math.floor(Math.random() * 0x7fffffff) + 1;
}

/**
 * The schedule of a run: perturbations drawn from `kinds` until the total planned time reaches
 * `totalMs`. The first pass walks every kind once in a shuffled order, so that a run long enough
 * exercises each kind; later ones are drawn at random.
 */
export function planSchedule(
  seed: number,
  kinds: readonly PerturbationKind[],
  totalMs: number,
  opts: { minHoldMs?: number; maxHoldMs?: number; minGapMs?: number; maxGapMs?: number } = {},
): PlannedPerturbation[] {
  const rng = new Rng(seed);
  const minHold = opts.minHoldMs ?? 4_000;
  const maxHold = opts.maxHoldMs ?? 15_000;
  const minGap = opts.minGapMs ?? 3_000;
  const maxGap = opts.maxGapMs ?? 8_000;
  const out: PlannedPerturbation[] = [];
  const firstPass = rng.sample(kinds, kinds.length);
  // a perturbation costs its hold, its recovery (~ a few s) and its gap
  let planned = 0;
  for (let i = 0; planned < totalMs; i++) {
    const kind = i < firstPass.length ? firstPass[i]! : rng.pick(kinds);
    const holdMs = rng.int(minHold, maxHold);
    const gapMs = rng.int(minGap, maxGap);
    out.push({ index: i, kind, holdMs, gapMs, rng: rng.fork() });
    planned += holdMs + gapMs + 5_000;
  }
  return out;
}
