// Fault mixes of the simulator. Every mix keeps at most f faulty nodes; mixes whose faults the
// protocol layers built so far can ride out also assert liveness after the network heals.
import { ConsensusError, ConsensusErrorCode } from '../errors.js';
import type { ConsensusOptions } from '../options.js';

export interface FaultMix {
  name: string;
  /** per-message latency range while faults are active */
  latencyMs: [number, number];
  drop: number;
  duplicate: number;
  /** probability of a much slower delivery (reordering across batches) */
  slowTail: number;
  partitions: boolean;
  crashes: boolean;
  /** the primary of view 0 crashes under load and restarts later (view change) */
  crashPrimary: boolean;
  byzantineBackups: boolean;
  byzantinePrimary: boolean;
  /** faulty (crashing or Byzantine) nodes, capped at f */
  faultyNodes: number | 'f';
  /** negative control of the fault model: f+1 backups crash together and return later */
  fPlusOneDown: boolean;
  skewSec: number;
  /** time at which drops, partitions and crashes end */
  healAtMs: number;
  /** after healing, every valid request must be ordered everywhere within this bound */
  livenessBoundMs: number;
  checkLiveness: boolean;
  requests: number;
  /** NODE txns under load: a node joins, a BLS key rotates, a validator and then a primary are demoted */
  membership: boolean;
  /** one node's wall clock jumps (forward or back, within or beyond the ppTime tolerance) */
  clockJump: boolean;
  /** one backup lies to catch-up leechers (wrong txns, bad proofs, stalls); an honest backup is down long enough to need a transfer */
  lyingSeeder: boolean;
  /**
   * Negative control (consensus.md §11 row 18): f+1 Byzantine nodes run as twins on two sides of the
   * pool; the run passes only if the checkers report the resulting safety violation.
   */
  twins: boolean;
  /** behaviours Byzantine backups pick from (default: BACKUP_BEHAVIOURS) */
  backupBehaviours?: readonly string[];
  /** partitions cut off the primary of view 0 (forces view changes) */
  isolatePrimary?: boolean;
  /** consensus option overrides of this mix (e.g. a small CHK_FREQ so that cut-off nodes catch up) */
  consensus?: Partial<ConsensusOptions>;
  // ---- the adversary (issue #15) ----
  /** 1 to f nodes (the primary of view 0 among them) stop for good; another one lags behind a partition */
  crashStop?: boolean;
  /** crashes in the middle of a node's writes (between the batch writes of one event, before the reply), several per node */
  tornWrites?: boolean;
  /** the primary of view 0 (and, at n=7, a colluding backup) run as twins: two valid PRE-PREPAREs per key, one per half */
  equivocatingPrimary?: boolean;
  /** a Byzantine backup runs a second core that believes it is the primary and sends its PRE-PREPAREs */
  usurper?: boolean;
  /**
   * crashes at the instant a node's flush resolves (its replies sent), writes finishing a while after
   * they start: the writes still in flight then are lost (gate-only: persistence before reply)
   */
  crashAtFlush?: boolean;
  /**
   * a small request queue (admission limit, #16) under bursts: nodes refuse requests for a full
   * queue; checked: no request f+1 honest nodes refused is ordered, and overload alone never
   * changes the view (gate-only)
   */
  overload?: boolean;
  /** with overload: only the first f+1 validators (the primary of view 0 among them) have the small request queue */
  overloadFirst?: boolean;
  /** f Byzantine nodes flood INSTANCE_CHANGE, MESSAGE_RESPONSE{NEW_VIEW}, VIEW_CHANGE_ACK and stash fillers */
  flood?: boolean;
  /** the primary of view 0 is faulty in time: paused and resumed, slow, and censoring one request in five */
  lazyPrimary?: boolean;
  /** behaviours the Byzantine primary picks from (default: PRIMARY_BEHAVIOURS) */
  primaryBehaviours?: readonly string[];
  /** the primary of view 1 is Byzantine (with isolatePrimary: it builds the NEW_VIEW) */
  byzantineNextPrimary?: boolean;
  /** the primary of view 1 pauses for a few seconds while the primary of view 0 is still cut off (a second view change) */
  pauseNextPrimary?: boolean;
}

