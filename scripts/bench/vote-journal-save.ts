// CPU of one save of the 3PC vote journal (packages/node/src/vote-journal-store.ts), which the consensus core makes
// synchronously several times per ordered batch: process CPU (user + system) and wall time per save, over a
// journal whose lists grow by one BatchID per save from 50 to 149 entries and start again (as between two stable
// checkpoints), with the entry objects kept from save to save as the core keeps them.
//
//   node --conditions=quire-source --import tsx scripts/bench/vote-journal-save.ts [saves] [rounds]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileVoteJournalStore } from '../../packages/node/src/vote-journal-store.js';

const saves = Number(process.argv[2] ?? 15_000);
const rounds = Number(process.argv[3] ?? 3);
const id = (s: number): { view_no: number; pp_view_no: number; pp_seq_no: number; pp_digest: string } => ({
  view_no: 0,
  pp_view_no: 0,
  pp_seq_no: s,
  pp_digest: s.toString(16).padStart(64, '0'),
});
const ids = Array.from({ length: 200 }, (_, k) => id(k + 1));
for (let r = 0; r < rounds; r++) {
  const dir = mkdtempSync(join(tmpdir(), 'quire-vote-journal-bench-'));
  try {
    const store = new FileVoteJournalStore(join(dir, '3pc-votes.json'));
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < saves; i++) {
      const n = 50 + (i % 100);
      store.save({ preprepared: ids.slice(0, n), prepared: ids.slice(0, n - 2) });
    }
    const cpu = process.cpuUsage(cpu0);
    const wall = performance.now() - t0;
    (store as { close?: () => void }).close?.();
    console.log(
      `round ${r + 1}: ${((cpu.user + cpu.system) / saves).toFixed(1)} us CPU per save (user ${(cpu.user / saves).toFixed(1)}, system ${(cpu.system / saves).toFixed(1)}), ${((1000 * wall) / saves).toFixed(1)} us wall`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
