import type { Identify } from '@libp2p/identify';
import type { AbortOptions, Connection, MultiaddrConnection, Stream } from '@libp2p/interface';
import type { Libp2p } from 'libp2p';
import {
  CLIENT_PROTOCOL,
  ClientRefusalCode,
  EnvelopeKind,
  MSG_LEN_LIMIT,
  clientRefusalReason,
  decodeEnvelope,
  encodeEnvelope,
  encodeErrorPayload,
  peekRequestId,
} from '@quire/common';
import { NetworkError, NetworkErrorCode } from './errors.js';
import { FramedStream } from './framed-stream.js';
import { nodePrivateKeyFromSeed } from './identity.js';
import { Libp2pHost } from './libp2p-host.js';
import { listenAddress } from './multiaddrs.js';
import { abortedError, createQuireLibp2p, isAborted } from './stack.js';
import { silentLogger, type NetworkLogger } from './stats.js';
import { TokenBucket } from './token-bucket.js';

export interface ClientHostOptions {
  /** The node's 32-byte ed25519 seed: clients authenticate the node by `NODE.dest`. */
  seed: Uint8Array;
  /** client_ip / client_port; port 0 picks a free port. */
  host: string;
  port: number;
  /** Largest request (envelope) accepted. */
  maxMessageLength: number;
  /** An oversize request up to this many bytes is skipped and refused, and the stream continues; beyond it, closed. */
  maxSkipLength: number;
  /** MAX_CONNECTED_CLIENTS_NUM and the per-IP share of it. */
  maxConnections: number;
  maxConnectionsPerIp: number;
  maxStreamsPerConnection: number;
  /** New inbound connections accepted per second from one IP (libp2p inboundConnectionThreshold). */
  inboundConnectionsPerSecond: number;
  /** Token bucket per client connection (shared by its streams): requests per second and burst. */
  clientRate: number;
  clientBurst: number;
  /** Requests of one session awaiting respond() (queued for the handler or in its hands) before further ones are refused. */
  maxPendingPerSession: number;
  /**
   * Requests handed to the `request` handler in one turn of the event loop, at most; the others wait in arrival order
   * (each counted in its session's pending requests) for the next turn, so a burst of frames read in one go (thousands
   * after a stall) never holds the event loop for the time of all their handlers.
   */
  requestsPerTurn: number;
  /** A turn of request handlers ends once it took this long, ms. */
  requestsTurnMs: number;
  /** A session without requests in flight and without inbound frames for this long is closed. */
  idleTimeoutMs: number;
  /**
   * A request frame begun but not completed within this time resets the stream (slowloris guard); within
   * `idleTimeoutMs` while the node is in an exchange with the session (requests unanswered, answers unsent or sent
   * within this time): a live client stalled mid-request.
   */
  partialFrameTimeoutMs: number;
  /** Bytes buffered for a client that does not read before its stream is reset. */
  maxWriteBufferBytes: number;
  /** Liveness ping of every client connection: its period, ms. */
  pingIntervalMs: number;
  /**
   * A connection whose ping is not answered in this time is closed (a dead client, and its place
   * under maxConnections / maxConnectionsPerIp), ms. Long enough for a live client whose process
   * stalls under load (GC, a busy event loop), or for this node's own event loop under overload:
   * closing it would fail every request it has in flight, taken in or not.
   */
  pingTimeoutMs: number;
}

export const defaultClientHostOptions: Omit<ClientHostOptions, 'seed'> = {
  host: '127.0.0.1',
  port: 0,
  maxMessageLength: MSG_LEN_LIMIT,
  maxSkipLength: 1024 * 1024,
  maxConnections: 400,
  maxConnectionsPerIp: 16,
  maxStreamsPerConnection: 8,
  inboundConnectionsPerSecond: 16,
  clientRate: 50,
  clientBurst: 200,
  maxPendingPerSession: 256,
  requestsPerTurn: 1024,
  requestsTurnMs: 20,
  idleTimeoutMs: 60_000,
  partialFrameTimeoutMs: 10_000,
  maxWriteBufferBytes: 4 * 1024 * 1024,
  pingIntervalMs: 10_000,
  pingTimeoutMs: 30_000,
};

/** Who a request came from. */
export interface ClientInfo {
  /** The client's PeerId (its libp2p key; not a ledger identity). */
  peerId: string;
  remoteAddr: string;
  /** The request id chosen by the client (unique among its requests in flight). */
  requestId: number;
}

