/**
 * A pool handle: the validator set from the pool ledger, one long-lived session per validator, write submission
 * with f+1 reply agreement, reads verified by state proof (or f+1 agreement where no proof exists), actions sent to
 * every node, pool-ledger refresh by catch-up, and a status snapshot.
 */
import { readFile } from 'node:fs/promises';
import { canonicalJson, isPlainObject, isReadType, stringifyJson, TxnType, type Request } from '@quire/common';
import type { Libp2p } from 'libp2p';
import { ClientError, ClientErrorCode, VerificationError, abortedBy } from '../errors.js';
import type { NodeAddress } from '../transport/connection.js';
import { createClientLibp2p } from '../transport/libp2p.js';
import { NodeConnection } from '../transport/node-connection.js';
import { stallTolerantTimeout } from '../transport/stall-timer.js';
import { DEFAULT_FRESHNESS_SECONDS, MultiSignatureCache, type PoolBlsKeys } from '../verify/multi-signature.js';
import { verifyReadReply, type VerifiedRead } from '../verify/read-reply.js';
import { catchUpPoolLedger, type CatchupResult } from './catchup.js';
import {
  ExchangeEnd,
  ParsedMessages,
  PushRouter,
  SETTLED,
  deadlineSignal,
  exchange,
  nodeFailure,
  requestKey,
  type NodeAnswer,
  type NodeFailure,
} from './exchange.js';
import { WriteQuorum, type WriteDecision } from './write-quorum.js';
import { PoolLedger } from './pool-ledger.js';
import { SeenLedgers, readPosition, unprovenIsBehind, writePosition, type Behind } from './seen.js';

export interface PoolOptions {
  /** Deadline of a write: f+1 matching REPLYs (or refusals) must arrive within it. */
  writeTimeoutMs: number;
  /** Deadline of a whole read, all nodes tried included. */
  readTimeoutMs: number;
  /** Time one node gets to answer a read before the next is asked. */
  nodeReadTimeoutMs: number;
  /** Deadline of actions (POOL_RESTART, VALIDATOR_INFO): replies collected until then. */
  actionTimeoutMs: number;
  /** Deadline of a pool-ledger catch-up. */
  catchupTimeoutMs: number;
  dialTimeoutMs: number;
  /** Re-sends to a node after its session was lost. */
  retries: number;
  /** Freshness window of read proofs, seconds (indy-vdr's default 300). */
  freshnessSeconds: number;
  /** Unix seconds for freshness checks (default: the wall clock). */
  now?: () => number;
  /**
   * The order in which a read asks the validators, by alias (default: a random order per read). Validators left out
   * are asked after those listed, in random order.
   */
  readOrder?: (aliases: string[]) => string[];
  /**
   * When a read found answers without proof and no verified one, the nodes that answered without proof are asked
   * once more after this delay (ms) before f+1 agreement settles it: a node shows a new state root a moment before
   * the multi-signature stored with it can be read. 0 turns the second ask off.
   */
  proofRetryMs: number;
}

export const defaultPoolOptions: PoolOptions = {
  writeTimeoutMs: 30_000,
  readTimeoutMs: 20_000,
  nodeReadTimeoutMs: 5_000,
  actionTimeoutMs: 10_000,
  proofRetryMs: 300,
  catchupTimeoutMs: 15_000,
  dialTimeoutMs: 5_000,
  retries: 1,
  freshnessSeconds: DEFAULT_FRESHNESS_SECONDS,
};

/** A read's outcome. */
export interface ReadOutcome {
  result: Record<string, unknown>;
  /** True when a state proof and multi-signature were verified; false when f+1 nodes gave identical answers. */
  verified: boolean;
  /** Nodes whose answer was accepted. */
  nodes: string[];
  /**
   * Nodes whose answers failed verification, were behind what this handle has seen (REPLY_BEHIND) or that failed to
   * answer, with the error code (a refusing node's own code).
   */
  rejected: NodeFailure[];
}

/** A write's outcome: the committed txn (REPLY result) agreed by f+1 nodes. */
export interface WriteOutcome {
  result: Record<string, unknown>;
  nodes: string[];
}

export interface PoolStatus {
  ledgerSize: number;
  root: string;
  n: number;
  f: number;
  validators: { alias: string; dest: string; client: string | null; bls: boolean; connected: boolean }[];
  demoted: string[];
}

