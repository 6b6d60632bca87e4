// The simulator's checkpoint oracle (issue #15, `q-checkpoint` and `cp-own-quorum` in the sweep):
// an honest node makes a checkpoint stable only once n-f validators, itself included, sent that
// CHECKPOINT (counted where delivered); the checkpoint restored at a restart or after a catch-up and
// a NEW_VIEW's checkpoint are exempt. In withheldCheckpoints (f nodes never send CHECKPOINTs, the
// primary cut off) a quorum one lower makes checkpoints stable with n-f-1 sent.
import { expect } from 'chai';
import { Checkpoints } from '../../src/checkpoints.js';
import { runSimulation } from '../../src/sim/simulator.js';

describe('sim: the checkpoint oracle', function () {
  this.timeout(120_000);

  it('gives no alarm on the protocol as it is', () => {
    for (const nodes of [4, 7]) {
      for (const seed of [1, 2]) {
        const r = runSimulation({ seed, nodes, faults: 'withheldCheckpoints' });
        expect(r.violations, `seed ${seed}, n=${nodes}`).to.deep.equal([]);
      }
    }
  });

  it('catches a checkpoint made stable with one matching CHECKPOINT fewer', () => {
    const proto = Checkpoints.prototype as unknown as { matching: (seqNoEnd: number, digest: string | null) => number };
    const matching = proto.matching;
    proto.matching = function (this: unknown, seqNoEnd: number, digest: string | null): number {
      const n = matching.call(this, seqNoEnd, digest);
      return n > 0 ? n + 1 : n;
    };
    const found: string[] = [];
    try {
      for (let seed = 1; seed <= 4 && found.length === 0; seed++) found.push(...runSimulation({ seed, nodes: 4, faults: 'withheldCheckpoints' }).violations);
    } finally {
      proto.matching = matching;
    }
    expect(found.some((v) => /^protocol: Node\d made checkpoint \d+ stable with \d matching CHECKPOINTs sent/.test(v))).to.equal(true, found.join('\n'));
  });
});
