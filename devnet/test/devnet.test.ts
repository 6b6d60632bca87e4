import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { b58decode, parseJson, sha256Hex } from '@quire/common';
import { BlsSecretKey, blsVerifyPop } from '@quire/crypto';
import { Ledger, loadGenesis, openLevelKvStore, openMemoryKvStore } from '@quire/storage';
import { quireArgv, quireOk } from '../../test/support/client.js';
import { REPO_ROOT, SUPERVISOR_LOG, poolLayout } from '../lib/layout.js';
import { STANDARD_DOMAIN_GENESIS, TRUSTEE_SEED } from '../lib/node-api.js';
import { DevnetSetupError, ensureDevnet } from '../lib/setup.js';
import { isAlive, readState } from '../lib/state.js';
import { SOURCE_RUN_ARGS, waitUntil } from '@quire/testing';

const run = promisify(execFile);

/** A devnet command that must succeed; when it fails, the error carries what it printed. */
async function devnetOk(args: string[]): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(DEVNET[0]!, [...DEVNET.slice(1), ...args], { cwd: REPO_ROOT });
  } catch (e) {
    const x = e as Error & { code?: unknown; stdout?: string; stderr?: string };
    throw new Error(`devnet ${args.join(' ')} exited ${String(x.code)}\nstdout: ${x.stdout ?? ''}\nstderr: ${x.stderr ?? ''}`, { cause: e });
  }
}

/** The last lines of a log file, for a failure message. */
function tailOf(file: string, n = 25): string {
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').slice(-n).join('\n') : '(no file)';
}
const DEVNET = [process.execPath, ...SOURCE_RUN_ARGS, join(REPO_ROOT, 'devnet', 'devnet.ts')];

const STANDARD = {
  Node1: {
    dest: 'Gw6pDLhcBcoQesN72qfotTgFa7cbuqZpkX3Xo6pLhPhv',
    steward: 'Th7MpTaRZVRYnPiabds81Y',
    txnId: 'fea82e10e894419fe2bea7d96296a6d46f50f93f9eeda954ec461b2ed2950b62',
    ports: [9701, 9702],
  },
  Node2: {
    dest: '8ECVSk179mjsjKRLWiQtssMLgp6EPhWXtaYyStWPSGAb',
    steward: 'EbP4aYNeTHL6q385GuVpRV',
    txnId: '1ac8aece2a18ced660fef8694b61aac3af08ba875ce3026a160acbc3a3af35fc',
    ports: [9703, 9704],
  },
  Node3: {
    dest: 'DKVxG2fXXTU8yT5N7hGEbXB3dfdAnYv1JczDUHpmDxya',
    steward: '4cU41vWW82ArfxJxHkzXPG',
    txnId: '7e9f355dffa78ed24668f0e0e369fd8c224076571c51e2ea8be5f26479edebe4',
    ports: [9705, 9706],
  },
  Node4: {
    dest: '4PS3EDQ3dW1tci1Bp6543CfuuebjFrg36kLAUcskGfaA',
    steward: 'TWwCRQRZ2ZHMJFn9TzLp7W',
    txnId: 'aa5e817d7cc626170eca175822029339a444eb0ee8f0bd20d3b0b76e566fb008',
    ports: [9707, 9708],
  },
} as const;

function lines(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.once('error', () => res(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => res(true)));
  });
}

/** A base port whose 2n ports are free. */
async function freeBasePort(n: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20000 + 2 * Math.floor(Math.random() * 10000);
    let ok = true;
    for (let p = base; p < base + 2 * n && ok; p++) ok = await portFree(p);
    if (ok) return base;
  }
  throw new Error('no free ports');
}

