// #16: a node whose own event loop stalled (overload, a long task) does not vote the primary out
// for what it could not see meanwhile: after a housekeeping tick that comes late by a quarter of
// PROGRESS_TIMEOUT or more, the monitor judges nothing for PROGRESS_TIMEOUT. Under a 1,500/s
// overload, nodes stalled for 3-8 s, woke with the PRE-PREPAREs and COMMITs still in their sockets,
// voted 25 at once, and the pool changed view for being busy.
import { expect } from 'chai';
import { type ConsensusEffect, Suspicion, TICK_TIMER, defaultConsensusOptions } from '@quire/consensus';
import { SimClient } from '@quire/consensus/sim';
import { Pool } from './scripted-pool.js';

const TICK = defaultConsensusOptions.tickMs;
const PROGRESS = defaultConsensusOptions.progressTimeoutMs;

/**
 * Node2, a backup of a started pool, then driven alone (its primary, Node1, proposes nothing more),
 * holding a finalised request.
 */
function backupWithPendingRequest() {
  const pool = new Pool({});
  pool.start();
  pool.runUntil(3_000);
  const core = pool.cores.get('Node2')!;
  expect(core.status().catchingUp).to.equal(false);
  const votes: { at: number; reason: number }[] = [];
  const note = (effects: ConsensusEffect[]): void => {
    for (const e of effects) if (e.kind === 'broadcast' && e.msg.op === 'INSTANCE_CHANGE') votes.push({ at: pool.now, reason: e.msg.reason });
  };
  const request = new SimClient(new Uint8Array(32).fill(9)).request('stalled');
  note(core.handle({ kind: 'clientRequest', connId: 'c1', request }));
  for (const from of ['Node3', 'Node4']) note(core.handle({ kind: 'nodeMessage', from, msg: { op: 'PROPAGATE', request, senderClient: null } }));
  expect(core.status().pendingRequests).to.equal(1);
  /** the tick fires `delay` ms after the last one (TICK: on time) */
  const tick = (delay = TICK): void => {
    pool.now += delay;
    note(core.handle({ kind: 'timer', id: TICK_TIMER }));
  };
  return {
    tick,
    votes,
    clock: {
      get t() {
        return pool.now;
      },
    },
  };
}

describe("monitor: the node's own stall (#16)", () => {
  it('a node ticking on time votes 25 once nothing was proposed for PROGRESS_TIMEOUT (the control)', () => {
    const n = backupWithPendingRequest();
    const from = n.clock.t;
    while (n.clock.t < from + PROGRESS + 1_500) n.tick();
    expect(n.votes.map((v) => v.reason)).to.include(Suspicion.PRIMARY_DEGRADED);
  });

  it('a node whose tick comes seconds late does not vote at once, and still votes if nothing comes after it resumed', () => {
    const n = backupWithPendingRequest();
    n.tick();
    // the event loop stalls for 5 s: the next tick comes late
    n.tick(5_000);
    const resumedAt = n.clock.t;
    for (let i = 0; i < 10; i++) n.tick();
    expect(n.votes, 'votes right after the stall').to.deep.equal([]);
    // nothing proposed for a whole PROGRESS_TIMEOUT after it resumed: the primary is judged again
    while (n.clock.t < resumedAt + PROGRESS + 1_500) n.tick();
    expect(n.votes.map((v) => v.reason)).to.include(Suspicion.PRIMARY_DEGRADED);
    expect(n.votes[0]!.at).to.be.at.least(resumedAt + PROGRESS);
  });
});
