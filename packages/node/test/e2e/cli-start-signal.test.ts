// `quire-node start` stopped by SIGTERM while it is still starting: the start is aborted (what it
// opened is closed) and the process exits 0 like a stop after the start, instead of dying on the
// signal with its stores half-opened.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { openLevelKvStore } from '@quire/storage';
import { main, nodeSeed, poolGenesis, standardPoolNodes, writeGenesisFiles } from '../../src/index.js';
import { freePort, spawnNodeStart, waitFor } from './support.js';

describe('e2e: quire-node start stopped while starting', function () {
  this.timeout(120_000);
  let root: string;
  let proc: ChildProcess | undefined;
  const log: string[] = [];

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'quire-start-signal-'));
  });

  after(async () => {
    if (proc !== undefined && proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    await rm(root, { recursive: true, force: true });
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.error(log.join('').slice(-4000));
  });

  it('exits 0 on SIGTERM during the start, and its database opens again at once', async () => {
    const ports: { nodePort: number; clientPort: number }[] = [];
    for (let i = 0; i < 4; i++) ports.push({ nodePort: await freePort(), clientPort: await freePort() });
    const nodes = standardPoolNodes(ports);
    const genesis = await writeGenesisFiles(join(root, 'genesis'), poolGenesis(nodes));
    const alias = nodes[0]!.alias;
    const dir = join(root, alias);
    const quiet = { out: () => undefined, err: () => undefined };
    expect(await main(['init', '--data-dir', dir, '--name', alias, '--seed', nodeSeed(alias), '--json'], quiet)).to.equal(0);
    const cfg = join(dir, 'config.json');
    await writeFile(cfg, JSON.stringify({ poolGenesisFile: genesis.pool, domainGenesisFile: genesis.domain, logLevel: 'info' }));
    const p = spawnNodeStart(dir, cfg);
    proc = p;
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => p.once('exit', (code, signal) => res({ code, signal })));
    let signalled = false;
    p.stdout!.on('data', (d: Buffer) => {
      log.push(d.toString());
      // the first genesis file is loaded early in the start, before the stores and hosts are up
      if (!signalled && log.join('').includes('genesis loaded')) {
        signalled = true;
        p.kill('SIGTERM');
      }
    });
    p.stderr!.on('data', (d: Buffer) => log.push(d.toString()));
    expect(await exit).to.deep.equal({ code: 0, signal: null });
    expect(signalled).to.equal(true);
    const text = log.join('');
    // aborted while starting, or (on a fast start) stopped right after it: graceful either way
    expect(text.includes('start aborted') || text.includes('shutting down'), text.slice(-2000)).to.equal(true);
    const kv = await waitFor('the database to open', () => openLevelKvStore(join(dir, 'db')), 10_000);
    await kv.close();
  });
});
