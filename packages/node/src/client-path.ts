// The client request path (requests.md §1, consensus.md §2, formats.md §5): parse losslessly,
// envelope + static validation + signatures through the request pipeline, REQACK / REQNACK with
// the exact shapes, reads answered locally from committed state with the stored BLS
// multi-signature attached, writes handed to consensus, and REPLY / REJECT pushed on the client's
// stream once its write is ordered and durable. Duplicates of ordered writes, and writes this node
// learned by catch-up rather than by ordering, are answered from the ledger. The reply target of an
// acknowledged write is kept for as long as consensus may order the write (see `expire`). Pool-ledger
// catch-up messages of light clients are answered from the committed pool ledger (client-catchup.ts).
import { isPlainObject, isWriteType, LedgerId, POOL_OVERLOADED_REASON, type Request } from '@quire/common';
import { defaultConsensusOptions, droppedRequestMemoryMs, type RequestInfo } from '@quire/consensus';
import type { ParsedRequest, RequestPipeline } from '@quire/requests';
import { RequestError, RequestErrorCode, parseMessage, toRequestError, wrapReason } from '@quire/requests';
import type { BlsStore, Ledger, SeqNoIndex, StateTrie, AttributeStore } from '@quire/storage';
import { answerClientCatchup, isClientCatchupMessage } from './client-catchup.js';
import { type WriteProof, encodeReadReply, encodeReply, envelopeGuess, nackMessage as nack, rejectCode, writeProofs, writeResult } from './client-replies.js';
import { NodeError, NodeErrorCode } from './errors.js';
import type { NodeLogger } from './logger.js';
import type { NodeMetrics } from './metrics.js';

/** How the path talks to a client connection (the ClientHost in production, a recorder in tests). */
export interface ClientChannel {
  /** answers the request (first and only RESPONSE) */
  respond(data: Uint8Array): boolean;
  /** a later message on the same session (REPLY / REJECT of an ordered write) */
  push(data: Uint8Array): boolean;
  /** the client session the request came on (its pending writes are dropped when it closes) */
  session?: string;
}

/** An authorized action as the node carries it out (requests.md §8). */
export interface ActionRequest {
  type: string;
  operation: Readonly<Record<string, unknown>>;
  identifier: string;
  reqId: number | bigint;
  /** the request as received (its kept fields) */
  request: Request;
}

/** What an action handler answers: the REPLY's `data` (none: no `data` field), and what to do once the REPLY is out. */
export interface ActionOutcome {
  data?: unknown;
  afterReply?(): void;
}

export interface ClientPathOptions {
  /**
   * how long the reply targets of an acknowledged write are kept once consensus no longer holds it (`holds`), ms:
   * consensus may still order a write it dropped unordered, with its clients answered, this long after
   * (ConsensusCore.droppedRequestMemoryMs)
   */
  droppedWriteMemoryMs: number;
  /**
   * a write consensus has not answered at all (no REQACK / REQNACK) is released after this long, ms: consensus answers
   * every write it is handed, at the latest once the events queued before it are handled; this only bounds a lost one
   */
  unansweredReleaseMs: number;
  /**
   * acknowledged reply targets of one request (copies sent again, on this session or others) kept at most: one more
   * copy acknowledged releases the oldest, so that copies of one request cannot pile up targets
   */
  maxTargetsPerRequest: number;
  /** largest reply frame (MSG_LEN_LIMIT), bytes: bounds catch-up replies */
  maxMessageLength: number;
  /** most txns in one CATCHUP_REP */
  maxCatchupTxns: number;
  /** admitted client writes checked (parsed in full, signatures verified) in one turn of the event loop, at most */
  checksPerTurn: number;
  /** a turn of admitted writes' checks ends once it took this long, ms (the event loop turns before the next ones) */
  checksTurnMs: number;
}

export const defaultClientPathOptions: ClientPathOptions = {
  // ConsensusCore.droppedRequestMemoryMs under the default consensus options (the node passes its core's)
  droppedWriteMemoryMs: droppedRequestMemoryMs(defaultConsensusOptions),
  unansweredReleaseMs: 60_000,
  maxTargetsPerRequest: 16,
  maxMessageLength: 128 * 1024,
  maxCatchupTxns: 2000,
  // about a fifth of a turn of a busy node (the consensus queue keeps up to 250 ms of a turn, turn-budget.ts): the
  // checks are about a tenth of a write's CPU at a node, and a smaller share made them the bottleneck under load
  checksPerTurn: 512,
  checksTurnMs: 50,
};

