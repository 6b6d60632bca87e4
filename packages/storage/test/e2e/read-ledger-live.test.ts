// read_ledger against a database that another process holds open and keeps writing to.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { main } from '../../src/cli/read-ledger.js';
import { Ledger, openLevelKvStore } from '../../src/index.js';
import { SOURCE_RUN_ARGS } from '@quire/testing';

const here = dirname(fileURLToPath(import.meta.url));
const NODE_ARGS = [...SOURCE_RUN_ARGS];

function waitForLine(child: ChildProcess, prefix: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`no "${prefix}" from the writer within ${timeoutMs} ms; got ${JSON.stringify(buf)}`)), timeoutMs);
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const line = buf.split('\n').find((l) => l.startsWith(prefix));
      if (line !== undefined) {
        clearTimeout(timer);
        resolve(line);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`writer exited (${String(code)}) before "${prefix}"`));
    });
  });
}

async function capture(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (s) => void (out += s), err: (s) => void (err += s) });
  return { code, out, err };
}

describe('read_ledger on a live database (e2e)', function () {
  this.timeout(60_000);
  let dataDir: string;
  let writer: ChildProcess | undefined;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'quire-read-ledger-live-'));
    mkdirSync(join(dataDir, 'db'));
    writer = spawn(process.execPath, [...NODE_ARGS, join(here, 'fixtures', 'ledger-writer.ts'), join(dataDir, 'db')], { stdio: ['ignore', 'pipe', 'inherit'] });
    await waitForLine(writer, 'ready', 30_000);
  });

  after(async () => {
    if (writer !== undefined && writer.exitCode === null) {
      const exited = new Promise((resolve) => writer!.once('exit', resolve));
      writer.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('reads a consistent, growing prefix of the ledger while it is written', async () => {
    let previous = 0;
    for (let round = 0; round < 6; round++) {
      const count = await capture(['--type', 'domain', '--count', '--data_dir', dataDir]);
      expect(count.err).to.equal('');
      expect(count.code).to.equal(0);
      const size = Number(count.out.trim());
      expect(size).to.be.at.least(Math.max(previous, 200));

      const r = await capture(['--type', 'domain', '--frm', '1', '--to', '1000000', '--data_dir', dataDir]);
      expect(r.err).to.equal('');
      expect(r.code).to.equal(0);
      const lines = r.out.trim().split('\n');
      expect(lines.length).to.be.at.least(size);
      lines.forEach((line, i) => {
        const txn = JSON.parse(line) as { txnMetadata: { seqNo: number }; txn: { data: { dest: string } } };
        expect(txn.txnMetadata.seqNo).to.equal(i + 1);
        expect(txn.txn.data.dest).to.equal(`dest-${i + 1}`);
      });
      previous = lines.length;
    }
    expect(writer!.exitCode).to.equal(null); // the writer was never disturbed
  });

  it("leaves the writer's database intact", async () => {
    const stopped = waitForLine(writer!, 'stopped', 20_000);
    writer!.kill('SIGTERM');
    const written = Number((await stopped).split(' ')[1]);
    await new Promise((resolve) => (writer!.exitCode === null ? writer!.once('exit', resolve) : resolve(undefined)));
    expect(writer!.exitCode).to.equal(0);
    const kv = await openLevelKvStore(join(dataDir, 'db'), { createIfMissing: false });
    try {
      const ledger = await Ledger.open({ ledgerId: 1, verify: true }, { kv });
      expect(ledger.size).to.equal(written);
      expect(ledger.recovery.repairedRecords, JSON.stringify(ledger.recovery)).to.equal(0);
      let n = 0;
      for await (const [seqNo] of ledger.range(1, written)) expect(seqNo).to.equal(++n);
      expect(n).to.equal(written);
    } finally {
      await kv.close();
    }
  });

  it('runs as a process: output on stdout, reasons on stderr, exit codes', () => {
    const runner = join(here, 'fixtures', 'run-read-ledger.ts');
    const ok = spawnSync(process.execPath, [...NODE_ARGS, runner, '--type', 'domain', '--seq_no', '7', '--data_dir', dataDir], { encoding: 'utf8' });
    expect(ok.status).to.equal(0);
    expect(JSON.parse(ok.stdout).txnMetadata.seqNo).to.equal(7);
    const bad = spawnSync(process.execPath, [...NODE_ARGS, runner, '--type', 'nope', '--data_dir', dataDir], { encoding: 'utf8' });
    expect(bad.status).to.not.equal(0);
    expect(bad.stderr).to.equal('error: Unknown ledger type: nope\n');
    expect(bad.stdout).to.equal('');
  });

  it('a reader that closes the pipe (read_ledger ... | head -0) ends it quietly with exit 0', async () => {
    const runner = join(here, 'fixtures', 'run-read-ledger.ts');
    const child = spawn(process.execPath, [...NODE_ARGS, runner, '--type', 'domain', '--data_dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(stderr).to.equal('');
    expect(code).to.equal(0);
  });
});
