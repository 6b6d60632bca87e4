// The consensus core's check, after every event, of whether its 3PC vote journal changed (and must be saved): timed
// on the real state of a node at the end of a fault-free simulated run (its vote lists above the stable checkpoint),
// without changes, as after a PROPAGATE. Works on trees with either form of the check (journalChanged with a kept
// mark, or journalSignature compared as a string), so that a before and an after tree can be run alternately.
// Run: node --conditions=quire-source --import tsx --import @quire/common/polyfill scripts/bench/vote-journal-check.ts [rounds]
import { Simulation } from '@quire/consensus/sim';
import { loadAverages } from './lib.js';

interface Checker {
  journalChanged?: (mark: object) => boolean;
  journalSignature?: () => string;
}

const rounds = Number(process.argv[2] ?? 5);
const sim = new Simulation({ seed: 21, nodes: 4, faults: 'none', requests: 600 });
const r = sim.run();
if (!r.ok) throw new Error(`simulation failed: ${r.violations.join('; ')}`);
const core = sim.nodes[1]?.core as unknown as { viewChanger: Checker; journalSaved: object } | undefined;
if (core === undefined) throw new Error('no core');
const vc = core.viewChanger;
const N = 1_000_000;
let check: () => boolean;
let form: string;
if (typeof vc.journalChanged === 'function') {
  const f = vc.journalChanged.bind(vc);
  const mark = core.journalSaved;
  f(mark);
  check = () => f(mark);
  form = 'journalChanged (kept mark)';
} else if (typeof vc.journalSignature === 'function') {
  const f = vc.journalSignature.bind(vc);
  let saved = f();
  check = () => {
    const sig = f();
    if (sig === saved) return false;
    saved = sig;
    return true;
  };
  form = 'journalSignature (string)';
} else throw new Error('neither form of the check found');
let changed = 0;
for (let i = 0; i < N; i++) if (check()) changed++; // warm-up
for (let k = 0; k < rounds; k++) {
  const t0 = process.cpuUsage();
  const w0 = performance.now();
  for (let i = 0; i < N; i++) if (check()) changed++;
  const cpu = process.cpuUsage(t0);
  const wall = performance.now() - w0;
  console.log(
    `${form}: ${(((cpu.user + cpu.system) / N) * 1000).toFixed(0)} ns CPU, ${((wall * 1e6) / N).toFixed(0)} ns wall per check (changed ${changed}); load ${loadAverages()}`,
  );
}
