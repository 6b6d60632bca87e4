/**
 * The byte layer of the client protocol `/quire/client/1.0.0`, shared by the node's client host and by clients.
 * Pure code, no I/O:
 *
 * - frame = unsigned LEB128 varint (minimal, at most 7 bytes) length || body, body at most MSG_LEN_LIMIT bytes;
 * - envelope (the frame body) = kind (1 byte) || id (unsigned varint) || payload, kinds REQUEST / RESPONSE / PUSH /
 *   ERROR; an ERROR payload is UTF-8 JSON `{"code", "reason"}` with a fixed reason text per code.
 */
import { CodedError } from './errors.js';
import { parseJson } from './lossless-json.js';

/** Codes of {@link ClientWireError}. */
export const ClientWireErrorCode = {
  /**
   * A length prefix that is not a minimal unsigned varint, or a frame beyond the skip limit (data: `reason`; with
   * `length` and `limit` for 'frame too large').
   */
  MALFORMED_FRAME: 'MALFORMED_FRAME',
  /** An envelope that cannot be decoded: unknown kind, missing or bad id (data: `reason`). */
  MALFORMED_ENVELOPE: 'MALFORMED_ENVELOPE',
  /** An envelope id outside 0..2^53-1 given to the encoder (data: `id`). */
  INVALID_REQUEST_ID: 'INVALID_REQUEST_ID',
} as const;
export type ClientWireErrorCode = (typeof ClientWireErrorCode)[keyof typeof ClientWireErrorCode];

/** The data of each {@link ClientWireErrorCode}, checked wherever a ClientWireError is made. */
export type ClientWireErrorData = {
  MALFORMED_FRAME: { reason: 'non-minimal varint' | 'varint too long' | 'incomplete varint' } | { reason: 'frame too large'; length: number; limit: number };
  MALFORMED_ENVELOPE: { reason: 'unknown kind' | 'bad id' };
  INVALID_REQUEST_ID: { id: number };
};

/** Malformed bytes of the client protocol's framing or envelopes. */
export class ClientWireError extends CodedError<ClientWireErrorCode, ClientWireErrorData> {}

// ---------------------------------------------------------------------------------------------------------------
// frames

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
    const b = buf[offset + i];
    value += (b & 0x7f) * scale;
    if ((b & 0x80) === 0) {
      if (b === 0 && i > 0) throw new ClientWireError(ClientWireErrorCode.MALFORMED_FRAME, { reason: 'non-minimal varint' });
      return { value, next: offset + i + 1 };
    }
    scale *= 128;
  }
  throw new ClientWireError(ClientWireErrorCode.MALFORMED_FRAME, { reason: 'varint too long' });
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
   * MALFORMED_FRAME with reason 'frame too large' (the caller then closes the stream). 0: any oversize frame throws.
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

  /** Feeds bytes; returns the frames they complete. Throws ClientWireError MALFORMED_FRAME; the decoder is then unusable. */
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
        const b = chunk[i++];
        if (this.prefixLen >= MAX_VARINT_BYTES) throw new ClientWireError(ClientWireErrorCode.MALFORMED_FRAME, { reason: 'varint too long' });
        this.prefix[this.prefixLen++] = b;
        if ((b & 0x80) === 0) {
          // the prefix ends with this byte, so it holds a whole varint (readVarint throws on a non-minimal one)
          const v = readVarint(this.prefix.subarray(0, this.prefixLen), 0);
          if (v === undefined) throw new ClientWireError(ClientWireErrorCode.MALFORMED_FRAME, { reason: 'incomplete varint' });
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
      throw new ClientWireError(ClientWireErrorCode.MALFORMED_FRAME, { reason: 'frame too large', length: len, limit: this.maxFrameLength });
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

// ---------------------------------------------------------------------------------------------------------------
// envelopes

/** Protocol of the client host: one long-lived stream per client session, envelopes in frames both ways. */
export const CLIENT_PROTOCOL = '/quire/client/1.0.0';

/** Envelope kinds (first byte of every frame body on the client protocol). */
export const EnvelopeKind = {
  /** client -> node: a request with a client-chosen id. */
  REQUEST: 1,
  /** node -> client: the answer to request `id` (one per request). */
  RESPONSE: 2,
  /** node -> client: a later message (e.g. the REPLY of an ordered write); `id` names the request or is 0. */
  PUSH: 3,
  /** node -> client: request `id` (0 when unknown) was refused by the transport; payload is a JSON {code, reason}. */
  ERROR: 4,
} as const;
export type EnvelopeKind = (typeof EnvelopeKind)[keyof typeof EnvelopeKind];

/** Codes carried by ERROR envelopes; the reason text is fixed per code (see {@link clientRefusalReason}). */
export const ClientRefusalCode = {
  MESSAGE_TOO_LARGE: 'MESSAGE_TOO_LARGE',
  RATE_LIMITED: 'RATE_LIMITED',
  TOO_MANY_PENDING: 'TOO_MANY_PENDING',
  MALFORMED_ENVELOPE: 'MALFORMED_ENVELOPE',
  DUPLICATE_REQUEST_ID: 'DUPLICATE_REQUEST_ID',
  SHUTTING_DOWN: 'SHUTTING_DOWN',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
} as const;
export type ClientRefusalCode = (typeof ClientRefusalCode)[keyof typeof ClientRefusalCode];

const refusalReasons: Record<ClientRefusalCode, (limit?: number) => string> = {
  MESSAGE_TOO_LARGE: (limit) => `message too large: limit is ${limit ?? 0} bytes`,
  RATE_LIMITED: () => 'rate limited',
  TOO_MANY_PENDING: () => 'too many requests in flight',
  MALFORMED_ENVELOPE: () => 'malformed envelope',
  DUPLICATE_REQUEST_ID: () => 'request id already in flight',
  SHUTTING_DOWN: () => 'node is shutting down',
  INTERNAL_ERROR: () => 'internal error',
};

/** The reason text sent with `code` (one place, so every node sends the same text for the same failure). */
export function clientRefusalReason(code: ClientRefusalCode, limit?: number): string {
  return refusalReasons[code](limit);
}

export interface Envelope {
  kind: EnvelopeKind;
  /** Request id, 1..2^53-1; 0 only in PUSH and ERROR when no request is meant. */
  id: number;
  payload: Uint8Array;
}

/** Frame body: kind (1 byte) || id (unsigned varint) || payload. Throws INVALID_REQUEST_ID. */
export function encodeEnvelope(kind: EnvelopeKind, id: number, payload: Uint8Array): Uint8Array {
  if (!Number.isSafeInteger(id) || id < 0) throw new ClientWireError(ClientWireErrorCode.INVALID_REQUEST_ID, { id });
  const out = new Uint8Array(1 + varintLength(id) + payload.length);
  out[0] = kind;
  const at = writeVarint(id, out, 1);
  out.set(payload, at);
  return out;
}

/**
 * The frames of envelopes of `kind` with ids `ids[i]` carrying `payloads[i]`, end to end in one array: the bytes of
 * `encodeFrame(encodeEnvelope(kind, id, payload))` for each, without an array per envelope and frame (a client's flush
 * of its queued requests). Throws INVALID_REQUEST_ID as encodeEnvelope.
 */
export function encodeEnvelopeFrames(kind: EnvelopeKind, ids: readonly number[], payloads: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (!Number.isSafeInteger(id) || id < 0) throw new ClientWireError(ClientWireErrorCode.INVALID_REQUEST_ID, { id });
    const body = 1 + varintLength(id) + payloads[i].length;
    total += varintLength(body) + body;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    const payload = payloads[i];
    at = writeVarint(1 + varintLength(id) + payload.length, out, at);
    out[at++] = kind;
    at = writeVarint(id, out, at);
    out.set(payload, at);
    at += payload.length;
  }
  return out;
}

