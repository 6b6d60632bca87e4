import { NetworkError, NetworkErrorCode } from './errors.js';

/** MSG_LEN_LIMIT of consensus.md 9.5: the largest encoded message, gossip payload or frame body. */
export const MSG_LEN_LIMIT = 128 * 1024;

/** A varint longer than this many bytes is malformed (7 bytes hold 49 bits, far above any limit). */
const MAX_VARINT_BYTES = 7;

/** Bytes needed to write `n` as an unsigned LEB128 varint. */
export function varintLength(n: number): number {
  let len = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    len++;
  }
  return len;
}

/** Writes `n` (a safe non-negative integer) as an unsigned varint at `offset`; returns the offset after it. */
export function writeVarint(n: number, out: Uint8Array, offset: number): number {
  while (n >= 0x80) {
    out[offset++] = (n % 128) | 0x80;
    n = Math.floor(n / 128);
  }
  out[offset++] = n;
  return offset;
}

/**
 * Reads a minimal unsigned varint of at most `maxBytes` bytes at `offset`. Returns the value and the offset after
 * it, or undefined when the input ends first. Throws MALFORMED_FRAME on a non-minimal or over-long encoding.
 */
export function readVarint(buf: Uint8Array, offset: number, maxBytes = MAX_VARINT_BYTES): { value: number; next: number } | undefined {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < maxBytes; i++) {
    if (offset + i >= buf.length) return undefined;
    const b = buf[offset + i]!;
    value += (b & 0x7f) * scale;
    if ((b & 0x80) === 0) {
      if (b === 0 && i > 0) throw new NetworkError(NetworkErrorCode.MALFORMED_FRAME, { reason: 'non-minimal varint' });
      return { value, next: offset + i + 1 };
    }
    scale *= 128;
  }
  throw new NetworkError(NetworkErrorCode.MALFORMED_FRAME, { reason: 'varint too long' });
}

/** One frame on the wire: unsigned-varint length prefix followed by that many payload bytes. */
export function encodeFrame(payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(varintLength(payload.length) + payload.length);
  const at = writeVarint(payload.length, out, 0);
  out.set(payload, at);
  return out;
}

/** What a {@link FrameDecoder} yields. */
export type DecodedFrame =
  /** A complete frame body within the limit. */
  | { kind: 'frame'; data: Uint8Array }
  /**
   * A frame whose declared length exceeds the limit. `head` holds its first bytes (up to `headBytes`) so the reader
   * can tell which request it was; the rest of the body is discarded as it arrives, never buffered.
   */
  | { kind: 'oversize'; length: number; head: Uint8Array };

export interface FrameDecoderOptions {
  /** Largest accepted frame body. */
  maxFrameLength: number;
  /**
   * Largest oversize body that is skipped so the stream can continue; a longer declared length throws
   * MALFORMED_FRAME (the caller then closes the stream). 0: any oversize frame throws.
   */
  maxSkipLength: number;
  /** Bytes of an oversize body kept in `head`. */
  headBytes?: number;
}

const enum State {
  Prefix,
  Body,
  Skip,
}

/**
 * Incremental decoder of length-prefixed frames. It never buffers more than one frame of at most
 * `maxFrameLength` bytes, rejects malformed prefixes, and discards oversize bodies as they stream past.
 */
export class FrameDecoder {
  private readonly maxFrameLength: number;
  private readonly maxSkipLength: number;
  private readonly headBytes: number;
  private state = State.Prefix;
  private prefix = new Uint8Array(MAX_VARINT_BYTES);
  private prefixLen = 0;
  private body: Uint8Array = new Uint8Array(0);
  private filled = 0;
  private skipLength = 0;
  private skipLeft = 0;
  private head: Uint8Array = new Uint8Array(0);
  private headFilled = 0;

  constructor(opts: FrameDecoderOptions) {
    this.maxFrameLength = opts.maxFrameLength;
    this.maxSkipLength = opts.maxSkipLength;
    this.headBytes = opts.headBytes ?? 16;
  }

  /** True while a frame has started but not ended (the slowloris window). */
  get partial(): boolean {
    return this.state !== State.Prefix || this.prefixLen > 0;
  }

  /** Feeds bytes; returns the frames they complete. Throws NetworkError MALFORMED_FRAME; the decoder is then unusable. */
  push(chunk: Uint8Array): DecodedFrame[] {
    const out: DecodedFrame[] = [];
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      if (this.state === State.Prefix) {
        // fast path: a whole frame inside this chunk, no partial prefix pending
        if (this.prefixLen === 0) {
          const v = readVarint(chunk, i);
          if (v !== undefined) {
            const len = v.value;
            if (len <= this.maxFrameLength && v.next + len <= n) {
              out.push({ kind: 'frame', data: chunk.subarray(v.next, v.next + len) });
              i = v.next + len;
              continue;
            }
            i = v.next;
            this.begin(len, out);
            continue;
          }
        }
        const b = chunk[i++]!;
        if (this.prefixLen >= MAX_VARINT_BYTES) throw new NetworkError(NetworkErrorCode.MALFORMED_FRAME, { reason: 'varint too long' });
        this.prefix[this.prefixLen++] = b;
        if ((b & 0x80) === 0) {
          const v = readVarint(this.prefix.subarray(0, this.prefixLen), 0)!;
          this.prefixLen = 0;
          this.begin(v.value, out);
        }
      } else if (this.state === State.Body) {
        const take = Math.min(n - i, this.body.length - this.filled);
        this.body.set(chunk.subarray(i, i + take), this.filled);
        this.filled += take;
        i += take;
        if (this.filled === this.body.length) {
          out.push({ kind: 'frame', data: this.body });
          this.state = State.Prefix;
          this.body = new Uint8Array(0);
        }
      } else {
        const take = Math.min(n - i, this.skipLeft);
        if (this.headFilled < this.head.length) {
          const h = Math.min(take, this.head.length - this.headFilled);
          this.head.set(chunk.subarray(i, i + h), this.headFilled);
          this.headFilled += h;
        }
        this.skipLeft -= take;
        i += take;
        if (this.skipLeft === 0) this.endSkip(out);
      }
    }
    return out;
  }

  private begin(len: number, out: DecodedFrame[]): void {
    if (len <= this.maxFrameLength) {
      if (len === 0) {
        out.push({ kind: 'frame', data: new Uint8Array(0) });
        return;
      }
      this.state = State.Body;
      this.body = new Uint8Array(len);
      this.filled = 0;
      return;
    }
    if (len > this.maxSkipLength) {
      throw new NetworkError(NetworkErrorCode.MALFORMED_FRAME, { reason: 'frame too large', length: len, limit: this.maxFrameLength });
    }
    this.state = State.Skip;
    this.skipLength = len;
    this.skipLeft = len;
    this.head = new Uint8Array(Math.min(this.headBytes, len));
    this.headFilled = 0;
  }

  private endSkip(out: DecodedFrame[]): void {
    out.push({ kind: 'oversize', length: this.skipLength, head: this.head });
    this.state = State.Prefix;
    this.head = new Uint8Array(0);
  }
}