export interface ClientPathModules {
  pipeline: RequestPipeline;
  stores: {
    ledgers: Record<0 | 1 | 2 | 3, Ledger>;
    states: Record<0 | 1 | 2, StateTrie>;
    bls: BlsStore;
    seqNoIndex: SeqNoIndex;
    attributes: AttributeStore;
  };
  /**
   * Whether consensus holds the write of `digest` to order it (taken in, not ordered yet: ConsensusCore.holdsRequest).
   * The reply targets of an acknowledged write are kept while it does, and `droppedWriteMemoryMs` after; without it
   * they are kept until the write is answered or their session closes.
   */
  holds?(digest: string): boolean;
  /** hands a statically valid, authenticated write to consensus (consensus.md §2 steps 4-7), with what its checks found */
  submit(connId: string, request: Record<string, unknown>, info: RequestInfo): void;
  /**
   * Admission control at the door: false when consensus refuses this write as overloaded (it holds
   * too many pending requests, or refused this very request before). Asked before the write is
   * verified, so a refusal costs a parse and is answered at once; without it every write passes.
   * `inProgress`: the client writes this path admitted and has not yet answered (in verification,
   * or handed to consensus and not acknowledged): they count toward consensus's limit, so a burst
   * of frames read in one go is refused at the door beyond it instead of being verified whole.
   */
  admit?(request: Record<string, unknown>, inProgress: number): boolean;
  /** applies a forced POOL_CONFIG / POOL_UPGRADE that passed validation on receipt (requests.md §5.5) */
  onForced?(request: Request, digest: string): void;
  /**
   * Carries out an authorized action (POOL_RESTART, VALIDATOR_INFO; requests.md §8): resolves with
   * the REPLY's `data`, rejects with the REJECT reason. Without it actions are refused (REQNACK).
   */
  onAction?(request: ActionRequest): Promise<ActionOutcome>;
  /** wall clock in seconds */
  now(): number;
  /** monotonic clock in ms (the release of reply targets); default performance.now() */
  monotonicMs?(): number;
  logger: NodeLogger;
  metrics?: NodeMetrics | undefined;
}

interface Pending {
  channel: ClientChannel;
  /** counted in `ClientPath.inProgress` until its first answer (client writes admitted at the door) */
  counted?: boolean;
  identifier: string;
  reqId: number | bigint;
  /** the first answer (REQACK/REQNACK/REPLY) has been sent */
  answered: boolean;
  /** monotonic ms at receipt */
  receivedAt: number;
  /** acknowledged: monotonic ms at which `expire` first found consensus no longer holding the write (undefined: it holds it) */
  droppedSince?: number;
  /** digests of the request (answering from the ledger); absent only in hand-built entries */
  digest?: string;
  payloadDigest?: string;
}

const textDecoder = new TextDecoder('utf-8', { fatal: false });

export { encodeReply };

export class ClientPath {
  private readonly modules: ClientPathModules;
  private readonly options: ClientPathOptions;
  private readonly pending = new Map<string, Pending>();
  /** digest -> connIds of the acknowledged reply targets of that request, oldest first (at most `maxTargetsPerRequest`) */
  private readonly targetsOf = new Map<string, string[]>();
  /** client writes admitted at the door and not answered yet (verifying, or waiting for consensus's first answer) */
  private inProgress_ = 0;
  /** writes the door admitted as their frame was read (`doorAtFrame`) and that wait in the client host's queue */
  private queuedAdmitted = 0;
  private readonly queuedBySession = new Map<string, number>();
  /** requests parsed by `doorAtFrame`, by their bytes, until `handle` takes them */
  private readonly preparsed = new WeakMap<Uint8Array, Preparsed>();
  private refusedAtDoor = 0;
  private refusalCounter: { inc(): void } | undefined;
  private readonly clock: () => number;
  private readonly gate: TurnGate;
  private writable = true;
  private nextConn = 1;
  private stopped = false;