/** Inverse of {@link encodeEnvelope}; throws ClientWireError MALFORMED_ENVELOPE. */
export function decodeEnvelope(body: Uint8Array): Envelope {
  const kind = body[0];
  if (kind === undefined || kind < EnvelopeKind.REQUEST || kind > EnvelopeKind.ERROR) {
    throw new ClientWireError(ClientWireErrorCode.MALFORMED_ENVELOPE, { reason: 'unknown kind' });
  }
  let v;
  try {
    v = readVarint(body, 1, 8);
  } catch {
    v = undefined;
  }
  if (v === undefined || !Number.isSafeInteger(v.value)) throw new ClientWireError(ClientWireErrorCode.MALFORMED_ENVELOPE, { reason: 'bad id' });
  return { kind: kind as EnvelopeKind, id: v.value, payload: body.subarray(v.next) };
}

/** Request id read from the first bytes of an envelope (e.g. of an oversize frame), or 0 when they do not hold one. */
export function peekRequestId(head: Uint8Array): number {
  if (head[0] !== EnvelopeKind.REQUEST) return 0;
  try {
    const v = readVarint(head, 1, 8);
    return v !== undefined && Number.isSafeInteger(v.value) ? v.value : 0;
  } catch {
    return 0;
  }
}

/** The payload of an ERROR envelope: UTF-8 JSON `{"code", "reason"}`. */
export function encodeErrorPayload(code: ClientRefusalCode, reason: string): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ code, reason }));
}

/** Parses an ERROR payload; unknown shapes become {code: MALFORMED_ENVELOPE}. */
export function decodeErrorPayload(payload: Uint8Array): { code: string; reason: string } {
  try {
    const v = parseJson(payload, { maxDepth: 4 });
    if (v !== null && typeof v === 'object' && typeof (v as { code?: unknown }).code === 'string' && typeof (v as { reason?: unknown }).reason === 'string') {
      return { code: (v as { code: string }).code, reason: (v as { reason: string }).reason };
    }
  } catch {
    // fall through: not JSON
  }
  return { code: ClientRefusalCode.MALFORMED_ENVELOPE, reason: clientRefusalReason(ClientRefusalCode.MALFORMED_ENVELOPE) };
}