describe('devnet: keys and genesis', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quire-devnet-setup-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates the standard 4-node pool: NODE lines of formats.md 11 and exactly the standard domain genesis', async () => {
    const { created } = await ensureDevnet(dir, 4, 9701);
    expect(created).to.equal(true);
    expect(lines(join(dir, 'domain_transactions_genesis'))).to.deep.equal([...STANDARD_DOMAIN_GENESIS]);
    const pool = lines(join(dir, 'pool_transactions_genesis'));
    expect(pool).to.have.length(4);
    pool.forEach((line, k) => {
      const name = `Node${k + 1}` as keyof typeof STANDARD;
      const want = STANDARD[name];
      const txn = parseJson(line) as {
        txn: { data: { dest: string; data: Record<string, unknown> }; metadata: unknown; type: string };
        txnMetadata: unknown;
        reqSignature: unknown;
        ver: string;
      };
      const { blskey, blskey_pop, ...rest } = txn.txn.data.data as { blskey: string; blskey_pop: string };
      expect(rest).to.deep.equal({
        alias: name,
        client_ip: '127.0.0.1',
        client_port: want.ports[1],
        node_ip: '127.0.0.1',
        node_port: want.ports[0],
        services: ['VALIDATOR'],
      });
      expect(txn.txn.data.dest).to.equal(want.dest);
      expect(txn.txn.metadata).to.deep.equal({ from: want.steward });
      expect(txn.txnMetadata).to.deep.equal({ seqNo: k + 1, txnId: want.txnId });
      expect(sha256Hex(name)).to.equal(want.txnId);
      // BLS key of formats 9.1, derived from the node seed, with a valid proof of possession
      const sk = BlsSecretKey.fromSeed(name.padStart(32, '0'));
      expect(b58decode(blskey)).to.deep.equal(new Uint8Array(sk.publicKey));
      expect(blsVerifyPop(b58decode(blskey), b58decode(blskey_pop))).to.equal(true);
      // the exact line shape of the spec, with the keys filled in
      expect(line).to.equal(
        `{"reqSignature":{},"txn":{"data":{"data":{"alias":"${name}","blskey":"${blskey}","blskey_pop":"${blskey_pop}","client_ip":"127.0.0.1","client_port":${want.ports[1]},"node_ip":"127.0.0.1","node_port":${want.ports[0]},"services":["VALIDATOR"]},"dest":"${want.dest}"},"metadata":{"from":"${want.steward}"},"type":"0"},"txnMetadata":{"seqNo":${k + 1},"txnId":"${want.txnId}"},"ver":"1"}`,
      );
    });
    for (const n of poolLayout(dir, 4, 9701)) {
      const keys = JSON.parse(readFileSync(join(n.dataDir, 'node-keys.json'), 'utf8')) as { dest: string; name: string };
      expect(keys.dest).to.equal(STANDARD[n.name as keyof typeof STANDARD].dest);
      expect(statSync(join(n.dataDir, 'node-keys.json')).mode & 0o777).to.equal(0o600);
      expect(readFileSync(join(n.dataDir, 'pool_transactions_genesis'), 'utf8')).to.equal(readFileSync(join(dir, 'pool_transactions_genesis'), 'utf8'));
      const cfg = JSON.parse(readFileSync(n.configFile, 'utf8')) as { name: string; upgrade: { actionCommand: string } };
      expect(cfg.name).to.equal(n.name);
      expect(cfg.upgrade.actionCommand).to.contain('upgrade-action.mjs');
    }
    // a second start reuses it; another shape is refused with a clear message
    expect((await ensureDevnet(dir, 4, 9701)).created).to.equal(false);
    let err: unknown;
    await ensureDevnet(dir, 7, 9701).catch((e: unknown) => (err = e));
    expect(err).to.be.instanceOf(DevnetSetupError);
    expect((err as Error).message).to.contain('reset');
  });

  it('a 7-node pool adds Steward5..7 after the standard lines, and moves ports with the base port', async () => {
    await ensureDevnet(dir, 7, 30001);
    const domain = lines(join(dir, 'domain_transactions_genesis'));
    expect(domain.slice(0, 5)).to.deep.equal([...STANDARD_DOMAIN_GENESIS]);
    expect(domain).to.have.length(8);
    const last = parseJson(domain[7]!) as { txn: { data: { role: string }; metadata: { from: string } }; txnMetadata: { seqNo: number } };
    expect(last.txn.data.role).to.equal('2');
    expect(last.txn.metadata.from).to.equal('V4SGRU86Z58d6TV7PBUe6f');
    expect(last.txnMetadata.seqNo).to.equal(8);
    const pool = lines(join(dir, 'pool_transactions_genesis')).map(
      (l) => parseJson(l) as { txn: { data: { data: { node_port: number; client_port: number } } } },
    );
    expect(pool.map((t) => [t.txn.data.data.node_port, t.txn.data.data.client_port])).to.deep.equal([
      [30001, 30002],
      [30003, 30004],
      [30005, 30006],
      [30007, 30008],
      [30009, 30010],
      [30011, 30012],
      [30013, 30014],
    ]);
  });

  it('the upgrade action records the version in the data dir and refuses bad input', async () => {
    const action = join(REPO_ROOT, 'devnet', 'upgrade-action.mjs');
    await run(process.execPath, [action, '1.2.3'], { env: { ...process.env, QUIRE_DATA_DIR: dir } });
    expect(readFileSync(join(dir, 'installed_version'), 'utf8')).to.equal('1.2.3\n');
    let code: unknown;
    await run(process.execPath, [action, 'bad version'], { env: { ...process.env, QUIRE_DATA_DIR: dir } }).catch((e: { code: unknown }) => (code = e.code));
    expect(code).to.equal(2);
  });
});

