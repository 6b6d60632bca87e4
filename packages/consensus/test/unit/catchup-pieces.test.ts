// A seeder cuts a CATCHUP_REP to MSG_LEN_LIMIT from the sizes of its txns (catchup.ts, #16): the size
// it computes is the encoded size, every piece fits the limit, and the pieces are full (a reply cut in
// halves left pieces barely above half the limit, and encoded the reply several times over).
import { expect } from 'chai';
import fc from 'fast-check';
import { encodeMsgpack } from '@quire/common';
import { ConsensusCore, type ConsensusCrypto, type ConsensusEffect } from '@quire/consensus';
import { SimRequestAnalyzer, Simulation, StandInExecutor, simBlsPublicKey } from '@quire/consensus/sim';
import { catchupEntrySize, catchupRepSize, cutPieces } from '../../src/catchup.js';
import type { CatchupRep } from '../../src/messages.js';

const VALIDATORS = ['Node1', 'Node2', 'Node3', 'Node4'];
const noCrypto: ConsensusCrypto = { blsSign: () => 'sig', blsVerifyShare: () => true, blsAggregate: () => 'agg', blsVerifyMulti: () => true };
const genesis = VALIDATORS.map((alias) => ({ alias, blskey: simBlsPublicKey(alias) }));

function seederCore(executor: StandInExecutor, msgLenLimit: number): ConsensusCore {
  const analyzer = new SimRequestAnalyzer();
  const clock = { t: 0, now: () => clock.t, utcSeconds: () => 1_700_000_000 };
  return new ConsensusCore({ name: 'Node2', validators: VALIDATORS, msgLenLimit }, { executor, crypto: noCrypto, requests: analyzer, clock });
}

const reps = (effects: ConsensusEffect[]): CatchupRep[] =>
  effects.flatMap((e) => ((e.kind === 'broadcast' || e.kind === 'send') && e.msg.op === 'CATCHUP_REP' ? [e.msg as CatchupRep] : []));

const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.string({ unit: 'grapheme' }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string(), tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe("catch-up replies cut to MSG_LEN_LIMIT from their txns' sizes", () => {
  it('catchupRepSize is the encoded size of the reply', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 40 }),
        fc.array(jsonValue, { minLength: 0, maxLength: 40 }),
        fc.array(fc.string(), { maxLength: 40 }),
        (start, txns, consProof) => {
          const map: Record<string, unknown> = {};
          txns.forEach((t, i) => (map[String(start + i)] = t));
          const rep: CatchupRep = { op: 'CATCHUP_REP', ledgerId: 1, txns: map, consProof };
          const sizes = txns.map((t, i) => catchupEntrySize(start + i, t));
          expect(catchupRepSize(rep, sizes)).to.equal(encodeMsgpack(rep).length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('cutPieces: pieces in order, each within the room unless one entry alone, each closed only by an entry that does not fit', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5000 }), { maxLength: 200 }), fc.integer({ min: 1, max: 20_000 }), (sizes, room) => {
        const ends = cutPieces(sizes, room);
        let s = 0;
        for (const e of ends) {
          expect(e).to.be.greaterThan(s);
          const bytes = sizes.slice(s, e).reduce((a, b) => a + b, 0);
          if (e - s > 1) expect(bytes).to.be.at.most(room);
          if (e < sizes.length) expect(bytes + sizes[e]!).to.be.greaterThan(room);
          s = e;
        }
        expect(s).to.equal(sizes.length);
      }),
      { numRuns: 500 },
    );
    // halving 2,000 entries of 600 bytes to 128 KiB made 16 pieces of 125; greedy fills 10
    expect(cutPieces(new Array<number>(2000).fill(600), 128 * 1024 - 3000)).to.have.length(10);
  });

  it('sends full pieces, each within the limit, that apply in order to the target', () => {
    const sim = new Simulation({ seed: 2, nodes: 4, faults: 'none', requests: 60 });
    expect(sim.run().violations).to.deep.equal([]);
    const seeder = sim.nodes[0]!.executor;
    const size = seeder.committedSize(1);
    const limit = 3000;
    const core = seederCore(seeder, limit);
    const pieces = reps(
      core.handle({ kind: 'nodeMessage', from: 'Node3', msg: { op: 'CATCHUP_REQ', ledgerId: 1, seqNoStart: 1, seqNoEnd: size, catchupTill: size } }),
    );
    const leecher = new StandInExecutor(new SimRequestAnalyzer(), genesis);
    let next = 1;
    let largestTxn = 0;
    let envelope = 0;
    const fill: number[] = [];
    for (const rep of pieces) {
      const seqNos = Object.keys(rep.txns)
        .map(Number)
        .sort((a, b) => a - b);
      const bytes = encodeMsgpack(rep).length;
      if (seqNos.length > 1) expect(bytes).to.be.at.most(limit);
      let own = 0;
      for (const s of seqNos) {
        const n = catchupEntrySize(s, rep.txns[String(s)]);
        largestTxn = Math.max(largestTxn, n);
        own += n;
      }
      envelope = Math.max(envelope, bytes - own);
      fill.push(own);
      expect(seqNos[0]).to.equal(next);
      next = seqNos[seqNos.length - 1]! + 1;
      expect(
        leecher.appendCaughtUp(
          1,
          seqNos.map((s) => rep.txns[String(s)]),
          rep.consProof,
          size,
          seeder.committedRoot(1),
        ),
      ).to.equal(true);
    }
    expect(next).to.equal(size + 1);
    expect(leecher.committedRoot(1)).to.equal(seeder.committedRoot(1));
    expect(pieces.length).to.be.greaterThan(2);
    // greedy: every piece but the last carries txns up to the limit less an envelope, its slack and one txn
    for (const b of fill.slice(0, -1)) expect(b).to.be.greaterThan(limit - envelope - 8 * 47 - 4 - largestTxn);
  });

  it('a txn larger than the limit goes alone (the transport reports it), the others still in full pieces', () => {
    const sim = new Simulation({ seed: 3, nodes: 4, faults: 'none', requests: 30 });
    expect(sim.run().violations).to.deep.equal([]);
    const seeder = sim.nodes[0]!.executor;
    const size = seeder.committedSize(1);
    const one = catchupEntrySize(1, seeder.txnRange(1, 1, 1)[0]);
    const core = seederCore(seeder, Math.max(1024, one - 1));
    const pieces = reps(
      core.handle({ kind: 'nodeMessage', from: 'Node3', msg: { op: 'CATCHUP_REQ', ledgerId: 1, seqNoStart: 1, seqNoEnd: size, catchupTill: size } }),
    );
    const got = pieces.flatMap((r) => Object.keys(r.txns).map(Number)).sort((a, b) => a - b);
    expect(got).to.deep.equal(Array.from({ length: size }, (_, i) => i + 1));
  });
});
