// The summary table of a chaos run (printed by `npm run chaos` and by the short run of `npm test`).
import { table } from './check.js';
import type { ChaosReport } from './run.js';

export function summary(r: ChaosReport): string {
  const s = (ms: number | null): string => (ms === null ? '-' : `${(ms / 1000).toFixed(1)} s`);
  const rows: (string | number)[][] = [
    ['what', 'value'],
    ['seed / mode', `${r.seed} / ${r.mode}, ${r.nodes} nodes, ${r.clients} clients`],
    ['duration', `${r.durationS} s`],
    [
      'perturbations',
      `${r.perturbations.length}: ${Object.entries(r.byKind)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    ],
    ['perturbations that failed', `${r.perturbations.filter((p) => p.error !== undefined).length}`],
    ['kill -9', r.kills9],
    ['writes acknowledged', r.writes.acks],
    [
      'writes failed (timeout/refused)',
      `${r.writes.failed}${
        Object.keys(r.writes.failedByCode).length > 0
          ? ` (${Object.entries(r.writes.failedByCode)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')})`
          : ''
      }`,
    ],
    ['acknowledged writes lost', r.ledgers.lost],
    ['acknowledged writes on every node', `${r.ledgers.onAll} of ${r.ledgers.acks}`],
    ['forks (seqNos that differ)', r.ledgers.forks.length],
    ['reads: ok / failed', `${r.reads.ok} / ${r.reads.failed} of ${r.reads.total}`],
    ['stale / unverified reads accepted', `${r.reads.stale} / ${r.reads.unverified}`],
    [
      'recovery after heal p50 / p90 / max',
      `${s(r.recovery.p50)} / ${s(r.recovery.p90)} / ${s(r.recovery.max)} (bound ${r.recovery.boundMs / 1000} s, over: ${r.recovery.overBound})`,
    ],
    [
      'catch-up after heal p50 / p90 / max',
      `${s(r.catchup.p50)} / ${s(r.catchup.p90)} / ${s(r.catchup.max)} (bound ${r.catchup.boundMs / 1000} s, over: ${r.catchup.overBound})`,
    ],
    [
      'max RSS per node',
      Object.entries(r.rss)
        .map(([k, v]) => `${k} ${v.maxMb} MiB`)
        .join(', '),
    ],
    ['node exits not caused by the harness', r.unexpectedExits.length],
    [
      'ledger sizes (pool/domain/config/audit)',
      Object.entries(r.ledgers.sizes)
        .map(([k, v]) => `${k} ${v.pool}/${v.domain}/${v.config}/${v.audit}`)
        .join(', '),
    ],
    ['verdict', r.ok ? 'PASS' : `FAIL: ${r.failures.join('; ')}`],
  ];
  return table(rows);
}
