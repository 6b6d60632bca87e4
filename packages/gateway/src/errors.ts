import type { ClientErrorData } from '@quire/client';
import { CodedError } from '@quire/common';

/**
 * Stable codes of {@link GatewayError}: the `code` of every error body the gateway sends (`{code, reason, ...data}`)
 * and of its `X-Quire-Error` header. Programs branch on these, never on `reason`. Each entry documents its HTTP status
 * and the `data` it carries.
 */
export const GatewayErrorCode = {
  /** 404: no route for this method and path (data: `method`, `path`). */
  NOT_FOUND: 'NOT_FOUND',
  /** 405: the path exists for another method (data: `method`, `path`). */
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  /** 400: a path or query parameter that is malformed (data: `field`, `reason`). */
  INVALID_PARAMETER: 'INVALID_PARAMETER',
  /** 400: a request body that is not a request JSON (data: `field`, `reason`). */
  INVALID_REQUEST: 'INVALID_REQUEST',
  /** 413: a request body above the limit (data: `limit`). */
  BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  /** 415: a body whose content type is malformed (data: `contentType`, the request's header; null when it names none). */
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  /** 429: the caller exceeded its request rate (data: `limit`, `windowMs`). */
  RATE_LIMITED: 'RATE_LIMITED',
  /**
   * 504: no f+1 agreement (writes) or no verified reply (reads) before the deadline (data: `timeoutMs`, `tried`:
   * `{replies, errors}`, the groups of answers and each node's failure `{node, code, reason?}`).
   */
  POOL_TIMEOUT: 'POOL_TIMEOUT',
  /**
   * 503: too few nodes could be reached to form a quorum, or none gave a reply that verifies (data: `tried`:
   * `{replies?, errors, nacks?, reason?}`); the explorer's search index got fewer txns than it asked for (data: `reason`).
   */
  POOL_UNAVAILABLE: 'POOL_UNAVAILABLE',
  /** 409: the nodes answered but no f+1 of them agree (data: `tried`), as indy-vdr-proxy's CONFLICT. */
  NO_CONSENSUS: 'NO_CONSENSUS',
  /** 503: the gateway is shutting down or its pool handle is closed. */
  SHUTTING_DOWN: 'SHUTTING_DOWN',
  /** 500: an unexpected failure (data: `reason`); logged with its stack. */
  INTERNAL: 'INTERNAL',
  /** Options that cannot work, refused when the gateway is created or started (data: `field`, `reason`); never an HTTP answer. */
  INVALID_CONFIG: 'INVALID_CONFIG',
  /** Creating or starting the gateway was stopped by the caller's AbortSignal (data: `reason`); never an HTTP answer. */
  ABORTED: 'ABORTED',
} as const;
export type GatewayErrorCode = (typeof GatewayErrorCode)[keyof typeof GatewayErrorCode];

/** What the gateway tried before a pool failure: the SDK's groups of answers, each node's failure, REQNACKs by reason. */
export type PoolTried = {
  /** The groups of answers of a write; of a read by agreement, the nodes agreeing on each answer. */
  replies?: ClientErrorData['TIMEOUT' | 'NO_CONSENSUS'] extends infer T ? (T extends { replies: infer R } ? R : never) | string[][] : never;
  errors: ClientErrorData['NO_VERIFIED_REPLY']['errors'];
  nacks?: ClientErrorData['NO_VERIFIED_REPLY']['nacks'];
  reason?: string;
};

