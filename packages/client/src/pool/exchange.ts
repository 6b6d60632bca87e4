/**
 * One request/answer exchange with one node over a NodeConnection: the first final message wins (REQACK is only an
 * acknowledgement: a write's REPLY or REJECT follows as a PUSH), transport refusals and a lost session become
 * errors, a lost session is retried, and the deadline is an AbortSignal.
 */
import { equalBytes, isPlainObject, parseJson, stringifyJson } from '@quire/common';
import { ClientError, ClientErrorCode } from '../errors.js';
import type { NodeConnection, ConnectionMessage } from '../transport/node-connection.js';
import { stallTolerantTimeout, type StallTolerantTimer } from '../transport/stall-timer.js';

/** What one node finally said. */
export type NodeAnswer =
  | { node: string; kind: 'reply'; message: Record<string, unknown>; /** the bytes it was parsed from, when known */ raw?: Uint8Array }
  | { node: string; kind: 'nack' | 'reject'; reason: string; code: number | null; message: Record<string, unknown> }
  | { node: string; kind: 'error'; error: ClientError };

export interface ExchangeOptions {
  /** The caller's end of the exchange (TIMEOUT, or nothing read when aborted with SETTLED); none: `timeoutMs` alone. */
  signal?: AbortSignal;
  /**
   * Time the node gets to answer, ms: then the exchange ends with TIMEOUT as when `signal` aborts (one timer instead
   * of a deadlineSignal per exchange linked to the caller's). Default: `signal` alone; give one of the two.
   */
  timeoutMs?: number;
  /**
   * The end of a group of exchanges (a write's, one per node) without an AbortSignal each: when it ends, the exchange
   * ends as when `signal` aborts with the same reason. Used instead of `signal`, not with it.
   */
  end?: ExchangeEnd;
  /** Re-sends after a lost session (default 1). */
  retries?: number;
  /** Called with every REQACK (for progress reporting). */
  onAck?: (node: string) => void;
  /**
   * The messages already parsed by the other exchanges of the same request (a write's, sent to every node): a
   * message byte-equal to one of them is that message, and is not parsed again (see {@link ParsedMessages}).
   */
  parsed?: ParsedMessages;
}

/**
 * The nodes' messages about one request, parsed once each: nodes that agree send the same bytes (the REQACK naming
 * the request, the REPLY of the committed txn), and equal bytes parse to equal values, so the message of a node whose
 * bytes equal an earlier node's is that node's parsed message (the same object: nothing changes a parsed answer)
 * without a second lossless parse. Different bytes are parsed as before, and the last ones kept. Two places: the
 * acknowledgements of a write usually come first and its REPLYs after, and each place serves one of them.
 */
export class ParsedMessages {
  private raw0: Uint8Array | undefined;
  private msg0: Record<string, unknown> | undefined;
  private raw1: Uint8Array | undefined;
  private msg1: Record<string, unknown> | undefined;

  /** The message parsed from bytes equal to `raw`, when there was one. */
  get(raw: Uint8Array): Record<string, unknown> | undefined {
    if (this.raw0 !== undefined && equalBytes(this.raw0, raw)) return this.msg0;
    if (this.raw1 !== undefined && equalBytes(this.raw1, raw)) return this.msg1;
    return undefined;
  }

  /** Keeps `message`, parsed from `raw`, in the place of its kind (op REQACK or another). */
  put(raw: Uint8Array, message: Record<string, unknown>): void {
    if (message.op === 'REQACK') {
      this.raw0 = raw;
      this.msg0 = message;
    } else {
      this.raw1 = raw;
      this.msg1 = message;
    }
  }
}

/** The key that names a request in pushes that carry no request id: `<identifier>|<reqId>`. */
export function requestKey(identifier: unknown, reqId: unknown): string {
  return `${String(identifier)}|${typeof reqId === 'bigint' || typeof reqId === 'number' ? String(reqId) : stringifyJson(reqId ?? null)}`;
}

/** The `<identifier>|<reqId>` a node message concerns, when it says. */
export function messageRequestKey(m: Record<string, unknown>): string | undefined {
  if (m.identifier !== undefined && m.reqId !== undefined) return requestKey(m.identifier, m.reqId);
  const r = m.result;
  if (!isPlainObject(r)) return undefined;
  if (r.identifier !== undefined && r.reqId !== undefined) return requestKey(r.identifier, r.reqId);
  const txn = r.txn;
  if (isPlainObject(txn) && isPlainObject(txn.metadata) && txn.metadata.reqId !== undefined) return requestKey(txn.metadata.from, txn.metadata.reqId);
  return undefined;
}