describe('devnet: a real pool (e2e)', function () {
  // two starts of a 4-node pool and two TAA writes: minutes on a loaded machine
  this.timeout(900_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'quire-devnet-e2e-'));
  });
  let follower: ChildProcess | undefined;
  afterEach(function () {
    if (this.currentTest?.state !== 'failed') return;
    console.log(`---- supervisor log\n${tailOf(join(dir, SUPERVISOR_LOG))}`);
    for (let i = 1; i <= 4; i++) console.log(`---- Node${i}\n${tailOf(join(dir, `Node${i}`, 'node.log'), 15)}`);
  });
  after(async () => {
    if (follower !== undefined && follower.exitCode === null && follower.signalCode === null) follower.kill('SIGKILL');
    await run(DEVNET[0]!, [...DEVNET.slice(1), 'stop', '--data-dir', dir], { cwd: REPO_ROOT }).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts 4 nodes in the background, waits until the pool orders without writing, reports status, stops, restarts ready with a TAA set, and resets', async () => {
    const base = await freeBasePort(4);
    const started = await devnetOk(['--detach', '--data-dir', dir, '--base-port', String(base), '--timeout', '200', '--metrics']);
    expect(started.stdout).to.contain('The devnet is ordering: 4 nodes');
    // ready without a write: the background supervisor's log names the fresh multi-signature it read
    expect(readFileSync(join(dir, SUPERVISOR_LOG), 'utf8')).to.match(
      /ordering: a multi-signature of Node\d, Node\d, Node\d(, Node\d)? made at .*, read from Node\d and verified/,
    );
    // metrics: one URL per node, served
    const metricsUrls = [...started.stdout.matchAll(/metrics (http:\/\/127\.0\.0\.1:(\d+)\/metrics)/g)].map((m) => m[1]!);
    expect(metricsUrls).to.deep.equal([0, 1, 2, 3].map((i) => `http://127.0.0.1:${base + 1000 + i}/metrics`));
    expect(await (await fetch(metricsUrls[0]!)).text()).to.contain('quire_');
    // an observer by default: the follow command is printed, and it follows this devnet's ordered batches
    expect(started.stdout).to.contain(`--seed ${'Observer1'.padStart(32, '0')} follow`);
    const genesisFile = join(dir, 'pool_transactions_genesis');
    const observerSeed = /--seed (\S+) follow/.exec(started.stdout)![1]!;
    const [exe, ...pre] = quireArgv();
    follower = spawn(exe!, [...pre, '--genesis', genesisFile, '--seed', observerSeed, 'follow', '--ledger', 'config', '--count', '1'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let followOut = '';
    let followErr = '';
    const follow = follower;
    follow.stdout!.on('data', (d: Buffer) => (followOut += d.toString()));
    follow.stderr!.on('data', (d: Buffer) => (followErr += d.toString()));
    const followExit = new Promise<number | null>((resolve) => follow.once('close', (code) => resolve(code)));
    await waitUntil('quire follow subscribed', () => followErr.includes('following ') || follow.exitCode !== null, 180_000, 200);
    expect(followErr, followErr).to.contain('following ');
    // a TAA in force (config ledger): the readiness probe writes nothing, so a restart is not refused
    const asTrustee = (args: string[]): Promise<string> => quireOk(['--genesis', genesisFile, '--seed', TRUSTEE_SEED, ...args], { timeoutMs: 120_000 });
    await asTrustee(['taa-aml', '--version', '1', '--aml', '{"on_file":"signed on paper"}']);
    await asTrustee(['taa', '--version', '1.0', '--text', 'the devnet agreement', '--ratification-ts', String(Math.floor(Date.now() / 1000) - 60)]);
    // the two config writes were ordered: the follower printed (at least) one of their batches and stopped
    const followCode = await new Promise<number | null | 'running'>((resolve) => {
      const t = setTimeout(() => resolve('running'), 60_000);
      void followExit.then((c) => {
        clearTimeout(t);
        resolve(c);
      });
    });
    expect(followCode, `follow: ${followErr}`).to.equal(0);
    const batches = followOut
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => parseJson(l) as Record<string, unknown>)
      .filter((l) => l.event === 'batch');
    expect(
      batches.map((b) => b.ledgerId),
      followOut,
    ).to.deep.equal([2]);
    expect(started.stdout).to.contain(join(dir, 'pool_transactions_genesis'));
    const state = readState(dir)!;
    expect(state.status).to.equal('ready');
    expect(state.processes.map((p) => p.clientPort)).to.deep.equal([base + 1, base + 3, base + 5, base + 7]);
    const status = await devnetOk(['status', '--json', '--data-dir', dir]);
    const parsed = JSON.parse(status.stdout) as { running: boolean; state: { processes: { pid: number }[] } };
    expect(parsed.running).to.equal(true);
    const pids = [state.pid, ...parsed.state.processes.map((p) => p.pid)];
    expect(pids.every((p) => isAlive(p))).to.equal(true);
    // a second start is refused while it runs
    let refused: { code?: number; stderr?: string } = {};
    await run(DEVNET[0]!, [...DEVNET.slice(1), '--data-dir', dir, '--base-port', String(base)], { cwd: REPO_ROOT }).catch(
      (e: { code: number; stderr: string }) => (refused = e),
    );
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.contain('already running');

    await devnetOk(['stop', '--data-dir', dir]);
    expect(pids.some((p) => isAlive(p))).to.equal(false);
    expect(readState(dir)).to.equal(undefined);
    expect(readFileSync(join(dir, 'Node1', 'node.log'), 'utf8')).to.contain('shutting down');

    // the domain and pool ledgers of every node are exactly their genesis files: same size, same root (the config
    // ledger holds the two TAA writes of this test)
    const genesisLedger = await Ledger.open({ ledgerId: 1 }, { kv: await openMemoryKvStore() });
    await loadGenesis(genesisLedger, join(dir, 'domain_transactions_genesis'));
    const poolGenesisLedger = await Ledger.open({ ledgerId: 0 }, { kv: await openMemoryKvStore() });
    await loadGenesis(poolGenesisLedger, join(dir, 'pool_transactions_genesis'));
    for (const n of poolLayout(dir, 4, base)) {
      const kv = await openLevelKvStore(join(n.dataDir, 'db'), { createIfMissing: false });
      try {
        const domain = await Ledger.open({ ledgerId: 1 }, { kv });
        expect(domain.size, n.name).to.equal(genesisLedger.size);
        expect(Buffer.from(domain.root).toString('hex'), n.name).to.equal(Buffer.from(genesisLedger.root).toString('hex'));
        const poolLedger = await Ledger.open({ ledgerId: 0 }, { kv });
        expect(poolLedger.size, `${n.name} pool ledger`).to.equal(poolGenesisLedger.size);
        expect(Buffer.from(poolLedger.root).toString('hex'), `${n.name} pool ledger`).to.equal(Buffer.from(poolGenesisLedger.root).toString('hex'));
        expect((await Ledger.open({ ledgerId: 3 }, { kv })).size, `${n.name} audit ledger: the batches it ordered`).to.be.greaterThan(0);
      } finally {
        await kv.close();
      }
    }

    // a restart with a TAA in force is ready; the base port is remembered by the data directory
    const again = await devnetOk(['--detach', '--data-dir', dir, '--timeout', '200']);
    expect(again.stdout).to.contain('The devnet is ordering: 4 nodes');
    expect(readState(dir)!.processes.map((p) => p.clientPort)).to.deep.equal([base + 1, base + 3, base + 5, base + 7]);
    await devnetOk(['stop', '--data-dir', dir]);
    await devnetOk(['reset', '--data-dir', dir]);
    expect(existsSync(dir)).to.equal(false);
  });
});