  constructor(options: Partial<ClientPathOptions>, modules: ClientPathModules) {
    this.modules = modules;
    this.options = { ...defaultClientPathOptions, ...options };
    this.clock = modules.monotonicMs ?? (() => performance.now());
    this.gate = new TurnGate(this.options.checksPerTurn, this.options.checksTurnMs, () => performance.now());
  }

  /** POOL_CONFIG `writes` (requests.md §1.5, §5.4). */
  setWritable(writable: boolean): void {
    this.writable = writable;
  }

  get isWritable(): boolean {
    return this.writable;
  }

  /** Stops accepting requests; writes already handed to consensus still get their REPLY. */
  stop(): void {
    this.stopped = true;
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** Client writes admitted at the door and not answered yet (they count toward consensus's admission limit). */
  get inProgress(): number {
    return this.inProgress_;
  }

  /**
   * The door as a client frame is read (the client host calls it before the request is queued behind others, so a
   * refusal is answered at once and costs no turn of the request handlers): the REQNACK "pool overloaded" of a write
   * consensus refuses, or undefined when the request goes on to `handle` (admitted, not a write, not JSON...). The
   * message is parsed exactly as `handle` parses it and the decision is `handle`'s own door; the parsed value of a
   * request passed on is kept for `handle` (no second parse), and an admitted write counts toward the admission limit
   * while it waits in the client host's queue (until `handle` takes it, or its session closes: `forgetSession`).
   * Never throws.
   */
  doorAtFrame(data: Uint8Array, session?: string): Uint8Array | undefined {
    if (this.stopped || this.modules.admit === undefined || !this.writable) return undefined;
    try {
      const text = textDecoder.decode(data);
      let value: unknown;
      try {
        value = parseMessage(text);
      } catch {
        return undefined; // answered by `handle` with the parse error
      }
      const door = this.door(value);
      if (door === 'refused') {
        this.countRefusal();
        return overloadedNack(value as Record<string, unknown>);
      }
      const pre: Preparsed = { text, value, queued: door === 'admitted' ? (session ?? '') : undefined, readAt: this.clock() };
      if (pre.queued !== undefined) {
        this.queuedAdmitted++;
        this.queuedBySession.set(pre.queued, (this.queuedBySession.get(pre.queued) ?? 0) + 1);
      }
      this.preparsed.set(data, pre);
      return undefined;
    } catch (e) {
      this.modules.logger.warn({ err: e }, 'client request failed unexpectedly at the door');
      return undefined;
    }
  }

  /** Writes refused as overloaded at the door (as read, or in `handle`) since the path started. */
  get refusedCount(): number {
    return this.refusedAtDoor;
  }

  /** One client message. Never throws. */
  async handle(data: Uint8Array, channel: ClientChannel): Promise<void> {
    if (this.stopped) return;
    const started = this.clock();
    try {
      let text: string;
      let value: unknown;
      const pre = this.preparsed.get(data);
      if (pre !== undefined) {
        this.preparsed.delete(data);
        // an admitted write's wait in the client host's queue, from its frame read to its turn here
        if (pre.queued !== undefined) this.modules.metrics?.writeStages.observe({ stage: 'door' }, (started - pre.readAt) / 1000);
        this.unqueue(pre);
        text = pre.text;
        value = pre.value;
      } else {
        text = textDecoder.decode(data);
        try {
          value = parseMessage(text);
        } catch (e) {
          const g = envelopeGuess(text);
          this.count('unknown', 'nack');
          channel.respond(encodeReply(nack(g.identifier, g.reqId, toRequestError(e))));
          return;
        }
      }
      if (isClientCatchupMessage(value)) {
        await this.catchup(value, channel);
        return;
      }
      const door = this.door(value);
      if (door === 'refused') {
        this.countRefusal();
        channel.respond(overloadedNack(value as Record<string, unknown>));
        return;
      }
      // an admitted write counts toward the admission limit until it is answered (or handed to consensus, whose
      // first answer releases it: see `release`), and waits its turn for its checks (see `TurnGate`)
      let outcome;
      if (door === 'admitted') {
        this.inProgress_++;
        try {
          await this.gate.wait();
          let checked;
          try {
            checked = this.modules.pipeline.receive(value, { now: this.modules.now(), writable: this.writable, fromClient: true });
          } finally {
            this.gate.done();
          }
          outcome = await checked;
        } finally {
          this.inProgress_--;
        }
      } else outcome = await this.modules.pipeline.receive(value, { now: this.modules.now(), writable: this.writable, fromClient: true });
      switch (outcome.kind) {
        case 'nack': {
          const r = outcome.request;
          const fields = r === null ? envelopeGuess(text) : { identifier: r.identifier ?? r.author, reqId: r.reqId };
          this.count('unknown', 'nack');
          channel.respond(encodeReply(nack(fields.identifier, fields.reqId, outcome.error)));
          return;
        }
        case 'read': {
          channel.respond(encodeReadReply(this.modules.stores, outcome.reply, outcome.request.type, outcome.request.operation));
          this.count('read', 'reply');
          this.modules.metrics?.readLatency.observe((this.clock() - started) / 1000);
          return;
        }
        case 'action': {
          const r = outcome.request;
          const id = r.identifier ?? r.author;
          const act = this.modules.onAction;
          if (act === undefined) {
            channel.respond(encodeReply({ op: 'REQNACK', identifier: id, reqId: r.reqId, reason: `action ${r.type} is not available on this node` }));
            this.count('action', 'nack');
            return;
          }
          // requests.md §8.1: REQACK, then authorization; a failure is a REJECT
          channel.respond(encodeReply({ op: 'REQACK', identifier: id, reqId: r.reqId }));
          if (outcome.error !== null) {
            channel.push(
              encodeReply({
                op: 'REJECT',
                identifier: id,
                reqId: r.reqId,
                reason: wrapReason(outcome.error, r.identifier, r.reqId),
                code: outcome.error.replyCode,
              }),
            );
            this.count('action', 'reject');
            return;
          }
          let out: ActionOutcome;
          try {
            out = await act({ type: r.type, operation: r.operation, identifier: id, reqId: r.reqId, request: r.request });
          } catch (e) {
            channel.push(encodeReply({ op: 'REJECT', identifier: id, reqId: r.reqId, reason: e instanceof Error ? e.message : String(e), code: null }));
            this.count('action', 'reject');
            return;
          }
          // requests.md §8: result = {...operation, identifier, reqId}, with `data` for VALIDATOR_INFO
          const result: Record<string, unknown> = { ...r.operation, identifier: id, reqId: r.reqId };
          if (out.data !== undefined) result.data = out.data;
          channel.push(encodeReply({ op: 'REPLY', result }));
          this.count('action', 'reply');
          out.afterReply?.();
          return;
        }
        case 'write': {
          const r = outcome.request;
          if (outcome.forced) this.modules.onForced?.(r.request, r.digest);
          const connId = `c${this.nextConn++}`;
          if (door === 'admitted') this.inProgress_++;
          this.pending.set(connId, {
            channel,
            counted: door === 'admitted',
            identifier: r.identifier ?? r.author,
            reqId: r.reqId,
            answered: false,
            receivedAt: started,
            digest: r.digest,
            payloadDigest: r.payloadDigest,
          });
          this.modules.metrics?.writeStages.observe({ stage: 'verify' }, (this.clock() - started) / 1000);
          this.modules.submit(connId, r.request as unknown as Record<string, unknown>, admittedInfo(r, outcome.handler.ledgerId));
          return;
        }
      }
    } catch (e) {
      this.modules.logger.warn({ err: e }, 'client request failed unexpectedly');
      const err = new RequestError(RequestErrorCode.INTERNAL, { problem: e instanceof Error ? e.message : String(e) });
      channel.respond(encodeReply(nack('', 0, err)));
    }
  }

  /**
   * Admission control before the request is verified (consensus.md §2 step 5, intake.ts): 'refused' for a write
   * consensus refuses as overloaded, 'admitted' for a write it admits, 'none' for anything else (reads, actions, a
   * pool whose writes are off, a path without admission control).
   */
  private door(value: unknown): 'refused' | 'admitted' | 'none' {
    const admit = this.modules.admit;
    if (admit === undefined || !this.writable || !isPlainObject(value) || !isPlainObject(value.operation)) return 'none';
    const type = value.operation.type;
    if (typeof type !== 'string' || !isWriteType(type)) return 'none';
    return admit(value, this.inProgress_ + this.queuedAdmitted) ? 'admitted' : 'refused';
  }

  /** `pre` leaves the client host's queue (taken by `handle`): it no longer counts as queued. */
  private unqueue(pre: Preparsed): void {
    const session = pre.queued;
    if (session === undefined) return;
    pre.queued = undefined;
    const n = this.queuedBySession.get(session);
    if (n === undefined) return; // its session was forgotten, and its count with it
    if (n <= 1) this.queuedBySession.delete(session);
    else this.queuedBySession.set(session, n - 1);
    this.queuedAdmitted--;
  }

  /** `p` got its first answer or is dropped: it no longer counts toward the admission limit. */
  private release(p: Pending): void {
    if (p.counted !== true) return;
    p.counted = false;
    this.inProgress_--;
  }

  /** A pool-ledger catch-up message of a light client (consensus.md §9.4). */
  private async catchup(msg: Record<string, unknown>, channel: ClientChannel): Promise<void> {
    const a = await answerClientCatchup(msg, this.modules.stores.ledgers[LedgerId.POOL], {
      maxMessageLength: this.options.maxMessageLength,
      maxTxns: this.options.maxCatchupTxns,
    });
    if (a.ok) {
      channel.respond(a.reply);
      this.count('catchup', 'reply');
    } else {
      channel.respond(encodeReply({ op: 'REQNACK', identifier: '', reqId: 0, reason: a.reason }));
      this.count('catchup', 'nack');
    }
  }

  /**
   * A request this node originates (NODE_UPGRADE): through the same intake as a client write, so it
   * is propagated and ordered like one. Resolves once consensus accepted it (REQACK) or found it
   * already ordered (REPLY); rejects with NodeError OWN_REQUEST_REFUSED on a REQNACK or REJECT.
   */
  submitOwn(request: Request): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (bytes: Uint8Array): boolean => {
        let m: Record<string, unknown> = {};
        try {
          m = JSON.parse(textDecoder.decode(bytes)) as Record<string, unknown>;
        } catch {
          // our own encoding: always JSON
        }
        if (m.op === 'REQACK' || m.op === 'REPLY') {
          if (!settled) resolve();
        } else {
          const reason = typeof m.reason === 'string' ? m.reason : `unexpected ${String(m.op)}`;
          if (!settled) reject(new NodeError(NodeErrorCode.OWN_REQUEST_REFUSED, { type: String(request.operation.type), reason }));
          else
            this.modules.logger.warn({ type: request.operation.type, reqId: String(request.reqId), reason }, 'a request of this node was rejected at ordering');
        }
        settled = true;
        return true;
      };
      void (async () => {
        if (this.stopped)
          return reject(new NodeError(NodeErrorCode.OWN_REQUEST_REFUSED, { type: String(request.operation.type), reason: 'the node is shutting down' }));
        const outcome = await this.modules.pipeline.receive(request, { now: this.modules.now(), writable: true, fromClient: false });
        if (outcome.kind !== 'write') {
          const reason =
            outcome.kind === 'nack'
              ? wrapReason(outcome.error, outcome.request?.identifier ?? null, outcome.request?.reqId ?? request.reqId)
              : `not a write (${outcome.kind})`;
          return reject(new NodeError(NodeErrorCode.OWN_REQUEST_REFUSED, { type: String(request.operation.type), reason }));
        }
        const r = outcome.request;
        const connId = `c${this.nextConn++}`;
        this.pending.set(connId, {
          channel: { respond: settle, push: settle },
          identifier: r.identifier ?? r.author,
          reqId: r.reqId,
          answered: false,
          receivedAt: this.clock(),
          digest: r.digest,
          payloadDigest: r.payloadDigest,
        });
        this.modules.submit(connId, r.request as unknown as Record<string, unknown>, admittedInfo(r, outcome.handler.ledgerId));
      })().catch(reject);
    });
  }

  /** REQACK of a write accepted by consensus. */
  ack(connId: string): void {
    const p = this.pending.get(connId);
    if (p === undefined || p.answered) return;
    p.answered = true;
    this.release(p);
    if (p.digest !== undefined) this.addTarget(p.digest, connId);
    p.channel.respond(encodeReply({ op: 'REQACK', identifier: p.identifier, reqId: p.reqId }));
    this.count('write', 'ack');
  }

  /** REQNACK from consensus (analysis failure, overload). */
  nackWrite(connId: string, reason: string): void {
    const p = this.pending.get(connId);
    if (p === undefined) return;
    this.remove(connId, p);
    p.channel.respond(encodeReply({ op: 'REQNACK', identifier: p.identifier, reqId: p.reqId, reason }));
    this.count('write', 'nack');
  }

  /** The request was ordered before: REPLY from the ledger, or REQNACK when only the payload matches. */
  async replyFromLedger(connId: string, payloadDigest: string, digest: string): Promise<void> {
    const p = this.pending.get(connId);
    if (p === undefined) return;
    this.remove(connId, p);
    await this.answerFromLedger(p, payloadDigest, digest);
  }

  private async answerFromLedger(p: Pending, payloadDigest: string, digest: string): Promise<void> {
    const s = this.modules.stores;
    const loc = s.seqNoIndex.getByPayloadDigestSync(payloadDigest);
    if (loc === undefined || s.seqNoIndex.getPayloadDigestSync(digest) !== payloadDigest) {
      const err = new RequestError(RequestErrorCode.DUPLICATE_DIFFERENT_SIGNATURES);
      const nackBytes = encodeReply({ op: 'REQNACK', identifier: p.identifier, reqId: p.reqId, reason: wrapReason(err, p.identifier, p.reqId) });
      if (p.answered) p.channel.push(nackBytes);
      else p.channel.respond(nackBytes);
      this.count('write', 'nack');
      return;
    }
    const bytes = encodeReply({ op: 'REPLY', result: await this.writeResult(loc.ledgerId, loc.seqNo) });
    if (p.answered) p.channel.push(bytes);
    else p.channel.respond(bytes);
    this.count('write', 'reply');
  }

  /**
   * Writes this node learned by catch-up instead of ordering them: the clients waiting on them get
   * their REPLY from the ledger (call after the caught-up txns are durable). Returns how many.
   */
  async answerCaughtUp(): Promise<number> {
    let n = 0;
    for (const [connId, p] of [...this.pending]) {
      if (p.payloadDigest === undefined || p.digest === undefined) continue;
      if (this.modules.stores.seqNoIndex.getByPayloadDigestSync(p.payloadDigest) === undefined) continue;
      if (this.pending.get(connId) !== p) continue;
      this.remove(connId, p);
      await this.answerFromLedger(p, p.payloadDigest, p.digest);
      n++;
    }
    return n;
  }

  /**
   * Releases the reply targets no answer can come to any more; returns how many. An acknowledged write is kept for as
   * long as consensus holds it (`holds`), however long that is: its client waits for the REPLY (the SDK 30 s, others
   * longer) and a write taken in and never answered looks lost. Once consensus no longer holds it (dropped unordered)
   * it is kept `droppedWriteMemoryMs` more, the time consensus may still order it with its clients answered, then
   * released (a resubmission is answered from the ledger if it was ordered meanwhile). A write consensus never
   * answered at all is released after `unansweredReleaseMs`. An ordered write leaves with its REPLY / REJECT
   * (`ordered`), a closed session's with it (`forgetSession`). Bounded: the acknowledged targets follow the requests
   * consensus holds (admission control) or dropped recently, at most `maxTargetsPerRequest` each; the unanswered ones
   * wait for consensus's first answer (the client host's `maxPendingPerSession` per session).
   */
  expire(): number {
    const now = this.clock();
    const holds = this.modules.holds;
    let n = 0;
    for (const [c, p] of this.pending) {
      if (p.answered) {
        if (holds === undefined || p.digest === undefined) continue;
        if (holds(p.digest)) {
          p.droppedSince = undefined;
          continue;
        }
        // not held: ordered (its REPLY follows once the batch is durable) or dropped unordered (consensus may take it
        // back): the time consensus may still order it with its clients answered counts from now
        p.droppedSince ??= now;
        if (now - p.droppedSince < this.options.droppedWriteMemoryMs) continue;
      } else {
        // not acknowledged yet: consensus has not handled the write (its events wait behind others under load) and
        // answers it when it does (REQACK, REQNACK or a REPLY from the ledger); released now, that answer would find
        // no target, the client would never hear from this node and its session would keep the request as in flight.
        // Kept until then, unless it waited far beyond any queue (a write consensus never answered)
        if (now - p.receivedAt < this.options.unansweredReleaseMs) continue;
        this.modules.logger.warn({ identifier: p.identifier, reqId: String(p.reqId) }, 'a write consensus never answered is released');
      }
      this.remove(c, p);
      this.count('write', 'expired');
      n++;
    }
    return n;
  }

  /** REPLY / REJECT for the client connections of an ordered batch (after its write is durable). */
  async ordered(
    ledgerId: number,
    replies: readonly { seqNo: number; connIds: readonly string[] }[],
    rejects: readonly { reason: string; connIds: readonly string[] }[],
  ): Promise<void> {
    const answered = replies.filter((r) => r.connIds.some((c) => this.pending.has(c)));
    let proofs: Map<number, WriteProof> | undefined;
    if (answered.length > 1) {
      const seqNos = answered.map((r) => r.seqNo);
      proofs = writeProofs(this.modules.stores.ledgers[ledgerId as 0 | 1 | 2 | 3], Math.min(...seqNos), Math.max(...seqNos));
    }
    for (const r of answered) {
      const targets = r.connIds.map((c) => [c, this.pending.get(c)] as const).filter((x): x is readonly [string, Pending] => x[1] !== undefined);
      if (targets.length === 0) continue;
      const bytes = encodeReply({ op: 'REPLY', result: await this.writeResult(ledgerId, r.seqNo, proofs?.get(r.seqNo)) });
      for (const [c, p] of targets) this.finish(c, p, bytes, 'reply');
    }
    for (const r of rejects) {
      for (const c of r.connIds) {
        const p = this.pending.get(c);
        if (p === undefined) continue;
        this.finish(c, p, encodeReply({ op: 'REJECT', identifier: p.identifier, reqId: p.reqId, reason: r.reason, code: rejectCode(r.reason) }), 'reject');
      }
    }
  }

  private finish(connId: string, p: Pending, bytes: Uint8Array, outcome: string): void {
    this.remove(connId, p);
    const sent = p.answered ? p.channel.push(bytes) : p.channel.respond(bytes);
    if (!sent) this.modules.metrics?.clientPushesDropped.inc();
    this.count('write', outcome);
    this.modules.metrics?.writeLatency.observe((this.clock() - p.receivedAt) / 1000);
  }

  /** Drops the reply targets of a closed client session (and its admitted writes still queued in the client host). */
  forgetSession(session: string): void {
    const queued = this.queuedBySession.get(session);
    if (queued !== undefined) {
      this.queuedBySession.delete(session);
      this.queuedAdmitted -= queued;
    }
    for (const [c, p] of this.pending) {
      if (p.channel.session !== session) continue;
      this.remove(c, p);
    }
  }

  /** The reply target `connId` of `p` leaves: answered, released, or its session closed. */
  private remove(connId: string, p: Pending): void {
    this.pending.delete(connId);
    this.release(p);
    if (!p.answered || p.digest === undefined) return;
    const targets = this.targetsOf.get(p.digest);
    if (targets === undefined) return;
    const i = targets.indexOf(connId);
    if (i >= 0) targets.splice(i, 1);
    if (targets.length === 0) this.targetsOf.delete(p.digest);
  }

  /** `connId`, acknowledged, is a reply target of the request `digest`: beyond `maxTargetsPerRequest` the oldest goes. */
  private addTarget(digest: string, connId: string): void {
    let targets = this.targetsOf.get(digest);
    if (targets === undefined) this.targetsOf.set(digest, (targets = []));
    targets.push(connId);
    while (targets.length > this.options.maxTargetsPerRequest) {
      const oldest = targets[0];
      const p = oldest === undefined ? undefined : this.pending.get(oldest);
      if (oldest === undefined || p === undefined) {
        targets.shift();
        continue;
      }
      this.remove(oldest, p);
      this.count('write', 'superseded');
    }
  }

  /** formats.md §5.2: the stored txn (ATTRIB raw/enc restored) + rootHash + auditPath at size seqNo. */
  writeResult(ledgerId: number, seqNo: number, proof?: WriteProof): Promise<Record<string, unknown>> {
    return writeResult(this.modules.stores, ledgerId, seqNo, proof);
  }

  private count(kind: string, outcome: string): void {
    this.modules.metrics?.requests.inc({ kind, outcome });
  }

  /** A write refused as overloaded: counted as a write's REQNACK, through a counter bound once (no labels object each). */
  private countRefusal(): void {
    this.refusedAtDoor++;
    const m = this.modules.metrics;
    if (m === undefined) return;
    this.refusalCounter ??= m.requests.labels({ kind: 'write', outcome: 'nack' });
    this.refusalCounter.inc();
  }
}