/** How many request ids of a connection the router remembers the request key of (see {@link PushRouter.sent}). */
const SENT_KEYS = 4_096;

/** The request keys of the last {@link SENT_KEYS} requests sent with one on a connection, by request id (a ring). */
interface SentKeys {
  ids: Float64Array;
  keys: (string | undefined)[];
}

/**
 * Routes PUSH envelopes that no request listener takes (a request id of 0 or released) to the exchange waiting for
 * that request on that node (per connection), by the request the message names.
 *
 * The later REPLYs of a settled write (the third and fourth node's, a thousand a second from a pool at its peak) come
 * on the ids of requests whose listeners were released: a push on an id the router saw sent (`sent`) for a request no
 * exchange waits for any more is dropped without being parsed (it was parsed in full and then dropped). A push on any
 * other id (0, one sent without a key, or one older than the last {@link SENT_KEYS} of the connection) is parsed and
 * routed by the request it names, as is one on an id whose request is still waited for.
 */
export class PushRouter {
  /** by node alias: the exchanges waiting, by request key */
  private readonly waiting = new Map<string, Map<string, (m: Record<string, unknown>) => void>>();
  private readonly sentKeys = new WeakMap<NodeConnection, SentKeys>();
  private unparsed_ = 0;

  /** Pushes dropped without parsing: answers, on the ids they were sent with, to requests nobody waits for any more. */
  get unparsed(): number {
    return this.unparsed_;
  }

  attach(conn: NodeConnection): void {
    const sent: SentKeys = { ids: new Float64Array(SENT_KEYS), keys: new Array<string | undefined>(SENT_KEYS) };
    this.sentKeys.set(conn, sent);
    conn.on('unroutedPush', (payload, requestId) => {
      const waiting = this.waiting.get(conn.alias);
      if (requestId > 0) {
        const slot = requestId % SENT_KEYS;
        const key = sent.ids[slot] === requestId ? sent.keys[slot] : undefined;
        if (key !== undefined && waiting?.has(key) !== true) {
          this.unparsed_++;
          return;
        }
      }
      if (waiting === undefined || waiting.size === 0) return;
      let m: unknown;
      try {
        m = parseJson(payload);
      } catch {
        return;
      }
      if (!isPlainObject(m)) return;
      const k = messageRequestKey(m);
      if (k !== undefined) waiting.get(k)?.(m);
    });
  }

  /** `conn` (attached) sent the request `key` as `requestId`: a push on that id concerns that request. */
  sent(conn: NodeConnection, requestId: number, key: string): void {
    const sent = this.sentKeys.get(conn);
    if (sent === undefined) return;
    const slot = requestId % SENT_KEYS;
    sent.ids[slot] = requestId;
    sent.keys[slot] = key;
  }

  wait(node: string, key: string, fn: (m: Record<string, unknown>) => void): () => void {
    let waiting = this.waiting.get(node);
    if (waiting === undefined) this.waiting.set(node, (waiting = new Map()));
    const w = waiting;
    w.set(key, fn);
    return () => {
      if (w.get(key) === fn) w.delete(key);
    };
  }
}

function classify(node: string, m: Record<string, unknown>): NodeAnswer | undefined {
  switch (m.op) {
    case 'REQACK':
      return undefined;
    case 'REQNACK':
    case 'REJECT':
      return {
        node,
        kind: m.op === 'REQNACK' ? 'nack' : 'reject',
        reason: typeof m.reason === 'string' ? m.reason : stringifyJson(m.reason ?? null),
        code: typeof m.code === 'number' ? m.code : null,
        message: m,
      };
    default:
      if (typeof m.op !== 'string') return { node, kind: 'error', error: new ClientError(ClientErrorCode.MALFORMED_REPLY, { node, reason: 'no op' }) };
      return { node, kind: 'reply', message: m };
  }
}

/** One node's failure in the detail of a failed submission: the node's own refusal code when it refused. */
export interface NodeFailure {
  node: string;
  /**
   * The node's refusal code (TOO_MANY_PENDING, RATE_LIMITED...) for NODE_REFUSED, NACK_AFTER_ACK for a REQNACK from a
   * node that had acknowledged the write (not counted as a refusal), otherwise the ClientErrorCode.
   */
  code: string;
  reason?: string;
}

