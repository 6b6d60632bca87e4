import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { TxnType } from '@quire/common';
import type { Txn } from '@quire/common';
import { ManualClock, RESTART_EXIT_CODE, UpgradeErrorCode, Upgrader, readInstalledVersion } from '../../src/upgrade/index.js';
import type { NodeUpgradeData, UpgradeLogger, UpgraderOptions } from '../../src/upgrade/index.js';

const NODES = [
  'Gw6pDLhcBcoQesN72qfotTgFa7cbuqZpkX3Xo6pLhPhv',
  '8ECVSk179mjsjKRLWiQtssMLgp6EPhWXtaYyStWPSGAb',
  'DKVxG2fXXTU8yT5N7hGEbXB3dfdAnYv1JczDUHpmDxya',
  '4PS3EDQ3dW1tci1Bp6543CfuuebjFrg36kLAUcskGfaA',
];
const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);
const MIN = 60_000;

/** The real upgrade action of a source-tree node: records the version in the data dir. */
const RECORD_VERSION = [process.execPath, '-e', "require('fs').writeFileSync(process.env.QUIRE_DATA_DIR + '/installed_version', process.argv[1] + '\\n')"];

const silent: UpgradeLogger = { debug() {}, info() {}, warn() {}, error() {} };

function iso(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', '+00:00');
}

function upgradeTxn(seqNo: number, fields: Record<string, unknown>, reqId = 1_700_000_000_000_000 + seqNo): Txn {
  return {
    ver: '1',
    txn: {
      type: TxnType.POOL_UPGRADE,
      protocolVersion: 2,
      data: { name: 'upgrade-2', version: '2.0.0', action: 'start', sha256: 'a'.repeat(64), reinstall: false, force: false, ...fields },
      metadata: { from: 'V4SGRU86Z58d6TV7PBUe6f', reqId },
    },
    txnMetadata: { seqNo, txnTime: Math.floor(T0 / 1000) },
    reqSignature: {},
  };
}

function scheduleOf(firstMs: number, spacingMs: number): Record<string, string> {
  return Object.fromEntries(NODES.map((n, i) => [n, iso(firstMs + i * spacingMs)]));
}

interface Harness {
  dir: string;
  upgrader: Upgrader;
  submitted: NodeUpgradeData[];
  exits: number[];
}

