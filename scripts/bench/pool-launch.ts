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
import { constants } from 'node:os';
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
    // a session of its own: a signal reaches the child once, through this process, whoever sent it (Ctrl-C in the
    // terminal, npm forwarding that same Ctrl-C, a kill of this pid alone)
    { stdio: 'inherit', detached: true },
  );
  // SIGINT and SIGTERM are forwarded alike, each once: pool.ts stops its nodes on the first, and a repeat (npm and the
  // terminal both send Ctrl-C here) would end it before they stopped; a hang-up of the terminal stops it as SIGTERM
  // does, since the child, in a session of its own, does not get it. This process waits for the child and exits as it
  // did, 128 + the signal's number when a signal ended it.
  const forwarded = new Set<NodeJS.Signals>();
  const forward = (sig: NodeJS.Signals): void => {
    if (forwarded.has(sig)) return;
    forwarded.add(sig);
    child.kill(sig);
  };
  process.on('SIGINT', () => forward('SIGINT'));
  process.on('SIGTERM', () => forward('SIGTERM'));
  process.on('SIGHUP', () => forward('SIGTERM'));
  child.on('exit', (status, signal) => process.exit(status ?? (signal !== null ? 128 + constants.signals[signal] : 1)));
}