/** A request `doorAtFrame` parsed, for `handle`. */
interface Preparsed {
  text: string;
  value: unknown;
  /** the session of an admitted write counted as queued (see `ClientPath.unqueue`); undefined: not counted */
  queued: string | undefined;
  /** when its frame was read (the path's monotonic clock, ms) */
  readAt: number;
}

/**
 * The REQNACK "pool overloaded" of a refused write `request` (requests.md §1: `{op, identifier, reqId, reason}`), from
 * its parsed fields: a write the door refuses has a number or bigint reqId and a string identifier or none
 * (intake.ts's requestIdentity; none: '').
 */
export function overloadedNack(request: Readonly<Record<string, unknown>>): Uint8Array {
  const identifier = typeof request.identifier === 'string' ? request.identifier : '';
  const reqId = typeof request.reqId === 'number' || typeof request.reqId === 'bigint' ? request.reqId : 0;
  return encodeReply({ op: 'REQNACK', identifier, reqId, reason: POOL_OVERLOADED_REASON });
}

/**
 * Lets admitted client writes run their checks (parse in full, signature verification: a few hundred us each) one
 * after the other, at most `perTurn` of them or `turnMs` of checks in one turn of the event loop. Without it a burst
 * of client frames read in one go (thousands of writes after a stall) was verified in one macrotask: the node's timers,
 * its peers' messages and the refusals of later writes waited seconds behind it. `wait()` resolves when the caller
 * may run its checks, and the caller calls `done()` right after their synchronous part.
 */
