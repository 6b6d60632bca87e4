// One load run: setup NYMs for the authors the mix needs, pre-sign every request, drive them open
// loop (fixed rate) or closed loop (K in flight), collect exact latencies and outcomes, then check
// the acknowledged writes against every node's ledger.
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { LedgerId, POOL_OVERLOADED_REASON } from '@quire/common';
import { type Clock, type ScheduleResult, openLoopCount, realClock, runClosedLoop, runOpenLoop } from './scheduler.js';
import { LatencyRecorder, OutcomeCounter, RateTimeline, type LatencySummary } from './stats.js';
import type { Ack, LoadTarget, Outcome } from './target.js';
import { type Mix, type PreparedRequest, type RequestKind, freshDids, prepareWorkload, setupNeeds, setupRequests, standardSubmitters } from './workload.js';

export interface LoadOptions {
  mix: Mix;
  /** Open loop at this many requests per second; absent = closed loop. */
  rate?: number;
  /** Closed loop: requests in flight (default 64). Open loop: cap on requests in flight (default unbounded). */
  concurrency?: number;
  durationMs: number;
  /** Closed loop: requests pre-signed (the run ends early when they are used up). Default 2,000 per second of duration. */
  presign?: number;
  /** Deadline of one request. */
  requestTimeoutMs: number;
  log?: (line: string) => void;
  clock?: Clock;
  signal?: AbortSignal;
  /** Called once the requests are pre-signed and the sessions open, as the first request is due. */
  onStart?: () => void;
}

export interface KindStats {
  kind: RequestKind;
  outcomes: OutcomeCounter;
  latency: LatencySummary | undefined;
  /** Successful completions per second over the measured window. */
  perSecond: number;
  /** Reads only: answers verified by state proof. */
  verified: number;
}

export interface LoadReport {
  mix: Mix;
  mode: 'open' | 'closed';
  offeredRate: number | undefined;
  concurrency: number | undefined;
  setup: { nyms: number; elapsedMs: number };
  presign: { count: number; elapsedMs: number; perSecond: number };
  schedule: {
    sent: number;
    shed: number;
    windowMs: number;
    /** from the first send to the last one, ms: `sent` over it is the rate the generator actually sent */
    sendWindowMs: number;
    sendLagP99: number | undefined;
    sendLagMax: number | undefined;
    /**
     * How late the generator's event loop ran over the loop, ms (p99, max): a late loop reads the nodes' answers late
     * and sends its requests late, time a request's latency counts that no node spent
     */
    loopDelayP99: number | undefined;
    loopDelayMax: number | undefined;
  };
  kinds: KindStats[];
  /** Successful writes per second / verified reads per second over the window. */
  writesPerSecond: number;
  readsPerSecond: number;
  writeLatency: LatencySummary | undefined;
  readLatency: LatencySummary | undefined;
  /** Writes the pool refused as overloaded (f+1 REQNACKs "pool overloaded"), and how long the refusal took. */
  overloaded: number;
  overloadedLatency: LatencySummary | undefined;
  /**
   * The same refusals timed from the moment the generator sent the request instead of its due time: what the pool
   * took to refuse, without the generator's own lag when it cannot keep up with the schedule.
   */
  overloadedSinceSend: LatencySummary | undefined;
  /** Writes acknowledged, timed from the moment the generator sent them (without its lag behind the schedule). */
  writeSinceSend: LatencySummary | undefined;
  /**
   * Requests that timed out, from the send to the verdict: the SDK's deadline re-armed after a stall of the generator
   * (stall-timer.ts) shows as a verdict later than the timeout
   */
  timeoutSinceSend: LatencySummary | undefined;
  timeline: number[];
  /** CPU milliseconds (user + system) of the load generator's process while it drove the load (pre-signing excluded). */
  generatorCpuMs: number;
  acks: Ack[];
  /** Writes that were not acknowledged (rejected, timed out, failed): `<identifier>|<reqId>` and the outcome. */
  unacked: UnackedWrite[];
}

export interface UnackedWrite {
  key: string;
  outcome: 'rejected' | 'timeout' | 'error';
  /** the refusal's code and reason (REQNACK/REJECT), or the failure's */
  code?: string;
  reason?: string;
  /** for a refusal: the nodes whose identical answers decided it */
  nodes?: string[];
}

