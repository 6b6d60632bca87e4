// The overload mix of the mutation gate (issue #15, `q-propagate`): bursts into a request queue of
// 6, so that nodes refuse requests for a full queue (REQNACK POOL_OVERLOADED, #16) while others
// take them in. Checked: no request that f+1 honest nodes refused is ordered (the client took the
// refusals as the pool's answer), and overload alone never changes the view. A request finalised
// by f+1 PROPAGATEs (the spec's rule) breaks the first.
import { expect } from 'chai';
import { RequestIntake } from '../../src/intake.js';
import { runSimulation } from '../../src/sim/simulator.js';

describe('sim: overload (full request queues; overloadRestart: with crashes and restarts)', function () {
  this.timeout(120_000);

  it('passes: refused requests are not ordered, the others are, in view 0', () => {
    for (const nodes of [4, 7]) {
      const r = runSimulation({ seed: 1, nodes, faults: 'overload' });
      expect(r.violations, `n=${nodes}`).to.deep.equal([]);
      expect(r.maxView).to.equal(0);
      expect(r.orderedRequests).to.be.greaterThan(0);
    }
  });

  it('overloadRestart passes: with crashes and restarts, no request f+1 nodes refused is ordered', () => {
    for (const [nodes, seed] of [
      [4, 7],
      [4, 12],
      [7, 1],
      [7, 2],
    ] as const) {
      const r = runSimulation({ seed, nodes, faults: 'overloadRestart' });
      expect(r.violations, `n=${nodes} seed ${seed}`).to.deep.equal([]);
      expect(r.orderedRequests).to.be.greaterThan(0);
    }
  });

  it('overloadRestart catches a node that forgets its refusals across a restart (no refusal mark saved)', () => {
    const proto = RequestIntake.prototype as unknown as { markRefusal: () => void };
    const original = proto.markRefusal;
    proto.markRefusal = () => undefined;
    const found: string[] = [];
    try {
      for (const seed of [7, 12]) found.push(...runSimulation({ seed, nodes: 4, faults: 'overloadRestart' }).violations);
    } finally {
      proto.markRefusal = original;
    }
    expect(found.some((v) => /^overload: .* ordered request .* refused for a full queue/.test(v))).to.equal(true, found.join('\n'));
  });

  it('catches a request finalised by f+1 PROPAGATEs (n-f expected)', () => {
    type Ctx = { quorums: { strong: number; weak: number } };
    const proto = RequestIntake.prototype as unknown as { checkFinalised: (entry: unknown) => void };
    const original = proto.checkFinalised;
    proto.checkFinalised = function (this: { ctx: Ctx }, entry: unknown): void {
      const q = this.ctx.quorums;
      this.ctx.quorums = { ...q, strong: q.weak };
      try {
        original.call(this, entry);
      } finally {
        this.ctx.quorums = q;
      }
    };
    const found: string[] = [];
    try {
      for (let seed = 1; seed <= 4 && found.length === 0; seed++) found.push(...runSimulation({ seed, nodes: 4, faults: 'overload' }).violations);
    } finally {
      proto.checkFinalised = original;
    }
    expect(found.some((v) => /^overload: .* ordered request .* refused for a full queue/.test(v))).to.equal(true, found.join('\n'));
  });
});
