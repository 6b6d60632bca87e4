// quire-gateway as a process (its CLI from source, as a child) on the genesis of a pool whose nodes are not running:
// it starts and prints its URL, answers /health, says the pool is unavailable (503, every node tried and why) for
// /ready, reads and writes, refuses bad command lines with a usage line, and shuts down gracefully on SIGTERM (exit 0).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { DidKey, buildNymRequest, signRequest } from '@quire/client';
import { parseJson, stringifyJson } from '@quire/common';
import { REPO_ROOT } from '../../../../devnet/lib/layout.js';
import { POOL_GENESIS_FILE, TRUSTEE_SEED } from '../../../../devnet/lib/node-api.js';
import { ensureDevnet } from '../../../../devnet/lib/setup.js';
import { freePortRun } from '../../../../test/support/ports.js';
import { waitFor, SOURCE_RUN_ARGS } from '@quire/testing';

type Json = Record<string, unknown>;
const CLI = new URL('../../src/cli.ts', import.meta.url).pathname;

function startCli(args: string[]): { child: ChildProcess; out: () => string; exited: Promise<number | null> } {
  const child = spawn(
    process.execPath,
    [
      ...SOURCE_RUN_ARGS,
      '--input-type=module',
      '-e',
      `const m = await import(${JSON.stringify(CLI)}); process.exitCode = await m.main(process.argv.slice(1));`,
      '--',
      ...args,
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'warn' } },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, out: () => out, exited };
}

function waitForUrl(out: () => string, timeoutMs: number): Promise<string> {
  return waitFor('the gateway to print its URL', () => /"url":"([^"]+)"/.exec(out())?.[1], timeoutMs, 100);
}

describe('quire-gateway process (pool not running)', function () {
  this.timeout(180_000);
  let dir: string;
  let genesis: string;
  let running: ChildProcess | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quire-gw-process-'));
    await ensureDevnet(dir, 4, await freePortRun(8));
    genesis = join(dir, POOL_GENESIS_FILE);
  });

  after(() => {
    if (running !== undefined && running.exitCode === null) running.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves /health, answers 503 POOL_UNAVAILABLE with every node tried, and exits 0 on SIGTERM', async () => {
    const p = startCli(['--genesis', genesis, '--port', '0', '--json']);
    running = p.child;
    const url = await waitForUrl(p.out, 120_000);
    const health = await fetch(`${url}/health`);
    expect(health.status).to.equal(200);
    const ready = await fetch(`${url}/ready`);
    const body = parseJson(await ready.text()) as Json;
    expect(ready.status, stringifyJson(body)).to.equal(503);
    expect(body.code).to.equal('POOL_UNAVAILABLE');
    const tried = (body.tried as Json).errors as Json[];
    expect(tried.map((t) => t.node).sort()).to.deep.equal(['Node1', 'Node2', 'Node3', 'Node4']);
    expect(tried.every((t) => typeof t.code === 'string')).to.equal(true);
    const trustee = DidKey.fromSeed(TRUSTEE_SEED);
    const w = await fetch(`${url}/submit`, {
      method: 'POST',
      body: stringifyJson(signRequest(buildNymRequest({ submitter: trustee.did, dest: DidKey.random().did }), trustee)),
    });
    const wb = parseJson(await w.text()) as Json;
    expect([503, 504], stringifyJson(wb)).to.include(w.status);
    expect(['POOL_UNAVAILABLE', 'POOL_TIMEOUT']).to.include(wb.code);
    p.child.kill('SIGTERM');
    expect(await p.exited).to.equal(0);
  });

  it('a bad command line: exit 1 with the reason and a usage line', async () => {
    for (const args of [[], ['--genesis', genesis, '--port', 'x'], ['--genesis', genesis, '--bogus'], ['--genesis', genesis, '--search-index-max', '100']]) {
      const p = startCli(args);
      expect(await p.exited, args.join(' ')).to.equal(1);
      expect(p.out()).to.match(/error: .+\nusage: quire-gateway/);
    }
    const missing = startCli(['--genesis', join(dir, 'nope.txn'), '--port', '0']);
    expect(await missing.exited).to.equal(1);
    expect(missing.out()).to.contain('INVALID_GENESIS');
  });
});
