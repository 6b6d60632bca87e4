import { NetworkError, NetworkErrorCode } from './errors.js';
import { readVarint, varintLength, writeVarint } from './framing.js';

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

/** Codes carried by ERROR envelopes; the reason text is fixed per code (see {@link clientErrorReason}). */
export const ClientErrorCode = {
  MESSAGE_TOO_LARGE: 'MESSAGE_TOO_LARGE',
  RATE_LIMITED: 'RATE_LIMITED',
  TOO_MANY_PENDING: 'TOO_MANY_PENDING',
  MALFORMED_ENVELOPE: 'MALFORMED_ENVELOPE',
  DUPLICATE_REQUEST_ID: 'DUPLICATE_REQUEST_ID',
  SHUTTING_DOWN: 'SHUTTING_DOWN',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
} as const;
export type ClientErrorCode = (typeof ClientErrorCode)[keyof typeof ClientErrorCode];

const reasons: Record<ClientErrorCode, (limit?: number) => string> = {
  MESSAGE_TOO_LARGE: (limit) => `message too large: limit is ${limit ?? 0} bytes`,
  RATE_LIMITED: () => 'rate limited',
  TOO_MANY_PENDING: () => 'too many requests in flight',
  MALFORMED_ENVELOPE: () => 'malformed envelope',
  DUPLICATE_REQUEST_ID: () => 'request id already in flight',
  SHUTTING_DOWN: () => 'node is shutting down',
  INTERNAL_ERROR: () => 'internal error',
};

/** The reason text sent with `code` (one place, so every node sends the same text for the same failure). */
export function clientErrorReason(code: ClientErrorCode, limit?: number): string {
  return reasons[code](limit);
}

export interface Envelope {
  kind: EnvelopeKind;
  /** Request id, 1..2^53-1; 0 only in PUSH and ERROR when no request is meant. */
  id: number;
  payload: Uint8Array;
}

/** Frame body: kind (1 byte) || id (unsigned varint) || payload. */
export function encodeEnvelope(kind: EnvelopeKind, id: number, payload: Uint8Array): Uint8Array {
  if (!Number.isSafeInteger(id) || id < 0) throw new NetworkError(NetworkErrorCode.INVALID_REQUEST_ID, { id });
  const out = new Uint8Array(1 + varintLength(id) + payload.length);
  out[0] = kind;
  const at = writeVarint(id, out, 1);
  out.set(payload, at);
  return out;
}

/** Inverse of {@link encodeEnvelope}; throws NetworkError MALFORMED_ENVELOPE. */
export function decodeEnvelope(body: Uint8Array): Envelope {
  const kind = body[0];
  if (kind === undefined || kind < EnvelopeKind.REQUEST || kind > EnvelopeKind.ERROR) {
    throw new NetworkError(NetworkErrorCode.MALFORMED_ENVELOPE, { reason: 'unknown kind' });
  }
  let v;
  try {
    v = readVarint(body, 1, 8);
  } catch {
    v = undefined;
  }
  if (v === undefined || !Number.isSafeInteger(v.value)) throw new NetworkError(NetworkErrorCode.MALFORMED_ENVELOPE, { reason: 'bad id' });
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

export function encodeErrorPayload(code: ClientErrorCode, reason: string): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ code, reason }));
}

/** Parses an ERROR payload; unknown shapes become {code: MALFORMED_ENVELOPE}. */
export function decodeErrorPayload(payload: Uint8Array): { code: string; reason: string } {
  try {
    const v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload)) as unknown;
    if (v !== null && typeof v === 'object' && typeof (v as { code?: unknown }).code === 'string' && typeof (v as { reason?: unknown }).reason === 'string') {
      return { code: (v as { code: string }).code, reason: (v as { reason: string }).reason };
    }
  } catch {
    // fall through: not JSON
  }
  return { code: ClientErrorCode.MALFORMED_ENVELOPE, reason: clientErrorReason(ClientErrorCode.MALFORMED_ENVELOPE) };
}
