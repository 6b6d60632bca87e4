// After a run: is every acknowledged write on every node's ledger, as acknowledged, and do all the
// nodes' ledgers have the same size and root? Two ways to look: the nodes' data directories (a local
// devnet; LevelDB's lock is side-stepped by reading a consistent snapshot when a node runs), or
// GET_TXN sent to each node over the client protocol.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { b58encode, isPlainObject, parseJson, stringifyJson } from '@quire/common';
import { ClientRequestError, NodeConnection, buildGetTxnRequest } from '@quire/client';
import { Ledger, findDatabase, openLevelKvStore, snapshotLevelDb, type KvStore } from '@quire/storage';
import type { UnackedWrite } from './run.js';
import { ackOf, type Ack } from './target.js';

export interface NodeLedgerView {
  node: string;
  size: number;
  root: string;
  /** Acknowledged txns absent from this node's ledger (seqNo beyond its size, or unreadable). */
  missing: number;
  /** Acknowledged txns whose seqNo holds another txn on this node. */
  mismatched: number;
  /** GET_TXN requests the node never answered (network check): those txns count as missing. */
  unanswered?: number;
  /** Why the node could not be read (at all, or for `unanswered` txns). */
  error?: string;
}

export interface LedgerCheck {
  method: 'data-dirs' | 'network';
  ledgerId: number;
  acks: number;
  nodes: NodeLedgerView[];
  /** Every node answered with the same size and root. */
  rootsEqual: boolean;
  /** Acknowledged txns missing or different on at least one node. */
  lost: number;
  /** Acknowledged txns held by fewer than n-f nodes: those a further f failures could erase. */
  underReplicated: number;
  /**
   * Writes the client was not told were committed (rejected, timed out, failed), found on the ledger of the first
   * readable node anyway, by outcome. A REQNACKed (rejected) write on the ledger contradicts its refusal; a timed-out
   * one was merely slower than the deadline. Data-dir check only.
   */
  unackedCommitted?: Record<UnackedWrite['outcome'], number>;
  /** The rejected writes found on the ledger, broken down by refusal reason and by the nodes that refused. Data-dir check only. */
  rejectedCommitted?: RejectedCommitted;
  /** A few examples of lost txns. */
  examples: { node: string; seqNo: number; key: string; problem: 'missing' | 'mismatched' }[];
}

export interface RejectedCommitted {
  /** `<code>: <reason>` -> writes */
  byReason: Record<string, number>;
  /** the refusing nodes, sorted and comma-separated -> writes */
  byNodes: Record<string, number>;
  /** a few of them: key, ledger seqNo, reason, refusing nodes */
  examples: { key: string; seqNo: number; code?: string; reason?: string; nodes?: string[] }[];
}

/** Adds one rejected write found on the ledger at `seqNo` to the breakdown. */
export function tallyRejected(r: RejectedCommitted, u: UnackedWrite, seqNo: number, maxExamples = 20): void {
  const reason = `${u.code ?? '?'}: ${u.reason ?? '?'}`;
  r.byReason[reason] = (r.byReason[reason] ?? 0) + 1;
  const nodes = u.nodes === undefined ? '?' : [...u.nodes].sort().join(',');
  r.byNodes[nodes] = (r.byNodes[nodes] ?? 0) + 1;
  if (r.examples.length < maxExamples)
    r.examples.push({
      key: u.key,
      seqNo,
      ...(u.code !== undefined ? { code: u.code } : {}),
      ...(u.reason !== undefined ? { reason: u.reason } : {}),
      ...(u.nodes !== undefined ? { nodes: u.nodes } : {}),
    });
}

interface Tally {
  lost: Set<number>;
  /** ack index -> nodes lacking it */
  lacking: Map<number, number>;
  examples: LedgerCheck['examples'];
}

function compare(node: string, ack: Ack, found: Record<string, unknown> | undefined, view: NodeLedgerView, t: Tally, index: number): void {
  const got = found === undefined ? undefined : ackOf(found, 'ledger');
  let problem: 'missing' | 'mismatched' | undefined;
  if (got === undefined) problem = 'missing';
  else if (got.seqNo !== ack.seqNo || got.key !== ack.key || got.txnHash !== ack.txnHash) problem = 'mismatched';
  if (problem === undefined) return;
  if (problem === 'missing') view.missing++;
  else view.mismatched++;
  t.lost.add(index);
  t.lacking.set(index, (t.lacking.get(index) ?? 0) + 1);
  if (t.examples.length < 10) t.examples.push({ node, seqNo: ack.seqNo, key: ack.key, problem });
}

