// Admission control at the client path's door (consensus.md §2 step 5, intake.ts): a write that
// consensus refuses as overloaded is answered REQNACK "pool overloaded" before it is verified or
// queued; reads and writes consensus admits take their usual path. The writes admitted and not yet
// answered count toward the limit (a burst read in one go is not admitted whole), and a write
// consensus answers late still gets its answer.
import { expect } from 'chai';
import { POOL_OVERLOADED_REASON, parseJson } from '@quire/common';
import { ClientPath, TurnGate, type ClientChannel } from '../../src/client-path.js';
import { testLogger } from '../../src/logger.js';
import { type Fixture, memoryFixture, nymRequest, trustee, user } from './helpers.js';

const enc = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));

function recorder(): ClientChannel & { responses: Record<string, unknown>[] } {
  const r = {
    responses: [] as Record<string, unknown>[],
    respond: (b: Uint8Array) => (r.responses.push(parseJson(new TextDecoder().decode(b)) as Record<string, unknown>), true),
    push: () => true,
  };
  return r;
}

describe('client path: admission at the door', () => {
  let fx: Fixture;
  let submitted: string[];
  let asked: Record<string, unknown>[];
  let admit: boolean;
  let inProgressAsked: number[];
  let clock: number;
  let path: ClientPath;

  beforeEach(async () => {
    fx = await memoryFixture();
    submitted = [];
    asked = [];
    admit = true;
    inProgressAsked = [];
    clock = 0;
    path = new ClientPath(
      {},
      {
        pipeline: fx.pipeline,
        stores: fx.stores,
        submit: (connId) => submitted.push(connId),
        admit: (r, inProgress) => (asked.push(r), inProgressAsked.push(inProgress), admit),
        now: () => 1_700_000_000,
        monotonicMs: () => clock,
        logger: testLogger(),
      },
    );
  });

  afterEach(async () => {
    await fx.stores.kv.close();
  });

  it('answers a refused write with REQNACK "pool overloaded" without verifying or submitting it', async () => {
    admit = false;
    const req = nymRequest(trustee, user(1));
    // a bad signature would be a REQNACK of its own if the write were verified
    const ch = recorder();
    await path.handle(enc({ ...req, signature: '1111' }), ch);
    expect(ch.responses).to.deep.equal([{ op: 'REQNACK', identifier: req.identifier, reqId: req.reqId, reason: POOL_OVERLOADED_REASON }]);
    expect(submitted).to.deep.equal([]);
    expect(asked).to.have.length(1);
    expect(asked[0]!.reqId).to.equal(req.reqId);
  });

  it('submits a write consensus admits, and never asks about reads', async () => {
    await path.handle(enc(nymRequest(trustee, user(2))), recorder());
    expect(submitted).to.have.length(1);
    admit = false;
    const ch = recorder();
    await path.handle(enc({ operation: { type: '105', dest: user(2).did }, identifier: trustee.did, reqId: 7, protocolVersion: 2 }), ch);
    expect(asked).to.have.length(1);
    expect(ch.responses[0]!.op).to.equal('REPLY');
  });

  it('counts the writes admitted and not yet answered toward the limit, from the door to their first answer', async () => {
    // a burst: three writes enter at once (as frames read in one go); each later one is asked with the earlier ones in
    const burst = [1, 2, 3].map((i) => path.handle(enc(nymRequest(trustee, user(10 + i))), recorder()));
    expect(inProgressAsked).to.deep.equal([0, 1, 2]);
    await Promise.all(burst);
    expect(submitted).to.have.length(3);
    expect(path.inProgress).to.equal(3);
    // consensus's first answer releases them: REQACK, REQNACK
    path.ack(submitted[0]!);
    path.nackWrite(submitted[1]!, 'pool overloaded');
    expect(path.inProgress).to.equal(1);
    await path.handle(enc(nymRequest(trustee, user(20))), recorder());
    expect(inProgressAsked[3]).to.equal(1);
    // a refused write and a write that fails its checks count for nothing
    admit = false;
    await path.handle(enc(nymRequest(trustee, user(21))), recorder());
    admit = true;
    const bad = recorder();
    await path.handle(enc({ ...nymRequest(trustee, user(22)), signature: '1111' }), bad);
    expect(bad.responses[0]!.op).to.equal('REQNACK');
    expect(path.inProgress).to.equal(2);
    path.forgetSession('none');
    expect(path.inProgress).to.equal(2);
  });

  it('a write consensus answers late still gets its REQACK (and its session slot back)', async () => {
    const ch = recorder();
    await path.handle(enc(nymRequest(trustee, user(30))), ch);
    // consensus's events wait behind others: the reply sweep runs before the write is acknowledged
    clock = 59_999;
    expect(path.expire()).to.equal(0);
    path.ack(submitted[0]!);
    expect(ch.responses.map((r) => r.op)).to.deep.equal(['REQACK']);
    expect(path.inProgress).to.equal(0);
    // acknowledged and still without its REPLY: kept (a path without `holds` takes every write as held)
    clock = 600_000;
    expect(path.expire()).to.equal(0);
    expect(path.pendingCount).to.equal(1);
  });

  it('a write consensus never answers is released after unansweredReleaseMs (60 s)', async () => {
    await path.handle(enc(nymRequest(trustee, user(31))), recorder());
    clock = 59_999;
    expect(path.expire()).to.equal(0);
    clock = 60_000;
    expect(path.expire()).to.equal(1);
    expect(path.inProgress).to.equal(0);
  });

  it('checks a burst of admitted writes a few per turn of the event loop: a timer set during the burst runs amid it', async () => {
    path = new ClientPath(
      { checksPerTurn: 8, checksTurnMs: 1_000 },
      {
        pipeline: fx.pipeline,
        stores: fx.stores,
        submit: (connId) => submitted.push(connId),
        admit: () => true,
        now: () => 1_700_000_000,
        logger: testLogger(),
      },
    );
    // 40 writes read in one go, then an immediate (as a timer or a peer's message would be) queued behind them
    const burst = Array.from({ length: 40 }, (_, i) => path.handle(enc(nymRequest(trustee, user(100 + i))), recorder()));
    let submittedWhenTurned = -1;
    setImmediate(() => (submittedWhenTurned = submitted.length));
    await Promise.all(burst);
    expect(submitted).to.have.length(40);
    // the event loop turned after the first turn's 8 checks, long before the 40th
    expect(submittedWhenTurned).to.be.within(1, 8);
  });
});

