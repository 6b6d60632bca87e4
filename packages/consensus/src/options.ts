// Consensus options with Quire defaults (consensus.md §10) and quorum sizes (§1.2).
import { ConsensusError, ConsensusErrorCode } from './errors.js';

export interface ConsensusOptions {
  /** this node's alias */
  name: string;
  /** validator registry R (ordered aliases) at start; later changes come from ordered NODE txns */
  validators: string[];
  /**
   * most requests in one batch. 500: batches of 100, measured against it (docs/benchmarks.md, "The door and the CPU
   * per batch"), answered refusals no faster under overload, acknowledged no more, and halved the closed loop
   * (59 against 126 writes/s). Twice this (at least 1,000) is the floor of the admission limit, this x
   * max3pcBatchesInFlight its floor while the requests held are younger than maxQueueWaitMs (intake.ts `updateLimit`)
   */
  max3pcBatchSize: number;
  max3pcBatchWaitMs: number;
  max3pcBatchesInFlight: number;
  chkFreq: number;
  logSize: number;
  /** STATE_FRESHNESS_UPDATE_INTERVAL: an idle ledger gets an empty batch (and a fresh multi-signature) this often */
  stateFreshnessUpdateIntervalSec: number;
  /** ACCEPTABLE_FRESHNESS_INTERVALS_COUNT: a validator votes 43 when the oldest ledger update is this many intervals old */
  acceptableFreshnessIntervalsCount: number;
  acceptableDeviationPrePrepareSec: number;
  propagateRequestDelayMs: number;
  messageRequestRetryMs: number;
  /** interval of the core's housekeeping timer (batching, repair, expiry) */
  tickMs: number;
  outdatedReqsCheckIntervalMs: number;
  propagatesPhaseReqTimeoutMs: number;
  orderingPhaseReqTimeoutMs: number;
  /** admission: the most pending requests a node holds (the ceiling of the time-bounded limit below) */
  maxRequestQueueSize: number;
  /**
   * admission: a node also refuses new writes once its pending requests would take longer than this
   * to order at the rate the pool ordered over the last 10 s (never below 1,000 nor 2 x max3pcBatchSize; nor below
   * max3pcBatchSize x max3pcBatchesInFlight while the oldest request it holds has waited less than this)
   */
  maxQueueWaitMs: number;
  /** per-kind cap on stashed messages */
  replicaStashLimit: number;
  /** NEW_VIEW wait before voting 28, doubled per failed view change (consensus.md §6.8) */
  newViewTimeoutMs: number;
  newViewTimeoutCapMs: number;
  /** monitor M1: no batch ordered while requests are pending */
  progressTimeoutMs: number;
  /** monitor M2: oldest finalised pending request */
  requestOrderingTimeoutMs: number;
  toleratePrimaryDisconnectionMs: number;
  /** minimum gap between own INSTANCE_CHANGE re-sends for one view */
  viewChangeWindowMs: number;
  perfCheckFreqMs: number;
  /** INSTANCE_CHANGE vote lifetime */
  outdatedInstanceChangesMs: number;
  /** monitor M3: window over which ordered requests are compared with finalised ones */
  throughputWindowMs: number;
  /** monitor M3: minimum ordered / finalised ratio over the window while the backlog never empties */
  throughputDelta: number;
  /** MSG_LEN_LIMIT: largest encoded message (catch-up replies are split below it) */
  msgLenLimit: number;
  /**
   * The plugin ledgers of the node (ids above 3; every node of the pool runs the same): their batches are
   * ordered and caught up like those of ledgers 0-2, and peers' messages may name them. Default none.
   */
  pluginLedgers?: readonly number[];
}

export const defaultConsensusOptions: Omit<ConsensusOptions, 'name' | 'validators'> = {
  max3pcBatchSize: 500,
  max3pcBatchWaitMs: 100,
  max3pcBatchesInFlight: 4,
  chkFreq: 100,
  logSize: 300,
  stateFreshnessUpdateIntervalSec: 60,
  acceptableFreshnessIntervalsCount: 2,
  acceptableDeviationPrePrepareSec: 60,
  propagateRequestDelayMs: 200,
  messageRequestRetryMs: 1000,
  tickMs: 20,
  outdatedReqsCheckIntervalMs: 10_000,
  propagatesPhaseReqTimeoutMs: 60_000,
  orderingPhaseReqTimeoutMs: 600_000,
  maxRequestQueueSize: 4000,
  maxQueueWaitMs: 5_000,
  replicaStashLimit: 20_000,
  newViewTimeoutMs: 5_000,
  newViewTimeoutCapMs: 60_000,
  progressTimeoutMs: 3_000,
  requestOrderingTimeoutMs: 20_000,
  toleratePrimaryDisconnectionMs: 3_000,
  viewChangeWindowMs: 2_000,
  perfCheckFreqMs: 1_000,
  outdatedInstanceChangesMs: 300_000,
  throughputWindowMs: 10_000,
  throughputDelta: 0.1,
  msgLenLimit: 128 * 1024,
};

export function resolveOptions(opts: Partial<ConsensusOptions> & Pick<ConsensusOptions, 'name' | 'validators'>): ConsensusOptions {
  const o: ConsensusOptions = { ...defaultConsensusOptions, ...opts };
  const bad = (field: keyof ConsensusOptions): never => {
    throw new ConsensusError(ConsensusErrorCode.INVALID_OPTIONS, { field });
  };
  if (o.validators.length === 0 || new Set(o.validators).size !== o.validators.length) bad('validators');
  for (const k of [
    'max3pcBatchSize',
    'max3pcBatchesInFlight',
    'chkFreq',
    'logSize',
    'tickMs',
    'throughputWindowMs',
    'msgLenLimit',
    'acceptableFreshnessIntervalsCount',
    'replicaStashLimit',
  ] as const) {
    if (!Number.isSafeInteger(o[k]) || o[k] < 1) bad(k);
  }
  if (o.logSize < o.chkFreq) bad('logSize');
  if (!(Number.isFinite(o.stateFreshnessUpdateIntervalSec) && o.stateFreshnessUpdateIntervalSec > 0)) bad('stateFreshnessUpdateIntervalSec');
  if (!(o.throughputDelta >= 0 && o.throughputDelta <= 1)) bad('throughputDelta');
  if (!(Number.isFinite(o.maxQueueWaitMs) && o.maxQueueWaitMs > 0)) bad('maxQueueWaitMs');
  if (!Number.isSafeInteger(o.maxRequestQueueSize) || o.maxRequestQueueSize < 1) bad('maxRequestQueueSize');
  const plugins = o.pluginLedgers ?? [];
  if (!Array.isArray(plugins) || new Set(plugins).size !== plugins.length || !plugins.every((l) => Number.isSafeInteger(l) && l > 3)) bad('pluginLedgers');
  return o;
}

export interface Quorums {
  n: number;
  f: number;
  propagate: number;
  prepare: number;
  commit: number;
  blsSignatures: number;
  checkpoint: number;
  timestamp: number;
  weak: number;
  strong: number;
}

export function quorumsFor(n: number): Quorums {
  const f = Math.max(0, Math.floor((n - 1) / 3));
  return {
    n,
    f,
    propagate: f + 1,
    prepare: n - f - 1,
    commit: n - f,
    blsSignatures: n - f,
    checkpoint: n - f - 1,
    timestamp: f + 1,
    weak: f + 1,
    strong: n - f,
  };
}

/** Round-robin primary of a view over a registry (consensus.md §1.4 with S given). */
export function primaryOf(viewNo: number, registry: readonly string[]): string {
  return registry[viewNo % registry.length];
}
