// A copy of a payload under another signature or envelope (a client that signed again, two clients sending the same
// payload) is taken in and acknowledged like any write, and dropped when the first copy is batched or committed
// (consensus.md §3.3). Its clients are answered from the ledger once the payload is committed (replyFromLedger: a
// REQNACK "Same txn was already ordered with different signatures" from the node), never left to time out.
import { expect } from 'chai';
import type { ClientRequestBody, ConsensusEffect } from '@quire/consensus';
import { SimRequestAnalyzer } from '@quire/consensus/sim';
import { Pool, VALIDATORS } from './scripted-pool.js';

function infoOf(request: ClientRequestBody): { digest: string; payloadDigest: string } {
  const check = new SimRequestAnalyzer().analyze(request);
  if (!check.ok) throw new Error(`not a valid request: ${check.reason}`);
  return check.info;
}

function startedPool(): { pool: Pool; t: number } {
  const pool = new Pool({ stateFreshnessUpdateIntervalSec: 3600 });
  pool.start();
  pool.runUntil(10_000);
  return { pool, t: 10_000 };
}

/**
 * A batch in flight from `t` (its COMMITs, and the repair's requests for them, take 2 s): the requests finalised
 * meanwhile wait for the batch wait and are cut into one batch, a payload's copies with it.
 */
function busyPool(pool: Pool, t: number): void {
  pool.delay = (_from, _to, msg) => (msg.op === 'COMMIT' || msg.op === 'MESSAGE_REQUEST' || msg.op === 'MESSAGE_RESPONSE' ? 2_000 : 5);
  pool.submitAt(t + 1);
}

/** The client sends `copy` to every node at `at` on the connection `connId`. */
function sendCopy(pool: Pool, at: number, copy: ClientRequestBody, connId: string): void {
  for (const n of VALIDATORS) pool.eventAt(at, n, { kind: 'clientRequest', connId, request: copy });
}

type Of<K extends ConsensusEffect['kind']> = Extract<ConsensusEffect, { kind: K }>;

function effectsOf<K extends ConsensusEffect['kind']>(pool: Pool, node: string, kind: K): { at: number; effect: Of<K> }[] {
  return pool.clientEffects.filter((x) => x.node === node && x.effect.kind === kind).map((x) => ({ at: x.at, effect: x.effect as Of<K> }));
}

/** when `node` ordered the request whose client connection is `connId` */
function orderedAt(pool: Pool, node: string, connId: string): number | undefined {
  return effectsOf(pool, node, 'ordered').find((x) => x.effect.replies.some((r) => r.connIds.includes(connId)))?.at;
}

/**
 * On `node`: the first copy (its client `firstConnId`) was ordered, and the copy (client 'copy', `c`) was answered from
 * the ledger once, not before that, and is no longer held.
 */
function expectAnsweredAfterFirst(pool: Pool, node: string, firstConnId: string, c: { digest: string; payloadDigest: string }): void {
  const first = orderedAt(pool, node, firstConnId);
  expect(first, node).to.not.equal(undefined);
  const answers = effectsOf(pool, node, 'replyFromLedger').filter((x) => x.effect.connId === 'copy');
  expect(
    answers.map((x) => x.effect),
    node,
  ).to.deep.equal([{ kind: 'replyFromLedger', connId: 'copy', payloadDigest: c.payloadDigest, digest: c.digest }]);
  expect(answers[0]?.at ?? 0, node).to.be.at.least(first ?? Number.POSITIVE_INFINITY);
  expect(pool.cores.get(node)?.holdsRequest(c.digest), node).to.equal(false);
}

describe('the clients of a payload copy dropped as a duplicate are answered from the ledger', () => {
  it('a copy sent with the first is acknowledged, dropped when the first is batched, and answered on every node once the first is committed', () => {
    const { pool, t } = startedPool();
    busyPool(pool, t);
    const [a] = pool.submitAt(t + 50);
    if (a === undefined) throw new Error('no request');
    const copy = pool.client.variant(a);
    const c = infoOf(copy);
    expect(c.payloadDigest).to.equal(infoOf(a).payloadDigest);
    expect(c.digest).to.not.equal(infoOf(a).digest);
    sendCopy(pool, t + 50, copy, 'copy');
    pool.runUntil(t + 5_000);
    for (const n of VALIDATORS) {
      expect(
        effectsOf(pool, n, 'clientAck').some((x) => x.effect.connId === 'copy'),
        n,
      ).to.equal(true);
      expectAnsweredAfterFirst(pool, n, `c${String(a.reqId)}`, c);
    }
  });

  it('a copy that reaches the primary while the first is in a batch waits for that batch and is answered after its commit', () => {
    const { pool, t } = startedPool();
    // the COMMITs (and the repair's requests for them) are slow: the first copy's batch stays applied and unordered 2 s
    pool.delay = (_from, _to, msg) => (msg.op === 'COMMIT' || msg.op === 'MESSAGE_REQUEST' || msg.op === 'MESSAGE_RESPONSE' ? 2_000 : 5);
    const [a] = pool.submitAt(t + 1);
    if (a === undefined) throw new Error('no request');
    const copy = pool.client.variant(a);
    const c = infoOf(copy);
    pool.runUntil(t + 300);
    expect(pool.writes().length).to.equal(1);
    sendCopy(pool, t + 300, copy, 'copy');
    // finalised, and cut from the primary's queue by its next batch (the payload is in a batch): held, not answered
    pool.runUntil(t + 1_000);
    for (const n of VALIDATORS) {
      expect(
        effectsOf(pool, n, 'clientAck').some((x) => x.effect.connId === 'copy'),
        n,
      ).to.equal(true);
      expect(orderedAt(pool, n, `c${String(a.reqId)}`), n).to.equal(undefined);
      expect(pool.cores.get(n)?.holdsRequest(c.digest), n).to.equal(true);
      expect(effectsOf(pool, n, 'replyFromLedger'), n).to.deep.equal([]);
    }
    pool.runUntil(t + 6_000);
    for (const n of VALIDATORS) {
      expectAnsweredAfterFirst(pool, n, `c${String(a.reqId)}`, c);
      // the copy was never proposed: one write batch in all
      expect(orderedAt(pool, n, 'copy'), n).to.equal(undefined);
    }
    expect(pool.writes().length).to.equal(1);
  });

  it('a copy cut from the batch in which the first is discarded waits for it, is queued again, proposed and answered (REJECT)', () => {
    const { pool, t } = startedPool();
    busyPool(pool, t);
    // fails dynamic validation: discarded from its batch, commits nothing, so another copy may be proposed
    const a = pool.client.request(`dest${t}invalidxxxxxxxxxxxxxxxx`, { invalid: true });
    const copy = pool.client.variant(a);
    pool.sendAt(t + 50, a, VALIDATORS);
    sendCopy(pool, t + 50, copy, 'copy');
    pool.runUntil(t + 1_000);
    for (const n of VALIDATORS) expect(pool.cores.get(n)?.holdsRequest(infoOf(copy).digest), n).to.equal(true);
    pool.runUntil(t + 10_000);
    for (const n of VALIDATORS) {
      const rejected = effectsOf(pool, n, 'ordered').flatMap((x) => x.effect.rejects.flatMap((r) => r.connIds));
      expect(rejected, n).to.include.members([`c${String(a.reqId)}`, 'copy']);
      expect(effectsOf(pool, n, 'replyFromLedger'), n).to.deep.equal([]);
      expect(pool.cores.get(n)?.holdsRequest(infoOf(copy).digest), n).to.equal(false);
    }
  });
});
