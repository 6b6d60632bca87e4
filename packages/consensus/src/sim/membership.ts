// Membership workload of the simulator (consensus.md §8, §11 row 15): NODE txns under load. A new
// node starts as an observer and is added by a NODE txn; a validator's BLS key is rotated; the
// primary of the moment is demoted and later promoted again (appended at the end of R).
import type { ClientRequestBody } from '../messages.js';
import type { SimWorkload } from './backend.js';
import type { Prng } from './prng.js';

export type MembershipStepKind = 'add' | 'rotate' | 'demotePrimary' | 'promote';

export interface MembershipStep {
  at: number;
  kind: MembershipStepKind;
}

export interface MembershipPlan {
  /** alias of the node that joins */
  joiner: string;
  /** when the joiner's process starts (as an observer, before or after its NODE txn) */
  joinerStartsAt: number;
  steps: MembershipStep[];
}

/** The scripted sequence, spaced so that each change's view change completes first (§8 SHOULD). */
export function membershipPlan(rng: Prng, validators: number): MembershipPlan {
  return {
    joiner: `Node${validators + 1}`,
    joinerStartsAt: rng.int(100, 1500),
    steps: [
      { at: rng.int(300, 1200), kind: 'add' },
      { at: rng.int(2200, 2800), kind: 'rotate' },
      { at: rng.int(3600, 4200), kind: 'demotePrimary' },
      { at: rng.int(5000, 5600), kind: 'promote' },
    ],
  };
}

/** What the simulation needs to know to build a step's NODE txn. */
export interface MembershipContext {
  workload: SimWorkload;
  rng: Prng;
  /** current validators as a reference honest node sees them */
  validators(): string[];
  /** current primary as a reference honest node sees it */
  primary(): string;
  /** the node demoted by the last demotePrimary step */
  demoted?: string;
}

/** Builds the NODE txn of one step, or undefined when the step has nothing to do. */
export function membershipRequest(step: MembershipStep, plan: MembershipPlan, ctx: MembershipContext): ClientRequestBody | undefined {
  switch (step.kind) {
    case 'add':
      return ctx.workload.addValidator(plan.joiner);
    case 'rotate':
      return ctx.workload.rotateBlsKey(ctx.rng.pick(ctx.validators()));
    case 'demotePrimary': {
      const alias = ctx.primary();
      ctx.demoted = alias;
      return ctx.workload.setValidator(alias, false);
    }
    case 'promote':
      if (ctx.demoted === undefined) return undefined;
      return ctx.workload.setValidator(ctx.demoted, true);
  }
}
