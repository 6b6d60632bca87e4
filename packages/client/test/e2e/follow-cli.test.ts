// `quire follow` against four real validator node hosts (@quire/network's NodeHost) that list the observer and
// publish signed ordered-batch announcements: one JSON line per batch accepted by f+1 identical announcements, a gap
// line when a range is missing, a ledger filter, --count, and a clean exit on SIGINT in a process of its own.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  b58encode,
  encodeMsgpack,
  observedBatchDigest,
  observedBatchSigningInputOfDigest,
  orderedBatchTopic,
  parseJson,
  type BatchCommitted,
} from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { NodeHost } from '@quire/network';
import { main } from '../../src/cli/main.js';
import { DidKey, PoolLedger } from '../../src/index.js';
import { NODE_NAMES, nodeSeed, poolGenesis } from '../unit/fixtures.js';
import { waitFor as waitForWithin } from './wait.js';
import { SOURCE_RUN_ARGS } from '@quire/testing';

const enc = new TextEncoder();
const waitFor = <T>(what: string, probe: () => T | undefined, timeoutMs = 15_000): Promise<T> => waitForWithin(what, probe, timeoutMs);
const OBSERVER_SEED = '0000000000000000000000Observer01';
const observer = DidKey.fromSeed(OBSERVER_SEED);

