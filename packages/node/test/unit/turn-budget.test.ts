// The event queue's pause: a promise chain that always has its next link ready pauses for a turn of the event loop
// once it has run for its budget, so timers and I/O run amid a backlog instead of after it.
import { expect } from 'chai';
import { DEFAULT_TURN_MS, TurnBudget } from '../../src/turn-budget.js';

/** A chain of `n` links as the node's event queue builds it, each taking `costMs` of the fake clock. */
function chain(budget: TurnBudget | undefined, n: number, costMs: number, clock: { t: number }, log: string[]): Promise<void> {
  let q: Promise<void> = Promise.resolve();
  for (let i = 0; i < n; i++) {
    q = q.then(async () => {
      await budget?.spend();
      log.push(`e${i}`);
      clock.t += costMs;
    });
  }
  return q;
}

describe('TurnBudget', () => {
  it('a backlog of chained events pauses for the event loop once a turn has spent its budget', async () => {
    const clock = { t: 0 };
    const log: string[] = [];
    const done = chain(new TurnBudget(10, () => clock.t), 8, 4, clock, log);
    setImmediate(() => log.push('turn'));
    await done;
    // 4 ms each: the third event ends the first 10 ms turn (0, 4, 8 started within it), the loop turns, and so on
    expect(log).to.deep.equal(['e0', 'e1', 'e2', 'turn', 'e3', 'e4', 'e5', 'e6', 'e7']);
  });

  it('on the default budget a backlog of 30 ms events lets the event loop turn within about 100 ms', async () => {
    const clock = { t: 0 };
    const log: string[] = [];
    const done = chain(new TurnBudget(undefined, () => clock.t), 6, 30, clock, log);
    setImmediate(() => log.push('turn'));
    await done;
    // e0-e3 start at 0, 30, 60 and 90 ms, within the 100 ms turn; e4 waits for the turn (after e8 at 250 ms before)
    expect(log).to.deep.equal(['e0', 'e1', 'e2', 'e3', 'turn', 'e4', 'e5']);
    expect(DEFAULT_TURN_MS).to.equal(100);
  });

  it('without it the whole backlog runs before the event loop turns', async () => {
    const clock = { t: 0 };
    const log: string[] = [];
    const done = chain(undefined, 8, 4, clock, log);
    setImmediate(() => log.push('turn'));
    await done;
    expect(log).to.deep.equal(['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7']);
  });

  it('a lone event in a new turn runs at once, and a chain is never paused twice in one turn', async () => {
    const clock = { t: 0 };
    const budget = new TurnBudget(10, () => clock.t);
    expect(budget.spend()).to.equal(undefined);
    clock.t = 50;
    // same turn, budget spent: a pause
    const pause = budget.spend();
    expect(pause).to.be.instanceOf(Promise);
    await pause;
    // right after the pause a new turn has begun
    expect(budget.spend()).to.equal(undefined);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    clock.t = 1_000;
    // the event loop turned meanwhile: a new turn, no pause whatever the clock says
    expect(budget.spend()).to.equal(undefined);
  });
});
