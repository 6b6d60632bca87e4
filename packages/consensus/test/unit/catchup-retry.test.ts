// A leecher's catch-up of a ledger asks every missing range at once; the pieces of a range (replies cut to
// MSG_LEN_LIMIT) are applied when the range is whole, one write per range, and the missing ranges are asked again only
// after CATCHUP_SILENCE_MS without a reply (catchup.ts, #16). Before, every reply was applied as it came (one write per
// piece when they came one at a time) and every range not received 5 s after it was asked was asked again, of
// another seeder, every 5 s, however fast the replies were coming.
import { expect } from 'chai';
import { Pool } from './scripted-pool.js';
import { LEECHER_OPTIONS, catchUpScenario, executorOf } from './catchup-leecher.js';

const DOMAIN = 1;
const WRITES = 400;

interface Run {
  pool: Pool;
  /** txns of each domain appendCaughtUp call of Node4, and whether it applied */
  applies: { txns: number; applied: boolean }[];
  /** domain CATCHUP_REPs sent to Node4 */
  replies: number;
  /** simulated times at which Node4 sent its domain CATCHUP_REQs */
  asked: number[];
}

/**
 * Node4 is down while the pool orders WRITES writes, then starts again with an empty store and catches up. The
 * domain CATCHUP_REPs to it are cut small (msgLenLimit) and arrive one at a time, the n-th (from 0) `spacingMs` * n
 * after it was sent; `lose(n)` drops the n-th.
 */
function catchUp(spacingMs: number, lose: (n: number) => boolean = () => false): Run {
  const pool = new Pool(LEECHER_OPTIONS);
  const applies: Run['applies'] = [];
  const asked: number[] = [];
  let down = true;
  let replies = 0;
  let sent = 0;
  pool.drop = (from, to, msg) => {
    if (down) return to === 'Node4' || from === 'Node4';
    return to === 'Node4' && msg.op === 'CATCHUP_REP' && msg.ledgerId === DOMAIN && lose(sent++);
  };
  pool.delay = (from, to, msg) => {
    if (from === 'Node4' && msg.op === 'CATCHUP_REQ' && msg.ledgerId === DOMAIN) asked.push(pool.now);
    if (to !== 'Node4' || msg.op !== 'CATCHUP_REP' || msg.ledgerId !== DOMAIN) return 5;
    return 5 + spacingMs * replies++;
  };
  catchUpScenario(pool, WRITES, DOMAIN, applies, () => (down = false), 120_000);
  return { pool, applies, replies, asked };
}

function expectCaughtUp(pool: Pool): void {
  const node1 = executorOf(pool.cores.get('Node1')!);
  const node4 = executorOf(pool.cores.get('Node4')!);
  expect(node1.committedSize(DOMAIN)).to.equal(WRITES);
  expect(node4.committedSize(DOMAIN), 'Node4 caught up the domain ledger').to.equal(WRITES);
  expect(node4.committedRoot(DOMAIN)).to.equal(node1.committedRoot(DOMAIN));
  expect(pool.cores.get('Node4')!.status().catchingUp).to.equal(false);
}

describe('catch-up: one write per asked range, asked again only after silence', () => {
  it('the pieces of a range arriving one at a time are applied together, once the range is whole', () => {
    const { pool, applies, replies, asked } = catchUp(50);
    expectCaughtUp(pool);
    expect(replies, 'the replies were cut small').to.be.greaterThan(3 * asked.length);
    expect(applies.every((a) => a.applied)).to.equal(true);
    expect(applies.length, 'one write per asked range').to.equal(asked.length);
  });

  it('replies coming for longer than 5 s, never 5 s apart: the ranges are asked once', () => {
    const { pool, replies, asked } = catchUp(40);
    expectCaughtUp(pool);
    expect(replies * 40, 'the transfer took more than 5 s').to.be.greaterThan(5_000);
    expect(new Set(asked).size, 'all asked at one time').to.equal(1);
  });

  it('a piece lost on the way: after 5 s without a reply what is waiting is applied and the rest asked again', () => {
    const { pool, applies, asked } = catchUp(0, (n) => n === 2);
    expectCaughtUp(pool);
    expect(new Set(asked).size, 'asked again once').to.equal(2);
    expect(applies.every((a) => a.applied)).to.equal(true);
  });
});
