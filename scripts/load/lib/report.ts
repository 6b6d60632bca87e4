// Human-readable tables of a load run and of the ledger check, and the machine-readable JSON.
import type { LedgerCheck, RejectedCommitted } from './ledger-check.js';
import type { LoadReport } from './run.js';
import { fmt, type LatencySummary } from './stats.js';

function latencyCells(l: LatencySummary | undefined): string {
  if (l === undefined) return `${'-'.padStart(8)}${'-'.padStart(8)}${'-'.padStart(8)}${'-'.padStart(8)}`;
  return [l.p50, l.p95, l.p99, l.max].map((x) => fmt(x).padStart(8)).join('');
}

/** The run as a table: one row per request kind, then the totals and the failure reasons. */
export function formatLoadReport(r: LoadReport): string[] {
  const out: string[] = [];
  const mode =
    r.mode === 'open'
      ? `open loop at ${r.offeredRate}/s${r.concurrency !== undefined ? ` (at most ${r.concurrency} in flight)` : ''}`
      : `closed loop, ${r.concurrency} in flight`;
  out.push(`mix ${r.mix}, ${mode}, window ${(r.schedule.windowMs / 1000).toFixed(1)} s`);
  out.push(
    `pre-signed ${r.presign.count.toLocaleString('en-US')} requests at ${fmt(r.presign.perSecond)}/s; setup ${r.setup.nyms} NYMs in ${(r.setup.elapsedMs / 1000).toFixed(1)} s`,
  );
  out.push(
    `sent ${r.schedule.sent.toLocaleString('en-US')}${r.schedule.shed > 0 ? `, shed ${r.schedule.shed} (in-flight cap)` : ''}; generator send lag p99 ${fmt(r.schedule.sendLagP99, 2)} ms, max ${fmt(r.schedule.sendLagMax, 2)} ms; generator event-loop delay p99 ${fmt(r.schedule.loopDelayP99, 2)} ms, max ${fmt(r.schedule.loopDelayMax, 2)} ms`,
  );
  out.push('');
  out.push(
    `${'kind'.padEnd(8)}${'ok'.padStart(9)}${'rejected'.padStart(10)}${'timeout'.padStart(9)}${'error'.padStart(8)}${'ok/s'.padStart(9)}${'p50 ms'.padStart(8)}${'p95 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'max ms'.padStart(8)}`,
  );
  for (const k of r.kinds) {
    const c = k.outcomes.counts;
    out.push(
      `${k.kind.padEnd(8)}${String(c.ok).padStart(9)}${String(c.rejected).padStart(10)}${String(c.timeout).padStart(9)}${String(c.error).padStart(8)}${fmt(k.perSecond).padStart(9)}${latencyCells(k.latency)}`,
    );
  }
  out.push('');
  out.push(`writes: ${fmt(r.writesPerSecond)}/s acknowledged; reads: ${fmt(r.readsPerSecond)}/s verified by state proof`);
  const ws = r.writeSinceSend;
  if (ws !== undefined) out.push(`writes acknowledged, from the send: p50 ${fmt(ws.p50)} ms, p99 ${fmt(ws.p99)} ms, max ${fmt(ws.max)} ms`);
  const ts = r.timeoutSinceSend;
  if (ts !== undefined) out.push(`timed out, from the send to the verdict: min ${fmt(ts.min)} ms, p50 ${fmt(ts.p50)} ms, max ${fmt(ts.max)} ms`);
  const completed = r.kinds.reduce((a, k) => a + k.outcomes.counts.ok, 0);
  if (completed > 0)
    out.push(`load generator CPU: ${fmt(r.generatorCpuMs / completed, 3)} ms per completed request (${fmt(r.generatorCpuMs / r.schedule.windowMs, 2)} cores)`);
  const reasons = r.kinds.flatMap((k) => [...k.outcomes.reasons.entries()].map(([code, v]) => `  ${k.kind} ${code} x${v.count}: ${v.example.slice(0, 160)}`));
  if (reasons.length > 0) out.push('failures:', ...reasons);
  if (r.timeline.length > 1) out.push(`per second: ${r.timeline.join(' ')}`);
  return out;
}

export function formatLedgerCheck(c: LedgerCheck): string[] {
  const out = [`ledger check (${c.method}, ledger ${c.ledgerId}): ${c.acks.toLocaleString('en-US')} acknowledged txns`];
  for (const n of c.nodes) {
    const fatal = n.error !== undefined && n.unanswered === undefined;
    out.push(
      `  ${n.node.padEnd(8)} ${fatal ? `UNREADABLE: ${n.error}` : `size ${n.size}  root ${n.root}  missing ${n.missing}  mismatched ${n.mismatched}${n.unanswered !== undefined ? `  (${n.error})` : ''}`}`,
    );
  }
  out.push(
    `  roots ${c.rootsEqual ? 'equal on every node' : 'DIFFER'}; lost ${c.lost} (missing or different on some node), held by fewer than n-f nodes ${c.underReplicated}`,
  );
  for (const e of c.examples) out.push(`  lost: ${e.node} seqNo ${e.seqNo} (${e.key}) ${e.problem}`);
  const u = c.unackedCommitted;
  if (u !== undefined)
    out.push(
      `  writes not acknowledged to the client but on the ledger: ${u.rejected} rejected (REQNACK/REJECT by f+1), ${u.timeout} timed out, ${u.error} failed`,
    );
  out.push(...formatRejectedCommitted(c.rejectedCommitted));
  return out;
}

/** The breakdown of the rejected writes found on the ledger: by reason, by refusing nodes, a few examples. */
export function formatRejectedCommitted(r: RejectedCommitted | undefined): string[] {
  if (r === undefined || r.examples.length === 0) return [];
  const sorted = (m: Record<string, number>): [string, number][] => Object.entries(m).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const out = ['  rejected but committed, by reason:'];
  for (const [k, n] of sorted(r.byReason)) out.push(`    ${String(n).padStart(6)}  ${k.slice(0, 160)}`);
  out.push('  rejected but committed, by refusing nodes:');
  for (const [k, n] of sorted(r.byNodes)) out.push(`    ${String(n).padStart(6)}  ${k}`);
  for (const e of r.examples.slice(0, 5)) out.push(`    e.g. ${e.key} at seqNo ${e.seqNo}: ${e.code ?? '?'} by ${(e.nodes ?? ['?']).join(',')}`);
  return out;
}

/** The report without the per-txn acks, for --json. */
export function reportJson(r: LoadReport, check?: LedgerCheck): Record<string, unknown> {
  const { acks, unacked, kinds, ...rest } = r;
  return {
    ...rest,
    acknowledged: acks.length,
    unacknowledgedWrites: unacked.length,
    kinds: kinds.map((k) => ({
      kind: k.kind,
      counts: k.outcomes.counts,
      reasons: Object.fromEntries(k.outcomes.reasons),
      latency: k.latency,
      perSecond: k.perSecond,
      verified: k.verified,
    })),
    ...(check !== undefined ? { ledgerCheck: check } : {}),
  };
}