/** Answers a request as its frame is read (see `ClientHostModules.door`): its response, or undefined to hand it on. */
export type ClientDoor = (payload: Uint8Array, clientId: string) => Uint8Array | undefined;

/** The live dependencies of a client host. */
export interface ClientHostModules {
  logger?: NetworkLogger;
  /**
   * The door: called with each request that passed the transport's checks as its frame is read (before it is queued
   * for the `request` handler; beyond `requestsPerTurn` or `requestsTurnMs` of them in one turn of the event loop, as
   * the request is dispatched), with the session's id; the bytes it returns are the request's response, sent at once
   * (the handler never sees it); undefined hands the request on as usual. It must be cheap and must not throw (a throw
   * hands the request on). Without one every request goes to the handler.
   */
  door?: ClientDoor;
}

/** Answers one request; returns false if the session is gone. Only the first call sends. */
export type Respond = (data: Uint8Array) => boolean;

export interface ClientHostEvents {
  request: (clientId: string, data: Uint8Array, respond: Respond, info: ClientInfo) => void;
  'session:open': (clientId: string, peerId: string) => void;
  'session:close': (clientId: string, reason: string) => void;
}

interface Session {
  id: string;
  fs: FramedStream;
  conn: Connection;
  bucket: TokenBucket;
  pending: Set<number>;
}

/** A request that passed the transport's checks, waiting for its turn to reach the `request` handler. */
interface Inbound {
  session: Session;
  requestId: number;
  payload: Uint8Array;
  /** the door saw it as its frame was read (and handed it on) */
  doorSeen: boolean;
}

/**
 * The client host: a second libp2p instance (TCP + Noise + Yamux + Identify) on client_ip:client_port with the node's
 * key, open to any peer within connection caps, serving /quire/client/1.0.0: pipelined requests with ids, one response
 * each, pushes later, ERROR envelopes for transport refusals (size, rate, pending, malformed).
 */
export class ClientHost extends Libp2pHost<ClientHostEvents, { identify: Identify }> {
  private readonly sessions_ = new Map<string, Session>();
  private readonly buckets = new Map<string, TokenBucket>(); // by connection id
  private readonly sweep: NodeJS.Timeout;
  private nextSession = 1;
  /** requests waiting for the handler, arrival order, from `inboxHead` on (the ones before it dispatched and cleared) */
  private inbox: (Inbound | undefined)[] = [];
  private inboxHead = 0;
  private drainScheduled = false;
  /** refusals the door answered as the frame was read, and as a frame queued beyond the door's turn was dispatched */
  private doorAnswers_ = 0;
  private doorAnswersAtDispatch_ = 0;
  /** the door's turn (see `doorTurn`): open until the next check phase of the event loop */
  private doorTurnOpen = false;
  private doorTurnCount = 0;
  private doorTurnEndsAt = 0;

  private constructor(
    readonly options: ClientHostOptions,
    libp2p: Libp2p<{ identify: Identify }>,
    log: NetworkLogger,
    private readonly door: ClientDoor | undefined,
  ) {
    super(libp2p, log);
    libp2p.addEventListener('connection:close', (evt) => this.buckets.delete(evt.detail.id));
    this.sweep = setInterval(() => this.sweepSessions(), Math.max(50, Math.min(1000, Math.min(options.partialFrameTimeoutMs, options.idleTimeoutMs) / 4)));
  }

