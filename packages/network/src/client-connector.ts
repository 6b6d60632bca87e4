import { randomBytes } from 'node:crypto';
import { noise } from '@chainsafe/libp2p-noise';
import { quireYamux } from './yamux-window.js';
import { tcp } from '@libp2p/tcp';
import { CLIENT_PROTOCOL, EnvelopeKind, MSG_LEN_LIMIT, QuireError, decodeEnvelope, decodeErrorPayload, encodeEnvelope } from '@quire/common';
import { createLibp2p, type Libp2p } from 'libp2p';
import { NetworkError, NetworkErrorCode } from './errors.js';
import { TypedEmitter } from '@quire/common';
import { FramedStream } from './framed-stream.js';
import { nodePrivateKeyFromSeed, peerIdFromVerkey } from './identity.js';
import { tcpMultiaddr } from './multiaddrs.js';

/** a node connection whose liveness ping is not answered in this time is closed, ms */
export const CLIENT_PING_TIMEOUT_MS = 30_000;

/** A refusal sent by the node's client host in an ERROR envelope; `code` is a ClientRefusalCode, data.reason its text. */
export class ClientRequestError extends QuireError {}

export interface ClientConnectorOptions {
  /** The node's client address and its `NODE.dest` (the node is authenticated by that key through Noise). */
  host: string;
  port: number;
  dest: string;
  /** Optional 32-byte seed of the client's transport key (random when absent). */
  seed?: Uint8Array;
  /** Default per-request timeout. */
  timeoutMs?: number;
  /** Largest frame accepted from the node. */
  maxMessageLength?: number;
}

export interface ClientConnectorEvents {
  /** A PUSH from the node (`requestId` 0 when it names no request). */
  push: (data: Uint8Array, requestId: number) => void;
  /** An ERROR envelope that names no request in flight (e.g. id 0 for a frame the node could not attribute). */
  refused: (code: string, reason: string, requestId: number) => void;
  /** The session stream ended. */
  close: (reason: string) => void;
}

interface Pending {
  resolve: (v: Uint8Array) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * A small client of /quire/client/1.0.0: one libp2p connection and one long-lived stream to one node, pipelined
 * requests with ids, pushes as events. The wire protocol is documented in the package README.
 */
export class ClientConnector extends TypedEmitter<ClientConnectorEvents> {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly libp2p: Libp2p,
    private readonly fs: FramedStream,
    private readonly timeoutMs: number,
  ) {
    super(() => undefined);
  }

  static async connect(opts: ClientConnectorOptions): Promise<ClientConnector> {
    const privateKey = await nodePrivateKeyFromSeed(opts.seed ?? randomBytes(32));
    const libp2p = await createLibp2p({
      privateKey,
      transports: [tcp()],
      connectionEncrypters: [noise()],
      streamMuxers: [quireYamux()],
      connectionManager: { reconnectRetries: 0 },
      // a node whose event loop is late under overload is not dead: libp2p's default (a ping every
      // 10 s, closed after 5 s without an answer) failed every request in flight on it
      connectionMonitor: {
        pingInterval: 10_000,
        pingTimeout: { minTimeout: CLIENT_PING_TIMEOUT_MS, maxTimeout: CLIENT_PING_TIMEOUT_MS },
        abortConnectionOnPingFailure: true,
      },
    });
    let self: ClientConnector | undefined;
    try {
      const stream = await libp2p.dialProtocol(tcpMultiaddr(opts.host, opts.port, peerIdFromVerkey(opts.dest)), CLIENT_PROTOCOL, {
        signal: AbortSignal.timeout(opts.timeoutMs ?? 5_000),
      });
      const fs: FramedStream = new FramedStream(
        stream,
        { maxFrameLength: opts.maxMessageLength ?? MSG_LEN_LIMIT + 64, maxSkipLength: 0, maxWriteBufferBytes: 64 * 1024 * 1024, fatalOversize: 'reset' },
        {
          frame: (data) => self?.onFrame(data),
          oversize: () => undefined,
          closed: (reason) => self?.onClosed(reason),
        },
      );
      self = new ClientConnector(libp2p, fs, opts.timeoutMs ?? 15_000);
      return self;
    } catch (err) {
      await libp2p.stop();
      throw err;
    }
  }

  /** True while the session stream is open. */
  get open(): boolean {
    return this.fs.open;
  }

  /** Requests awaiting an answer. */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Sends a request and resolves with the node's RESPONSE payload. Rejects with ClientRequestError (code and reason
   * from the node's ERROR envelope), or NetworkError REQUEST_TIMEOUT / STREAM_CLOSED / CLOSED.
   */
  request(data: Uint8Array, opts: { timeoutMs?: number } = {}): Promise<Uint8Array> {
    if (this.closing !== undefined || !this.fs.open) return Promise.reject(new NetworkError(NetworkErrorCode.CLOSED));
    const id = this.nextId++;
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    return new Promise<Uint8Array>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new NetworkError(NetworkErrorCode.REQUEST_TIMEOUT, { id, timeoutMs }));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      if (!this.fs.send(encodeEnvelope(EnvelopeKind.REQUEST, id, data))) {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(new NetworkError(NetworkErrorCode.STREAM_CLOSED, { id }));
      }
    });
  }

  /** Sends an arbitrary frame body (for tests of the host's defences). */
  sendRawFrame(body: Uint8Array): boolean {
    return this.fs.send(body);
  }

  /** Closes the stream and the connection; pending requests reject with CLOSED. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.failAll(NetworkErrorCode.CLOSED);
      await this.fs.close();
      await this.libp2p.stop();
      this.removeAllListeners();
    })();
    return this.closing;
  }

  private onFrame(body: Uint8Array): void {
    let env;
    try {
      env = decodeEnvelope(body);
    } catch {
      return; // a malformed answer from the node cannot be attributed to a request; the request times out
    }
    if (env.kind === EnvelopeKind.PUSH) {
      this.emit('push', env.payload, env.id);
      return;
    }
    const p = this.pending.get(env.id);
    if (p === undefined) {
      if (env.kind === EnvelopeKind.ERROR) {
        const e = decodeErrorPayload(env.payload);
        this.emit('refused', e.code, e.reason, env.id);
      }
      return;
    }
    if (env.kind === EnvelopeKind.RESPONSE) {
      this.settle(env.id, p);
      p.resolve(env.payload);
    } else if (env.kind === EnvelopeKind.ERROR) {
      const e = decodeErrorPayload(env.payload);
      this.settle(env.id, p);
      p.reject(new ClientRequestError(e.code, { reason: e.reason, id: env.id }, e.reason));
    }
  }

  private onClosed(reason: string): void {
    this.failAll(NetworkErrorCode.STREAM_CLOSED);
    this.emit('close', reason);
  }

  private settle(id: number, p: Pending): void {
    clearTimeout(p.timer);
    this.pending.delete(id);
  }

  private failAll(code: NetworkErrorCode): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new NetworkError(code, { id }));
    }
    this.pending.clear();
  }
}
