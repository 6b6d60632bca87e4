import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { waitUntil } from '@quire/testing';
import { Supervisor } from '../lib/supervisor.js';
import type { SupervisorEvent, SupervisorOptions } from '../lib/supervisor.js';

const FAKE = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'fake-node.mjs');

/** Resolves once `cond` holds (@quire/testing's waitUntil, polling every 25 ms); fails naming `what` after 8 s. */
const until = (cond: () => boolean, what: string, timeoutMs = 8000): Promise<void> => waitUntil(what, cond, timeoutMs);

function starts(file: string): number {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
}

describe('devnet: supervisor', function () {
  this.timeout(20_000);
  let dir: string;
  let sup: Supervisor | undefined;
  let events: SupervisorEvent[];

  function make(mode: string, opts: Partial<SupervisorOptions> = {}): { startsFile: string; logFile: string } {
    const startsFile = join(dir, `${mode}.starts`);
    const logFile = join(dir, 'Node1', 'node.log');
    sup = new Supervisor(
      [{ name: 'Node1', argv: [process.execPath, FAKE, mode, startsFile], cwd: dir, logFile }],
      { initialBackoffMs: 20, maxBackoffMs: 100, stopGraceMs: 300, ...opts },
      (e) => events.push(e),
    );
    sup.start();
    return { startsFile, logFile };
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quire-supervisor-'));
    events = [];
  });
  afterEach(async () => {
    await sup?.stop();
    sup = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('restarts a node at once when it exits with the restart code, and logs its output', async () => {
    const { startsFile, logFile } = make('restart-once');
    await until(() => starts(startsFile) === 2 && sup!.status()[0]!.state === 'running', 'the second start');
    const st = sup!.status()[0]!;
    expect(st).to.deep.include({ restarts: 1, crashes: 0 });
    expect(st.lastExit!.code).to.equal(75);
    expect(events.map((e) => e.kind)).to.deep.equal(['started', 'restart-requested', 'started']);
    await sup!.stop();
    expect(sup!.status()[0]!.state).to.equal('stopped');
    const log = readFileSync(logFile, 'utf8');
    expect(log).to.contain('fake node start 1 in mode restart-once');
    expect(log).to.contain('fake node start 2 in mode restart-once');
    expect(log).to.contain('exited with the restart code 75; restarting');
  });

  it('restarts a crashed node after a backoff', async () => {
    const { startsFile } = make('crash-once');
    await until(() => starts(startsFile) === 2, 'the restart after the crash');
    const crashed = events.find((e) => e.kind === 'crashed');
    expect(crashed).to.deep.include({ kind: 'crashed', code: 1, retryInMs: 20 });
    await until(() => sup!.status()[0]!.state === 'running', 'running');
    expect(sup!.status()[0]).to.deep.include({ crashes: 1, restarts: 0 });
  });

  it('gives up on a node that keeps crashing right after starting, with backoff growing between tries', async () => {
    const { startsFile, logFile } = make('crash', { maxFastCrashes: 4 });
    await until(() => sup!.status()[0]!.state === 'failed', 'giving up');
    expect(starts(startsFile)).to.equal(4);
    expect(events.filter((e) => e.kind === 'crashed').map((e) => (e as { retryInMs: number }).retryInMs)).to.deep.equal([20, 40, 80]);
    expect(events.at(-1)).to.deep.include({ kind: 'gave-up', crashes: 4, logFile });
    expect(readFileSync(logFile, 'utf8')).to.contain('giving up');
    expect(sup!.allDown).to.equal(true);
  });

  it('does not restart a node that exits normally', async () => {
    const { startsFile } = make('exit-zero');
    await until(() => sup!.status()[0]!.state === 'exited', 'the exit');
    await new Promise((r) => setTimeout(r, 200));
    expect(starts(startsFile)).to.equal(1);
  });

  it('kills a node that ignores SIGTERM after the grace period', async () => {
    const { startsFile } = make('stubborn');
    await until(
      () => starts(startsFile) === 1 && existsSync(join(dir, 'Node1', 'node.log')) && readFileSync(join(dir, 'Node1', 'node.log'), 'utf8').includes('start 1'),
      'the start',
    );
    const pid = sup!.status()[0]!.pid!;
    const t = Date.now();
    await sup!.stop();
    expect(Date.now() - t).to.be.at.least(250);
    expect(sup!.status()[0]!.lastExit!.signal).to.equal('SIGKILL');
    expect(() => process.kill(pid, 0)).to.throw();
  });
});
