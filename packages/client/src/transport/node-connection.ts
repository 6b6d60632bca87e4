/**
 * The one dialer of the client protocol (/quire/client/1.0.0): a long-lived, pipelined session with one node over a
 * libp2p connection (TCP + Noise + Yamux of the client's stack, `createClientLibp2p`) to the node's client listener,
 * authenticated by the PeerId derived from NODE.dest, and one stream carrying length-prefixed envelopes both ways.
 * Requests carry client-chosen ids; RESPONSE / PUSH / ERROR envelopes go to the listener registered for their id. The
 * SDK's pool, the tools, the devnet, the benchmarks and the tests all talk to nodes through this class; its failures
 * are ClientErrors.
 */
import type { AbortOptions, Libp2p, Stream } from '@libp2p/interface';
import {
  CLIENT_PROTOCOL,
  EnvelopeKind,
  FrameDecoder,
  MSG_LEN_LIMIT,
  TypedEmitter,
  decodeEnvelope,
  decodeErrorPayload,
  encodeEnvelopeFrames,
  encodeFrame,
} from '@quire/common';
import { ClientError, ClientErrorCode, ClientRequestError, abortedBy } from '../errors.js';
import { clientMultiaddr, peerIdOfDest, type NodeAddress } from './connection.js';
import { createClientLibp2p, privateKeyFromSeed } from './libp2p.js';
import { stallTolerantTimeout, stallTolerantTimeoutSignal } from './stall-timer.js';

/** What a request listener receives from the node. */
export type ConnectionMessage =
  { kind: 'response' | 'push'; payload: Uint8Array } | { kind: 'refused'; code: string; reason: string } | { kind: 'closed'; reason: string };

export type ConnectionMessageListener = (msg: ConnectionMessage) => void;

export interface NodeConnectionOptions {
  /** Dial + Noise + protocol negotiation timeout, ms. */
  dialTimeoutMs: number;
  /** Largest frame accepted from the node. */
  maxMessageLength: number;
  /** Default deadline of {@link NodeConnection.call}, ms. */
  requestTimeoutMs: number;
}

/** The session options: 5 s to dial, frames up to the protocol's limit, 15 s per request. */
export const defaultNodeConnectionOptions: NodeConnectionOptions = { dialTimeoutMs: 5_000, maxMessageLength: MSG_LEN_LIMIT + 64, requestTimeoutMs: 15_000 };

/** The live parts of a session: the client stack it dials over ({@link createClientLibp2p}). */
export interface NodeConnectionModules {
  libp2p: Libp2p;
  /** The stack was made for this session alone: close() stops it (default false: a shared stack, e.g. the pool's). */
  ownsLibp2p?: boolean;
}

export interface NodeConnectionEvents {
  /** Every PUSH from the node (`requestId` 0 when it names no request). */
  push: (data: Uint8Array, requestId: number) => void;
  /** An ERROR envelope that names no request in flight (e.g. id 0 for a frame the node could not attribute). */
  refused: (code: string, reason: string, requestId: number) => void;
  /** The session stream ended (the next request opens a new one). */
  close: (reason: string) => void;
  /** A PUSH naming no request in flight (id 0 or unknown), e.g. a REPLY after the request listener was released. */
  unroutedPush: (payload: Uint8Array, requestId: number) => void;
}

/** The options of {@link NodeConnection.connect}: where to, and the session's own stack. */
export interface ConnectOptions {
  host: string;
  port: number;
  dest: string;
  /** The node's alias in messages (default `host:port`). */
  alias?: string;
  /** 32-byte seed of the client's transport key (random when absent). */
  seed?: Uint8Array;
  /** Dial timeout and default request deadline, ms (default 5 s to dial, 15 s per request). */
  timeoutMs?: number;
  /** Largest frame accepted from the node. */
  maxMessageLength?: number;
}

/** A session with one node; after its stream ends, the next request opens a new one. */
export class NodeConnection extends TypedEmitter<NodeConnectionEvents> {
  private stream: Stream | undefined;
  private opening: Promise<Stream> | undefined;
  private decoder: FrameDecoder | undefined;
  private readonly listeners = new Map<number, ConnectionMessageListener>();
  private nextId = 1;
  private closed = false;
  private closing: Promise<void> | undefined;
  /**
   * Requests sent since the last flush (their ids and payloads), and the stream they are for: framed into one chunk once
   * the event loop has handled the I/O already waiting (setImmediate), so requests sent in one burst (a pipelined
   * client answering a batch of replies) cost one Noise encryption, one Yamux frame and one socket write on both sides,
   * and each payload is copied once, into that chunk (a write's payload, the same bytes for every node, was copied into
   * an envelope and then a frame per node: two arrays allocated and filled per node and write, 5 % of a load
   * generator's CPU at 2,500 writes/s).
   */
  private outIds: number[] = [];
  private outPayloads: Uint8Array[] = [];
  private outStream: Stream | undefined;