describe('TurnGate', () => {
  it('lets waiters through one at a time, at most perTurn per turn of the event loop, in order', async () => {
    const gate = new TurnGate(3, 1_000, () => performance.now());
    const log: string[] = [];
    const all = Array.from({ length: 7 }, async (_, i) => {
      await gate.wait();
      log.push(`w${i}`);
      gate.done();
    });
    setImmediate(() => log.push('turn'));
    await Promise.all(all);
    expect(log).to.deep.equal(['w0', 'w1', 'w2', 'turn', 'w3', 'w4', 'w5', 'w6']);
    expect(gate.waitingCount).to.equal(0);
  });

  it('ends a turn when its time is up, and lets a lone waiter through at once when idle', async () => {
    let t = 0;
    const gate = new TurnGate(100, 5, () => t);
    const log: string[] = [];
    const all = Array.from({ length: 4 }, async (_, i) => {
      await gate.wait();
      log.push(`w${i}`);
      t += 3; // each check takes 3 ms: the turn's 5 ms are up after the second
      gate.done();
    });
    setImmediate(() => log.push('turn'));
    await Promise.all(all);
    expect(log).to.deep.equal(['w0', 'w1', 'turn', 'w2', 'w3']);
    let through = false;
    const lone = gate.wait().then(() => (through = true));
    await Promise.resolve();
    expect(through).to.equal(true);
    gate.done();
    await lone;
  });
});
