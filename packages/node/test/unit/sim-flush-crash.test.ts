// The mutation gate's catch of `ex-reply-before-write` (issue #15), pinned: in the flushCrash mix a
// node crashes the instant its flush resolves after a batch write (its replies sent) and its
// writes land a macrotask after they start. With the executor's flush waiting for its writes the
// run passes; with a flush that resolves before them, a node restarts without a batch it answered
// clients for, and the durability check says so.
import { expect } from 'chai';
import { ConsensusExecutor } from '../../src/consensus-executor.js';
import { simulate } from '../../src/sim/index.js';

const RUN = { seed: 1, nodes: 4, faults: 'flushCrash' };

describe('sim: crash at the instant a flush resolves (flushCrash)', function () {
  this.timeout(120_000);

  it('passes with persistence before reply, crashing nodes at their flushes', async () => {
    const r = await simulate(RUN);
    expect(r.violations).to.deep.equal([]);
    expect(r.ok).to.equal(true);
    expect(r.adversary?.tornWrites ?? 0).to.be.greaterThan(0);
  });

  it('catches a flush that does not wait for the batch writes (replies before persistence)', async () => {
    const proto = ConsensusExecutor.prototype as unknown as { flush: () => Promise<void> };
    const flush = proto.flush;
    proto.flush = async function (this: unknown): Promise<void> {
      // the planted bug of ex-reply-before-write: the started writes are not awaited
    };
    let r;
    try {
      r = await simulate(RUN);
    } finally {
      proto.flush = flush;
    }
    expect(r.ok).to.equal(false);
    expect(r.violations.some((v) => /^durability: .* restarted with \d+ audit txns but had answered clients for batch \d+/.test(v))).to.equal(
      true,
      r.violations.join('\n'),
    );
  });
});