function finish(method: LedgerCheck['method'], ledgerId: number, acks: readonly Ack[], nodes: NodeLedgerView[], t: Tally): LedgerCheck {
  // a node with an error and no `unanswered` count could not be read at all
  const ok = nodes.filter((n) => n.error === undefined || n.unanswered !== undefined);
  const rootsEqual = ok.length === nodes.length && ok.every((n) => n.size === ok[0]!.size && n.root === ok[0]!.root);
  // a node that could not be read at all holds none of the acknowledged txns as far as anyone can tell
  const unreadable = nodes.length - ok.length;
  if (unreadable > 0) for (let i = 0; i < acks.length; i++) t.lost.add(i);
  const f = Math.floor((nodes.length - 1) / 3);
  let underReplicated = 0;
  for (let i = 0; i < acks.length; i++) if ((t.lacking.get(i) ?? 0) + unreadable > f) underReplicated++;
  return { method, ledgerId, acks: acks.length, nodes, rootsEqual, lost: t.lost.size, underReplicated, examples: t.examples };
}

async function openForReading(path: string): Promise<{ kv: KvStore; close(): Promise<void> }> {
  try {
    const kv = await openLevelKvStore(path, { createIfMissing: false });
    return { kv, close: () => kv.close() };
  } catch (e) {
    if (!/lock/i.test(String((e as { code?: string }).code ?? '') + String(e) + String((e as { cause?: unknown }).cause ?? ''))) throw e;
  }
  const snap = await snapshotLevelDb(path);
  const kv = await openLevelKvStore(snap.path, { createIfMissing: false });
  return {
    kv,
    close: async () => {
      try {
        await kv.close();
      } finally {
        await snap.remove();
      }
    },
  };
}

/** Reads each node's ledger from its data directory (`<dataDir>/<alias>` or the directories given). */
export async function checkDataDirs(
  nodes: readonly { node: string; dataDir: string }[],
  acks: readonly Ack[],
  ledgerId = 1,
  unacked: readonly UnackedWrite[] = [],
): Promise<LedgerCheck> {
  const t: Tally = { lost: new Set(), lacking: new Map(), examples: [] };
  const views: NodeLedgerView[] = [];
  let unackedCommitted: LedgerCheck['unackedCommitted'];
  let rejectedCommitted: RejectedCommitted | undefined;
  for (const { node, dataDir } of nodes) {
    const view: NodeLedgerView = { node, size: 0, root: '', missing: 0, mismatched: 0 };
    views.push(view);
    const db = existsSync(dataDir) ? findDatabase(dataDir) : undefined;
    if (db === undefined) {
      view.error = `no ledger database in ${dataDir}`;
      continue;
    }
    let opened: { kv: KvStore; close(): Promise<void> };
    try {
      opened = await openForReading(db);
    } catch (e) {
      view.error = `cannot open ${db}: ${e instanceof Error ? e.message : String(e)}`;
      continue;
    }
    try {
      const ledger = await Ledger.open({ ledgerId }, { kv: opened.kv });
      view.size = ledger.size;
      view.root = b58encode(ledger.root);
      for (let i = 0; i < acks.length; i++) {
        const ack = acks[i]!;
        const txn = ack.seqNo <= ledger.size ? await ledger.get(ack.seqNo) : undefined;
        compare(node, ack, txn as Record<string, unknown> | undefined, view, t, i);
      }
      if (unacked.length > 0 && unackedCommitted === undefined) {
        const wanted = new Map(unacked.map((u) => [u.key, u]));
        unackedCommitted = { rejected: 0, timeout: 0, error: 0 };
        rejectedCommitted = { byReason: {}, byNodes: {}, examples: [] };
        for await (const [seqNo, txn] of ledger.range(1, ledger.size)) {
          const md = (txn.txn.metadata ?? {}) as Record<string, unknown>;
          const u = wanted.get(`${String(md.from)}|${String(md.reqId)}`);
          if (u === undefined) continue;
          unackedCommitted[u.outcome]++;
          if (u.outcome === 'rejected') tallyRejected(rejectedCommitted, u, seqNo);
        }
      }
    } catch (e) {
      view.error = `cannot read the ledger of ${node}: ${e instanceof Error ? e.message : String(e)}`;
    } finally {
      await opened.close();
    }
  }
  const check = finish('data-dirs', ledgerId, acks, views, t);
  if (unackedCommitted !== undefined) check.unackedCommitted = unackedCommitted;
  if (rejectedCommitted !== undefined) check.rejectedCommitted = rejectedCommitted;
  return check;
}