const enc = new TextEncoder();

function shuffled<T>(xs: readonly T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

/** What one node's answer did to a read: settled it (an outcome or an error), or nothing yet (undefined). */
type ReadTaken = { outcome: ReadOutcome } | { error: ClientError } | undefined;

/** The state of one read across the nodes it asks (Pool.submitRead, Pool.takeReadAnswer). */
interface ReadState {
  readonly request: Request;
  readonly pool: PoolBlsKeys;
  /** f of the pool as the read started, with `pool`: f+1 REQNACKs refuse it */
  readonly f: number;
  readonly freshnessSeconds: number;
  readonly rejected: ReadOutcome['rejected'];
  /** REQNACK reasons and the nodes that gave each, made at the first REQNACK */
  nacks: Map<string, { nodes: string[]; code: number | null }> | undefined;
  /** answers without proof, candidates of f+1 agreement */
  readonly unproven: { node: string; result: Record<string, unknown> }[];
  /** the first verified reply found behind what the handle has seen */
  behind: (Behind & { node: string }) | undefined;
}

/** The read's outcome, or its error thrown. */
function settled(r: { outcome: ReadOutcome } | { error: ClientError }): ReadOutcome {
  if ('error' in r) throw r.error;
  return r.outcome;
}

/** What a pool handle runs over: the pool ledger it dials from and the libp2p stack it dials with. */
interface PoolModules {
  ledger: PoolLedger;
  libp2p: Libp2p;
}

export class Pool {
  private readonly conns = new Map<string, NodeConnection>(); // by dest
  /** validatorConns() of the pool ledger's epoch, until the sessions change */
  private validatorConns_: { epoch: number; conns: readonly NodeConnection[] } | undefined;
  private readonly router = new PushRouter();
  readonly cache = new MultiSignatureCache();
  /** What this handle has seen of each ledger: its reads never go back behind it (see seen.ts). */
  private readonly seenLedgers = new SeenLedgers();
  private closed = false;

  /** The pool ledger this handle knows: its validators and their addresses. */
  readonly ledger: PoolLedger;
  readonly options: PoolOptions;
  private readonly libp2p: Libp2p;

  private constructor(options: PoolOptions, modules: PoolModules) {
    this.options = options;
    this.ledger = modules.ledger;
    this.libp2p = modules.libp2p;
    this.syncConnections();
  }

  /** Opens a pool from the pool ledger genesis text. `signal` aborted while it opens: rejects with ClientError ABORTED. */
  static async fromGenesisText(text: string, options: Partial<PoolOptions> = {}, file?: string, abort: { signal?: AbortSignal } = {}): Promise<Pool> {
    const ledger = PoolLedger.fromGenesis(text, file);
    return new Pool({ ...defaultPoolOptions, ...options }, { ledger, libp2p: await createClientLibp2p({}, abort) });
  }

  /** Opens a pool from a genesis file (Indy format: one NODE txn per line). Throws ClientError INVALID_GENESIS. */
  static async open(genesisFile: string, options: Partial<PoolOptions> = {}, abort: { signal?: AbortSignal } = {}): Promise<Pool> {
    let text: string;
    try {
      text = await readFile(genesisFile, 'utf8');
    } catch (e) {
      throw new ClientError(ClientErrorCode.INVALID_GENESIS, { file: genesisFile, reason: (e as NodeJS.ErrnoException).code ?? String(e) });
    }
    return Pool.fromGenesisText(text, options, genesisFile, abort);
  }

  private now(): number {
    return this.options.now?.() ?? Math.floor(Date.now() / 1000);
  }

  /** The validators, each with its session (made again when the pool ledger or the sessions change; not to be changed). */
  private validatorConns(): readonly NodeConnection[] {
    const epoch = this.ledger.epoch;
    if (this.validatorConns_?.epoch === epoch) return this.validatorConns_.conns;
    const conns = this.ledger
      .validators()
      .map((v) => this.conns.get(v.dest))
      .filter((c): c is NodeConnection => c !== undefined);
    this.validatorConns_ = { epoch, conns };
    return conns;
  }

  /** One session per validator with a client address; sessions of removed or moved nodes are closed. */
  private syncConnections(): void {
    this.validatorConns_ = undefined;
    const wanted = new Map<string, NodeAddress>();
    for (const v of this.ledger.validators()) {
      if (v.clientIp !== undefined && v.clientPort !== undefined) wanted.set(v.dest, { alias: v.alias, dest: v.dest, host: v.clientIp, port: v.clientPort });
    }
    for (const [dest, c] of this.conns) {
      const w = wanted.get(dest);
      if (w === undefined || w.host !== c.address.host || w.port !== c.address.port || w.alias !== c.alias) {
        void c.close();
        this.conns.delete(dest);
      }
    }
    for (const [dest, address] of wanted) {
      if (this.conns.has(dest)) continue;
      const c = new NodeConnection({ address, dialTimeoutMs: this.options.dialTimeoutMs }, { libp2p: this.libp2p });
      this.router.attach(c);
      this.conns.set(dest, c);
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new ClientError(ClientErrorCode.CLOSED);
  }

  /** Number of validators and faults tolerated. */
  get n(): number {
    return this.ledger.validators().length;
  }

  get f(): number {
    return this.ledger.f;
  }

  status(): PoolStatus {
    const vs = this.ledger.validators();
    return {
      ledgerSize: this.ledger.size,
      root: this.ledger.rootBase58,
      n: vs.length,
      f: this.ledger.f,
      validators: vs.map((v) => ({
        alias: v.alias,
        dest: v.dest,
        client: v.clientIp !== undefined && v.clientPort !== undefined ? `${v.clientIp}:${v.clientPort}` : null,
        bls: v.blsPublicKey !== undefined,
        connected: this.conns.get(v.dest)?.connected ?? false,
      })),
      demoted: this.ledger
        .nodes()
        .filter((x) => !x.services.includes('VALIDATOR'))
        .map((x) => x.alias),
    };
  }

  /**
   * The newest time (ppTime, seconds: a write's txnTime or a read's multi-signature timestamp) and the highest seqNo
   * this handle has seen on a ledger; a read is never answered from a state older than that (READ_BEHIND).
   */
  seen(ledgerId: number): { time: number; seqNo: number } | undefined {
    return this.seenLedgers.seen(ledgerId);
  }

  /** The validators' sessions in the order a read asks them. */
  private readOrder(conns: readonly NodeConnection[]): NodeConnection[] {
    const order = this.options.readOrder;
    if (order === undefined) return shuffled(conns);
    const byAlias = new Map(conns.map((c) => [c.alias, c]));
    const first: NodeConnection[] = [];
    for (const alias of order(conns.map((c) => c.alias))) {
      const c = byAlias.get(alias);
      if (c === undefined) continue;
      first.push(c);
      byAlias.delete(alias);
    }
    return [...first, ...shuffled([...byAlias.values()])];
  }

  /** Refreshes the pool ledger by catch-up; the validator set and BLS keys follow every NODE txn received. */
  async refresh(opts: { signal?: AbortSignal } = {}): Promise<CatchupResult> {
    this.checkOpen();
    const r = await catchUpPoolLedger(this.ledger, [...this.validatorConns()], this.f, this.options.catchupTimeoutMs, opts.signal);
    if (r.to !== r.from) this.syncConnections();
    return r;
  }

  /** Sends a request by its kind: writes to every node (f+1 REPLYs), reads to one node with proof checks, actions to all. */
  async submit(request: Request, opts: { payload?: Uint8Array; signal?: AbortSignal } = {}): Promise<WriteOutcome | ReadOutcome | Map<string, NodeAnswer>> {
    const kind = Pool.kindOf(request);
    if (kind === 'action') return this.submitAction(request, opts);
    if (kind === 'read') return this.submitRead(request, opts);
    return this.submitWrite(request, opts);
  }

  /** How a request is submitted: 'write' (all nodes, f+1 REPLYs), 'read' (verified) or 'action' (all nodes, every reply). */
  static kindOf(request: unknown): 'write' | 'read' | 'action' {
    const type = isPlainObject(request) && isPlainObject(request.operation) ? request.operation.type : undefined;
    if (typeof type !== 'string') throw new ClientError(ClientErrorCode.INVALID_REQUEST, { reason: 'operation.type missing' });
    if (type === TxnType.POOL_RESTART || type === TxnType.VALIDATOR_INFO) return 'action';
    return isReadType(type) ? 'read' : 'write';
  }

  /**
   * Sends a write to every validator and resolves when f+1 of them reply with the same committed txn. f+1 identical
   * REQNACK (REJECT) reasons reject with REQUEST_NACKED (REQUEST_REJECTED); TIMEOUT or NO_CONSENSUS otherwise, whose
   * `errors` name each failed node with its own refusal code and reason (TOO_MANY_PENDING, RATE_LIMITED...) or the
   * code of its failure (NODE_UNREACHABLE, MALFORMED_REPLY...).
   *
   * A REQNACK "pool overloaded" is a node's final answer like any other: the nodes decide admission once per request
   * and order a request only when n-f of them took it in, so f+1 such refusals mean the pool will not order it
   * (REQUEST_NACKED, at once: the client may back off and send a new request), and fewer mean the nodes that took it
   * in will order and answer it. A node's transient transport refusal (TOO_MANY_PENDING, RATE_LIMITED) is asked again
   * once another node took the write in (see WriteQuorum).
   */
  async submitWrite(request: Request, opts: { timeoutMs?: number; payload?: Uint8Array; signal?: AbortSignal } = {}): Promise<WriteOutcome> {
    this.checkOpen();
    const conns = this.validatorConns();
    const payload = opts.payload ?? enc.encode(stringifyJson(request));
    const key = requestKey(request.identifier ?? null, request.reqId);
    const timeoutMs = opts.timeoutMs ?? this.options.writeTimeoutMs;
    const quorum = new WriteQuorum(conns.length, this.f);
    if (opts.signal?.aborted === true) throw abortedBy(opts.signal);
    if (conns.length === 0) throw new ClientError(ClientErrorCode.NO_CONSENSUS, { reason: 'no validator with a client address' });
    const { promise, resolve, reject } = Promise.withResolvers<WriteOutcome>();
    // the end of the write's exchanges: its deadline (reached during a stall of this process, it first lets the
    // answers already in the sockets' buffers be read, stall-timer.ts), the caller's signal, or its decision (SETTLED)
    const end = new ExchangeEnd();
    const onDecision = (d: WriteDecision | undefined): void => {
      if (d === undefined) return;
      if (d.kind === 'failed') return reject(d.error);
      const w = writePosition(request, d.result);
      if (w !== undefined) this.seenLedgers.noteWrite(w);
      resolve({ result: d.result, nodes: d.nodes });
    };
    const timer = stallTolerantTimeout(() => {
      reject(quorum.timedOut(timeoutMs));
      end.end(undefined);
    }, timeoutMs);
    const parent = opts.signal;
    const onParent = (): void => {
      if (parent === undefined) return;
      reject(abortedBy(parent));
      end.end(parent.reason);
    };
    parent?.addEventListener('abort', onParent, { once: true });
    // a node that refused for now (TOO_MANY_PENDING, RATE_LIMITED) while another took the request in is asked again,
    // 250 ms after its refusal, doubling to 2 s, until the deadline (see WriteQuorum); what that takes is made for the
    // writes that need it, not for every write (most are answered, or refused everywhere, at once)
    let retry: { byAlias: Map<string, NodeConnection>; attempts: Map<string, number>; timers: Set<ReturnType<typeof setTimeout>> } | undefined;
    const retryRefused = (): void => {
      const nodes = quorum.takeRetries();
      if (nodes.length === 0) return;
      retry ??= { byAlias: new Map(conns.map((c) => [c.alias, c])), attempts: new Map(), timers: new Set() };
      const { byAlias, attempts, timers } = retry;
      for (const node of nodes) {
        const c = byAlias.get(node);
        if (c === undefined) continue;
        const k = attempts.get(node) ?? 0;
        attempts.set(node, k + 1);
        const t = setTimeout(
          () => {
            timers.delete(t);
            if (!end.ended) ask(c);
          },
          Math.min(2_000, 250 * 2 ** k),
        );
        timers.add(t);
      }
    };
    const onAck = (node: string): void => {
      quorum.ack(node);
      retryRefused();
    };
    // the nodes that agree send equal bytes: each is parsed once for the write (see ParsedMessages)
    const parsed = new ParsedMessages();
    const ask = (c: NodeConnection): void =>
      void exchange(c, payload, key, this.router, { end, retries: this.options.retries, onAck, parsed }).then((a) => {
        // the exchanges a deadline or the caller ended answer TIMEOUT: that is reported once, by the timer or onParent
        if (end.ended) return;
        onDecision(quorum.add(a));
        retryRefused();
      });
    for (const c of conns) ask(c);
    try {
      return await promise;
    } finally {
      if (retry !== undefined) for (const t of retry.timers) clearTimeout(t);
      timer.clear();
      parent?.removeEventListener('abort', onParent);
      end.end(SETTLED);
    }
  }

  /**
   * Asks one node at a time (in random order, or `readOrder`) and returns the first reply that verifies (the state
   * proof, the multi-signature of n-f validators and its freshness) and is not behind what this handle has seen: a
   * reply whose multi-signature is older than the newest txnTime or timestamp this handle saw on the ledger, or
   * whose value of a key is older than one it wrote or read, is set aside as REPLY_BEHIND and the next node asked.
   * After a reply without proof (NO_PROOF) the remaining nodes are asked at once, and the first verified reply among
   * theirs is taken; only when none has one is the read settled by f+1 identical answers (`verified: false`).
   * f+1 identical REQNACK reasons reject with REQUEST_NACKED. When nothing verified is recent enough: READ_BEHIND;
   * when nothing verified at all: NO_CONSENSUS (answers without proof that do not agree) or NO_VERIFIED_REPLY.
   */
  async submitRead(
    request: Request,
    opts: { timeoutMs?: number; freshnessSeconds?: number; payload?: Uint8Array; signal?: AbortSignal } = {},
  ): Promise<ReadOutcome> {
    this.checkOpen();
    const conns = this.readOrder(this.validatorConns());
    const payload = opts.payload ?? enc.encode(stringifyJson(request));
    const readTimeoutMs = opts.timeoutMs ?? this.options.readTimeoutMs;
    const startedAt = performance.now();
    // what the answers left so far; made once per read, the functions that take an answer are methods
    const st: ReadState = {
      request,
      pool: this.ledger.blsKeys(),
      f: this.f,
      freshnessSeconds: opts.freshnessSeconds ?? this.options.freshnessSeconds,
      rejected: [],
      nacks: undefined,
      unproven: [],
      behind: undefined,
    };
    const rejected = st.rejected;
    const unproven = st.unproven;

    // the first node, in the common case the only one asked, within the smaller of its time and the read's, under the
    // caller's signal: the read's own deadline (a controller, a timer, a listener on the caller's signal) is made only
    // when another node must be asked
    let i = 0;
    const firstConn = conns[0];
    if (firstConn !== undefined && opts.signal?.aborted !== true) {
      const ask = { timeoutMs: Math.min(this.options.nodeReadTimeoutMs, readTimeoutMs), retries: this.options.retries };
      const r = this.takeReadAnswer(
        st,
        await exchange(firstConn, payload, undefined, undefined, opts.signal === undefined ? ask : { ...ask, signal: opts.signal }),
      );
      if (r !== undefined) return settled(r);
      i = 1;
    }
    const take = (a: NodeAnswer): ReadTaken => this.takeReadAnswer(st, a);
    const deadline = deadlineSignal(Math.max(0, readTimeoutMs - (performance.now() - startedAt)), opts.signal);
    try {
      for (; i < conns.length && unproven.length === 0; i++) {
        if (deadline.signal.aborted) break;
        const r = take(await this.askForRead(conns[i], payload, deadline.signal));
        if (r !== undefined) return settled(r);
      }
      // an answer without proof: the others are asked at once, for a verified reply first
      const rest = deadline.signal.aborted ? [] : conns.slice(i);
      const r = await this.askAtOnce(rest, payload, deadline.signal, take);
      if (r !== undefined) return settled(r);
      // still no verified reply, and a node sent a state proof without its multi-signature: the nodes that answered
      // without proof are asked once more, a little later (a node shows a new root before the write that stores its
      // multi-signature is done). Answers that can have no proof (all auth rules, a missing txn) are not asked again.
      const retryMs = this.options.proofRetryMs;
      const unsigned = unproven.some((u) => isPlainObject(u.result.state_proof) && (u.result.state_proof.multi_signature ?? null) === null);
      if (unsigned && retryMs > 0 && !deadline.signal.aborted) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, retryMs);
          function done(): void {
            clearTimeout(timer);
            deadline.signal.removeEventListener('abort', done);
            resolve();
          }
          deadline.signal.addEventListener('abort', done, { once: true });
        });
        const byNode = new Map(unproven.splice(0).map((u) => [u.node, u]));
        const again = conns.filter((c) => byNode.has(c.alias));
        const r2 = deadline.signal.aborted ? undefined : await this.askAtOnce(again, payload, deadline.signal, take);
        if (r2 !== undefined) return settled(r2);
        // the latest answer of each node counts for agreement
        for (const u of unproven.splice(0)) byNode.set(u.node, u);
        unproven.push(...byNode.values());
      }
    } finally {
      deadline.done();
    }
    if (opts.signal?.aborted === true) throw abortedBy(opts.signal);
    const agreed = this.readByAgreement(request, unproven, rejected, st.f);
    if ('outcome' in agreed) return agreed.outcome;
    const nackList = [...(st.nacks?.entries() ?? [])].map(([reason, g]) => ({ reason, nodes: g.nodes }));
    const behind = st.behind;
    if (behind !== undefined) {
      const ledgerId = behind.ledgerId;
      throw new ClientError(ClientErrorCode.READ_BEHIND, { ledgerId, seen: this.seenLedgers.seen(ledgerId), behind, errors: rejected, nacks: nackList });
    }
    if (unproven.length > 0) throw new ClientError(ClientErrorCode.NO_CONSENSUS, { groups: agreed.groups, errors: rejected });
    throw new ClientError(ClientErrorCode.NO_VERIFIED_REPLY, { errors: rejected, nacks: nackList });
  }

  /**
   * One node's answer to a read: the read's outcome when it settles it (a reply that verifies and is not behind what
   * this handle has seen, or f+1 identical REQNACK reasons), else recorded in the read's state (rejected, nacks,
   * unproven, the first reply found behind).
   */
  private takeReadAnswer(st: ReadState, a: NodeAnswer): ReadTaken {
    if (a.kind === 'error') {
      st.rejected.push(nodeFailure(a.node, a.error));
      return undefined;
    }
    if (a.kind !== 'reply') {
      st.nacks ??= new Map();
      const g = st.nacks.get(a.reason) ?? { nodes: [], code: a.code };
      g.nodes.push(a.node);
      st.nacks.set(a.reason, g);
      if (g.nodes.length >= st.f + 1)
        return { error: new ClientError(ClientErrorCode.REQUEST_NACKED, { reason: a.reason, code: g.code, nodes: g.nodes }, a.reason) };
      return undefined;
    }
    let v: VerifiedRead;
    try {
      v = verifyReadReply({ reply: a.message, request: st.request, pool: st.pool, now: this.now(), freshnessSeconds: st.freshnessSeconds, cache: this.cache });
    } catch (e) {
      if (!(e instanceof VerificationError)) throw e;
      if (e.code === ClientErrorCode.NO_PROOF && isPlainObject(a.message.result)) st.unproven.push({ node: a.node, result: a.message.result });
      else st.rejected.push({ node: a.node, code: e.code });
      return undefined;
    }
    const seen = this.seenLedgers;
    const position = readPosition(st.request, v, seen);
    if (position !== undefined) {
      const b = seen.check(position);
      if (b !== undefined) {
        st.rejected.push({ node: a.node, code: ClientErrorCode.REPLY_BEHIND });
        st.behind ??= { node: a.node, ...b };
        return undefined;
      }
      seen.noteRead(position);
    } else if (v.type === TxnType.GET_TXN && isPlainObject(v.result.data) && typeof v.result.data.ledgerSize === 'number') {
      seen.noteSize(v.ledgerId, v.result.data.ledgerSize);
    }
    return { outcome: { result: v.result, verified: true, nodes: [a.node], rejected: st.rejected } };
  }

  /** Asks `conns` at once; resolves with the first answer `take` settles the read with, or undefined when none did. */
  private async askAtOnce(conns: NodeConnection[], payload: Uint8Array, deadline: AbortSignal, take: (a: NodeAnswer) => ReadTaken): Promise<ReadTaken> {
    if (conns.length === 0) return undefined;
    const ctl = new AbortController();
    const onDeadline = (): void => ctl.abort();
    deadline.addEventListener('abort', onDeadline, { once: true });
    try {
      return await new Promise<ReadTaken>((resolve, reject) => {
        let left = conns.length;
        let done = false;
        for (const c of conns) {
          void this.askForRead(c, payload, ctl.signal).then((a) => {
            if (done) return;
            try {
              const got = take(a);
              if (got !== undefined) {
                done = true;
                resolve(got);
              } else if (--left === 0) resolve(undefined);
            } catch (e) {
              done = true;
              reject(e as Error);
            }
          });
        }
      });
    } finally {
      deadline.removeEventListener('abort', onDeadline);
      ctl.abort(SETTLED);
    }
  }

  /** One read exchange with one node, within the node's own deadline (nodeReadTimeoutMs) and the read's. */
  private askForRead(conn: NodeConnection, payload: Uint8Array, signal: AbortSignal): Promise<NodeAnswer> {
    // the node's time to answer as the exchange's own timer: no signal of its own linked to the read's per ask
    return exchange(conn, payload, undefined, undefined, { signal, timeoutMs: this.options.nodeReadTimeoutMs, retries: this.options.retries });
  }

  /**
   * f+1 identical answers without proof (compared without `state_proof`) from different nodes, leaving out the
   * answers that contradict what this handle has seen (REPLY_BEHIND); else the groups of nodes that agree.
   */
  private readByAgreement(
    request: Request,
    unproven: { node: string; result: Record<string, unknown> }[],
    rejected: ReadOutcome['rejected'],
    f: number,
  ): { outcome: ReadOutcome } | { groups: string[][] } {
    const current = unproven.filter((u) => {
      if (!unprovenIsBehind(request, u.result, this.seenLedgers)) return true;
      rejected.push({ node: u.node, code: ClientErrorCode.REPLY_BEHIND });
      return false;
    });
    const groups = agreementGroups(request, current, rejected);
    for (const g of groups) {
      if (g.nodes.length >= f + 1) return { outcome: { result: g.result, verified: false, nodes: g.nodes, rejected } };
    }
    return { groups: groups.map((g) => g.nodes) };
  }

  /**
   * Sends an action (POOL_RESTART, VALIDATOR_INFO) to every validator, or to the nodes named, and collects each
   * node's answer until all answered or the deadline passed (a restarting node may never answer).
   */
  async submitAction(
    request: Request,
    opts: { nodes?: string[]; timeoutMs?: number; payload?: Uint8Array; signal?: AbortSignal } = {},
  ): Promise<Map<string, NodeAnswer>> {
    this.checkOpen();
    const conns = this.validatorConns().filter((c) => opts.nodes === undefined || opts.nodes.includes(c.alias));
    const payload = opts.payload ?? enc.encode(stringifyJson(request));
    const key = requestKey(request.identifier ?? null, request.reqId);
    const deadline = deadlineSignal(opts.timeoutMs ?? this.options.actionTimeoutMs, opts.signal);
    try {
      const answers = await Promise.all(conns.map((c) => exchange(c, payload, key, this.router, { signal: deadline.signal, retries: 0 })));
      if (opts.signal?.aborted === true) throw abortedBy(opts.signal);
      return new Map(answers.map((a) => [a.node, a]));
    } finally {
      deadline.done();
    }
  }

  /** Closes every session and the libp2p node. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.conns.values()].map((c) => c.close()));
    this.conns.clear();
    await this.libp2p.stop();
  }
}

/** Answers without proof grouped by their result without `state_proof` (those not for the request go to `rejected`). */
function agreementGroups(
  request: Request,
  answers: { node: string; result: Record<string, unknown> }[],
  rejected: ReadOutcome['rejected'],
): { nodes: string[]; result: Record<string, unknown> }[] {
  const groups = new Map<string, { nodes: string[]; result: Record<string, unknown> }>();
  for (const a of answers) {
    if (!sameQuery(a.result, request)) {
      rejected.push({ node: a.node, code: ClientErrorCode.REPLY_NOT_FOR_REQUEST });
      continue;
    }
    const result = { ...a.result };
    delete result.state_proof;
    const id = canonicalJson(result);
    const g = groups.get(id) ?? { nodes: [], result };
    g.nodes.push(a.node);
    groups.set(id, g);
  }
  return [...groups.values()];
}

function sameQuery(result: Record<string, unknown>, request: Request): boolean {
  if (result.type !== request.operation.type) return false;
  if (stringifyJson(result.reqId ?? null) !== stringifyJson(request.reqId)) return false;
  if (request.operation.type === TxnType.GET_TXN) return true;
  for (const [k, v] of Object.entries(request.operation)) {
    if (k === 'data' || v === undefined) continue;
    if (stringifyJson(v) !== stringifyJson(result[k] ?? null)) return false;
  }
  return true;
}
