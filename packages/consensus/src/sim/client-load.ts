// The client load of one run, drawn from its PRNG when the run begins: bursty fresh writes, writes
// that fail dynamic validation, replays and payload variants (consensus.md §11 row 17), and the
// stewards' NODE txns of the membership mix. Each request is recorded with whether it must be
// ordered, for the liveness and validity checks.
import type { ClientRequestBody } from '../messages.js';
import type { SimWorkload } from './backend.js';
import type { SubmittedRequest } from './checks.js';
import type { EventQueue } from './event-queue.js';
import { type MembershipContext, type MembershipPlan, membershipRequest } from './membership.js';
import type { Prng } from './prng.js';

export interface ClientLoadContext {
  readonly rng: Prng;
  readonly queue: EventQueue;
  readonly workload: SimWorkload;
  /** the run record's submitted requests */
  readonly submitted: SubmittedRequest[];
  /** a client sends a request to every running node (of one side of the pool, for twins) */
  submit(connId: string, request: ClientRequestBody, side?: 'A' | 'B'): void;
}

/** Schedules `total` client requests, spread over the first `loadMs` simulated milliseconds. */
export function scheduleClientLoad(ctx: ClientLoadContext, total: number, loadMs: number, twins: boolean): void {
  const { rng, workload } = ctx;
  const issued: ClientRequestBody[] = [];
  // bursty load: most requests arrive in a few bursts (batches of several requests), some alone
  const bursts = Array.from({ length: Math.max(1, Math.ceil(total / 8)) }, () => rng.int(10, loadMs));
  for (let i = 0; i < total; i++) {
    const at = rng.chance(0.8) ? rng.pick(bursts) + rng.int(0, 15) : rng.int(10, loadMs);
    const roll = rng.next();
    let req: ClientRequestBody;
    let mustOrder = true;
    if (roll < 0.05) {
      req = workload.write(i, true);
      mustOrder = false;
    } else if (roll < 0.1 && issued.length > 0) {
      // replay of an earlier request, or the same payload under another digest
      const prev = rng.pick(issued);
      req = rng.chance(0.5) ? prev : workload.variant(prev);
      mustOrder = false;
    } else {
      req = workload.write(i, false);
    }
    issued.push(req);
    const info = workload.info(req);
    ctx.submitted.push({ digest: info.digest, payloadDigest: info.payloadDigest, mustOrder, invalid: roll < 0.05 });
    const connId = `client-${i}`;
    // twins: each side of the split pool gets its own requests, so the two sides diverge
    const side = twins ? (i % 2 === 0 ? 'A' : 'B') : undefined;
    ctx.queue.schedule(at, () => ctx.submit(connId, req, side));
  }
}

/**
 * NODE txns of the membership mix, submitted like any client write by the stewards; each is built
 * when it is sent, from the registry and primary of a running validator at that time.
 */
export function scheduleMembershipLoad(ctx: ClientLoadContext, plan: MembershipPlan, pool: Pick<MembershipContext, 'validators' | 'primary'>): void {
  const mctx: MembershipContext = { workload: ctx.workload, rng: ctx.rng, ...pool };
  plan.steps.forEach((step, i) => {
    ctx.queue.schedule(step.at, () => {
      const req = membershipRequest(step, plan, mctx);
      if (req === undefined) return;
      const info = ctx.workload.info(req);
      ctx.submitted.push({ digest: info.digest, payloadDigest: info.payloadDigest, mustOrder: true, invalid: false });
      ctx.submit(`steward-${i}`, req);
    });
  });
}