/** A free port below the ephemeral range (outgoing connections cannot take it meanwhile). */
async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 12_000 + Math.floor(Math.random() * 20_000);
    const free = await new Promise<boolean>((resolve) => {
      const srv = createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port between 12000 and 32000');
}

function batch(ledgerId: number, seqNoStart: number, seqNoEnd: number, ppSeqNo: number): BatchCommitted {
  return {
    ledgerId,
    instId: 0,
    viewNo: 0,
    originalViewNo: 0,
    ppSeqNo,
    ppTime: 1_700_000_000 + ppSeqNo,
    digest: `digest-${ppSeqNo}`,
    stateRootHash: b58encode(new Uint8Array(32).fill(ppSeqNo)),
    txnRootHash: b58encode(new Uint8Array(32).fill(100 + ppSeqNo)),
    auditTxnRootHash: b58encode(new Uint8Array(32).fill(200 + ppSeqNo)),
    seqNoStart,
    seqNoEnd,
    primaries: ['Node1'],
    nodeReg: [...NODE_NAMES],
    blsMultiSigs: [],
    txnsOmitted: true,
  } as unknown as BatchCommitted;
}

describe('quire follow (4 validator node hosts)', function () {
  this.timeout(60_000);
  const hosts: NodeHost[] = [];
  let dir: string;
  let genesis: string;
  let poolId: string;
  let topic: string;

  before(async () => {
    // the topic names the pool (the root of its genesis, which holds the node ports): free ports are chosen first
    const ports: number[] = [];
    while (ports.length < 4) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    const text = poolGenesis({ nodePorts: ports });
    poolId = PoolLedger.fromGenesis(text).rootBase58;
    topic = orderedBatchTopic(poolId);
    for (let i = 0; i < 4; i++) {
      const h = await NodeHost.create({ name: NODE_NAMES[i]!, seed: enc.encode(nodeSeed(NODE_NAMES[i]!)), port: ports[i]!, topics: [topic] });
      h.setObservers([{ name: 'Obs1', dest: observer.fullVerkey }]);
      h.subscribe(topic, () => undefined);
      hosts.push(h);
    }
    dir = mkdtempSync(join(tmpdir(), 'quire-follow-cli-'));
    genesis = join(dir, 'pool_transactions_genesis');
    writeFileSync(genesis, text);
  });

  after(async () => {
    for (const h of hosts) await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function announce(from: number[], msg: BatchCommitted): Promise<void> {
    for (const i of from) {
      const name = NODE_NAMES[i]!;
      const signature = b58encode(Ed25519Signer.fromSeed(nodeSeed(name)).sign(observedBatchSigningInputOfDigest(poolId, observedBatchDigest(msg))));
      await hosts[i]!.publish(topic, encodeMsgpack({ op: 'OBSERVED_DATA', msg_type: 'BATCH', sender: name, signature, msg }));
    }
  }

  const observed = (): boolean => hosts.every((h) => h.topicPeers(topic).includes('Obs1'));
  // every test's follower has the same key: the previous one must be gone before the next counts as subscribed
  afterEach(async () => {
    await waitFor('the follower gone', () =>
      hosts.every((h) => !h.topicPeers(topic).includes('Obs1') && !h.connectedPeers().includes('Obs1')) ? true : undefined,
    );
  });

  it('prints a line per accepted batch and per gap, filters ledgers, and stops on the stop signal', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const stop = new AbortController();
    const running = main(
      ['--genesis', genesis, '--seed', OBSERVER_SEED, 'follow', '--ledger', 'domain', '--reorder-timeout', '300'],
      { out: (l) => out.push(l), err: (l) => err.push(l) },
      { stop: stop.signal },
    );
    await waitFor('the follower on every validator topic', () => (observed() ? true : undefined));
    expect(err[0]).to.match(/^following \/quire\/.+\/ordered\/1 as 12D3KooW/);
    await announce([0, 1], batch(1, 1, 2, 1));
    await announce([0], batch(2, 1, 1, 2)); // config ledger: filtered out (and one sender only: not accepted)
    await announce([2, 3], batch(1, 5, 5, 4)); // seqNo 3..4 missing: held, then a gap line
    await waitFor('three lines', () => (out.length >= 3 ? true : undefined));
    stop.abort();
    expect(await running).to.equal(0);
    const lines = out.map((l) => parseJson(l) as Record<string, unknown>);
    expect(lines[0]).to.deep.include({ event: 'batch', ledgerId: 1, seqNoStart: 1, seqNoEnd: 2, ppSeqNo: 1, acceptedBy: 'f+1', txnsOmitted: true });
    expect(lines[0]!.senders).to.deep.equal(['Node1', 'Node2']);
    expect(lines[1]).to.deep.equal({ event: 'gap', ledgerId: 1, seqNoStart: 3, seqNoEnd: 4 });
    expect(lines[2]).to.deep.include({ event: 'batch', ledgerId: 1, seqNoStart: 5, seqNoEnd: 5, ppSeqNo: 4 });
    expect(lines).to.have.length(3);
    expect(err.at(-1)).to.match(/^stopped: 2 batches printed/);
  });

  it('--count stops after that many batches', async () => {
    const out: string[] = [];
    const running = main(['--genesis', genesis, '--seed', OBSERVER_SEED, 'follow', '--count', '1'], { out: (l) => out.push(l), err: () => undefined });
    await waitFor('the follower on every validator topic', () => (observed() ? true : undefined));
    await announce([0, 1], batch(3, 1, 1, 7));
    expect(await running).to.equal(0);
    expect(out).to.have.length(1);
    expect(parseJson(out[0]!)).to.deep.include({ event: 'batch', ledgerId: 3, seqNoStart: 1 });
  });

  it('user errors: no key, an unknown ledger', async () => {
    const noKey = await main(['--genesis', genesis, 'follow'], { out: () => undefined, err: () => undefined });
    expect(noKey).to.equal(1);
    const err: string[] = [];
    const badLedger = await main(['--genesis', genesis, '--seed', OBSERVER_SEED, 'follow', '--ledger', 'nope'], {
      out: () => undefined,
      err: (l) => err.push(l),
    });
    expect(badLedger).to.equal(1);
    expect(err.join('\n')).to.contain('--ledger');
  });

  it('exits 0 on SIGINT when run as a process', async () => {
    const child = spawn(
      process.execPath,
      [
        ...SOURCE_RUN_ARGS,
        '--input-type=module',
        '-e',
        "import { main } from './src/cli/main.ts'; process.exitCode = await main(process.argv.slice(1));",
        '--',
        '--genesis',
        genesis,
        '--seed',
        OBSERVER_SEED,
        'follow',
      ],
      { cwd: new URL('../..', import.meta.url).pathname, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor('the follower started', () => (stderr.includes('following ') ? true : undefined), 30_000);
      await waitFor('the follower on every validator topic', () => (observed() ? true : undefined));
      await announce([2, 3], batch(1, 1, 1, 9));
      await waitFor('a batch line', () => (stdout.includes('"event":"batch"') ? true : undefined));
      child.kill('SIGINT');
      const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running'), 10_000))]);
      expect(code, stderr).to.equal(0);
      expect(stderr).to.contain('stopped: 1 batches printed');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
