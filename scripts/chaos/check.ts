// The black-box invariants of a chaos run, checked on the nodes' ledgers as `read_ledger` prints
// them (after the nodes have stopped) and on what the clients saw: no acknowledged write lost (on
// at least n-f ledgers, at its seqNo, with its digest), every ledger equal per seqNo across nodes
// (no fork), no stale or unverified read accepted, liveness back within the bound after each heal,
// the memory of every node bounded. Plus the summary table and the JSON report.
import { main as readLedgerMain } from '../../packages/storage/src/cli/read-ledger.js';
import type { AckRecord, ReadRecord } from './workload.js';

export const LEDGER_TYPES = ['pool', 'domain', 'config', 'audit'] as const;

/** Every txn of one ledger of one node (canonical JSON lines, index = seqNo - 1). */
export async function readLedgerLines(dataDir: string, type: (typeof LEDGER_TYPES)[number]): Promise<string[]> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await readLedgerMain(['--type', type, '--frm', '1', '--to', '100000000', '--data_dir', dataDir], {
    out: (t) => void out.push(t),
    err: (t) => void err.push(t),
  });
  if (code !== 0) {
    // an empty ledger (a config ledger without txns) is not an error here
    if (/No transactions found/.test(err.join(''))) return [];
    throw new Error(`read_ledger --type ${type} --data_dir ${dataDir} exited ${code}: ${err.join('')}`);
  }
  return out
    .join('')
    .split('\n')
    .filter((l) => l !== '');
}

export interface Fork {
  ledger: string;
  seqNo: number;
  nodes: Record<string, string>;
}

export interface LedgerCheck {
  sizes: Record<string, Record<string, number>>;
  forks: Fork[];
  lost: (AckRecord & { onNodes: number })[];
  /** acknowledged writes found on every node */
  onAll: number;
  acks: number;
}

function digestOf(line: string): string | undefined {
  try {
    return (JSON.parse(line) as { txn?: { metadata?: { digest?: string } } }).txn?.metadata?.digest;
  } catch {
    return undefined;
  }
}

/**
 * Checks the ledgers of the stopped nodes against each other and against the acknowledged writes.
 * `nodes` are the validators at the end (an acknowledged write must be on n-f of them); `others`
 * (nodes that were validators for a while) only take part in the fork check, as far as their ledgers go.
 */
export async function checkLedgers(
  nodes: readonly { name: string; dataDir: string }[],
  acks: readonly AckRecord[],
  f: number,
  others: readonly { name: string; dataDir: string }[] = [],
): Promise<LedgerCheck> {
  const per = new Map<string, Record<string, string[]>>();
  for (const n of [...nodes, ...others]) {
    const l: Record<string, string[]> = {};
    for (const t of LEDGER_TYPES) l[t] = await readLedgerLines(n.dataDir, t);
    per.set(n.name, l);
  }
  const sizes: Record<string, Record<string, number>> = {};
  for (const [name, l] of per) sizes[name] = Object.fromEntries(LEDGER_TYPES.map((t) => [t, l[t]!.length]));
  const forks: Fork[] = [];
  for (const t of LEDGER_TYPES) {
    const longest = Math.max(...[...per.values()].map((l) => l[t]!.length));
    for (let i = 0; i < longest; i++) {
      const seen = new Map<string, string>();
      for (const [name, l] of per) {
        const line = l[t]![i];
        if (line !== undefined) seen.set(name, line);
      }
      if (new Set(seen.values()).size > 1) {
        forks.push({ ledger: t, seqNo: i + 1, nodes: Object.fromEntries([...seen].map(([k, v]) => [k, v.slice(0, 300)])) });
        if (forks.length > 50) break;
      }
    }
  }
  const n = nodes.length;
  const lost: LedgerCheck['lost'] = [];
  let onAll = 0;
  const domainDigests = new Map(nodes.map((x) => [x.name, per.get(x.name)!.domain!.map(digestOf)]));
  for (const a of acks) {
    let count = 0;
    for (const d of domainDigests.values()) if (d[a.seqNo - 1] === a.digest) count++;
    if (count === n) onAll++;
    if (count < n - f) lost.push({ ...a, onNodes: count });
  }
  return { sizes, forks, lost, onAll, acks: acks.length };
}

export interface ReadCheck {
  total: number;
  ok: number;
  stale: ReadRecord[];
  unverified: ReadRecord[];
  wrongValue: ReadRecord[];
  failed: number;
}

export function checkReads(reads: readonly ReadRecord[]): ReadCheck {
  return {
    total: reads.length,
    ok: reads.filter((r) => r.verdict === 'ok').length,
    stale: reads.filter((r) => r.verdict === 'stale'),
    unverified: reads.filter((r) => r.verdict === 'unverified'),
    wrongValue: reads.filter((r) => r.verdict === 'wrong-value'),
    failed: reads.filter((r) => r.verdict === 'failed').length,
  };
}

export function percentile(xs: readonly number[], p: number): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

/** A plain text table, columns padded. */
export function table(rows: readonly (readonly (string | number)[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => String(r[c] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((v, c) => String(v).padEnd(widths[c]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
