import type { Stream } from '@libp2p/interface';
import { NetworkError, NetworkErrorCode } from './errors.js';
import { ClientWireError, FrameDecoder, concatBytes, encodeFrame } from '@quire/common';

export interface FramedStreamOptions {
  /** Largest accepted frame body. */
  maxFrameLength: number;
  /** Largest oversize body skipped before the stream continues; 0 = an oversize frame ends the stream. */
  maxSkipLength: number;
  /** Bytes queued for a peer that does not read before the stream is aborted as a slow consumer. */
  maxWriteBufferBytes: number;
  /**
   * What a frame longer than `maxSkipLength` does: 'reset' the stream at once (node protocol), or report it through
   * `oversize` (so a refusal can be sent) and then close the stream gracefully (client protocol).
   */
  fatalOversize: 'reset' | 'report-and-close';
}

/** Callbacks of a {@link FramedStream}. They run synchronously in the read path and must not throw. */
export interface FramedStreamHandlers {
  frame(data: Uint8Array): void;
  oversize(length: number, head: Uint8Array): void;
  /** The stream ended; `reason` says why (`remote-close`, `reset`, `malformed`, `oversize`, `slow-consumer`, `local`...). */
  closed(reason: string): void;
}

/**
 * A long-lived libp2p stream carrying length-prefixed frames in both directions. Reads are push-based (the stream's
 * message events feed an incremental decoder); writes are appended to the stream's buffer and a consumer that lets
 * more than `maxWriteBufferBytes` pile up is cut off. Nothing the remote sends can make it throw.
 */
export class FramedStream {
  /** Monotonic ms of the last complete inbound frame (or of the stream's start). */
  lastActivity: number;
  /** Monotonic ms at which the current incomplete inbound frame began, if one is pending. */
  partialSince: number | undefined;
  /** Monotonic ms of the last frame queued for the remote, if any. */
  lastSend: number | undefined;
  private readonly decoder: FrameDecoder;
  private ended = false;
  /**
   * Frames queued since the last flush; written as one chunk once the event loop has handled the I/O already
   * waiting (setImmediate), so every message produced while handling one burst of input leaves as one Noise/Yamux
   * frame. Each chunk costs a Noise encryption, a Yamux frame, a socket write and a Yamux window update back.
   */
  private outFrames: Uint8Array[] = [];
  private outBytes = 0;

  constructor(
    readonly stream: Stream,
    private readonly opts: FramedStreamOptions,
    private readonly handlers: FramedStreamHandlers,
  ) {
    this.decoder = new FrameDecoder({ maxFrameLength: opts.maxFrameLength, maxSkipLength: opts.maxSkipLength });
    this.lastActivity = performance.now();
    stream.addEventListener('message', (evt) => this.onData(evt.data instanceof Uint8Array ? evt.data : evt.data.subarray()));
    stream.addEventListener('remoteCloseWrite', () => this.end('remote-close', false));
    stream.addEventListener('close', (evt) => this.end(evt.error === undefined ? 'closed' : 'reset', false));
  }

  /** Bytes queued for the remote and not yet handed to the transport (its send window full, or not flushed yet). */
  get unsentBytes(): number {
    return this.stream.writeBufferLength + this.outBytes;
  }

  get open(): boolean {
    return !this.ended && this.stream.status === 'open' && this.stream.writeStatus === 'writable';
  }

  /** Queues one frame; false when the stream is no longer writable (the frame is dropped). */
  send(payload: Uint8Array): boolean {
    if (!this.open) return false;
    if (this.stream.writeBufferLength + this.outBytes > this.opts.maxWriteBufferBytes) {
      this.abort('slow-consumer');
      return false;
    }
    const frame = encodeFrame(payload);
    this.outFrames.push(frame);
    this.outBytes += frame.length;
    this.lastSend = performance.now();
    if (this.outFrames.length === 1) setImmediate(() => this.flush());
    return true;
  }

  private flush(): void {
    const frames = this.outFrames;
    const total = this.outBytes;
    this.outFrames = [];
    this.outBytes = 0;
    if (frames.length === 0 || this.ended) return;
    try {
      this.stream.send(concatBytes(frames, total));
    } catch {
      this.end('closed', true);
    }
  }

  /** Closes gracefully: buffered frames are flushed, then both sides close. Idempotent. */
  async close(reason = 'local'): Promise<void> {
    if (this.ended) return;
    this.flush();
    this.ended = true;
    this.safeHandler(reason);
    try {
      await this.stream.close({ signal: AbortSignal.timeout(2000) });
    } catch {
      this.stream.abort(new NetworkError(NetworkErrorCode.CLOSED, { reason: 'close timed out' }));
    }
  }

  /** Resets the stream at once (unsent data is discarded). Idempotent. */
  abort(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.safeHandler(reason);
    this.stream.abort(new NetworkError(NetworkErrorCode.CLOSED, { reason }));
  }

  private onData(chunk: Uint8Array): void {
    if (this.ended) return;
    let frames;
    try {
      frames = this.decoder.push(chunk);
    } catch (err) {
      const tooLarge = err instanceof ClientWireError && err.data.reason === 'frame too large';
      if (tooLarge && this.opts.fatalOversize === 'report-and-close') {
        this.handlers.oversize(Number(err.data.length), new Uint8Array(0));
        void this.close('oversize');
      } else {
        this.abort(tooLarge ? 'oversize' : 'malformed');
      }
      return;
    }
    if (frames.length > 0) this.lastActivity = performance.now();
    for (const f of frames) {
      if (this.ended) return;
      if (f.kind === 'frame') this.handlers.frame(f.data);
      else this.handlers.oversize(f.length, f.head);
    }
    if (!this.decoder.partial) this.partialSince = undefined;
    else if (this.partialSince === undefined || frames.length > 0) this.partialSince = performance.now();
  }

  private end(reason: string, abort: boolean): void {
    if (this.ended) return;
    this.ended = true;
    this.safeHandler(reason);
    if (abort) this.stream.abort(new NetworkError(NetworkErrorCode.CLOSED, { reason }));
    else if (reason === 'remote-close')
      this.stream.close().catch(() => this.stream.abort(new NetworkError(NetworkErrorCode.CLOSED, { reason: 'close failed' })));
  }

  private safeHandler(reason: string): void {
    try {
      this.handlers.closed(reason);
    } catch {
      // handlers are written not to throw; a stream ending must never raise into libp2p's event loop
    }
  }
}