describe('upgrade: POOL_UPGRADE scheduling (requests.md 6.2)', function () {
  this.timeout(15_000);
  const dirs: string[] = [];
  let clock: ManualClock;

  function make(i: number, opts: Partial<UpgraderOptions> = {}, dir?: string): Harness {
    const d = dir ?? mkdtempSync(join(tmpdir(), `quire-upgrade-${i}-`));
    if (dir === undefined) dirs.push(d);
    const submitted: NodeUpgradeData[] = [];
    const exits: number[] = [];
    const upgrader = new Upgrader(
      { nodeName: `Node${i + 1}`, nodeDest: NODES[i]!, dataDir: d, currentVersion: readInstalledVersion(d, '1.0.0'), actionCommand: RECORD_VERSION, ...opts },
      {
        clock,
        logger: silent,
        submitNodeUpgrade: async (data) => {
          submitted.push(data);
        },
        exit: (code) => {
          exits.push(code);
        },
      },
    );
    return { dir: d, upgrader, submitted, exits };
  }

  function events(h: Harness): string[] {
    return h.upgrader.log.entries().map((e) => e.event);
  }

  beforeEach(() => {
    clock = new ManualClock(T0);
  });
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('each node upgrades at its own time, in schedule order and spacing, then completes after its restart', async () => {
    const nodes = NODES.map((_, i) => make(i));
    const spacing = 5 * MIN;
    const txn = upgradeTxn(7, { schedule: scheduleOf(T0 + 10 * MIN, spacing) });
    for (const n of nodes) await n.upgrader.onConfigTxnCommitted(txn);
    for (const n of nodes) expect(events(n)).to.deep.equal(['scheduled']);
    expect(nodes[2]!.upgrader.scheduledUpgrade).to.deep.include({
      whenMs: T0 + 20 * MIN,
      version: '2.0.0',
      upgradeId: `${1_700_000_000_000_007}7`,
      pkgName: 'quire-node',
    });

    const startedAt: number[] = [];
    for (let k = 0; k < NODES.length; k++) {
      clock.advanceTo(T0 + 10 * MIN + k * spacing - 1);
      expect(nodes[k]!.exits, `node ${k + 1} before its time`).to.deep.equal([]);
      clock.advanceTo(T0 + 10 * MIN + k * spacing);
      await nodes[k]!.upgrader.idle();
      startedAt.push(nodes[k]!.upgrader.log.lastEvent()!.loggedAtMs);
      expect(events(nodes[k]!)).to.deep.equal(['scheduled', 'started']);
      expect(nodes[k]!.submitted).to.deep.equal([{ action: 'in_progress', version: '2.0.0' }]);
      expect(nodes[k]!.exits).to.deep.equal([RESTART_EXIT_CODE]);
      nodes[k]!.upgrader.close(); // the process exits
      for (let j = k + 1; j < NODES.length; j++) expect(events(nodes[j]!), `node ${j + 1} waits`).to.deep.equal(['scheduled']);
    }
    expect(startedAt.slice(1).map((t, k) => t - startedAt[k]!)).to.deep.equal([spacing, spacing, spacing]);

    // the supervisor restarts each node; the new process reads the installed version and completes
    for (let k = 0; k < NODES.length; k++) {
      const after = make(k, {}, nodes[k]!.dir);
      expect(readFileSync(join(after.dir, 'installed_version'), 'utf8')).to.equal('2.0.0\n');
      expect(await after.upgrader.onStartup()).to.deep.equal({ outcome: 'succeeded', version: '2.0.0' });
      expect(after.submitted).to.deep.equal([{ action: 'complete', version: '2.0.0' }]);
      expect(events(after)).to.deep.equal(['scheduled', 'started', 'succeeded']);
      // a replay of the ledger does not start the same upgrade again, nor does a second start
      await after.upgrader.replay([txn]);
      expect(await after.upgrader.onStartup()).to.deep.equal({ outcome: 'none' });
      expect(events(after)).to.have.length(3);
      expect(after.upgrader.scheduledUpgrade).to.equal(undefined);
    }
  });

  it('a node restarted on another version logs failed and writes NODE_UPGRADE fail', async () => {
    const h = make(0, { actionCommand: [process.execPath, '-e', 'process.exit(0)'] });
    await h.upgrader.onConfigTxnCommitted(upgradeTxn(3, { schedule: scheduleOf(T0 + MIN, 5 * MIN) }));
    clock.advance(MIN);
    await h.upgrader.idle();
    expect(h.exits).to.deep.equal([RESTART_EXIT_CODE]);
    const after = make(0, {}, h.dir);
    expect(await after.upgrader.onStartup()).to.deep.equal({ outcome: 'failed', version: '2.0.0' });
    expect(after.submitted).to.deep.equal([{ action: 'fail', version: '2.0.0' }]);
  });

  it('cancel removes the scheduled upgrade and logs cancelled; a cancel of another version does nothing', async () => {
    const h = make(1);
    await h.upgrader.onConfigTxnCommitted(upgradeTxn(3, { schedule: scheduleOf(T0 + 10 * MIN, 5 * MIN) }));
    await h.upgrader.onConfigTxnCommitted(upgradeTxn(4, { action: 'cancel', version: '3.0.0' }));
    expect(h.upgrader.scheduledUpgrade).to.not.equal(undefined);
    await h.upgrader.onConfigTxnCommitted(upgradeTxn(5, { action: 'cancel' }));
    expect(events(h)).to.deep.equal(['scheduled', 'cancelled']);
    expect(h.upgrader.scheduledUpgrade).to.equal(undefined);
    clock.advance(60 * MIN);
    await h.upgrader.idle();
    expect(h.exits).to.deep.equal([]);
    expect(h.submitted).to.deep.equal([]);
    expect(clock.pendingTimers).to.equal(0);
  });

  it('a replay schedules the last uncancelled start only, and a new start replaces the scheduled one', async () => {
    const h = make(0);
    const first = upgradeTxn(2, { schedule: scheduleOf(T0 + 10 * MIN, 5 * MIN) });
    const cancel = upgradeTxn(3, { action: 'cancel' });
    await h.upgrader.replay([first, cancel]);
    expect(events(h)).to.deep.equal([]);
    const second = upgradeTxn(4, { name: 'upgrade-2.1', version: '2.1.0', schedule: scheduleOf(T0 + 30 * MIN, 5 * MIN) });
    await h.upgrader.replay([first, cancel, second]);
    expect(events(h)).to.deep.equal(['scheduled']);
    await h.upgrader.replay([first, cancel, second]); // the same upgrade again: nothing new
    expect(events(h)).to.deep.equal(['scheduled']);
    const third = upgradeTxn(5, { name: 'upgrade-2.2', version: '2.2.0', schedule: scheduleOf(T0 + 40 * MIN, 5 * MIN) });
    await h.upgrader.onConfigTxnCommitted(third);
    expect(events(h)).to.deep.equal(['scheduled', 'cancelled', 'scheduled']);
    expect(h.upgrader.scheduledUpgrade!.version).to.equal('2.2.0');
    expect(clock.pendingTimers).to.equal(1);
  });

  it('ignores upgrades that do not name this node, that are not newer, or that are forced at commit', async () => {
    const h = make(3);
    const others = Object.fromEntries(NODES.slice(0, 3).map((n) => [n, iso(T0 + MIN)]));
    await h.upgrader.onConfigTxnCommitted(upgradeTxn(2, { schedule: others, force: false }));
    await h.upgrader.onConfigTxnCommitted(upgradeTxn(3, { version: '1.0.0', schedule: scheduleOf(T0 + MIN, 5 * MIN) }));
    await h.upgrader.onConfigTxnCommitted(upgradeTxn(4, { version: '0.9.0', reinstall: true, schedule: scheduleOf(T0 + MIN, 5 * MIN) }));
    await h.upgrader.onConfigTxnCommitted(upgradeTxn(5, { force: true, schedule: scheduleOf(T0 + MIN, 0) }));
    expect(events(h)).to.deep.equal([]);
    // reinstalling the running version is allowed with reinstall
    await h.upgrader.onConfigTxnCommitted(upgradeTxn(6, { version: '1.0.0', reinstall: true, schedule: scheduleOf(T0 + MIN, 5 * MIN) }));
    expect(events(h)).to.deep.equal(['scheduled']);
  });

  it('a forced upgrade runs at receipt (upgrade_id = reqId) and is not run again when its txn is replayed', async () => {
    const h = make(0);
    const reqId = 1_800_000_000_000_000;
    const operation = {
      type: TxnType.POOL_UPGRADE,
      name: 'hotfix',
      version: '2.0.1',
      action: 'start',
      sha256: 'b'.repeat(64),
      force: true,
      reinstall: false,
      schedule: scheduleOf(T0 - MIN, 0),
    };
    await h.upgrader.onForcedPoolUpgrade({ identifier: 'V4SGRU86Z58d6TV7PBUe6f', reqId, protocolVersion: 2, operation });
    expect(h.upgrader.scheduledUpgrade!.upgradeId).to.equal(String(reqId));
    clock.advance(0); // the time is already past: it starts at once
    await h.upgrader.idle();
    expect(h.exits).to.deep.equal([RESTART_EXIT_CODE]);
    const after = make(0, {}, h.dir);
    await after.upgrader.onStartup();
    const { type: _type, ...data } = operation;
    await after.upgrader.replay([upgradeTxn(9, data, reqId)]);
    expect(events(after)).to.deep.equal(['scheduled', 'started', 'succeeded']);
  });

  it('an action that fails logs failed, writes NODE_UPGRADE fail and does not restart', async () => {
    const h = make(0, { actionCommand: [process.execPath, '-e', 'console.error("disk full"); process.exit(3)'] });
    const errors: Record<string, unknown>[] = [];
    (h.upgrader as unknown as { modules: { logger: UpgradeLogger } }).modules.logger = { ...silent, error: (o) => errors.push(o as Record<string, unknown>) };
    await h.upgrader.onConfigTxnCommitted(upgradeTxn(3, { schedule: scheduleOf(T0 + MIN, 5 * MIN) }));
    clock.advance(MIN);
    await h.upgrader.idle();
    expect(events(h)).to.deep.equal(['scheduled', 'started', 'failed']);
    expect(h.submitted).to.deep.equal([
      { action: 'in_progress', version: '2.0.0' },
      { action: 'fail', version: '2.0.0' },
    ]);
    expect(h.exits).to.deep.equal([]);
    expect(errors[0]).to.deep.include({ code: UpgradeErrorCode.ACTION_FAILED });
    expect(errors[0]!.data as { exitCode: number; output: string }).to.deep.include({ exitCode: 3, output: 'disk full' });
    // the failed upgrade is not started again by a replay
    await h.upgrader.replay([upgradeTxn(3, { schedule: scheduleOf(T0 + MIN, 5 * MIN) })]);
    expect(events(h)).to.have.length(3);
  });

  it('an action that outlives its timeout is killed and the upgrade fails', async () => {
    const h = make(0, { actionCommand: [process.execPath, '-e', 'setTimeout(() => {}, 60000)'], actionTimeoutMs: 300 });
    await h.upgrader.onConfigTxnCommitted(upgradeTxn(3, { schedule: scheduleOf(T0 + MIN, 5 * MIN) }));
    clock.advance(MIN);
    const t = Date.now();
    await h.upgrader.idle();
    // killed, not waited for: the action alone would run 60 s (30 s leaves room for a loaded machine)
    expect(Date.now() - t).to.be.below(30_000);
    expect(events(h)).to.deep.equal(['scheduled', 'started', 'failed']);
    expect(h.submitted.map((s) => s.action)).to.deep.equal(['in_progress', 'fail']);
    expect(h.exits).to.deep.equal([]);
  });

  it('a node still running when the POOL_UPGRADE timeout passes logs failed (exceeded upgrade timeout)', async () => {
    const h = make(0);
    await h.upgrader.onConfigTxnCommitted(upgradeTxn(3, { timeout: 5, schedule: scheduleOf(T0 + MIN, 5 * MIN) }));
    clock.advance(MIN);
    await h.upgrader.idle();
    expect(h.exits).to.deep.equal([RESTART_EXIT_CODE]); // ... but the process did not go away
    clock.advance(5 * MIN - 1);
    expect(events(h)).to.deep.equal(['scheduled', 'started']);
    clock.advance(1);
    await h.upgrader.idle();
    expect(events(h)).to.deep.equal(['scheduled', 'started', 'failed']);
    expect(h.submitted.map((s) => s.action)).to.deep.equal(['in_progress', 'fail']);
  });

  it('without a configured action an upgrade fails with ACTION_NOT_CONFIGURED', async () => {
    const h = make(0, { actionCommand: [] });
    await h.upgrader.onConfigTxnCommitted(upgradeTxn(3, { schedule: scheduleOf(T0 + MIN, 5 * MIN) }));
    clock.advance(MIN);
    await h.upgrader.idle();
    expect(events(h)).to.deep.equal(['scheduled', 'started', 'failed']);
  });

  it('a shell command line gets the version as an argument, not through the shell', async () => {
    const h = make(0, {
      actionCommand: `"${process.execPath}" -e "require('fs').writeFileSync(process.env.QUIRE_DATA_DIR + '/installed_version', process.argv[1])"`,
    });
    await h.upgrader.onConfigTxnCommitted(upgradeTxn(3, { version: '2.0.0-rc1!x', reinstall: true, schedule: scheduleOf(T0 + MIN, 5 * MIN) }));
    // not a node version: compared as text, still newer than 1.0.0
    clock.advance(MIN);
    await h.upgrader.idle();
    expect(readFileSync(join(h.dir, 'installed_version'), 'utf8')).to.equal('2.0.0-rc1!x');
    expect(h.exits).to.deep.equal([RESTART_EXIT_CODE]);
  });

  it('a malformed POOL_UPGRADE txn is ignored, not thrown', async () => {
    const h = make(0);
    await h.upgrader.onConfigTxnCommitted(upgradeTxn(3, { version: 'bad version', schedule: scheduleOf(T0 + MIN, 5 * MIN) }));
    await h.upgrader.onConfigTxnCommitted(upgradeTxn(4, { schedule: { [NODES[0]!]: 'tomorrow' } }));
    expect(events(h)).to.deep.equal([]);
  });
});
