// Long tasks of a CPU profile: busy stretches without a turn of the event loop, and what ran in them.
import { expect } from 'chai';
import fc from 'fast-check';
import { formatLongTasks, longTasks, type CpuProfile, type ProfileNode } from '../lib/long-tasks.js';

function node(id: number, functionName: string, url: string, children: number[] = []): ProfileNode {
  return { id, callFrame: { functionName, url, lineNumber: 0 }, children };
}

// (root) -> onData (network) -> handle (node) -> verify (crypto); (root) -> (idle); (root) -> (garbage collector);
// (root) -> listOnTimeout (a timer: another callback); (root) -> (program) (native, no JavaScript: between callbacks)
const NODES = [
  node(1, '(root)', '', [2, 5, 6, 7, 8]),
  node(2, 'onData', 'file:///r/packages/network/src/framed-stream.ts', [3]),
  node(3, 'handle', 'file:///r/packages/node/src/client-path.ts', [4]),
  node(4, 'verify', 'file:///r/packages/crypto/src/ed25519.ts'),
  node(5, '(idle)', ''),
  node(6, '(garbage collector)', ''),
  node(7, 'listOnTimeout', 'node:internal/timers'),
  node(8, '(program)', ''),
];

/** A profile from (node id, ms) samples. */
function profile(samples: [number, number][]): CpuProfile {
  return {
    nodes: NODES,
    startTime: 0,
    endTime: samples.reduce((a, [, ms]) => a + ms * 1000, 0),
    samples: samples.map(([id]) => id),
    timeDeltas: samples.map(([, ms]) => ms * 1000),
  };
}

const rep = (id: number, n: number, ms = 1): [number, number][] => Array.from({ length: n }, () => [id, ms]);

describe('long tasks of a cpu profile', () => {
  it('finds the busy runs at least the threshold long, with their functions by self and total time', () => {
    // idle 10 ms, a 30 ms run (short), idle 5, a 120 ms run (verify 80, handle 20, GC 20), idle 5, a 60 ms run of onData
    const p = profile([...rep(5, 10), ...rep(4, 30), ...rep(5, 5), ...rep(4, 80), ...rep(3, 20), ...rep(6, 20), ...rep(5, 5), ...rep(2, 60), ...rep(5, 3)]);
    const r = longTasks(p, { minMs: 50 });
    expect(r.sampledMs).to.equal(233);
    expect(r.busyMs).to.equal(210);
    expect(r.count).to.equal(2);
    expect(r.totalMs).to.equal(180);
    expect(r.longest.map((t) => [t.startMs, t.durationMs])).to.deep.equal([
      [45, 120],
      [170, 60],
    ]);
    const t = r.longest[0]!;
    expect(t.bySelf.map((x) => [x.name.split(' ')[0], x.ms])).to.deep.equal([
      ['verify', 80],
      ['(garbage', 20],
      ['handle', 20],
    ]);
    // total: onData and handle hold verify and handle's samples (100 ms); GC is on its own
    const total = Object.fromEntries(t.byTotal.map((x) => [x.name.split(' ')[0], x.ms]));
    expect(total).to.deep.equal({ onData: 100, handle: 100, verify: 80, '(garbage': 20 });
    expect(t.byTotal[0]!.name).to.equal('handle node/client-path.ts:1');
    expect(r.byTotalInLongTasks.find((x) => x.name.startsWith('onData'))!.ms).to.equal(160);
    expect(r.histogram.map((h) => [h.fromMs, h.count, h.ms])).to.deep.equal([
      [50, 1, 60],
      [100, 1, 120],
      [250, 0, 0],
      [1000, 0, 0],
    ]);
    const text = formatLongTasks(r).join('\n');
    expect(text).to.contain('long tasks (busy >= 50 ms');
    expect(text).to.contain('task at 0.04 s: 120 ms');
  });

  it('splits a busy run where another callback begins or where no JavaScript ran between two; GC continues a task', () => {
    // 40 ms of a socket read, then at once 40 ms of a timer: two tasks of 40, neither long at 50
    expect(longTasks(profile([...rep(4, 40), ...rep(7, 40)]), { minMs: 50 }).count).to.equal(0);
    // two socket reads with native work between them: two tasks
    const two = longTasks(profile([...rep(4, 60), ...rep(8, 2), ...rep(3, 60)]), { minMs: 50 });
    expect(two.longest.map((t) => t.durationMs)).to.deep.equal([60, 60]);
    expect(two.busyMs).to.equal(122);
    // GC inside a read belongs to it, whatever its place
    const gc = longTasks(profile([...rep(6, 5), ...rep(4, 30), ...rep(6, 20), ...rep(4, 10)]), { minMs: 50 });
    expect(gc.longest.map((t) => t.durationMs)).to.deep.equal([65]);
  });

  it('a lower threshold finds the short run too; a profile without samples has none', () => {
    const p = profile([...rep(4, 30), ...rep(5, 1), ...rep(4, 10)]);
    expect(longTasks(p, { minMs: 20 }).count).to.equal(1);
    expect(longTasks(p, { minMs: 5 }).count).to.equal(2);
    expect(longTasks({ nodes: NODES, startTime: 0, endTime: 0 }).count).to.equal(0);
  });

  it('busy time is split exactly between runs and the total is the sum of the deltas (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(2, 3, 4, 5, 6, 7, 8), fc.integer({ min: 0, max: 40 })), { maxLength: 200 }),
        fc.integer({ min: 1, max: 100 }),
        (s, minMs) => {
          const r = longTasks(profile(s), { minMs, longest: 1000 });
          expect(r.sampledMs).to.equal(s.reduce((a, [, ms]) => a + ms, 0));
          expect(r.busyMs).to.equal(s.filter(([id]) => id !== 5).reduce((a, [, ms]) => a + ms, 0));
          expect(r.totalMs).to.be.at.most(r.busyMs);
          expect(r.longest.length).to.equal(r.count);
          for (const t of r.longest) {
            expect(t.durationMs).to.be.at.least(minMs);
            expect(t.bySelf.reduce((a, x) => a + x.ms, 0)).to.be.at.most(t.durationMs + 1e-9);
          }
          expect(r.histogram.reduce((a, h) => a + h.count, 0)).to.equal(r.count);
        },
      ),
    );
  });
});
