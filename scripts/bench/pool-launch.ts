// The entry point of `npm run bench:pool`: decides which code the load generator (this process, which drives the pool
// through @quire/client) runs, then runs scripts/bench/pool.ts. The generator runs the built packages
// (packages/*/dist), as the SDK's users do, when every package's build is up to date with its sources; otherwise the
// TypeScript sources through tsx, and says so: a stale build is never measured. It follows --node-bin, as the nodes do
// (docs/devnet.md): `auto` the build when it is current, else the sources; `build` the build, or a one-line error
// when it is missing or stale; `source` the sources. Sources through tsx cost the generator CPU the built SDK does not
// spend (esbuild's name for every closure made, about a tenth of its time), which the nodes on the same cores lose.
//
// This process is started without the `quire-source` export condition, so @quire/* resolve to dist here; for the
// sources it starts pool.ts again with that condition, as a child with the same arguments and terminal.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtPackagesFresh } from '../../devnet/lib/build-fresh.js';
import { generatorCode, type GeneratorCode } from './generator-code.js';

const say = (l: string): void => void process.stderr.write(`bench:pool: ${l}\n`);
const here = dirname(fileURLToPath(import.meta.url));

let code: GeneratorCode;
try {
  code = generatorCode(process.argv.slice(2), builtPackagesFresh);
} catch (e) {
  say(e instanceof Error ? e.message : String(e));
  process.exit(2);
}
say(`load generator: ${code.why}`);
if (code.use === 'build') {
  await import('@quire/common/polyfill');
  await import('./pool.js');
} else {
  const child = spawn(
    process.execPath,
    ['--conditions=quire-source', '--import', 'tsx', '--import', '@quire/common/polyfill', join(here, 'pool.ts'), ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  // Ctrl-C reaches the child too (same process group): this process waits for it to stop its nodes
  const forward = (sig: NodeJS.Signals): void => void child.kill(sig);
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', forward);
  child.on('exit', (status, signal) => process.exit(status ?? (signal !== null ? 128 : 1)));
}