/** The data directories of a devnet: `<devnetDir>/<alias>`. */
export function devnetNodeDirs(devnetDir: string, aliases: readonly string[]): { node: string; dataDir: string }[] {
  return aliases.map((a) => ({ node: a, dataDir: join(devnetDir, a) }));
}

export interface NetworkNode {
  alias: string;
  dest: string;
  host: string;
  port: number;
}

const enc = new TextEncoder();

/** GET_TXN result data (the txn with rootHash, auditPath, ledgerSize), null when absent; throws on a refusal. */
async function getTxnOnce(c: NodeConnection, ledgerId: number, seqNo: number): Promise<Record<string, unknown> | null> {
  const req = buildGetTxnRequest({ ledgerId, seqNo });
  const m = parseJson(await c.request(enc.encode(stringifyJson(req))));
  if (!isPlainObject(m) || m.op !== 'REPLY' || !isPlainObject(m.result)) throw new Error(`GET_TXN ${seqNo}: ${stringifyJson(m).slice(0, 200)}`);
  return isPlainObject(m.result.data) ? m.result.data : null;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * GET_TXN with retries: a node's rate limit (RATE_LIMITED, TOO_MANY_PENDING) is waited out, other failures are
 * retried `attempts` times; the last error is thrown.
 */
async function getTxn(c: NodeConnection, ledgerId: number, seqNo: number, attempts = 4): Promise<Record<string, unknown> | null> {
  for (let i = 1; ; i++) {
    try {
      return await getTxnOnce(c, ledgerId, seqNo);
    } catch (e) {
      const limited = e instanceof ClientRequestError && (e.code === 'RATE_LIMITED' || e.code === 'TOO_MANY_PENDING');
      if (!limited && i >= attempts) throw e;
      await sleep(limited ? 1000 : 250 * i);
    }
  }
}

/**
 * Asks every node for every acknowledged txn with GET_TXN (`concurrency` in flight per node), and for its ledger
 * size and root (from the GET_TXN answer of seqNo 1, which carries ledgerSize and rootHash).
 */
export async function checkNetwork(
  nodes: readonly NetworkNode[],
  acks: readonly Ack[],
  opts: { ledgerId?: number; concurrency?: number; timeoutMs?: number } = {},
): Promise<LedgerCheck> {
  const ledgerId = opts.ledgerId ?? 1;
  const t: Tally = { lost: new Set(), lacking: new Map(), examples: [] };
  const views = await Promise.all(
    nodes.map(async (n): Promise<NodeLedgerView> => {
      const view: NodeLedgerView = { node: n.alias, size: 0, root: '', missing: 0, mismatched: 0 };
      let c: NodeConnection | undefined;
      try {
        c = await NodeConnection.connect({ host: n.host, port: n.port, dest: n.dest, timeoutMs: opts.timeoutMs ?? 10_000 });
        let next = 0;
        const worker = async (): Promise<void> => {
          while (next < acks.length) {
            const i = next++;
            const ack = acks[i]!;
            let data: Record<string, unknown> | null;
            try {
              data = await getTxn(c!, ledgerId, ack.seqNo);
            } catch (e) {
              // not known either way: the node did not answer; count it, and the txn as not confirmed there
              view.unanswered = (view.unanswered ?? 0) + 1;
              view.error = `${view.unanswered} GET_TXN not answered, e.g. seqNo ${ack.seqNo}: ${e instanceof Error ? e.message : String(e)}`;
              data = null;
            }
            compare(n.alias, ack, data ?? undefined, view, t, i);
          }
        };
        await Promise.all(Array.from({ length: opts.concurrency ?? 16 }, worker));
        const first = await getTxn(c, ledgerId, 1);
        if (first === null) throw new Error('GET_TXN 1 returned nothing');
        view.size = Number(first.ledgerSize);
        view.root = String(first.rootHash);
      } catch (e) {
        view.error = e instanceof Error ? e.message : String(e);
        delete view.unanswered;
      } finally {
        await c?.close();
      }
      return view;
    }),
  );
  return finish('network', ledgerId, acks, views, t);
}
