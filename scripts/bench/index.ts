// Runs every benchmark script in this folder (or the ones named on the command line), one after
// another in child processes, so that one script's heap and JIT state do not colour the next.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const scripts = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)))
  .sort();
let failed = 0;
console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
for (const s of scripts) {
  console.log(`\n== ${s}`);
  const r = spawnSync(process.execPath, ['--conditions=quire-source', '--import', 'tsx', '--import', '@quire/common/polyfill', join(here, s)], {
    stdio: 'inherit',
  });
  if (r.status !== 0) failed++;
}
if (failed > 0) {
  console.error(`${failed} benchmark script(s) failed`);
  process.exit(1);
}
