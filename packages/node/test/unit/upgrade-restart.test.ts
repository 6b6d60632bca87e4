import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { TxnType } from '@quire/common';
import type { Request } from '@quire/common';
import { ManualClock, RESTART_EXIT_CODE, Restarter, UpgradeErrorCode } from '../../src/upgrade/index.js';
import type { UpgradeLogger } from '../../src/upgrade/index.js';

const T0 = Date.UTC(2030, 5, 1, 8, 0, 0);
const MIN = 60_000;
const silent: UpgradeLogger = { debug() {}, info() {}, warn() {}, error() {} };

function restart(action: 'start' | 'cancel', datetime?: unknown, timeout?: number): Request {
  const operation: Record<string, unknown> = { type: TxnType.POOL_RESTART, action };
  if (datetime !== undefined) operation.datetime = datetime;
  if (timeout !== undefined) operation.timeout = timeout;
  return { identifier: 'V4SGRU86Z58d6TV7PBUe6f', reqId: 1, protocolVersion: 2, operation };
}

describe('upgrade: POOL_RESTART scheduling (requests.md 6.3, 8.1)', () => {
  let dir: string;
  let clock: ManualClock;
  let exits: number[];
  let restarter: Restarter;

  function make(): Restarter {
    return new Restarter({ dataDir: dir, immediateDelayMs: 200 }, { clock, logger: silent, exit: (c) => void exits.push(c) });
  }
  const events = (r: Restarter): string[] => r.log.entries().map((e) => e.event);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quire-restart-'));
    clock = new ManualClock(T0);
    exits = [];
    restarter = make();
  });
  afterEach(() => {
    restarter.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('restarts at its datetime: logs scheduled, then started, and exits with the restart code', async () => {
    expect(restarter.onPoolRestart(restart('start', '2030-06-01T10:30:00+02:00'))).to.equal('scheduled');
    expect(restarter.scheduledAt).to.equal(T0 + 30 * MIN);
    clock.advance(30 * MIN - 1);
    expect(exits).to.deep.equal([]);
    clock.advance(1);
    await Promise.resolve();
    expect(exits).to.deep.equal([RESTART_EXIT_CODE]);
    expect(events(restarter)).to.deep.equal(['scheduled', 'started']);
    expect(readFileSync(join(dir, 'restart_log'), 'utf8').split('\n')[0]).to.match(/^2030-06-01 08:00:00\.000000\tscheduled\t2030-06-01 08:30:00\+00:00$/);
    restarter.close(); // the process exits ...
    const after = make(); // ... and its supervisor starts it again
    expect(after.onStartup()).to.equal(true);
    expect(events(after)).to.deep.equal(['scheduled', 'started', 'succeeded']);
    expect(after.onStartup()).to.equal(false);
  });

  for (const datetime of [undefined, '0', '', null, '2030-06-01T07:59:00Z']) {
    it(`restarts as soon as possible for datetime ${JSON.stringify(datetime)}, without a log line`, async () => {
      expect(restarter.onPoolRestart(restart('start', datetime))).to.equal('restarting');
      expect(exits).to.deep.equal([]); // the REPLY goes out first
      clock.advance(200);
      await Promise.resolve();
      expect(exits).to.deep.equal([RESTART_EXIT_CODE]);
      expect(events(restarter)).to.deep.equal([]);
    });
  }

  it('cancel unschedules and logs cancelled; a second cancel finds nothing', () => {
    restarter.onPoolRestart(restart('start', '2030-06-01T09:00:00Z'));
    expect(restarter.onPoolRestart(restart('cancel'))).to.equal('cancelled');
    expect(restarter.onPoolRestart(restart('cancel'))).to.equal('nothing-to-cancel');
    clock.advance(120 * MIN);
    expect(exits).to.deep.equal([]);
    expect(events(restarter)).to.deep.equal(['scheduled', 'cancelled']);
    expect(clock.pendingTimers).to.equal(0);
  });

  it('the same datetime again changes nothing; another one replaces the schedule', () => {
    restarter.onPoolRestart(restart('start', '2030-06-01T09:00:00Z'));
    expect(restarter.onPoolRestart(restart('start', '2030-06-01T11:00:00+02:00'))).to.equal('unchanged');
    expect(restarter.onPoolRestart(restart('start', '2030-06-01T09:30:00Z'))).to.equal('scheduled');
    expect(events(restarter)).to.deep.equal(['scheduled', 'cancelled', 'scheduled']);
    expect(restarter.scheduledAt).to.equal(T0 + 90 * MIN);
    expect(clock.pendingTimers).to.equal(1);
  });

  it('logs failed when the node is still running after the restart timeout', async () => {
    restarter.onPoolRestart(restart('start', '2030-06-01T08:10:00Z', 3));
    clock.advance(10 * MIN);
    await Promise.resolve();
    expect(exits).to.deep.equal([RESTART_EXIT_CODE]);
    clock.advance(3 * MIN);
    expect(events(restarter)).to.deep.equal(['scheduled', 'started', 'failed']);
  });

  it('refuses an unreadable datetime with DATETIME_INVALID', () => {
    expect(() => restarter.onPoolRestart(restart('start', '2030-06-01 09:00')))
      .to.throw()
      .with.property('code', UpgradeErrorCode.DATETIME_INVALID);
    expect(events(restarter)).to.deep.equal([]);
  });
});
