// A leecher applies the contiguous CATCHUP_REPs it holds as one chunk (catchup.ts, #16): one proof check with the
// last reply's proof and one write instead of one per reply cut to MSG_LEN_LIMIT. The ledger it reaches is the
// pool's, and a bad reply among the waiting ones is still found: the chunk is refused, the replies are applied one
// by one, the good ones before it are kept and the peer that sent it is suspected.
import { expect } from 'chai';
import { Suspicion } from '@quire/consensus';
import { Pool } from './scripted-pool.js';
import { LEECHER_OPTIONS, catchUpScenario, executorOf } from './catchup-leecher.js';

const DOMAIN = 1;
const WRITES = 400;
/** the txn altered in a reply (a bad seeder) */
const BAD_SEQ_NO = WRITES - 10;

interface Run {
  pool: Pool;
  /** txns of each domain appendCaughtUp call of Node4, and whether it applied */
  applies: { txns: number; applied: boolean }[];
  /** domain CATCHUP_REPs Node4 received */
  replies: number;
  /** the peer whose reply was altered */
  corruptedBy?: string;
}

/**
 * Node4 is down while the pool orders WRITES writes, then starts again with an empty store and catches up; the domain
 * replies are cut small (msgLenLimit) and the ones of the first range come late, so the others wait. `corrupt`
 * alters txn BAD_SEQ_NO in the reply that carries it.
 */
function catchUp(corrupt: boolean): Run {
  const pool = new Pool(LEECHER_OPTIONS);
  const applies: Run['applies'] = [];
  let down = true;
  let replies = 0;
  let firstRangeFrom: string | undefined;
  let corruptedBy: string | undefined;
  pool.drop = (from, to) => down && (to === 'Node4' || from === 'Node4');
  pool.delay = (from, to, msg) => {
    if (to !== 'Node4' || msg.op !== 'CATCHUP_REP' || msg.ledgerId !== DOMAIN) return 5;
    replies++;
    // the peer asked for the first range answers last: the rest waits to be applied
    if (Object.keys(msg.txns).includes('1')) firstRangeFrom = from;
    return from === firstRangeFrom ? 300 : 5;
  };
  pool.rewrite = (from, to, msg) => {
    if (!corrupt || corruptedBy !== undefined || to !== 'Node4' || msg.op !== 'CATCHUP_REP' || msg.ledgerId !== DOMAIN) return msg;
    // the reply holding txn BAD_SEQ_NO, one that waits for the first range: that txn altered
    const k = String(BAD_SEQ_NO);
    if (!(k in msg.txns)) return msg;
    corruptedBy = from;
    return { ...msg, txns: { ...msg.txns, [k]: { ...(msg.txns[k] as Record<string, unknown>), altered: true } } };
  };
  catchUpScenario(pool, WRITES, DOMAIN, applies, () => (down = false), 60_000);
  if (corrupt) expect(corruptedBy, 'a reply was altered').to.be.a('string');
  return { pool, applies, replies, corruptedBy };
}

describe('catch-up applies the contiguous replies waiting as one chunk', () => {
  it('reaches the pool ledger with fewer writes than replies, some of them over several replies', () => {
    const { pool, applies, replies } = catchUp(false);
    const node1 = executorOf(pool.cores.get('Node1')!);
    const node4 = executorOf(pool.cores.get('Node4')!);
    expect(node1.committedSize(DOMAIN)).to.equal(WRITES);
    expect(node4.committedSize(DOMAIN), 'Node4 caught up the domain ledger').to.equal(node1.committedSize(DOMAIN));
    expect(node4.committedRoot(DOMAIN)).to.equal(node1.committedRoot(DOMAIN));
    expect(pool.cores.get('Node4')!.status().catchingUp).to.equal(false);
    expect(applies.every((a) => a.applied)).to.equal(true);
    expect(replies, 'the replies were cut small').to.be.greaterThan(6);
    expect(applies.length, 'fewer writes than replies').to.be.lessThan(replies);
    expect(pool.suspicions.filter((s) => s.by === 'Node4')).to.deep.equal([]);
  });

  it('a bad reply among them: the chunk is refused, the good replies apply one by one, the sender is suspected', () => {
    const { pool, applies, corruptedBy } = catchUp(true);
    const node1 = executorOf(pool.cores.get('Node1')!);
    const node4 = executorOf(pool.cores.get('Node4')!);
    expect(node4.committedSize(DOMAIN), 'Node4 caught up the domain ledger').to.equal(node1.committedSize(DOMAIN));
    expect(node4.committedRoot(DOMAIN)).to.equal(node1.committedRoot(DOMAIN));
    const refused = applies.filter((a) => !a.applied);
    expect(refused.length, 'the chunk with the bad reply, then the bad reply alone').to.equal(2);
    expect(refused[0]!.txns).to.be.greaterThan(refused[1]!.txns);
    const byNode4 = pool.suspicions.filter((s) => s.by === 'Node4');
    expect(byNode4.map((s) => [s.peer, s.code])).to.deep.equal([[corruptedBy, Suspicion.INVALID_CATCHUP_DATA]]);
  });
});
