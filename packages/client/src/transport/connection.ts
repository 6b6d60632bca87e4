/**
 * One long-lived, pipelined session of the client protocol (/quire/client/1.0.0) with one node: a libp2p
 * connection (TCP + Noise + Yamux) to the node's client listener, authenticated by the PeerId derived from
 * NODE.dest, and one stream carrying length-prefixed envelopes both ways. Requests carry client-chosen ids;
 * RESPONSE / PUSH / ERROR envelopes are routed to the listener registered for their id.
 */
import type { Stream } from '@libp2p/interface';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import {
  CLIENT_PROTOCOL,
  EnvelopeKind,
  FrameDecoder,
  MSG_LEN_LIMIT,
  IdentifierError,
  concatBytes,
  decodeEnvelope,
  decodeErrorPayload,
  encodeEnvelope,
  encodeFrame,
  peerIdOfNodeDest,
} from '@quire/common';
import type { Libp2p } from 'libp2p';
import { isIPv4, isIPv6 } from 'node:net';
import { ClientError, ClientErrorCode } from '../errors.js';

/** What a request listener receives from the node. */
export type ConnectionMessage =
  { kind: 'response' | 'push'; payload: Uint8Array } | { kind: 'refused'; code: string; reason: string } | { kind: 'closed'; reason: string };

export type ConnectionMessageListener = (msg: ConnectionMessage) => void;

export interface NodeAddress {
  alias: string;
  dest: string;
  host: string;
  port: number;
}

/** The PeerId string of the node whose NODE.dest is `dest` (common's `peerIdOfNodeDest`, the rule the nodes use). */
export function peerIdOfDest(dest: string): string {
  try {
    return peerIdOfNodeDest(dest);
  } catch (e) {
    if (!(e instanceof IdentifierError)) throw e;
    const length = e.data.length as number;
    throw new ClientError(ClientErrorCode.INVALID_ARGUMENT, { field: 'dest', reason: length < 0 ? 'not base58' : `decodes to ${length} bytes, not 32` });
  }
}

/** The multiaddr of a node's client listener. */
export function clientMultiaddr(addr: NodeAddress): Multiaddr {
  const proto = isIPv4(addr.host) ? 'ip4' : isIPv6(addr.host) ? 'ip6' : 'dns';
  return multiaddr(`/${proto}/${addr.host}/tcp/${addr.port}/p2p/${peerIdOfDest(addr.dest)}`);
}

export interface NodeConnectionOptions {
  /** Dial + protocol negotiation timeout. */
  dialTimeoutMs: number;
  /** Largest frame accepted from the node. */
  maxMessageLength: number;
}

export const defaultNodeConnectionOptions: NodeConnectionOptions = { dialTimeoutMs: 5_000, maxMessageLength: MSG_LEN_LIMIT + 64 };

/** A session with one node; reconnects on the next request after the stream ends. */
export class NodeConnection {
  private stream: Stream | undefined;
  private opening: Promise<Stream> | undefined;
  private decoder: FrameDecoder | undefined;
  private readonly listeners = new Map<number, ConnectionMessageListener>();
  private nextId = 1;
  private closed = false;
  /**
   * Frames of requests sent since the last flush, and the stream they are for: written as one chunk once the event
   * loop has handled the I/O already waiting (setImmediate), so requests sent in one burst (a pipelined client
   * answering a batch of replies) cost one Noise encryption, one Yamux frame and one socket write on both sides.
   */
  private outFrames: Uint8Array[] = [];
  private outStream: Stream | undefined;
  /** PUSH envelopes naming no request (id 0 or unknown), e.g. a REPLY after the request listener was released. */
  onUnroutedPush: ((payload: Uint8Array) => void) | undefined;

  constructor(
    private readonly libp2p: Libp2p,
    readonly address: NodeAddress,
    private readonly options: NodeConnectionOptions = defaultNodeConnectionOptions,
  ) {}

  get alias(): string {
    return this.address.alias;
  }

  /** True while the session stream is open. */
  get connected(): boolean {
    return this.stream !== undefined && this.stream.status === 'open';
  }

  /** Opens the session if needed. Throws ClientError NODE_UNREACHABLE / CLOSED. */
  async open(signal?: AbortSignal): Promise<void> {
    await this.ensureStream(signal);
  }

  /**
   * Sends one request; every RESPONSE, PUSH or ERROR naming it goes to `listener` until `release()` is called, and
   * a stream end is reported as `closed`. Throws ClientError NODE_UNREACHABLE / CLOSED when the session cannot be
   * opened.
   */
  async request(payload: Uint8Array, listener: ConnectionMessageListener, signal?: AbortSignal): Promise<{ id: number; release: () => void }> {
    const stream = await this.ensureStream(signal);
    const id = this.nextId++;
    if (this.nextId > Number.MAX_SAFE_INTEGER) this.nextId = 1;
    this.listeners.set(id, listener);
    if (this.outStream !== stream) {
      // frames still queued for an earlier stream: that stream has ended and their listeners were told so
      this.outFrames = [];
      this.outStream = stream;
    }
    this.outFrames.push(encodeFrame(encodeEnvelope(EnvelopeKind.REQUEST, id, payload)));
    if (this.outFrames.length === 1) setImmediate(() => this.flush());
    return { id, release: () => this.listeners.delete(id) };
  }

  /** Writes the queued request frames as one chunk; a failed write ends the session (listeners get `closed`). */
  private flush(): void {
    const frames = this.outFrames;
    const stream = this.outStream;
    this.outFrames = [];
    if (frames.length === 0 || stream === undefined || stream !== this.stream) return;
    try {
      stream.send(concatBytes(frames));
    } catch (e) {
      this.drop(`send failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Closes the session; listeners get `closed`. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const s = this.stream;
    this.drop('closed by client');
    if (s !== undefined) {
      try {
        await s.close({ signal: AbortSignal.timeout(1000) });
      } catch {
        s.abort(new Error('close timed out'));
      }
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
    if (this.stream !== undefined && this.stream.status === 'open' && this.stream.writeStatus === 'writable') return this.stream;
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

  private async dial(): Promise<Stream> {
    let stream: Stream;
    try {
      stream = await this.libp2p.dialProtocol(clientMultiaddr(this.address), CLIENT_PROTOCOL, { signal: AbortSignal.timeout(this.options.dialTimeoutMs) });
    } catch (e) {
      throw new ClientError(ClientErrorCode.NODE_UNREACHABLE, { node: this.alias, reason: e instanceof Error ? e.message : String(e) });
    }
    if (this.closed) {
      stream.abort(new Error('client closed'));
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
      stream.abort(new Error('malformed frame from node'));
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
        else this.onUnroutedPush?.(env.payload);
      } else if (env.kind === EnvelopeKind.ERROR) {
        const e = decodeErrorPayload(env.payload);
        listener?.({ kind: 'refused', code: e.code, reason: e.reason });
      }
    }
  }

  private onEnd(stream: Stream, reason: string): void {
    if (stream !== this.stream) return;
    if (stream.status === 'open' && stream.writeStatus === 'writable' && reason === 'node closed the session') {
      stream.close().catch(() => stream.abort(new Error('close failed')));
    }
    this.drop(reason);
  }

  private drop(reason: string): void {
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