export class LoadError extends Error {
  constructor(
    readonly code: 'SETUP_FAILED',
    message: string,
  ) {
    super(message);
    this.name = 'LoadError';
  }
}

/** Writes the setup NYMs with `concurrency` in flight; throws LoadError SETUP_FAILED when one is not acknowledged. */
async function runSetup(target: LoadTarget, requests: PreparedRequest[], timeoutMs: number, log: (l: string) => void): Promise<Ack[]> {
  const acks: Ack[] = [];
  const failures: string[] = [];
  await runClosedLoop({ concurrency: 32, durationMs: Number.MAX_SAFE_INTEGER, available: requests.length }, async (i) => {
    const o = await target.write(requests[i]!, timeoutMs);
    if (o.kind === 'ok') acks.push(o.ack!);
    else failures.push(`${o.kind} ${o.code}: ${o.reason}`);
  });
  if (failures.length > 0) throw new LoadError('SETUP_FAILED', `${failures.length} of ${requests.length} setup NYMs failed, e.g. ${failures[0]}`);
  log(`setup: ${requests.length} author NYMs written`);
  return acks;
}

export async function runLoad(target: LoadTarget, o: LoadOptions): Promise<LoadReport> {
  const log = o.log ?? (() => undefined);
  const clock = o.clock ?? realClock;
  const open = o.rate !== undefined;
  const count = open ? openLoopCount(o.rate!, o.durationMs) : (o.presign ?? Math.ceil((o.durationMs / 1000) * 2000));
  const needs = setupNeeds(o.mix, count);
  const submitters = standardSubmitters();
  const authors = freshDids(needs.authors + needs.readTargets);
  const setupStart = performance.now();
  const setupAcks = authors.length > 0 ? await runSetup(target, setupRequests(submitters, authors), o.requestTimeoutMs, log) : [];
  const setupMs = performance.now() - setupStart;

  log(`pre-signing ${count.toLocaleString('en-US')} ${o.mix} requests ...`);
  const work = await prepareWorkload({
    mix: o.mix,
    count,
    submitters,
    authors: authors.slice(0, needs.authors),
    readTargets: authors.slice(needs.authors).map((a) => a.did),
    runTag: randomBytes(4).toString('hex'),
  });
  log(
    `pre-signed ${count.toLocaleString('en-US')} requests in ${(work.elapsedMs / 1000).toFixed(1)} s (${Math.round(work.perSecond).toLocaleString('en-US')}/s)`,
  );

  const perKind = new Map<RequestKind, { outcomes: OutcomeCounter; latency: LatencyRecorder; verified: number }>();
  const kindStats = (k: RequestKind): { outcomes: OutcomeCounter; latency: LatencyRecorder; verified: number } => {
    let s = perKind.get(k);
    if (s === undefined) perKind.set(k, (s = { outcomes: new OutcomeCounter(), latency: new LatencyRecorder(count), verified: 0 }));
    return s;
  };
  const writeLatency = new LatencyRecorder(count);
  const readLatency = new LatencyRecorder(count);
  const overloadedLatency = new LatencyRecorder(count);
  const overloadedSinceSend = new LatencyRecorder(count);
  const writeSinceSend = new LatencyRecorder(count);
  const timeoutSinceSend = new LatencyRecorder(count);
  const timeline = new RateTimeline();
  const acks: Ack[] = [...setupAcks];
  const unacked: UnackedWrite[] = [];
  let runStart = 0;
  let lastOkAt = 0;
  const send = async (i: number, dueAt: number): Promise<void> => {
    const r = work.requests[i]!;
    const sentAt = clock.now();
    const out: Outcome = await target.submit(r, o.requestTimeoutMs);
    const done = clock.now();
    const s = kindStats(r.kind);
    if (out.kind === 'ok') {
      const ms = done - dueAt;
      s.outcomes.add('ok');
      s.latency.record(ms);
      (r.kind === 'read' ? readLatency : writeLatency).record(ms);
      if (r.kind !== 'read') writeSinceSend.record(done - sentAt);
      if (out.ack !== undefined) acks.push(out.ack);
      if (out.verified === true) s.verified++;
      timeline.add(done - runStart);
      lastOkAt = done;
    } else {
      s.outcomes.add(out.kind, out.code, out.reason);
      if (out.kind === 'rejected' && out.reason === POOL_OVERLOADED_REASON) {
        overloadedLatency.record(done - dueAt);
        overloadedSinceSend.record(done - sentAt);
      }
      if (out.kind === 'timeout') timeoutSinceSend.record(done - sentAt);
      if (r.kind !== 'read')
        unacked.push({
          key: `${String(r.request.identifier)}|${String(r.request.reqId)}`,
          outcome: out.kind,
          code: out.code,
          reason: out.reason,
          ...(out.nodes !== undefined ? { nodes: out.nodes } : {}),
        });
    }
  };
  // sessions are dialled on first use: open them now, so that dialling is not inside the measured window
  const silent = await target.warmUp(o.requestTimeoutMs);
  if (silent.length > 0) log(`warning: no answer from ${silent.join(', ')} while opening the sessions`);
  log(open ? `open loop: ${o.rate}/s for ${o.durationMs / 1000} s` : `closed loop: ${o.concurrency ?? 64} in flight for ${o.durationMs / 1000} s`);
  runStart = clock.now();
  o.onStart?.();
  const cpuAtStart = process.cpuUsage();
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const progress = setInterval(() => {
    const done = [...perKind.values()].reduce((a, s) => a + s.outcomes.total, 0);
    log(`  ${((clock.now() - runStart) / 1000).toFixed(0)} s: ${done.toLocaleString('en-US')} completed`);
  }, 5000);
  let sched: ScheduleResult;
  try {
    sched = open
      ? await runOpenLoop(
          {
            rate: o.rate!,
            durationMs: o.durationMs,
            available: count,
            ...(o.concurrency !== undefined ? { maxInFlight: o.concurrency } : {}),
            clock,
            ...(o.signal ? { signal: o.signal } : {}),
          },
          send,
        )
      : await runClosedLoop(
          { concurrency: o.concurrency ?? 64, durationMs: o.durationMs, available: count, clock, ...(o.signal ? { signal: o.signal } : {}) },
          send,
        );
  } finally {
    clearInterval(progress);
    loop.disable();
  }
  const cpu = process.cpuUsage(cpuAtStart);
  // the window: from the first due time to the later of the schedule's end and the last success
  const windowMs = Math.max(sched.lastSendAt - sched.startedAt, lastOkAt - sched.startedAt, 1);
  const kinds: KindStats[] = [...perKind.entries()].map(([kind, s]) => ({
    kind,
    outcomes: s.outcomes,
    latency: s.latency.summary(),
    perSecond: (s.outcomes.counts.ok * 1000) / windowMs,
    verified: s.verified,
  }));
  const okOf = (pred: (k: RequestKind) => boolean): number => kinds.filter((k) => pred(k.kind)).reduce((a, k) => a + k.outcomes.counts.ok, 0);
  return {
    mix: o.mix,
    mode: open ? 'open' : 'closed',
    offeredRate: o.rate,
    concurrency: open ? o.concurrency : (o.concurrency ?? 64),
    setup: { nyms: setupAcks.length, elapsedMs: setupMs },
    presign: { count, elapsedMs: work.elapsedMs, perSecond: work.perSecond },
    schedule: {
      sent: sched.sent,
      shed: sched.shed,
      windowMs,
      sendWindowMs: sched.lastSendAt - sched.startedAt,
      sendLagP99: sched.sendLag.count > 0 ? sched.sendLag.percentile(99) : undefined,
      sendLagMax: sched.sendLag.summary()?.max,
      loopDelayP99: loop.count > 0 ? loop.percentile(99) / 1e6 : undefined,
      loopDelayMax: loop.count > 0 ? loop.max / 1e6 : undefined,
    },
    kinds,
    writesPerSecond: (okOf((k) => k !== 'read') * 1000) / windowMs,
    readsPerSecond: (kinds.filter((k) => k.kind === 'read').reduce((a, k) => a + k.verified, 0) * 1000) / windowMs,
    writeLatency: writeLatency.summary(),
    readLatency: readLatency.summary(),
    overloaded: overloadedLatency.count,
    overloadedLatency: overloadedLatency.summary(),
    overloadedSinceSend: overloadedSinceSend.summary(),
    writeSinceSend: writeSinceSend.summary(),
    timeoutSinceSend: timeoutSinceSend.summary(),
    timeline: timeline.perSecond(),
    generatorCpuMs: (cpu.user + cpu.system) / 1000,
    acks,
    unacked,
  };
}

/** The ledger the acknowledged writes of a load run are on. */
export const LOAD_LEDGER = LedgerId.DOMAIN;