  /** The node this session is with. */
  readonly address: NodeAddress;
  private readonly options: NodeConnectionOptions;
  private readonly libp2p: Libp2p;
  /** The stack is this session's alone ({@link NodeConnection.connect}): close() stops it. */
  private readonly ownsLibp2p: boolean;

  /** A session with `options.address` over `modules.libp2p` (not opened yet: the first request, or open(), opens it). */
  constructor(options: Partial<NodeConnectionOptions> & { address: NodeAddress }, modules: NodeConnectionModules) {
    super(() => undefined);
    const { address, ...session } = options;
    this.address = address;
    this.options = { ...defaultNodeConnectionOptions, ...session };
    this.libp2p = modules.libp2p;
    this.ownsLibp2p = modules.ownsLibp2p === true;
  }

  /**
   * A session on a client stack of its own (what a tool or a test that talks to one node needs), opened before it
   * resolves; close() stops that stack. Throws ClientError NODE_UNREACHABLE, INVALID_ARGUMENT (a dest that is not
   * base58 of 32 bytes), INVALID_SEED, ABORTED.
   */
  static async connect(opts: ConnectOptions, abort: AbortOptions = {}): Promise<NodeConnection> {
    const privateKey = opts.seed === undefined ? undefined : await privateKeyFromSeed(opts.seed);
    peerIdOfDest(opts.dest);
    const libp2p = await createClientLibp2p(privateKey === undefined ? {} : { privateKey }, abort);
    const conn = new NodeConnection(
      {
        address: { alias: opts.alias ?? `${opts.host}:${opts.port}`, dest: opts.dest, host: opts.host, port: opts.port },
        dialTimeoutMs: opts.timeoutMs ?? defaultNodeConnectionOptions.dialTimeoutMs,
        maxMessageLength: opts.maxMessageLength ?? defaultNodeConnectionOptions.maxMessageLength,
        requestTimeoutMs: opts.timeoutMs ?? defaultNodeConnectionOptions.requestTimeoutMs,
      },
      { libp2p, ownsLibp2p: true },
    );
    try {
      await conn.open(abort.signal);
    } catch (e) {
      await conn.close();
      throw abort.signal?.aborted === true ? abortedBy(abort.signal) : e;
    }
    return conn;
  }

  get alias(): string {
    return this.address.alias;
  }

  /** True while the session stream is open. */
  get connected(): boolean {
    return this.stream !== undefined && this.stream.status === 'open';
  }

  /** True when a request would be sent at once, on the open session, with no dial to wait for. */
  get ready(): boolean {
    return this.stream !== undefined && this.stream.status === 'open' && this.stream.writeStatus === 'writable';
  }

  /** Requests whose listener is registered (sent and not released). */
  get inFlight(): number {
    return this.listeners.size;
  }

  /** Opens the session if needed. Throws ClientError NODE_UNREACHABLE (data `node`, `reason`) or CLOSED. */
  async open(signal?: AbortSignal): Promise<void> {
    await this.ensureStream(signal);
  }

  /**
   * Sends one request; every RESPONSE, PUSH or ERROR naming it goes to `listener` until `release()` is called, and
   * a stream end is reported as `closed`. Throws NODE_UNREACHABLE / CLOSED when the session cannot be opened.
   * `payload` is framed when the session flushes its queued requests, at the end of this turn of the event loop: it
   * must not change until then.
   */
  request(payload: Uint8Array, listener: ConnectionMessageListener, signal?: AbortSignal): Promise<{ id: number; release: () => void }>;
  /**
   * Sends one request and resolves with the node's RESPONSE payload (later PUSHes naming it are `push` events).
   * Rejects with ClientRequestError (code and reason of the node's ERROR envelope), ClientError REQUEST_TIMEOUT
   * (after `timeoutMs`, default the connection's `requestTimeoutMs`), STREAM_CLOSED, NODE_UNREACHABLE, CLOSED, or
   * ABORTED when `signal` aborts.
   */
  request(payload: Uint8Array, opts?: { timeoutMs?: number; signal?: AbortSignal }): Promise<Uint8Array>;
  request(
    payload: Uint8Array,
    second?: ConnectionMessageListener | { timeoutMs?: number; signal?: AbortSignal },
    signal?: AbortSignal,
  ): Promise<{ id: number; release: () => void }> | Promise<Uint8Array> {
    if (typeof second === 'function') return this.send(payload, second, signal);
    return this.call(payload, second ?? {});
  }