  /**
   * Starts the client listener on options.host:options.port. `signal` aborted before it is up: whatever was opened is
   * closed and the promise rejects with NetworkError ABORTED.
   */
  static async create(
    options: Partial<ClientHostOptions> & Pick<ClientHostOptions, 'seed'>,
    modules: ClientHostModules = {},
    abort: AbortOptions = {},
  ): Promise<ClientHost> {
    const opts: ClientHostOptions = { ...defaultClientHostOptions, ...options };
    const privateKey = await nodePrivateKeyFromSeed(opts.seed);
    const ref: { host?: ClientHost } = {};
    const libp2p = await createQuireLibp2p(
      {
        privateKey,
        listen: [listenAddress(opts.host, opts.port)],
        connectionGater: { denyInboundConnection: (maConn) => ref.host?.denyByIp(maConn) ?? true },
        connectionManager: {
          maxConnections: opts.maxConnections,
          maxIncomingPendingConnections: 32,
          inboundConnectionThreshold: opts.inboundConnectionsPerSecond,
          reconnectRetries: 0,
        },
        connectionMonitor: {
          pingInterval: opts.pingIntervalMs,
          pingTimeout: { minTimeout: opts.pingTimeoutMs, maxTimeout: opts.pingTimeoutMs },
          abortConnectionOnPingFailure: true,
        },
      },
      abort,
    );
    const self = new ClientHost(opts, libp2p, modules.logger ?? silentLogger, modules.door);
    ref.host = self;
    try {
      await libp2p.handle(CLIENT_PROTOCOL, (stream, connection) => self.onStream(stream, connection), {
        maxInboundStreams: opts.maxStreamsPerConnection,
        maxOutboundStreams: 1,
      });
      abort.signal?.throwIfAborted();
    } catch (e) {
      await self.close();
      throw isAborted(abort.signal) ? abortedError(abort.signal) : e;
    }
    return self;
  }

  /** Open client sessions. */
  sessionCount(): number {
    return this.sessions_.size;
  }

  /**
   * Sends a later message (e.g. a write's REPLY) to session `clientId`, naming request `requestId` (0 = none).
   * Returns false when the session is gone.
   */
  push(clientId: string, data: Uint8Array, requestId = 0): boolean {
    const s = this.sessions_.get(clientId);
    if (s === undefined) {
      this.stats_.droppedSends++;
      return false;
    }
    return this.write(s, EnvelopeKind.PUSH, requestId, data);
  }

  /** Requests the door answered as their frames were read (not the ones it answered at dispatch: `doorAnswersAtDispatch`). */
  get doorAnswers(): number {
    return this.doorAnswers_;
  }

  /** Requests the door answered as they were dispatched: frames read beyond the door's turn, after waiting in the inbox. */
  get doorAnswersAtDispatch(): number {
    return this.doorAnswersAtDispatch_;
  }

  /** Requests that passed the transport's checks and wait for their turn to reach the handler. */
  get queuedRequests(): number {
    return this.inbox.length - this.inboxHead;
  }

  protected shutdown(): void {
    clearInterval(this.sweep);
    this.inbox = [];
    this.inboxHead = 0;
    for (const s of this.sessions_.values()) s.fs.abort('local');
    this.sessions_.clear();
  }

  private denyByIp(maConn: MultiaddrConnection): boolean {
    const ip = ipOf(maConn.remoteAddr.toString());
    let n = 0;
    for (const c of this.libp2p.getConnections()) if (ipOf(c.remoteAddr.toString()) === ip) n++;
    if (this.closing !== undefined || n >= this.options.maxConnectionsPerIp) {
      this.stats_.deniedConnections++;
      return true;
    }
    return false;
  }

  private onStream(stream: Stream, conn: Connection): void {
    if (this.closing !== undefined) {
      stream.abort(new NetworkError(NetworkErrorCode.CLOSED));
      return;
    }
    let bucket = this.buckets.get(conn.id);
    if (bucket === undefined) {
      bucket = new TokenBucket(this.options.clientRate, this.options.clientBurst);
      this.buckets.set(conn.id, bucket);
    }
    const id = `c${this.nextSession++}`;
    const session: Session = {
      id,
      conn,
      bucket,
      pending: new Set(),
      fs: new FramedStream(
        stream,
        {
          maxFrameLength: this.options.maxMessageLength,
          maxSkipLength: this.options.maxSkipLength,
          maxWriteBufferBytes: this.options.maxWriteBufferBytes,
          fatalOversize: 'report-and-close',
        },
        {
          frame: (data) => this.onFrame(session, data),
          oversize: (_length, head) => {
            this.stats_.oversizeFrames++;
            this.refuse(session, peekRequestId(head), ClientRefusalCode.MESSAGE_TOO_LARGE);
          },
          closed: (reason) => this.onClosed(session, reason),
        },
      ),
    };
    this.sessions_.set(id, session);
    this.emit('session:open', id, conn.remotePeer.toString());
  }

