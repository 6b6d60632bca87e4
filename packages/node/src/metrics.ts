// Prometheus metrics (prom-client), created only when enabled and served on
// http://127.0.0.1:<port>/metrics. Names carry their unit (`_seconds`, `_total`). Every metric lives
// in the node's own registry: no global state, so several nodes can share a process.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import type { BatchStages } from '@quire/consensus';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { LoopWaitMonitor } from './loop-wait.js';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class NodeMetrics {
  readonly registry = new Registry();
  /** client requests by kind (write, read, action, catchup, unknown) and outcome (ack, nack, reply, reject, expired, superseded) */
  readonly requests: Counter<'kind' | 'outcome'>;
  /** time from a write's receipt by the request handler (before its checks wait their turn) to its REPLY/REJECT, seconds */
  readonly writeLatency: Histogram;
  /** time to answer a read, seconds */
  readonly readLatency: Histogram;
  /** ordered batches by ledger */
  readonly batches: Counter<'ledger'>;
  /** txns committed by ledger */
  readonly txns: Counter<'ledger'>;
  /** time to make one ordered batch durable, seconds */
  readonly batchCommit: Histogram;
  /** view changes completed */
  readonly viewChanges: Counter;
  readonly viewNo: Gauge;
  /** catch-up rounds started / finished, and their duration in seconds */
  readonly catchups: Counter<'phase'>;
  readonly catchupDuration: Histogram;
  /** suspicions raised against peers, by code */
  readonly suspicions: Counter<'code'>;
  /** peer messages dropped before the consensus core, by reason (queue_full: the peer's queue was at its bound) */
  readonly peerMessagesDropped: Counter<'reason'>;
  /** REPLY / REJECT of ordered writes the client host did not send (the session gone, or its write buffer full) */
  readonly clientPushesDropped: Counter;
  /** client sessions ended, by reason (the client host's: remote-close, idle, ping timeout, reset...) */
  readonly clientSessionsClosed: Counter<'reason'>;
  readonly lastOrdered: Gauge;
  /**
   * BLS operations of the consensus core by op (sign, aggregate, verify_share, verify_multi, verify_multi_batch: several
   * multi-signatures verified together in catch-up), and their time in seconds
   */
  readonly blsOps: Counter<'op'>;
  readonly blsSeconds: Counter<'op'>;
  /**
   * Where a write's time goes at this node, seconds, by stage: `verify` (receipt by the request handler to consensus:
   * the wait for a turn of checks, ClientPath's TurnGate, then parse and signature), `queue` (waiting behind the node's earlier events), `finalise` (to n-f PROPAGATEs), `batch` (finalised to its PRE-PREPARE applied here),
   * `prepare` (to the PREPARE quorum), `commit` (to the COMMIT quorum, ordered), `durable` (the batch
   * write), `reply` (REPLYs built and queued). Stages per request except prepare/commit/durable/reply (per batch).
   */
  readonly writeStages: Histogram<'stage'>;
  /** event-loop delay of the node's process (perf_hooks monitorEventLoopDelay), seconds, since the last scrape */
  readonly eventLoopDelay: Gauge<'quantile'>;
  /**
   * The wait of a frame arriving at a random instant before the node's event loop is free, seconds, since the last
   * scrape (loop-wait.ts: busy intervals weighted by their length), by stat (mean, 0.5, 0.9, 0.99); and the share of
   * that time the loop was busy. What a client's request waits before the node reads it and can refuse it.
   */
  readonly eventLoopWait: Gauge<'stat'>;
  readonly eventLoopBusy: Gauge;
  /**
   * Writes refused as overloaded since the node started, by where (`frame`: as the client host read the frame, in the
   * same task; `queued`: after waiting in the client host's inbox, the frames read in one go beyond the door's turn,
   * refused as dispatched or by the request handler), from the source the node sets (`setRefusalSource`); a counter
   * advanced at each scrape by what the source counted since the last one
   */
  readonly refusals: Counter<'where'>;
  private refusalSource: (() => { atFrame: number; total: number }) | undefined;
  private server: Server | undefined;
  private readonly loopMonitor: IntervalHistogram;
  private readonly loopWait = new LoopWaitMonitor();

  constructor(labels: { node: string }) {
    const registers = [this.registry];
    this.registry.setDefaultLabels(labels);
    collectDefaultMetrics({ register: this.registry, prefix: 'quire_' }); // quire_process_cpu_seconds_total, quire_nodejs_heap_size_used_bytes, ...
    this.requests = new Counter({
      name: 'quire_client_requests_total',
      help: 'Client requests by kind and outcome',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.writeLatency = new Histogram({
      name: 'quire_write_reply_seconds',
      help: 'Write requests: receipt (before the checks) to REPLY/REJECT',
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.readLatency = new Histogram({ name: 'quire_read_reply_seconds', help: 'Read requests: receipt to REPLY', buckets: LATENCY_BUCKETS, registers });
    this.batches = new Counter({ name: 'quire_batches_ordered_total', help: 'Ordered batches by ledger', labelNames: ['ledger'], registers });
    this.txns = new Counter({ name: 'quire_txns_committed_total', help: 'Committed txns by ledger', labelNames: ['ledger'], registers });
    this.batchCommit = new Histogram({
      name: 'quire_batch_commit_seconds',
      help: 'Time to make an ordered batch durable',
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.viewChanges = new Counter({ name: 'quire_view_changes_total', help: 'View changes completed', registers });
    this.viewNo = new Gauge({ name: 'quire_view_no', help: 'Current view number', registers });
    this.catchups = new Counter({ name: 'quire_catchups_total', help: 'Catch-up rounds by phase (started, finished)', labelNames: ['phase'], registers });
    this.catchupDuration = new Histogram({ name: 'quire_catchup_seconds', help: 'Catch-up duration', buckets: [0.1, 0.5, 1, 5, 10, 30, 60, 300], registers });
    this.suspicions = new Counter({ name: 'quire_suspicions_total', help: 'Suspicions raised against peers by code', labelNames: ['code'], registers });
    this.peerMessagesDropped = new Counter({
      name: 'quire_peer_messages_dropped_total',
      help: 'Peer messages dropped before the consensus core, by reason',
      labelNames: ['reason'],
      registers,
    });
    this.clientPushesDropped = new Counter({
      name: 'quire_client_pushes_dropped_total',
      help: 'REPLY / REJECT of ordered writes the client host did not send (session gone or write buffer full)',
      registers,
    });
    this.clientSessionsClosed = new Counter({
      name: 'quire_client_sessions_closed_total',
      help: 'Client sessions ended, by reason',
      labelNames: ['reason'],
      registers,
    });
    this.blsOps = new Counter({ name: 'quire_bls_operations_total', help: 'BLS operations of the consensus core by op', labelNames: ['op'], registers });
    this.blsSeconds = new Counter({
      name: 'quire_bls_seconds_total',
      help: 'CPU time (process user + system) spent in BLS operations of the consensus core by op',
      labelNames: ['op'],
      registers,
    });
    this.writeStages = new Histogram({
      name: 'quire_write_stage_seconds',
      help: 'Time of a write at this node by stage of the write path',
      labelNames: ['stage'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    this.loopMonitor = loop;
    this.eventLoopDelay = new Gauge({
      name: 'quire_event_loop_delay_seconds',
      help: 'Event-loop delay since the last scrape (p50, p99, max)',
      labelNames: ['quantile'],
      registers,
      collect() {
        this.set({ quantile: '0.5' }, loop.percentile(50) / 1e9);
        this.set({ quantile: '0.99' }, loop.percentile(99) / 1e9);
        this.set({ quantile: '1' }, loop.max / 1e9);
        loop.reset();
      },
    });
    this.loopWait.start();
    // the share busy is set with the wait, from the same window (registered after it, so collected after it)
    const busy = new Gauge({
      name: 'quire_event_loop_busy_ratio',
      help: 'Share of the time since the last scrape the event loop ran tasks beyond its sampling interval (10 ms)',
      registers: [],
    });
    const loopWait = this.loopWait;
    this.eventLoopWait = new Gauge({
      name: 'quire_event_loop_wait_seconds',
      help: 'Wait of an arrival at a random instant for the event loop, since the last scrape (mean, p50, p90, p99)',
      labelNames: ['stat'],
      registers,
      collect() {
        const w = loopWait.histogram.take();
        this.set({ stat: 'mean' }, w.mean / 1000);
        this.set({ stat: '0.5' }, w.p50 / 1000);
        this.set({ stat: '0.9' }, w.p90 / 1000);
        this.set({ stat: '0.99' }, w.p99 / 1000);
        busy.set(w.busy);
      },
    });
    // registered after the wait, whose collect sets it
    this.registry.registerMetric(busy);
    this.eventLoopBusy = busy;
    const refusalSource = (): { atFrame: number; total: number } | undefined => this.refusalSource?.();
    // what the counter holds already, by where: each scrape adds what the source counted since
    const counted = { frame: 0, queued: 0 };
    this.refusals = new Counter({
      name: 'quire_client_refusals_total',
      help: 'Writes refused as overloaded since start, by where: as the frame was read, or after the client host queued it',
      labelNames: ['where'],
      registers,
      collect() {
        const src = refusalSource();
        if (src === undefined) return;
        const frame = Math.min(src.atFrame, src.total);
        const now = { frame, queued: src.total - frame };
        for (const where of ['frame', 'queued'] as const) {
          this.inc({ where }, Math.max(0, now[where] - counted[where]));
          counted[where] = Math.max(counted[where], now[where]);
        }
      },
    });
    this.lastOrdered = new Gauge({ name: 'quire_last_ordered_pp_seq_no', help: 'ppSeqNo of the last ordered batch', registers });
  }

  /** Where `quire_client_refusals_total` reads its counts: the door's answers as frames were read, and all refusals. */
  setRefusalSource(source: () => { atFrame: number; total: number }): void {
    this.refusalSource = source;
  }

  /** Serves /metrics on 127.0.0.1:port (0 = any free port); resolves with the bound port. */
  async listen(port: number): Promise<number> {
    const server = createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      this.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': this.registry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    return (server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.loopMonitor.disable();
    this.loopWait.stop();
    const s = this.server;
    this.server = undefined;
    if (s !== undefined) await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

/**
 * Records where the writes of one ordered batch spent their time here (`quire_write_stage_seconds`):
 * `stages` from the consensus core, `durableAt` when its write was on disk, `repliedAt` when its
 * REPLYs were queued (all on the node's monotonic clock, ms). A stage that this node did not see in
 * order (a request finalised here after its PRE-PREPARE arrived) is not recorded.
 */
export function observeStages(m: NodeMetrics, stages: BatchStages, durableAt: number, repliedAt: number): void {
  const h = m.writeStages;
  const obs = (stage: string, from: number | undefined, to: number | undefined): void => {
    if (from === undefined || to === undefined || from <= 0 || to < from) return;
    h.observe({ stage }, (to - from) / 1000);
  };
  for (const r of stages.requests) {
    obs('finalise', r.receivedAt, r.finalisedAt);
    obs('batch', r.finalisedAt, stages.appliedAt);
  }
  obs('prepare', stages.appliedAt, stages.preparedAt);
  obs('commit', stages.preparedAt ?? stages.appliedAt, stages.orderedAt);
  obs('durable', stages.orderedAt, durableAt);
  obs('reply', durableAt, repliedAt);
}