/** The per-node detail of a failed exchange (see {@link NodeFailure}). */
export function nodeFailure(node: string, error: ClientError): NodeFailure {
  const { refusal, reason } = error.data;
  return { node, code: typeof refusal === 'string' ? refusal : error.code, ...(typeof reason === 'string' ? { reason } : {}) };
}

/**
 * Abort reason of an exchange whose caller already has its answer (e.g. f+1 matching replies):
 * `controller.abort(SETTLED)` ends the remaining exchanges without building an error per node.
 */
export const SETTLED: unique symbol = Symbol('settled');
/** the answer of an exchange ended by SETTLED (shared: callers that abort with SETTLED ignore it) */
const settledError = new ClientError(ClientErrorCode.TIMEOUT, { reason: 'the request was settled by other answers' });

/**
 * The end of a write's exchanges, as an AbortController's signal ends them but without the EventTarget: a write sent to
 * four nodes registers one callback per exchange in a Set and ends them with one call (an AbortController per write,
 * its listeners and the abort event's dispatch were about 8 % of the SDK's main thread on writes an overloaded pool
 * refused). `end(reason)` is idempotent: the first reason stays.
 */
export class ExchangeEnd {
  private ended_ = false;
  private reason_: unknown = undefined;
  private readonly callbacks = new Set<() => void>();

  get ended(): boolean {
    return this.ended_;
  }

  /** Why it ended ({@link SETTLED}, or anything else for a deadline or the caller's abort). */
  get reason(): unknown {
    return this.reason_;
  }

  /** Calls `fn` once when it ends (not when it has already ended: check `ended` first). */
  on(fn: () => void): void {
    if (!this.ended_) this.callbacks.add(fn);
  }

  off(fn: () => void): void {
    this.callbacks.delete(fn);
  }

  end(reason: unknown): void {
    if (this.ended_) return;
    this.ended_ = true;
    this.reason_ = reason;
    const fns = [...this.callbacks];
    this.callbacks.clear();
    for (const fn of fns) fn();
  }
}

/**
 * A signal that aborts after `ms`, or when `parent` aborts; `done()` clears its timer and its link to `parent`, and
 * `settle()` does the same and aborts the signal with {@link SETTLED} (the caller has its answer: the exchanges still
 * running end without an error each). One AbortController and one timer per call, where AbortSignal.any over
 * AbortSignal.timeout makes three signals, two timers and weak references for the GC to clear (about a tenth of a
 * client's CPU on verified reads).
 */
export function deadlineSignal(ms: number, parent?: AbortSignal): { signal: AbortSignal; done: () => void; settle: () => void } {
  const ctl = new AbortController();
  if (parent?.aborted === true) {
    ctl.abort(parent.reason);
    return { signal: ctl.signal, done: () => undefined, settle: () => undefined };
  }
  // reached during a stall of this process (a client on a saturated machine), the deadline first lets the answers
  // already in the sockets' buffers be read (stall-timer.ts): a write the pool answered is not failed TIMEOUT
  const timer = stallTolerantTimeout(() => ctl.abort(), ms);
  const onParent = (): void => ctl.abort(parent?.reason);
  parent?.addEventListener('abort', onParent, { once: true });
  const done = (): void => {
    timer.clear();
    parent?.removeEventListener('abort', onParent);
  };
  return {
    signal: ctl.signal,
    done,
    settle: () => {
      done();
      ctl.abort(SETTLED);
    },
  };
}

/**
 * `make()`'s error without a stack trace: a node's transport refusal (TOO_MANY_PENDING, RATE_LIMITED...) is that node's
 * answer, whose code and reason are read and never its stack, and a client offering more than the pool takes gets
 * thousands a second (their stack traces were about 5 % of a load generator's CPU at 2,500 writes/s). So is a write
 * refused by f+1 nodes (REQUEST_NACKED, see WriteQuorum): its stack would only name the quorum's own frames.
 */