  private onFrame(s: Session, data: Uint8Array): void {
    let env;
    try {
      env = decodeEnvelope(data);
    } catch {
      this.stats_.malformedMessages++;
      this.refuse(s, 0, ClientRefusalCode.MALFORMED_ENVELOPE);
      return;
    }
    if (env.kind !== EnvelopeKind.REQUEST || env.id === 0) {
      this.stats_.malformedMessages++;
      this.refuse(s, env.id, ClientRefusalCode.MALFORMED_ENVELOPE);
      return;
    }
    if (!s.bucket.take(1)) {
      this.stats_.rateLimited++;
      this.refuse(s, env.id, ClientRefusalCode.RATE_LIMITED);
      return;
    }
    if (s.pending.has(env.id)) {
      this.refuse(s, env.id, ClientRefusalCode.DUPLICATE_REQUEST_ID);
      return;
    }
    if (s.pending.size >= this.options.maxPendingPerSession) {
      this.stats_.rateLimited++;
      this.refuse(s, env.id, ClientRefusalCode.TOO_MANY_PENDING);
      return;
    }
    if (this.listenerCount('request') === 0) {
      this.refuse(s, env.id, ClientRefusalCode.SHUTTING_DOWN);
      return;
    }
    this.stats_.messagesIn++;
    // the door answers a request it refuses as the frame is read, before it waits behind the queued ones; at most a
    // turn's worth of requests (`requestsPerTurn`, `requestsTurnMs`) in one turn of the event loop: a burst read in one
    // go (thousands of frames after a stall) is queued beyond it, and the door sees those as they are dispatched
    let doorSeen = false;
    if (this.door !== undefined && this.doorTurn()) {
      const answer = this.askDoor(env.payload, s);
      if (answer !== undefined) {
        this.doorAnswers_++;
        this.write(s, EnvelopeKind.RESPONSE, env.id, answer);
        return;
      }
      doorSeen = true;
    }
    s.pending.add(env.id);
    this.inbox.push({ session: s, requestId: env.id, payload: env.payload, doorSeen });
    if (!this.drainScheduled) {
      this.drainScheduled = true;
      setImmediate(() => this.drainInbox());
    }
  }

  /** May the door see one more request as its frame is read, in this turn of the event loop? */
  private doorTurn(): boolean {
    if (!this.doorTurnOpen) {
      this.doorTurnOpen = true;
      this.doorTurnCount = 0;
      this.doorTurnEndsAt = performance.now() + this.options.requestsTurnMs;
      setImmediate(() => (this.doorTurnOpen = false));
    }
    if (this.doorTurnCount >= this.options.requestsPerTurn || (this.doorTurnCount > 0 && performance.now() >= this.doorTurnEndsAt)) return false;
    this.doorTurnCount++;
    return true;
  }

  /** The door's answer to a request of `s`, or undefined to hand it on (the caller counts an answer where it asked). */
  private askDoor(payload: Uint8Array, s: Session): Uint8Array | undefined {
    const door = this.door;
    if (door === undefined) return undefined;
    let answer: Uint8Array | undefined;
    try {
      answer = door(payload, s.id);
    } catch (e) {
      this.log.warn({ err: e }, 'client door failed');
      return undefined;
    }
    return answer;
  }

  /** Hands queued requests to the handler, at most `requestsPerTurn` or `requestsTurnMs` of them per turn. */
  private drainInbox(): void {
    this.drainScheduled = false;
    const endsAt = performance.now() + this.options.requestsTurnMs;
    let n = 0;
    while (this.inboxHead < this.inbox.length) {
      if (this.closing !== undefined) return;
      if (n >= this.options.requestsPerTurn || (n > 0 && performance.now() >= endsAt)) {
        this.drainScheduled = true;
        setImmediate(() => this.drainInbox());
        break;
      }
      const next = this.inbox[this.inboxHead];
      this.inbox[this.inboxHead++] = undefined;
      // a request of a session closed while it waited is dropped at no cost: only the ones answered use the turn
      if (next !== undefined && this.dispatch(next)) n++;
    }
    if (this.inboxHead >= this.inbox.length) {
      this.inbox = [];
      this.inboxHead = 0;
    } else if (this.inboxHead >= 4096 && this.inboxHead * 2 >= this.inbox.length) {
      this.inbox = this.inbox.slice(this.inboxHead);
      this.inboxHead = 0;
    }
  }