export class TurnGate {
  private readonly waiting: (() => void)[] = [];
  private head = 0;
  /** a waiter was let through and has not called done() yet, or a next turn is scheduled */
  private busy = false;
  private inTurn = 0;
  private turnEndsAt = 0;

  constructor(
    private readonly perTurn: number,
    private readonly turnMs: number,
    private readonly clock: () => number,
  ) {}

  /** Waiters not yet let through. */
  get waitingCount(): number {
    return this.waiting.length - this.head;
  }

  wait(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      if (!this.busy) this.startTurn();
    });
  }

  /** The waiter let through last has run its synchronous part. */
  done(): void {
    if (this.head < this.waiting.length && this.inTurn < this.perTurn && this.clock() < this.turnEndsAt) this.letOneThrough();
    else if (this.head < this.waiting.length) setImmediate(() => this.startTurn());
    else this.busy = false;
  }

  private startTurn(): void {
    this.inTurn = 0;
    this.turnEndsAt = this.clock() + this.turnMs;
    if (this.head < this.waiting.length) this.letOneThrough();
    else this.busy = false;
  }

  private letOneThrough(): void {
    this.busy = true;
    this.inTurn++;
    const resolve = this.waiting[this.head] ?? noop;
    this.waiting[this.head++] = noop;
    if (this.head >= 1024 && this.head * 2 >= this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
    resolve();
  }
}

const noop = (): void => undefined;

/** What the consensus core needs of a write the pipeline accepted (its own check would find the same). */
function admittedInfo(r: ParsedRequest, ledgerId: number): RequestInfo {
  return { digest: r.digest, payloadDigest: r.payloadDigest, ledgerId, identifier: r.identifier ?? r.author, reqId: r.reqId };
}
