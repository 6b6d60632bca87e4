// Calls into the pool through the SDK, and what their failures become over HTTP: a REQNACK or REJECT is passed
// through with status 400 and the ledger's message as its body (as indy-vdr-proxy does); a pool that cannot be
// reached or gives no verified answer is 503/504 with what was tried.
import { ClientError, ClientErrorCode, isClientError, type Pool, type ReadOutcome } from '@quire/client';
import type { Request } from '@quire/common';
import { GatewayError, GatewayErrorCode } from './errors.js';
import type { GatewayMetrics } from './metrics.js';

/** The part of the SDK's Pool the gateway uses. */
export type GatewayPool = Pick<Pool, 'submitRead' | 'submitWrite' | 'submitAction' | 'status' | 'ledger' | 'f' | 'n'>;

/** A REQNACK or REJECT of f+1 nodes, passed through as the ledger's message. */
// internal control flow, never seen by a caller: the error handler answers with the ledger's message it carries
export class PoolRefusal extends Error {
  constructor(
    readonly code: typeof ClientErrorCode.REQUEST_NACKED | typeof ClientErrorCode.REQUEST_REJECTED,
    readonly message_: Record<string, unknown>,
  ) {
    super(String(message_.reason));
  }
}

/** Verification codes of the SDK: a node reply that carried them was refused as untrustworthy. */
const VERIFICATION_CODES = new Set<string>([
  ClientErrorCode.REPLY_MALFORMED,
  ClientErrorCode.REPLY_NOT_FOR_REQUEST,
  ClientErrorCode.PROOF_INVALID,
  ClientErrorCode.PROOF_VALUE_MISMATCH,
  ClientErrorCode.AUDIT_PATH_INVALID,
  ClientErrorCode.MULTISIG_ROOT_MISMATCH,
  ClientErrorCode.MULTISIG_TOO_FEW_PARTICIPANTS,
  ClientErrorCode.MULTISIG_UNKNOWN_PARTICIPANT,
  ClientErrorCode.MULTISIG_DUPLICATE_PARTICIPANT,
  ClientErrorCode.MULTISIG_INVALID,
  ClientErrorCode.MULTISIG_STALE,
]);

function countVerificationFailures(metrics: GatewayMetrics | undefined, tried: unknown): void {
  if (metrics === undefined || !Array.isArray(tried)) return;
  for (const t of tried as { code?: unknown }[])
    if (typeof t?.code === 'string' && VERIFICATION_CODES.has(t.code)) metrics.verificationFailures.inc({ code: t.code });
}