/** The data of each {@link GatewayErrorCode}, checked wherever a GatewayError is made (and sent in its body). */
export type GatewayErrorData = {
  NOT_FOUND: { method: string; path: string };
  METHOD_NOT_ALLOWED: { method: string; path: string };
  INVALID_PARAMETER: { field: string; reason: string };
  INVALID_REQUEST: { field: string; reason: string };
  BODY_TOO_LARGE: { limit: number };
  UNSUPPORTED_MEDIA_TYPE: { contentType: string | null };
  RATE_LIMITED: { limit: number; windowMs: number };
  POOL_TIMEOUT: { timeoutMs: number; tried: PoolTried };
  POOL_UNAVAILABLE: { tried: PoolTried } | { reason: string };
  NO_CONSENSUS: { tried: PoolTried };
  SHUTTING_DOWN: Record<string, never>;
  INTERNAL: { reason: string };
  INVALID_CONFIG: { field: string; reason: string };
  ABORTED: { reason: string };
};

/** The HTTP status of each code. */
export const GATEWAY_ERROR_STATUS: Record<GatewayErrorCode, number> = {
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  INVALID_PARAMETER: 400,
  INVALID_REQUEST: 400,
  BODY_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  POOL_TIMEOUT: 504,
  POOL_UNAVAILABLE: 503,
  NO_CONSENSUS: 409,
  SHUTTING_DOWN: 503,
  INTERNAL: 500,
  INVALID_CONFIG: 500,
  ABORTED: 503,
};

/** Any failure the gateway answers with an error body. */
export class GatewayError extends CodedError<GatewayErrorCode, GatewayErrorData> {
  get status(): number {
    return GATEWAY_ERROR_STATUS[this.code];
  }

  /** The JSON body sent to the caller: the code, a reason built from the code and its data, and the data. */
  body(): Record<string, unknown> {
    return { code: this.code, ...this.data, reason: reasonOf(this.code, this.data) };
  }
}

/** One place where reason texts are made from a code and its data. */
function reasonOf(code: GatewayErrorCode, d: Record<string, unknown>): string {
  switch (code) {
    case 'NOT_FOUND':
      return `no route ${String(d.method)} ${String(d.path)}`;
    case 'METHOD_NOT_ALLOWED':
      return `${String(d.method)} is not allowed on ${String(d.path)}`;
    case 'INVALID_PARAMETER':
    case 'INVALID_REQUEST':
    case 'INVALID_CONFIG':
      return `${String(d.field)}: ${String(d.reason)}`;
    case 'BODY_TOO_LARGE':
      return `request body larger than ${String(d.limit)} bytes`;
    case 'UNSUPPORTED_MEDIA_TYPE':
      return `content type ${String(d.contentType)} is not accepted`;
    case 'RATE_LIMITED':
      return `more than ${String(d.limit)} requests in ${String(d.windowMs)} ms`;
    case 'POOL_TIMEOUT':
      return 'the pool gave no agreeing or verified answer in time';
    case 'POOL_UNAVAILABLE':
      return 'too few validators could be reached, or none gave a reply that verifies';
    case 'NO_CONSENSUS':
      return 'the validators answered but no f+1 of them agree';
    case 'SHUTTING_DOWN':
      return 'the gateway is shutting down';
    case 'INTERNAL':
      return `internal error: ${String(d.reason)}`;
    case 'ABORTED':
      return `stopped: ${String(d.reason)}`;
  }
}

/** Options that cannot work (INVALID_CONFIG), with `field: reason` as its message. */
export function invalidConfig(field: string, reason: string): GatewayError {
  return new GatewayError(GatewayErrorCode.INVALID_CONFIG, { field, reason }, `${field}: ${reason}`);
}

export function invalidParameter(field: string, reason: string): GatewayError {
  return new GatewayError(GatewayErrorCode.INVALID_PARAMETER, { field, reason });
}

/** The error of a start the caller's `signal` stopped (ABORTED, with the signal's reason as text). */
export function abortedBy(signal: AbortSignal): GatewayError {
  const r: unknown = signal.reason;
  return new GatewayError(GatewayErrorCode.ABORTED, { reason: r instanceof Error ? r.message : String(r) });
}

/** Whether `signal` has aborted (a function, so that the check is made again after an await). */
export function isAborted(signal: AbortSignal | undefined): signal is AbortSignal {
  return signal?.aborted === true;
}
