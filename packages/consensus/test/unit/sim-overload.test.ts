// The overload mix of the mutation gate (issue #15, `q-propagate`): bursts into a request queue of
// 6, so that nodes refuse requests for a full queue (REQNACK POOL_OVERLOADED, #16) while others
// take them in. Checked: no request that f+1 honest nodes refused is ordered (the client took the
// refusals as the pool's answer), and overload alone never changes the view. A request finalised
// by f+1 PROPAGATEs (the spec's rule) breaks the first.
import { expect } from 'chai';
import { RequestIntake } from '../../src/intake.js';
import { runSimulation } from '../../src/sim/simulator.js';

describe('sim: overload (full request queues, no other fault)', function () {
  this.timeout(120_000);

  it('passes: refused requests are not ordered, the others are, in view 0', () => {
    for (const nodes of [4, 7]) {
      const r = runSimulation({ seed: 1, nodes, faults: 'overload' });
      expect(r.violations, `n=${nodes}`).to.deep.equal([]);
      expect(r.maxView).to.equal(0);
      expect(r.orderedRequests).to.be.greaterThan(0);
    }
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
