// The chaos run's client workload, a child process (in its own network namespace when there are
// namespaces) that reaches the pool only through the SDK of @quire/client: several clients, each
// its own Pool handle (own libp2p node and sessions), writing NYM / ATTRIB / SCHEMA and reading
// each acknowledged write back (read-after-write, verified by proof). It reports every
// acknowledged write and every read to the harness over the IPC channel, and answers the harness's
// questions (who is the primary, the nodes' ledger sizes) with VALIDATOR_INFO.
//
// Run by scripts/chaos/chaos.ts as `<node flags> workload.ts <genesis file> <json options>`.
import {
  DidKey,
  Pool,
  buildAttribRequest,
  buildGetAttribRequest,
  buildGetNymRequest,
  buildGetSchemaRequest,
  buildNodeRequest,
  buildNymRequest,
  buildPoolRestartRequest,
  buildPoolUpgradeRequest,
  buildSchemaRequest,
  buildValidatorInfoRequest,
  signRequest,
  type ReadOutcome,
} from '@quire/client';
import type { Request } from '@quire/common';
import { Rng } from './schedule.js';

export const TRUSTEE_SEED = '000000000000000000000000Trustee1';
export const stewardSeed = (i: number): string => `${'0'.repeat(24)}Steward${i}`;

export interface WorkloadOptions {
  clients: number;
  /** writes in flight per client */
  concurrency: number;
  seed: number;
  runTag: string;
  writeTimeoutMs: number;
  readTimeoutMs: number;
}

export type WriteKind = 'nym' | 'attrib' | 'schema';

/** An acknowledged write: f+1 nodes replied with this committed txn. */
export interface AckRecord {
  client: number;
  kind: WriteKind;
  seqNo: number;
  /** txn.metadata.digest of the reply */
  digest: string;
  sentAt: number;
  ackAt: number;
}

export type ReadVerdict = 'ok' | 'stale' | 'unverified' | 'wrong-value' | 'failed';

export interface ReadRecord {
  client: number;
  kind: WriteKind;
  ackSeqNo: number;
  readSeqNo: number | null;
  verdict: ReadVerdict;
  node: string | null;
  error?: string;
  at: number;
}

export type ToHarness =
  | { type: 'ready'; setupMs: number }
  | { type: 'ack'; rec: AckRecord }
  | { type: 'read'; rec: ReadRecord }
  | { type: 'write-failed'; client: number; kind: WriteKind; code: string; at: number }
  | { type: 'answer'; id: number; value: unknown }
  | { type: 'stopped'; writes: number; acks: number; reads: number };

export type FromHarness =
  | { type: 'stop' }
  | { type: 'exit' }
  | { type: 'ask'; id: number; what: 'info' | 'pool-restart' }
  | { type: 'ask'; id: number; what: 'pool-upgrade'; args: PoolUpgradeArgs }
  | { type: 'ask'; id: number; what: 'node-txn'; args: NodeTxnArgs };

/** A forced POOL_UPGRADE of the trustee (requests.md §6): a unique name, the target version, node dest -> time. */
export interface PoolUpgradeArgs {
  name: string;
  version: string;
  reinstall: boolean;
  schedule: Record<string, string>;
}

/**
 * A NODE txn of the steward `stewardIndex` (its NYM written by the trustee first, once): `data` as
 * in formats.md (alias, addresses, services, BLS key). Every client's pool handle is refreshed after it.
 */
export interface NodeTxnArgs {
  stewardIndex: number;
  dest: string;
  data: {
    alias: string;
    client_ip?: string;
    client_port?: number;
    node_ip?: string;
    node_port?: number;
    services?: string[];
    blskey?: string;
    blskey_pop?: string;
  };
}

/** 'REPLY' with the txn's seqNo, or the error code of the write. */
export interface WriteAnswer {
  result: string;
  seqNo?: number;
}

/** What the nodes answered to a POOL_RESTART of the trustee: node -> 'REPLY', or why not. */
export type PoolRestartAnswers = Record<string, string>;