export function withoutStack<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Sends `payload` to one node and resolves with its final answer (never rejects). */
export function exchange(
  conn: NodeConnection,
  payload: Uint8Array,
  key: string | undefined,
  router: PushRouter | undefined,
  opts: ExchangeOptions,
): Promise<NodeAnswer> {
  const node = conn.alias;
  const end = opts.end;
  let retriesLeft = opts.retries ?? 1;
  return new Promise<NodeAnswer>((resolve) => {
    let done = false;
    let release: (() => void) | undefined;
    let unwait: (() => void) | undefined;
    let timer: StallTolerantTimer | undefined;
    const finish = (a: NodeAnswer): void => {
      if (done) return;
      done = true;
      release?.();
      unwait?.();
      timer?.clear();
      if (end !== undefined) end.off(onAbort);
      else opts.signal?.removeEventListener('abort', onAbort);
      resolve(a);
    };
    const onAbort = (): void =>
      // abandoned because the caller has its answer: nobody reads this one, so no error object is built for it
      finish(
        (end !== undefined ? end.reason : opts.signal?.reason) === SETTLED
          ? { node, kind: 'error', error: settledError }
          : { node, kind: 'error', error: new ClientError(ClientErrorCode.TIMEOUT, { node }) },
      );
    /** `raw`: the bytes `m` was parsed from, kept on a reply (equal bytes need no second canonicalization) */
    const onParsed = (m: Record<string, unknown>, raw?: Uint8Array): void => {
      const a = classify(node, m);
      if (a === undefined) opts.onAck?.(node);
      else finish(raw !== undefined && a.kind === 'reply' ? { ...a, raw } : a);
    };
    const onMessage = (msg: ConnectionMessage): void => {
      if (done) return;
      if (msg.kind === 'refused') {
        const error = withoutStack(
          () =>
            new ClientError(
              ClientErrorCode.NODE_REFUSED,
              { node, refusal: msg.code, reason: msg.reason },
              `${node} refused the request: ${msg.code}: ${msg.reason}`,
            ),
        );
        finish({ node, kind: 'error', error });
      } else if (msg.kind === 'closed') {
        release = undefined;
        if (retriesLeft-- > 0) start();
        else finish({ node, kind: 'error', error: new ClientError(ClientErrorCode.NODE_UNREACHABLE, { node, reason: msg.reason }) });
      } else {
        const known = opts.parsed?.get(msg.payload);
        if (known !== undefined) return onParsed(known, msg.payload);
        let m: unknown;
        try {
          m = parseJson(msg.payload);
        } catch (e) {
          finish({
            node,
            kind: 'error',
            error: new ClientError(ClientErrorCode.MALFORMED_REPLY, { node, reason: (e as { code?: string }).code ?? 'not JSON' }),
          });
          return;
        }
        if (!isPlainObject(m)) finish({ node, kind: 'error', error: new ClientError(ClientErrorCode.MALFORMED_REPLY, { node, reason: 'not a JSON object' }) });
        else {
          opts.parsed?.put(msg.payload, m);
          onParsed(m, msg.payload);
        }
      }
    };
    /** the request is sent as `r.id` */
    const took = (r: { id: number; release: () => void }): void => {
      if (key !== undefined) router?.sent(conn, r.id, key);
      if (done) r.release();
      else release = r.release;
    };
    /** sends at once on a ready session, else once it is open */
    const start = (): void => {
      const r = conn.sendNow(payload, onMessage);
      if (r !== undefined) took(r);
      else void send();
    };
    const send = async (): Promise<void> => {
      try {
        let signal = opts.signal;
        let stopDial: (() => void) | undefined;
        if (end !== undefined && !conn.ready) {
          // a session to open first: the end stops waiting for the dial, as a signal does (no request sent after it)
          const ctl = new AbortController();
          stopDial = (): void => ctl.abort(end.reason);
          end.on(stopDial);
          signal = ctl.signal;
        }
        let r: { id: number; release: () => void };
        try {
          r = await conn.request(payload, onMessage, signal);
        } finally {
          if (stopDial !== undefined) end?.off(stopDial);
        }
        took(r);
      } catch (e) {
        if (end?.ended === true || opts.signal?.aborted === true) onAbort();
        else
          finish({ node, kind: 'error', error: e instanceof ClientError ? e : new ClientError(ClientErrorCode.NODE_UNREACHABLE, { node, reason: String(e) }) });
      }
    };
    if (end !== undefined) {
      if (end.ended) return onAbort();
      end.on(onAbort);
    } else {
      if (opts.signal?.aborted === true) return onAbort();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
    }
    if (opts.timeoutMs !== undefined)
      timer = stallTolerantTimeout(() => finish({ node, kind: 'error', error: new ClientError(ClientErrorCode.TIMEOUT, { node }) }), opts.timeoutMs);
    if (key !== undefined && router !== undefined) unwait = router.wait(node, key, onParsed);
    start();
  });
}