  /** Sends an arbitrary frame body on the open session (for tests of the host's defences); false when none is open. */
  sendRawFrame(body: Uint8Array): boolean {
    const stream = this.stream;
    if (stream === undefined || !this.connected) return false;
    this.flush();
    try {
      stream.send(encodeFrame(body));
      return true;
    } catch {
      return false;
    }
  }

  /** Closes the session (listeners get `closed`) and the stack connect() created. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      const s = this.stream;
      this.drop('closed by client');
      if (s !== undefined) {
        try {
          await s.close({ signal: AbortSignal.timeout(1000) });
        } catch {
          s.abort(new ClientError(ClientErrorCode.CLOSED, { reason: 'close timed out' }));
        }
      }
      if (this.ownsLibp2p) await this.libp2p.stop();
      this.removeAllListeners();
    })();
    return this.closing;
  }

  /**
   * Sends one request as `request(payload, listener)` does, in this turn, when the session is open and writable (no
   * promise to wait for: a write asks every node, thousands a second on a loaded client); undefined, and nothing sent,
   * when a session must be opened first (use `request`).
   */
  sendNow(payload: Uint8Array, listener: ConnectionMessageListener): { id: number; release: () => void } | undefined {
    const stream = this.stream;
    if (this.closed || stream === undefined || !this.ready) return undefined;
    return this.enqueue(stream, payload, listener);
  }

  private async send(payload: Uint8Array, listener: ConnectionMessageListener, signal?: AbortSignal): Promise<{ id: number; release: () => void }> {
    return this.enqueue(await this.ensureStream(signal), payload, listener);
  }

  /** Registers `listener` under a new request id and queues `payload` for the next flush of `stream`. */
  private enqueue(stream: Stream, payload: Uint8Array, listener: ConnectionMessageListener): { id: number; release: () => void } {
    const id = this.nextId++;
    if (this.nextId > Number.MAX_SAFE_INTEGER) this.nextId = 1;
    this.listeners.set(id, listener);
    if (this.outStream !== stream) {
      // requests still queued for an earlier stream: that stream has ended and their listeners were told so
      this.outIds = [];
      this.outPayloads = [];
      this.outStream = stream;
    }
    this.outIds.push(id);
    this.outPayloads.push(payload);
    if (this.outIds.length === 1) setImmediate(() => this.flush());
    return { id, release: () => this.listeners.delete(id) };
  }

  private call(payload: Uint8Array, opts: { timeoutMs?: number; signal?: AbortSignal }): Promise<Uint8Array> {
    const timeoutMs = opts.timeoutMs ?? this.options.requestTimeoutMs;
    return new Promise<Uint8Array>((resolve, reject) => {
      let release: (() => void) | undefined;
      let id = 0;
      let done = false;
      const finish = (fn: () => void): void => {
        if (done) return;
        done = true;
        timer.clear();
        opts.signal?.removeEventListener('abort', onAbort);
        release?.();
        fn();
      };
      const onAbort = (): void => finish(() => reject(abortedBy(opts.signal as AbortSignal)));
      // a deadline reached during a stall of this process waits for the answer already in the socket's buffer
      const timer = stallTolerantTimeout(() => finish(() => reject(new ClientError(ClientErrorCode.REQUEST_TIMEOUT, { id, timeoutMs }))), timeoutMs);
      if (opts.signal !== undefined) {
        if (opts.signal.aborted) return onAbort();
        opts.signal.addEventListener('abort', onAbort, { once: true });
      }
      this.send(
        payload,
        (m) => {
          if (m.kind === 'response') finish(() => resolve(m.payload));
          else if (m.kind === 'refused') finish(() => reject(new ClientRequestError(m.code, { reason: m.reason, id }, m.reason)));
          else if (m.kind === 'closed') finish(() => reject(new ClientError(ClientErrorCode.STREAM_CLOSED, { id, reason: m.reason })));
        },
        opts.signal,
      ).then(
        (r) => {
          id = r.id;
          if (done) r.release();
          else release = r.release;
        },
        (e: unknown) => finish(() => reject(e as Error)),
      );
    });
  }