/** What one node said about itself (VALIDATOR_INFO), or why it said nothing. */
export interface NodeInfo {
  node: string;
  primary?: string | null;
  viewNo?: number;
  domainSize?: number;
  sizes?: number[];
  mode?: string;
  /** the validators this node's registry holds */
  validators?: string[];
  lastOrdered?: { viewNo: number; ppSeqNo: number };
  error?: string;
}

function send(m: ToHarness): void {
  process.send?.(m);
}

function codeOf(e: unknown): string {
  const c = (e as { code?: unknown }).code;
  return typeof c === 'string' ? c : (e as Error).message.slice(0, 80);
}

interface ClientState {
  index: number;
  pool: Pool;
  author: DidKey;
  submitter: DidKey;
  rng: Rng;
  counter: number;
}

const ENDORSER = '101';

/** Tries `fn` until it succeeds or the harness stops the workload (the harness's setup timeout bounds it). */
async function retry<T>(what: string, fn: () => Promise<T>, stop: () => boolean, deadlineMs = 3_600_000): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (stop() || Date.now() > until) throw new Error(`${what}: ${(e as Error).message}`, { cause: e });
      console.error(`workload: ${what} failed (${codeOf(e)}: ${(e as Error).message.slice(0, 200)}); trying again`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

export async function runWorkload(genesisFile: string, o: WorkloadOptions): Promise<void> {
  let stopping = false;
  const started = Date.now();
  const rng = new Rng(o.seed);
  const trustee = DidKey.fromSeed(TRUSTEE_SEED);
  const poolOpts = { writeTimeoutMs: o.writeTimeoutMs, readTimeoutMs: o.readTimeoutMs, nodeReadTimeoutMs: 4_000, actionTimeoutMs: 8_000 };
  const admin = await Pool.open(genesisFile, poolOpts);
  const clients: ClientState[] = [];
  let writes = 0;
  let acks = 0;
  let reads = 0;

  let exitNow: () => void = () => undefined;
  const exitAsked = new Promise<void>((res) => (exitNow = res));
  const stewardsWritten = new Set<number>();
  process.on('message', (m: FromHarness) => {
    if (m.type === 'stop') stopping = true;
    else if (m.type === 'exit') exitNow();
    else if (m.what === 'pool-restart') void poolRestart(admin, trustee).then((value) => send({ type: 'answer', id: m.id, value }));
    else if (m.what === 'pool-upgrade') void poolUpgrade(admin, trustee, m.args).then((value) => send({ type: 'answer', id: m.id, value }));
    else if (m.what === 'node-txn')
      void nodeTxn(admin, trustee, m.args, stewardsWritten, [admin, ...clients.map((c) => c.pool)]).then((value) => send({ type: 'answer', id: m.id, value }));
    else void nodeInfos(admin, trustee).then((value) => send({ type: 'answer', id: m.id, value }));
  });
  process.on('disconnect', () => {
    stopping = true;
    exitNow();
  });

  // setup: one ENDORSER author DID per client, written by the trustee
  for (let i = 0; i < o.clients; i++) {
    const author = DidKey.random();
    // one request, sent again as it is: a duplicate is answered with the REPLY of the first
    const nym = signRequest(buildNymRequest({ submitter: trustee.did, dest: author.did, verkey: author.verkey, role: ENDORSER }), trustee);
    await retry(
      `setup NYM of client ${i}`,
      () => admin.submitWrite(nym),
      () => stopping,
    );
    const pool = i === 0 ? admin : await Pool.open(genesisFile, poolOpts);
    clients.push({ index: i, pool, author, submitter: DidKey.fromSeed(stewardSeed((i % 4) + 1)), rng: rng.fork(), counter: 0 });
  }
  send({ type: 'ready', setupMs: Date.now() - started });

  const loop = async (c: ClientState): Promise<void> => {
    while (!stopping) {
      const r = c.rng.next();
      const kind: WriteKind = r < 0.5 ? 'nym' : r < 0.75 ? 'attrib' : 'schema';
      const n = c.counter++;
      const { write, read } = requestsFor(c, kind, n, o.runTag);
      const sentAt = Date.now();
      writes++;
      let seqNo: number;
      try {
        const out = await c.pool.submitWrite(write);
        const result = out.result as { txnMetadata?: { seqNo?: unknown }; txn?: { metadata?: { digest?: unknown } } };
        seqNo = Number(result.txnMetadata?.seqNo);
        acks++;
        send({ type: 'ack', rec: { client: c.index, kind, seqNo, digest: String(result.txn?.metadata?.digest ?? ''), sentAt, ackAt: Date.now() } });
      } catch (e) {
        send({ type: 'write-failed', client: c.index, kind, code: codeOf(e), at: Date.now() });
        await new Promise((res) => setTimeout(res, 200));
        continue;
      }
      // read-after-write: the answer must be verified and at least as new as the acknowledged write
      reads++;
      let out: ReadOutcome;
      try {
        out = await c.pool.submitRead(read);
      } catch (e) {
        send({
          type: 'read',
          rec: { client: c.index, kind, ackSeqNo: seqNo, readSeqNo: null, verdict: 'failed', node: null, error: codeOf(e), at: Date.now() },
        });
        continue;
      }
      const readSeqNo = typeof out.result.seqNo === 'number' ? out.result.seqNo : null;
      let verdict: ReadVerdict = 'ok';
      if (!out.verified) verdict = 'unverified';
      else if (readSeqNo === null || readSeqNo < seqNo) verdict = 'stale';
      else if (out.result.data === null || out.result.data === undefined) verdict = 'wrong-value';
      send({ type: 'read', rec: { client: c.index, kind, ackSeqNo: seqNo, readSeqNo, verdict, node: out.nodes[0] ?? null, at: Date.now() } });
    }
  };
  await Promise.all(clients.flatMap((c) => Array.from({ length: o.concurrency }, () => loop(c))));
  send({ type: 'stopped', writes, acks, reads });
  // still answers the harness's questions (has every node caught up?) until it says exit
  await exitAsked;
  await Promise.allSettled(clients.map((c) => c.pool.close()));
  if (clients.length === 0) await admin.close();
}

function requestsFor(c: ClientState, kind: WriteKind, n: number, tag: string): { write: Request; read: Request } {
  switch (kind) {
    case 'nym': {
      const target = DidKey.random();
      return {
        write: signRequest(buildNymRequest({ submitter: c.submitter.did, dest: target.did, verkey: target.verkey }), c.submitter),
        read: buildGetNymRequest({ dest: target.did }),
      };
    }
    case 'attrib': {
      const name = `chaos-${tag}-${c.index}-${n}`;
      return {
        write: signRequest(buildAttribRequest({ submitter: c.author.did, dest: c.author.did, raw: { [name]: { n } } }), c.author),
        read: buildGetAttribRequest({ dest: c.author.did, raw: name }),
      };
    }
    case 'schema': {
      const version = `${c.index}.${n}`;
      return {
        write: signRequest(buildSchemaRequest({ submitter: c.author.did, name: `chaos-${tag}`, version, attrNames: ['name', 'age'] }), c.author),
        read: buildGetSchemaRequest({ dest: c.author.did, name: `chaos-${tag}`, version }),
      };
    }
  }
}

/** A POOL_RESTART (action "start", now) signed by the trustee, sent to every node (requests.md §8.1). */
export async function poolRestart(pool: Pool, trustee: DidKey): Promise<PoolRestartAnswers> {
  const out: PoolRestartAnswers = {};
  try {
    const answers = await pool.submitAction(signRequest(buildPoolRestartRequest({ submitter: trustee.did, action: 'start' }), trustee), { timeoutMs: 8_000 });
    for (const [node, a] of answers) out[node] = a.kind === 'reply' ? 'REPLY' : a.kind === 'error' ? a.error.code : `${a.kind}: ${a.reason}`;
  } catch (e) {
    out['*'] = codeOf(e);
  }
  return out;
}

/** The trustee's forced POOL_UPGRADE (acted on by each node at receipt, then ordered). */
export async function poolUpgrade(pool: Pool, trustee: DidKey, a: PoolUpgradeArgs): Promise<WriteAnswer> {
  const req = signRequest(
    buildPoolUpgradeRequest({
      submitter: trustee.did,
      name: a.name,
      version: a.version,
      action: 'start',
      sha256: 'a'.repeat(64),
      schedule: a.schedule,
      timeout: 5,
      reinstall: a.reinstall,
      force: true,
    }),
    trustee,
  );
  try {
    const out = await pool.submitWrite(req);
    return { result: 'REPLY', seqNo: Number((out.result as { txnMetadata?: { seqNo?: unknown } }).txnMetadata?.seqNo) };
  } catch (e) {
    return { result: codeOf(e) };
  }
}

/**
 * A NODE txn by steward `stewardIndex` (whose NYM the trustee writes first, once per workload), then
 * every pool handle refreshed (the validator set and BLS keys follow the pool ledger, as a client's must).
 */
export async function nodeTxn(pool: Pool, trustee: DidKey, a: NodeTxnArgs, stewardsWritten: Set<number>, handles: readonly Pool[]): Promise<WriteAnswer> {
  const steward = DidKey.fromSeed(stewardSeed(a.stewardIndex));
  try {
    if (!stewardsWritten.has(a.stewardIndex)) {
      await pool.submitWrite(signRequest(buildNymRequest({ submitter: trustee.did, dest: steward.did, verkey: steward.verkey, role: '2' }), trustee));
      stewardsWritten.add(a.stewardIndex);
    }
    const out = await pool.submitWrite(signRequest(buildNodeRequest({ submitter: steward.did, dest: a.dest, data: a.data }), steward));
    const seqNo = Number((out.result as { txnMetadata?: { seqNo?: unknown } }).txnMetadata?.seqNo);
    const refreshed = await Promise.allSettled([...new Set(handles)].map((h) => h.refresh()));
    const failed = refreshed.filter((r) => r.status === 'rejected').length;
    return failed === 0 ? { result: 'REPLY', seqNo } : { result: `REPLY, but ${failed} pool handles not refreshed`, seqNo };
  } catch (e) {
    return { result: codeOf(e) };
  }
}

/** VALIDATOR_INFO of every node (trustee-signed): its primary, view and ledger sizes. */
export async function nodeInfos(pool: Pool, trustee: DidKey): Promise<NodeInfo[]> {
  let answers;
  try {
    answers = await pool.submitAction(signRequest(buildValidatorInfoRequest({ submitter: trustee.did }), trustee), { timeoutMs: 5_000 });
  } catch (e) {
    return [{ node: '*', error: codeOf(e) }];
  }
  const out: NodeInfo[] = [];
  for (const [node, a] of answers) {
    if (a.kind !== 'reply') {
      out.push({ node, error: a.kind === 'error' ? a.error.code : `${a.kind}: ${a.reason}` });
      continue;
    }
    const all = (a.message.result as { data?: { node?: Record<string, unknown>; pool?: { validators?: unknown } } } | undefined)?.data;
    const data = all?.node;
    if (data === undefined) {
      out.push({ node, error: 'no node section' });
      continue;
    }
    const ledgers = data.ledgers as Record<string, { size: number }> | undefined;
    out.push({
      node,
      primary: (data.primary as string | null | undefined) ?? null,
      viewNo: (data.view as { viewNo?: number } | undefined)?.viewNo,
      domainSize: ledgers?.domain?.size,
      sizes: ledgers !== undefined ? ['pool', 'domain', 'config', 'audit'].map((k) => ledgers[k]?.size ?? -1) : undefined,
      mode: data.mode as string | undefined,
      validators: Array.isArray(all?.pool?.validators) ? (all.pool.validators as string[]) : undefined,
      lastOrdered: data.lastOrdered as { viewNo: number; ppSeqNo: number } | undefined,
    });
  }
  return out;
}

// entry point when run as the child process
if (process.argv[1] !== undefined && /workload\.ts$/.test(process.argv[1]) && process.send !== undefined) {
  const [genesisFile, json] = process.argv.slice(2);
  runWorkload(genesisFile!, JSON.parse(json!) as WorkloadOptions).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(`workload failed: ${(e as Error).stack ?? String(e)}`);
      process.exit(1);
    },
  );
}