  /** Hands `q` to the handler, or refuses it when there is none; false when its session closed while it waited. */
  private dispatch(q: Inbound): boolean {
    const s = q.session;
    // its session closed while it waited: nobody to answer (the pending set went with the session)
    if (this.sessions_.get(s.id) !== s) return false;
    if (this.listenerCount('request') === 0) {
      s.pending.delete(q.requestId);
      this.refuse(s, q.requestId, ClientRefusalCode.SHUTTING_DOWN);
      return true;
    }
    const requestId = q.requestId;
    if (!q.doorSeen) {
      const answer = this.askDoor(q.payload, s);
      if (answer !== undefined) {
        this.doorAnswersAtDispatch_++;
        s.pending.delete(requestId);
        this.write(s, EnvelopeKind.RESPONSE, requestId, answer);
        return true;
      }
    }
    let answered = false;
    const respond: Respond = (out) => {
      if (answered) return false;
      answered = true;
      s.pending.delete(requestId);
      return this.write(s, EnvelopeKind.RESPONSE, requestId, out);
    };
    this.emit('request', s.id, q.payload, respond, { peerId: s.conn.remotePeer.toString(), remoteAddr: s.conn.remoteAddr.toString(), requestId });
    return true;
  }

  private refuse(s: Session, requestId: number, code: ClientRefusalCode): void {
    const limit = code === ClientRefusalCode.MESSAGE_TOO_LARGE ? this.options.maxMessageLength : undefined;
    this.write(s, EnvelopeKind.ERROR, requestId, encodeErrorPayload(code, clientRefusalReason(code, limit)));
  }

  private write(s: Session, kind: EnvelopeKind, id: number, payload: Uint8Array): boolean {
    const body = encodeEnvelope(kind, id, payload);
    if (body.length > this.options.maxMessageLength + 16) {
      throw new NetworkError(NetworkErrorCode.MESSAGE_TOO_LARGE, { length: payload.length, limit: this.options.maxMessageLength });
    }
    if (s.fs.send(body)) {
      this.stats_.messagesOut++;
      return true;
    }
    this.stats_.droppedSends++;
    return false;
  }

  private onClosed(s: Session, reason: string): void {
    this.sessions_.delete(s.id);
    if (reason === 'malformed') this.stats_.malformedFrames++;
    else if (reason === 'reset') this.stats_.resets++;
    else if (reason === 'idle') this.stats_.idleTimeouts++;
    // a session the node ended, or that was reset, fails every request it has in flight: said with its load
    if (reason !== 'remote-close' && reason !== 'closed' && reason !== 'local')
      this.log.warn(
        { session: s.id, peer: s.conn.remotePeer.toString(), reason, pending: s.pending.size, sessions: this.sessions_.size },
        'client session ended',
      );
    this.emit('session:close', s.id, reason);
  }

  /**
   * A frame begun and not completed within `partialFrameTimeoutMs` resets its session (a slowloris), unless the node
   * is in the middle of an exchange with it: requests of the session are unanswered, answers wait for its send window,
   * or one was sent less than `partialFrameTimeoutMs` ago. Such a client is live and its process stalled mid-request
   * (a load generator seconds behind on a saturated machine): cutting it failed every request it had in flight, taken
   * in or queued behind the frame. Its partial frame is then bounded by `idleTimeoutMs` (and its memory by
   * `maxPendingPerSession` and `maxWriteBufferBytes`).
   */
  private partialFrameExpired(s: Session, now: number): boolean {
    const since = s.fs.partialSince;
    if (since === undefined || now - since <= this.options.partialFrameTimeoutMs) return false;
    const inExchange = s.pending.size > 0 || s.fs.unsentBytes > 0 || (s.fs.lastSend !== undefined && now - s.fs.lastSend <= this.options.partialFrameTimeoutMs);
    return !inExchange || now - since > Math.max(this.options.partialFrameTimeoutMs, this.options.idleTimeoutMs);
  }

  private sweepSessions(): void {
    const now = performance.now();
    for (const s of this.sessions_.values()) {
      if (this.partialFrameExpired(s, now)) s.fs.abort('idle');
      else if (s.pending.size === 0 && s.fs.partialSince === undefined && now - s.fs.lastActivity > this.options.idleTimeoutMs) {
        this.stats_.idleTimeouts++;
        void s.fs.close();
      }
    }
  }
}

function ipOf(addr: string): string {
  const m = /^\/ip[46]\/([^/]+)/.exec(addr);
  return m === null ? addr : m[1];
}