  /** Writes the queued requests' frames as one chunk; a failed write ends the session (listeners get `closed`). */
  private flush(): void {
    const ids = this.outIds;
    const payloads = this.outPayloads;
    const stream = this.outStream;
    this.outIds = [];
    this.outPayloads = [];
    if (ids.length === 0 || stream === undefined || stream !== this.stream) return;
    try {
      stream.send(encodeEnvelopeFrames(EnvelopeKind.REQUEST, ids, payloads));
    } catch (e) {
      this.drop(`send failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /**
   * The open session, or the one dial in progress, shared by every request waiting for it. The dial
   * ends on its own timeout, never on one caller's signal: a caller that gives up (its deadline, or
   * its request settled by other nodes' answers) stops waiting, and the others keep the dial they
   * share (a dial that completes after close() is dropped, its waiters told CLOSED).
   */
  private async ensureStream(signal?: AbortSignal): Promise<Stream> {
    if (this.closed) throw new ClientError(ClientErrorCode.CLOSED);
    if (this.ready && this.stream !== undefined) return this.stream;
    if (this.opening === undefined) {
      const opening = this.dial().finally(() => {
        if (this.opening === opening) this.opening = undefined;
      });
      // every caller may have stopped waiting: the failure is theirs to see, never an unhandled rejection
      opening.catch(() => undefined);
      this.opening = opening;
    }
    return signal === undefined ? this.opening : untilAborted(this.opening, signal);
  }

  /**
   * Dials the node's client protocol within `dialTimeoutMs` of time in which this process was not stalled: after a
   * stall of its event loop (a client on a saturated machine), AbortSignal.timeout fired before the poll phase read
   * the node's handshake answers already received, and the session failed NODE_UNREACHABLE "The operation was
   * aborted due to timeout" with every request waiting for it.
   */
  private async dial(): Promise<Stream> {
    let stream: Stream;
    const deadline = stallTolerantTimeoutSignal(this.options.dialTimeoutMs);
    try {
      stream = await this.libp2p.dialProtocol(clientMultiaddr(this.address), CLIENT_PROTOCOL, { signal: deadline.signal });
    } catch (e) {
      throw new ClientError(ClientErrorCode.NODE_UNREACHABLE, { node: this.alias, reason: e instanceof Error ? e.message : String(e) });
    } finally {
      deadline.clear();
    }
    if (this.closed) {
      stream.abort(new ClientError(ClientErrorCode.CLOSED, { reason: 'client closed' }));
      throw new ClientError(ClientErrorCode.CLOSED);
    }
    const decoder = new FrameDecoder({ maxFrameLength: this.options.maxMessageLength, maxSkipLength: 0 });
    this.stream = stream;
    this.decoder = decoder;
    stream.addEventListener('message', (evt) => this.onData(stream, evt.data instanceof Uint8Array ? evt.data : evt.data.subarray()));
    stream.addEventListener('remoteCloseWrite', () => this.onEnd(stream, 'node closed the session'));
    stream.addEventListener('close', (evt) => this.onEnd(stream, evt.error === undefined ? 'session closed' : `session reset: ${evt.error.message}`));
    return stream;
  }

  private onData(stream: Stream, chunk: Uint8Array): void {
    if (stream !== this.stream || this.decoder === undefined) return;
    let frames;
    try {
      frames = this.decoder.push(chunk);
    } catch {
      stream.abort(new ClientError(ClientErrorCode.MALFORMED_REPLY, { node: this.alias, reason: 'malformed frame from node' }));
      this.onEnd(stream, 'malformed frame from node');
      return;
    }
    for (const f of frames) {
      if (f.kind !== 'frame') continue;
      let env;
      try {
        env = decodeEnvelope(f.data);
      } catch {
        continue; // cannot be attributed to a request: that request times out
      }
      const listener = this.listeners.get(env.id);
      if (env.kind === EnvelopeKind.RESPONSE) listener?.({ kind: 'response', payload: env.payload });
      else if (env.kind === EnvelopeKind.PUSH) {
        if (listener !== undefined) listener({ kind: 'push', payload: env.payload });
        else this.emit('unroutedPush', env.payload, env.id);
        this.emit('push', env.payload, env.id);
      } else if (env.kind === EnvelopeKind.ERROR) {
        const e = decodeErrorPayload(env.payload);
        if (listener !== undefined) listener({ kind: 'refused', code: e.code, reason: e.reason });
        else this.emit('refused', e.code, e.reason, env.id);
      }
    }
  }

  private onEnd(stream: Stream, reason: string): void {
    if (stream !== this.stream) return;
    if (stream.status === 'open' && stream.writeStatus === 'writable' && reason === 'node closed the session') {
      stream.close().catch(() => stream.abort(new ClientError(ClientErrorCode.CLOSED, { reason: 'close failed' })));
    }
    this.drop(reason);
  }

  private drop(reason: string): void {
    const had = this.stream !== undefined;
    this.stream = undefined;
    this.decoder = undefined;
    const ls = [...this.listeners.values()];
    this.listeners.clear();
    for (const l of ls) {
      try {
        l({ kind: 'closed', reason });
      } catch {
        // listeners do not throw; a failing one must not stop the others
      }
    }
    if (had) this.emit('close', reason);
  }
}

/** `p`, or a rejection with the signal's reason as soon as `signal` aborts (`p` goes on). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e as Error);
      },
    );
  });
}
