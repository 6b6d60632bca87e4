// Kills a writer process with SIGKILL at random moments while it commits ledger batches and
// state changes in one WriteBatch each, and checks after every kill that the database reopens to
// exactly the last complete batch: the root recomputed from the txn log equals the stored root,
// seqNos run without a gap, no repair was needed, and the state root is the one committed with
// that batch. The seed is printed on failure; QUIRE_CRASH_SEED replays it.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Ledger,
  StateTrie,
  decodeSeqNoKey,
  ledgerBuckets,
  merkleLeafHash,
  merkleRootOfLeafHashes,
  openLevelKvStore,
  openMemoryKvStore,
  type KvStore,
} from '../../src/index.js';
import { crashTxn, stateEntries } from './fixtures/ledger-crash-model.js';
import { encodeMsgpack } from '@quire/common';
import { SOURCE_RUN_ARGS } from '@quire/testing';

const here = dirname(fileURLToPath(import.meta.url));
const packageDir = join(here, '../..');
const writer = join(here, 'fixtures/ledger-crash-writer.ts');
const ROUNDS = 20;
const hex = (u: Uint8Array): string => Buffer.from(u).toString('hex');

function runUntilKilled(dir: string, seed: number, delayMs: number): Promise<{ signal: NodeJS.Signals | null; stderr: string; startSize: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...SOURCE_RUN_ARGS, writer, dir, String(seed)], {
      cwd: packageDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let startSize = -1;
    let timer: NodeJS.Timeout | undefined;
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`writer did not start: ${stderr}`));
    }, 30_000);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /ready (\d+)\n/.exec(stdout);
      if (m !== null && timer === undefined) {
        startSize = Number(m[1]);
        timer = setTimeout(() => child.kill('SIGKILL'), delayMs);
      }
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      clearTimeout(guard);
      if (timer !== undefined) clearTimeout(timer);
      resolve({ signal, stderr, startSize });
    });
  });
}

describe('ledger + state crash safety (SIGKILL)', function () {
  this.timeout(120_000);
  let dir: string;
  let modelKv: KvStore;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quire-crash-'));
    modelKv = await openMemoryKvStore();
  });
  after(async () => {
    await modelKv.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`reopens to the last complete batch after ${ROUNDS} kills`, async () => {
    const seed = Number(process.env.QUIRE_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
    let s = seed >>> 0 || 1;
    const rand = (n: number): number => {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      return s % n;
    };
    const model = await StateTrie.open({ name: 'domain' }, { kv: modelKv });
    let modelSize = 0;
    let previous = 0;
    let progressed = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const ctx = `seed ${seed}, round ${round}`;
      const run = await runUntilKilled(dir, rand(2 ** 30), 20 + rand(250));
      expect(run.signal, `${ctx}: writer died by itself: ${run.stderr}`).to.equal('SIGKILL');
      expect(run.startSize, ctx).to.equal(previous);

      const kv = await openLevelKvStore(dir);
      try {
        const ledger = await Ledger.open({ ledgerId: 1 }, { kv });
        const size = ledger.size;
        expect(ledger.recovery, ctx).to.deep.include({ storedSize: size, rebuiltLeaves: 0, removedRecords: 0 });
        expect(size, ctx).to.be.at.least(previous);
        // seqNos 1..size with no gap, and each is the txn the writer made for it
        const leaves: Uint8Array[] = [];
        let expected = 1;
        for await (const [k, v] of kv.iterate(ledgerBuckets(1).txn)) {
          expect(decodeSeqNoKey(k), ctx).to.equal(expected);
          leaves.push(merkleLeafHash(v));
          expected++;
        }
        expect(expected - 1, ctx).to.equal(size);
        if (size > previous) {
          const t = crashTxn(size);
          t.txnMetadata.seqNo = size;
          expect(hex((await ledger.getEncoded(size))!), ctx).to.equal(hex(encodeMsgpack(t)));
        }
        // the stored root is the root of the log
        expect(hex(ledger.root), ctx).to.equal(hex(merkleRootOfLeafHashes(leaves)));
        // the state committed in the same batches as the txns
        for (; modelSize < size; modelSize++) for (const [key, value] of stateEntries(modelSize + 1)) model.set(key, value);
        const state = await StateTrie.open({ name: 'domain' }, { kv });
        expect(hex(state.committedRoot), ctx).to.equal(hex(model.headRoot));
        if (size > previous) progressed++;
        previous = size;
      } finally {
        await kv.close();
      }
    }
    expect(progressed, `seed ${seed}: rounds that committed something`).to.be.at.least(ROUNDS / 2);
  });
});