/** Maps an SDK failure to what the caller gets. */
export function poolFailure(e: unknown, request: Request | undefined, f: number): GatewayError | PoolRefusal {
  if (e instanceof GatewayError || e instanceof PoolRefusal) return e;
  if (!(e instanceof ClientError)) return new GatewayError(GatewayErrorCode.INTERNAL, { reason: e instanceof Error ? e.message : String(e) });
  if (isClientError(e, ClientErrorCode.REQUEST_NACKED) || isClientError(e, ClientErrorCode.REQUEST_REJECTED)) {
    const d = e.data;
    return new PoolRefusal(e.code, {
      op: e.code === ClientErrorCode.REQUEST_NACKED ? 'REQNACK' : 'REJECT',
      identifier: request?.identifier ?? null,
      reqId: request?.reqId ?? null,
      reason: d.reason,
      ...(d.code !== null ? { code: d.code } : {}),
    });
  }
  // a write's deadline (the per-node TIMEOUTs of the SDK reach its callers only inside `errors`)
  if (isClientError(e, ClientErrorCode.TIMEOUT) && 'timeoutMs' in e.data) {
    const d = e.data;
    return new GatewayError(GatewayErrorCode.POOL_TIMEOUT, { timeoutMs: d.timeoutMs, tried: { replies: d.replies, errors: d.errors } });
  }
  if (isClientError(e, ClientErrorCode.NO_CONSENSUS)) {
    // writes: {replies, errors, answered}; reads by agreement: {groups, errors}; no validator to ask: {reason}
    const d = e.data;
    const [answered, tried] =
      'answered' in d
        ? [d.answered.length, { replies: d.replies, errors: d.errors }]
        : 'groups' in d
          ? [d.groups.reduce((s, g) => s + g.length, 0), { replies: d.groups, errors: d.errors }]
          : [0, { replies: [], errors: [], reason: d.reason }];
    return answered >= f + 1 ? new GatewayError(GatewayErrorCode.NO_CONSENSUS, { tried }) : new GatewayError(GatewayErrorCode.POOL_UNAVAILABLE, { tried });
  }
  if (isClientError(e, ClientErrorCode.NO_VERIFIED_REPLY))
    return new GatewayError(GatewayErrorCode.POOL_UNAVAILABLE, { tried: { errors: e.data.errors, nacks: e.data.nacks } });
  // every node that could prove the read is behind what this gateway already saw: retry later
  if (isClientError(e, ClientErrorCode.READ_BEHIND)) {
    return new GatewayError(GatewayErrorCode.POOL_UNAVAILABLE, {
      tried: { errors: e.data.errors, reason: 'every node that proves the read is behind a state this gateway has seen' },
    });
  }
  if (isClientError(e, ClientErrorCode.CLOSED)) return new GatewayError(GatewayErrorCode.SHUTTING_DOWN);
  if (isClientError(e, ClientErrorCode.INVALID_ARGUMENT))
    return new GatewayError(GatewayErrorCode.INVALID_PARAMETER, { field: e.data.field, reason: e.data.reason });
  if (isClientError(e, ClientErrorCode.INVALID_REQUEST)) return new GatewayError(GatewayErrorCode.INVALID_REQUEST, { field: 'body', reason: e.data.reason });
  return new GatewayError(GatewayErrorCode.INTERNAL, { reason: e.message });
}

export class PoolCaller {
  constructor(
    private readonly pool: GatewayPool,
    private readonly metrics: GatewayMetrics | undefined,
  ) {}

  private observe(kind: string, outcome: string, t0: number): void {
    this.metrics?.poolSeconds.observe({ kind, outcome }, (performance.now() - t0) / 1000);
  }

  /** A read verified by the SDK (state proof + multi-signature, or f+1 matching replies). */
  async read(request: Request, payload?: Uint8Array): Promise<ReadOutcome> {
    const t0 = performance.now();
    try {
      const out = await this.pool.submitRead(request, payload === undefined ? {} : { payload });
      this.observe('read', 'ok', t0);
      countVerificationFailures(this.metrics, out.rejected);
      this.metrics?.reads.inc({ verified: out.verified ? 'proof' : 'consensus' });
      return out;
    } catch (e) {
      this.observe('read', e instanceof ClientError ? e.code : 'error', t0);
      if (e instanceof ClientError) countVerificationFailures(this.metrics, e.data.errors);
      throw poolFailure(e, request, this.pool.f);
    }
  }

  /** A write accepted on f+1 matching REPLYs. */
  async write(request: Request, payload?: Uint8Array): Promise<{ result: Record<string, unknown>; nodes: string[] }> {
    const t0 = performance.now();
    try {
      const out = await this.pool.submitWrite(request, payload === undefined ? {} : { payload });
      this.observe('write', 'ok', t0);
      return out;
    } catch (e) {
      this.observe('write', e instanceof ClientError ? e.code : 'error', t0);
      throw poolFailure(e, request, this.pool.f);
    }
  }

  /** VALIDATOR_INFO / POOL_RESTART: every node's answer, by alias (as indy-vdr returns them). */
  async action(request: Request, payload?: Uint8Array): Promise<Record<string, unknown>> {
    const t0 = performance.now();
    try {
      const answers = await this.pool.submitAction(request, payload === undefined ? {} : { payload });
      this.observe('action', 'ok', t0);
      const out: Record<string, unknown> = {};
      for (const [alias, a] of answers) out[alias] = a.kind === 'error' ? { code: a.error.code, reason: a.error.message } : a.message;
      return out;
    } catch (e) {
      this.observe('action', 'error', t0);
      throw poolFailure(e, request, this.pool.f);
    }
  }
}
