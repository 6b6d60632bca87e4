// Forced POOL_CONFIG / POOL_UPGRADE (requests.md §5.5): validated and applied on receipt by every
// node that receives the request from a client or its PROPAGATE from a peer, before consensus; the
// request is still ordered and written, and not applied again at commit. Each request (by full
// digest) is applied once per node, whichever way it arrives first.
import { BoundedFifoSet, TxnType, isPlainObject, type Request } from '@quire/common';
import type { RequestPipeline } from '@quire/requests';
import type { NodeLogger } from './logger.js';

export interface ForcedRequestsModules {
  pipeline: RequestPipeline;
  /** POOL_CONFIG: the node's writable flag */
  setWritable(writes: boolean): void;
  /** POOL_UPGRADE: the upgrade scheduler */
  poolUpgrade(request: Request): void;
  /** wall clock in seconds (receipt validation) */
  now(): number;
  logger: NodeLogger;
}

/** How many applied digests are remembered (a forced request is rare; this bounds memory). */
const REMEMBERED = 1024;

const FORCEABLE = new Set<string>([TxnType.POOL_UPGRADE, TxnType.POOL_CONFIG]);

export class ForcedRequests {
  private readonly applied = new BoundedFifoSet<string>(REMEMBERED);

  constructor(private readonly modules: ForcedRequestsModules) {}

  /** A forced request that passed validation on receipt (the client path validated it). */
  apply(request: Request, digest: string): void {
    if (this.applied.has(digest)) return;
    this.applied.add(digest);
    const op = request.operation;
    if (op.type === TxnType.POOL_CONFIG && typeof op.writes === 'boolean') {
      this.modules.setWritable(op.writes);
      this.modules.logger.info({ writes: op.writes, by: request.identifier }, 'forced POOL_CONFIG applied');
    } else if (op.type === TxnType.POOL_UPGRADE) {
      this.modules.poolUpgrade(request);
    }
  }

  /**
   * A peer's message: a PROPAGATE carrying a forced POOL_CONFIG / POOL_UPGRADE is validated as at
   * receipt from a client (signatures, static and dynamic validation) and applied. Anything else
   * is ignored at the cost of a few property reads. Never throws.
   */
  async fromPeer(msg: unknown): Promise<void> {
    if (!isPlainObject(msg) || msg.op !== 'PROPAGATE' || !isPlainObject(msg.request)) return;
    const op = msg.request.operation;
    if (!isPlainObject(op) || typeof op.type !== 'string' || !FORCEABLE.has(op.type) || op.force !== true) return;
    try {
      const outcome = await this.modules.pipeline.receive(msg.request, { now: this.modules.now(), writable: true, fromClient: true });
      if (outcome.kind === 'write' && outcome.forced) this.apply(outcome.request.request, outcome.request.digest);
      else if (outcome.kind === 'nack') this.modules.logger.debug({ type: op.type, reason: outcome.error.message }, 'forced request from a peer not applied');
    } catch (e) {
      this.modules.logger.warn({ err: e }, 'forced request from a peer could not be checked');
    }
  }
}