const base: FaultMix = {
  name: 'none',
  latencyMs: [1, 5],
  drop: 0,
  duplicate: 0,
  slowTail: 0,
  partitions: false,
  crashes: false,
  crashPrimary: false,
  byzantineBackups: false,
  byzantinePrimary: false,
  faultyNodes: 0,
  fPlusOneDown: false,
  skewSec: 0,
  healAtMs: 2000,
  livenessBoundMs: 15_000,
  checkLiveness: true,
  requests: 60,
  membership: false,
  clockJump: false,
  lyingSeeder: false,
  twins: false,
};

/** The primary of view 0 cut off until the heal, f Byzantine backups (their behaviour set per mix), small checkpoints. */
const isolatedPrimaryByzantineBackups: FaultMix = {
  ...base,
  latencyMs: [1, 10],
  partitions: true,
  isolatePrimary: true,
  byzantineBackups: true,
  faultyNodes: 'f',
  healAtMs: 7000,
  livenessBoundMs: 30_000,
  consensus: { chkFreq: 5, logSize: 15 },
};

export const FAULT_MIXES: Readonly<Record<string, FaultMix>> = {
  none: base,
  net: { ...base, name: 'net', latencyMs: [1, 30], drop: 0.05, duplicate: 0.05, slowTail: 0.02 },
  partition: { ...base, name: 'partition', latencyMs: [1, 10], partitions: true, healAtMs: 4000 },
  crash: { ...base, name: 'crash', crashes: true, faultyNodes: 'f', healAtMs: 4000, livenessBoundMs: 25_000 },
  byzantine: { ...base, name: 'byzantine', latencyMs: [1, 15], byzantineBackups: true, faultyNodes: 'f' },
  // with the primary of view 0 crashing under load: the new primary's clock is skewed too
  skew: { ...base, name: 'skew', skewSec: 20, crashPrimary: true, faultyNodes: 1, healAtMs: 4000, livenessBoundMs: 30_000 },
  mixed: {
    ...base,
    name: 'mixed',
    latencyMs: [1, 20],
    drop: 0.03,
    duplicate: 0.03,
    slowTail: 0.01,
    partitions: true,
    crashes: true,
    byzantineBackups: true,
    faultyNodes: 'f',
    skewSec: 10,
    healAtMs: 4000,
    livenessBoundMs: 25_000,
  },
  primaryCrash: {
    ...base,
    name: 'primaryCrash',
    latencyMs: [1, 10],
    crashPrimary: true,
    faultyNodes: 1,
    healAtMs: 9000,
    livenessBoundMs: 30_000,
    requests: 40,
  },
  // beyond the fault model while they are down: nothing is ordered, nothing unsafe; resumes after
  fPlusOneDown: { ...base, name: 'fPlusOneDown', fPlusOneDown: true, healAtMs: 5000, livenessBoundMs: 25_000 },
  // a lying or equivocating primary of view 0: replaced by a view change
  primary: { ...base, name: 'primary', latencyMs: [1, 10], byzantinePrimary: true, faultyNodes: 1, livenessBoundMs: 25_000 },
  membership: { ...base, name: 'membership', latencyMs: [1, 10], membership: true, healAtMs: 7000, livenessBoundMs: 30_000, requests: 80 },
  clock: { ...base, name: 'clock', latencyMs: [1, 10], clockJump: true, crashPrimary: true, faultyNodes: 1, healAtMs: 4000, livenessBoundMs: 30_000 },
  seeders: {
    ...base,
    name: 'seeders',
    latencyMs: [1, 10],
    lyingSeeder: true,
    byzantineBackups: true,
    faultyNodes: 1,
    healAtMs: 4000,
    livenessBoundMs: 30_000,
    backupBehaviours: ['lyingSeeder'],
    consensus: { chkFreq: 3, logSize: 9, max3pcBatchSize: 2 },
  },
  // view changes (primary cut off) with a backup that sends different VIEW_CHANGEs to the two halves
  viewChange: {
    ...base,
    name: 'viewChange',
    latencyMs: [1, 10],
    partitions: true,
    isolatePrimary: true,
    byzantineBackups: true,
    faultyNodes: 1,
    backupBehaviours: ['vcEquivocate'],
    healAtMs: 7000,
    livenessBoundMs: 30_000,
  },
  twins: { ...base, name: 'twins', twins: true, checkLiveness: false, healAtMs: 2000, livenessBoundMs: 3000, requests: 20 },
  // ---- the adversary (issue #15): every mix below also forces or invites a view change ----
  // up to f nodes stop for good (the primary among them) while another node lags behind a partition
  crashStop: {
    ...base,
    name: 'crashStop',
    latencyMs: [1, 10],
    crashStop: true,
    faultyNodes: 'f',
    healAtMs: 6000,
    livenessBoundMs: 30_000,
    consensus: { chkFreq: 5, logSize: 15 },
  },
  // crashes in the middle of multi-step writes (batch commit, catch-up phases, before the reply), several per node
  torn: {
    ...base,
    name: 'torn',
    latencyMs: [1, 10],
    tornWrites: true,
    crashPrimary: true,
    faultyNodes: 1,
    healAtMs: 7000,
    livenessBoundMs: 30_000,
    requests: 60,
    consensus: { chkFreq: 5, logSize: 15 },
  },
  // the primary (and at n=7 a colluding backup) equivocate with two valid PRE-PREPAREs and matching COMMIT shares
  equivocation: { ...base, name: 'equivocation', latencyMs: [1, 10], equivocatingPrimary: true, faultyNodes: 'f', healAtMs: 4000, livenessBoundMs: 30_000 },
  // PRE-PREPAREs from a non-primary, and a primary whose PRE-PREPAREs carry forged or malformed multi-signatures
  forgery: {
    ...base,
    name: 'forgery',
    latencyMs: [1, 10],
    usurper: true,
    byzantinePrimary: true,
    primaryBehaviours: ['badMultiSig'],
    faultyNodes: 'f',
    healAtMs: 4000,
    livenessBoundMs: 30_000,
  },
  // the primary of view 0 is cut off; the primary of view 1 is Byzantine: bad NEW_VIEW, forged
  // prepared certificates in its VIEW_CHANGEs, forged OLD_VIEW_PREPREPARE replies, false consistency proofs
  badNewView: {
    ...base,
    name: 'badNewView',
    latencyMs: [1, 10],
    partitions: true,
    isolatePrimary: true,
    byzantineNextPrimary: true,
    faultyNodes: 1,
    healAtMs: 7000,
    livenessBoundMs: 30_000,
    consensus: { chkFreq: 5, logSize: 15 },
  },
  // f flooding nodes, and a primary cut off so that the floods meet a view change
  flood: {
    ...base,
    name: 'flood',
    latencyMs: [1, 10],
    flood: true,
    partitions: true,
    isolatePrimary: true,
    faultyNodes: 'f',
    healAtMs: 7000,
    livenessBoundMs: 30_000,
  },
  // a primary that pauses and resumes, delays its PRE-PREPAREs and censors one request in five
  lazyPrimary: { ...base, name: 'lazyPrimary', latencyMs: [1, 10], lazyPrimary: true, faultyNodes: 1, healAtMs: 6000, livenessBoundMs: 40_000 },
  // ---- mixes of the mutation gate (docs/mutation.md); withheldCheckpoints and vcForge are in SWEEP_MIXES too ----
  // every 0.3-0.9 s a node crashes the instant its flush resolves after a batch write (its replies
  // sent); writes land a macrotask after they start, so a flush that resolves early loses them
  // bursts into a request queue of 6: nodes refuse requests (REQNACK POOL_OVERLOADED) while the
  // others take them in; no fault else, so the view must stay 0
  overload: {
    ...base,
    name: 'overload',
    latencyMs: [1, 10],
    overload: true,
    healAtMs: 4000,
    livenessBoundMs: 20_000,
    requests: 120,
    consensus: { maxRequestQueueSize: 6 },
  },
  // the overload mix with crashes and restarts, the primary of view 0 among them (view change), and full queues on the
  // first f+1 nodes only, so that the others hold what those refuse: a node restarted while it remembered refusals
  // must not take in, from the PROPAGATEs of those that hold them, the writes it refused before (#16)
  overloadRestart: {
    ...base,
    name: 'overloadRestart',
    latencyMs: [1, 10],
    overload: true,
    overloadFirst: true,
    crashes: true,
    crashPrimary: true,
    faultyNodes: 'f',
    healAtMs: 4000,
    livenessBoundMs: 30_000,
    requests: 120,
    consensus: { maxRequestQueueSize: 6 },
  },
  flushCrash: { ...base, name: 'flushCrash', latencyMs: [1, 10], crashAtFlush: true, faultyNodes: 1, healAtMs: 7000, livenessBoundMs: 30_000, requests: 60 },
  // a primary whose PRE-PREPAREs carry a wrong state, txn or audit root or digest to half of the backups
  wrongRoots: {
    ...base,
    name: 'wrongRoots',
    latencyMs: [1, 10],
    byzantinePrimary: true,
    primaryBehaviours: ['wrongRoots'],
    faultyNodes: 1,
    livenessBoundMs: 25_000,
  },
  // a primary whose PRE-PREPAREs carry a digest that is not their contents', with consistent roots
  // (it executes its batches under that digest, so that only the digest check refuses them)
  wrongDigest: {
    ...base,
    name: 'wrongDigest',
    latencyMs: [1, 10],
    byzantinePrimary: true,
    primaryBehaviours: ['wrongDigest'],
    faultyNodes: 1,
    livenessBoundMs: 25_000,
  },
  // the primary of view 0 cut off while f backups withhold their CHECKPOINTs: the pool orders on in
  // view 1 with unstable checkpoints, and the primary must catch up after the heal
  withheldCheckpoints: { ...isolatedPrimaryByzantineBackups, name: 'withheldCheckpoints', backupBehaviours: ['withholdCheckpoints'] },
  // withheldCheckpoints with a second view change while checkpoints are unstable: the primary of
  // view 1 pauses before the heal, so that the primary of view 2 (honest) chooses among several
  // eligible checkpoints
  secondViewChange: {
    ...isolatedPrimaryByzantineBackups,
    name: 'secondViewChange',
    backupBehaviours: ['withholdCheckpoints'],
    pauseNextPrimary: true,
    healAtMs: 14_000,
    requests: 120,
    consensus: { chkFreq: 5, logSize: 30 },
  },
  // the primary of view 0 cut off; f backups (not the next primary) send every node the same forged
  // VIEW_CHANGE: a checkpoint and a prepared batch nobody else has
  vcForge: { ...isolatedPrimaryByzantineBackups, name: 'vcForge', backupBehaviours: ['vcForge'] },
};

/** the mixes a default sweep cycles through */
export const SWEEP_MIXES = [
  'none',
  'net',
  'partition',
  'crash',
  'byzantine',
  'skew',
  'mixed',
  'primary',
  'primaryCrash',
  'fPlusOneDown',
  'membership',
  'clock',
  'seeders',
  'viewChange',
  'twins',
  'crashStop',
  'torn',
  'equivocation',
  'forgery',
  'badNewView',
  'flood',
  'lazyPrimary',
  'withheldCheckpoints',
  'vcForge',
] as const;

export function faultMix(name: string): FaultMix {
  const m = FAULT_MIXES[name];
  if (m === undefined) throw new ConsensusError(ConsensusErrorCode.INVALID_OPTIONS, { field: 'faults', value: name });
  return m;
}
