// Whole-pool acceptance of the genesis ceremony (#18): four `quire-node init --json` with distinct addresses
// (127.0.0.1 .. 127.0.0.4, the same ports), `quire-node genesis` from their outputs and the trustee and steward
// DIDs, four nodes started from the files it wrote, a first NYM signed by a wallet DID, the TAA accepted once and
// remembered for the next write. The nodes run under the devnet's Supervisor; everything is torn down in after().
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { DidKey } from '@quire/client';
import { main as nodeCli } from '../../packages/node/src/cli.js';
import { REPO_ROOT } from '../../devnet/lib/layout.js';
import { RESTART_EXIT_CODE, TRUSTEE_SEED, stewardSeed } from '../../devnet/lib/node-api.js';
import { nodeArgv } from '../../devnet/lib/node-command.js';
import { Supervisor } from '../../devnet/lib/supervisor.js';
import { waitForReady } from '../../devnet/lib/wait-ready.js';
import { binMode } from '../support/build.js';
import { freePortRun } from '../support/ports.js';
import { quireOk, runQuire } from '../support/client.js';

const HOSTS = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'];

async function node(argv: string[]): Promise<string[]> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await nodeCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  if (code !== 0) throw new Error(`quire-node ${argv.join(' ')} exited ${code}: ${err.join('\n')}`);
  return out;
}

describe('whole pool: the genesis ceremony on four addresses, a wallet DID and a remembered TAA', function () {
  this.timeout(900_000);
  const dir = mkdtempSync(join(tmpdir(), 'quire-ceremony-pool-'));
  const sups: Supervisor[] = [];
  const env = { QUIRE_CLI_HOME: join(dir, 'cli-home'), QUIRE_WALLET_PASSPHRASE: 'ceremony passphrase', QUIRE_GENESIS: '', QUIRE_SEED: '' };
  const quire = (args: string[]): Promise<string> => quireOk(args, { env, timeoutMs: 180_000 });
  let genesis: string;

  afterEach(function () {
    if (this.currentTest?.state !== 'failed') return;
    // the tail of every node's log, to see why
    for (let i = 1; i <= 4; i++) {
      const log = join(dir, `Node${i}`, 'node.log');
      const lines = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').slice(-12) : ['(no log)'];
      console.log(`---- Node${i} (${log})\n${lines.join('\n')}`);
    }
  });
  after(async () => {
    await Promise.all(sups.map((s) => s.stop()));
    if (process.env.QUIRE_TEST_KEEP === undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('init x4, genesis, four nodes from its files; a first NYM with a wallet DID; the TAA accepted once', async () => {
    const base = await freePortRun(2);
    // 1. every host: init with its addresses
    const inits: string[] = [];
    for (let i = 0; i < 4; i++) {
      const out = await node([
        'init',
        '--data-dir',
        join(dir, `Node${i + 1}`),
        '--name',
        `Node${i + 1}`,
        '--node-ip',
        HOSTS[i]!,
        '--node-port',
        String(base),
        '--client-ip',
        HOSTS[i]!,
        '--client-port',
        String(base + 1),
        '--json',
      ]);
      const file = join(dir, `Node${i + 1}.json`);
      writeFileSync(file, out[0]!);
      inits.push(file);
    }
    // 2. the coordinator: genesis from the four outputs, the trustee and four stewards
    const id = (seed: string): string => {
      const k = DidKey.fromSeed(seed);
      return `${k.did}:${k.verkey}`;
    };
    const out = await node([
      'genesis',
      ...inits.flatMap((f) => ['--node', f]),
      '--trustee',
      id(TRUSTEE_SEED),
      ...[1, 2, 3, 4].flatMap((i) => ['--steward', id(stewardSeed(i))]),
      '--out',
      join(dir, 'genesis'),
    ]);
    expect(out[0]).to.match(/\(4 validators\)/);
    genesis = join(dir, 'genesis', 'pool_transactions_genesis');
    // 3. every host: both files into the data dir, start
    const since = Math.floor(Date.now() / 1000);
    for (let i = 0; i < 4; i++) {
      const dataDir = join(dir, `Node${i + 1}`);
      mkdirSync(dataDir, { recursive: true });
      for (const f of ['pool_transactions_genesis', 'domain_transactions_genesis']) writeFileSync(join(dataDir, f), readFileSync(join(dir, 'genesis', f)));
      const config = join(dataDir, 'node.json');
      writeFileSync(config, JSON.stringify({ name: `Node${i + 1}` }));
      const sup = new Supervisor(
        [{ name: `Node${i + 1}`, argv: nodeArgv(dataDir, config, binMode()), cwd: REPO_ROOT, logFile: join(dataDir, 'node.log') }],
        { restartExitCode: RESTART_EXIT_CODE },
        () => undefined,
      );
      sup.start();
      sups.push(sup);
    }
    const ready = await waitForReady(genesis, { sinceSec: since, timeoutMs: 600_000 }).catch((e: Error & { perNode?: unknown }) => {
      throw new Error(`${e.message}: ${JSON.stringify(e.perNode)}`);
    });
    expect(ready.participants.length).to.be.at.least(3);

    // 4. a client: a wallet with the trustee's DID, a pool profile
    await quire(['wallet', 'create', 'ops']);
    await quire(['did', 'new', '--alias', 'trustee', '--seed', TRUSTEE_SEED]);
    await quire(['did', 'use', 'trustee']);
    await quire(['pool', 'add', 'ceremony', '--genesis', genesis]);
    expect(await quire(['--timeout', '60000', 'pool', 'status'])).to.match(/^Pool: 4 of 4 validators answered \(quorum 3\)/);
    const first = DidKey.random();
    expect(await quire(['nym', '--dest', first.did, '--verkey', first.verkey])).to.match(/^Committed: type 1, seqNo 6,/);
    // 5. a TAA; the first domain write accepts it, the next carries it without the flag
    await quire(['taa-aml', '--version', '1', '--aml', '{"on_file":"signed on paper"}']);
    await quire(['taa', '--version', '1.0', '--text', 'the ceremony agreement', '--ratification-ts', String(Math.floor(Date.now() / 1000) - 60)]);
    const refused = await runQuire(['nym', '--dest', DidKey.random().did], { env, timeoutMs: 180_000 });
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(/Txn Author Agreement acceptance is required/);
    expect(await quire(['--taa-mechanism', 'on_file', 'nym', '--dest', DidKey.random().did])).to.match(/^Committed: type 1/);
    const later = DidKey.random();
    expect(await quire(['nym', '--dest', later.did, '--verkey', later.verkey])).to.match(/^Committed: type 1/);
    expect(await quire(['get-nym', '--dest', later.did])).to.contain(later.did);
  });
});
