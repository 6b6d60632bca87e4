// The node's wiring of the upgrade service: the installed version (data dir over package) for
// POOL_UPGRADE validation, NODE_UPGRADEs signed by the node key through its own intake, startup
// after the first catch-up and replays after later ones, forced upgrades at receipt, POOL_RESTART.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { waitUntil } from '@quire/testing';
import { TxnType, requestToTxn, type Request, type Txn } from '@quire/common';
import { nodeSeed } from '../../src/genesis-gen.js';
import { deriveNodeKeys } from '../../src/keys.js';
import { testLogger } from '../../src/logger.js';
import { NODE_PACKAGE, NodeUpgrades } from '../../src/node-upgrades.js';
import { ActionEvent, ManualClock, RESTART_EXIT_CODE, RestartLog, UpgradeLog, verifyNodeUpgradeSignature } from '../../src/upgrade/index.js';
import { nodePackageVersion } from '../../src/version.js';

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);
const keys = deriveNodeKeys('Node1', Buffer.from(nodeSeed('Node1')));
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', '+00:00');

function upgradeTxn(seqNo: number, version: string, whenMs: number): Txn {
  return {
    ver: '1',
    txn: {
      type: TxnType.POOL_UPGRADE,
      protocolVersion: 2,
      data: { name: `up-${version}`, version, action: 'start', sha256: 'a'.repeat(64), schedule: { [keys.dest]: iso(whenMs) }, force: false, reinstall: false },
      metadata: { from: 'V4SGRU86Z58d6TV7PBUe6f', reqId: 1_700_000_000_000 + seqNo },
    },
    txnMetadata: { seqNo, txnTime: Math.floor(T0 / 1000) },
    reqSignature: {},
  } as unknown as Txn;
}

describe('node upgrades wiring', () => {
  let dir: string;
  let clock: ManualClock;
  let sent: Request[];
  let exits: number[];
  let actions: string[];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quire-node-upgrades-'));
    clock = new ManualClock(T0);
    sent = [];
    exits = [];
    actions = [];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function make(): NodeUpgrades {
    return new NodeUpgrades(
      { nodeName: 'Node1', nodeDest: keys.dest, dataDir: dir, packageVersion: '1.0.0', upgrade: { actionCommand: null, timeoutSec: 60 } },
      {
        logger: testLogger(),
        signer: keys.signer,
        submitOwn: async (r) => {
          sent.push(r);
        },
        exit: (code) => {
          exits.push(code);
        },
        clock,
        runAction: async (p) => {
          actions.push(p.version);
          writeFileSync(join(p.dataDir, 'installed_version'), `${p.version}\n`);
        },
      },
    );
  }

  it('reports the installed version to POOL_UPGRADE validation (data dir over package version)', () => {
    expect(nodePackageVersion()).to.match(/^\d+\.\d+\.\d+/);
    const u = make();
    expect(u.currentVersion).to.equal('1.0.0');
    expect(u.software.nodePackage).to.equal(NODE_PACKAGE);
    expect(u.software.installedVersion(NODE_PACKAGE)).to.equal('1.0.0');
    expect(u.software.installedVersion('other')).to.equal(undefined);
    expect(u.software.belongsToPool('other')).to.equal(false);
    writeFileSync(join(dir, 'installed_version'), '1.2.0\n');
    expect(make().software.installedVersion(NODE_PACKAGE)).to.equal('1.2.0');
    u.close();
  });

  it('runs a scheduled upgrade: NODE_UPGRADE in_progress signed by the node, action, exit 75; complete after the restart', async () => {
    const u = make();
    await u.caughtUp([upgradeTxn(1, '1.1.0', T0 + 60_000)]);
    expect(u.service.upgrader.scheduledUpgrade?.version).to.equal('1.1.0');
    clock.advance(60_000);
    // the action waits for the node's own in_progress to be ordered
    await waitUntil('the in_progress NODE_UPGRADE sent', () => sent.length > 0, 10_000, 1);
    await new Promise((r) => setTimeout(r, 5)); // a quiet moment: no action may run before in_progress is ordered
    expect(actions).to.deep.equal([]);
    const ordered = requestToTxn(sent[0]!);
    ordered.txnMetadata = { seqNo: 2, txnTime: Math.floor(T0 / 1000) + 60 };
    await u.configTxnCommitted(ordered);
    await u.service.upgrader.idle();
    expect(actions).to.deep.equal(['1.1.0']);
    expect(sent).to.have.length(1);
    expect(sent[0]!.identifier).to.equal(keys.dest);
    expect(sent[0]!.operation).to.deep.include({ type: '110', data: { action: 'in_progress', version: '1.1.0' } });
    expect(verifyNodeUpgradeSignature(sent[0]!.operation, keys.dest)).to.equal(true);
    await waitUntil('the exit', () => exits.length > 0);
    expect(exits).to.deep.equal([RESTART_EXIT_CODE]);
    u.close();

    // the supervisor starts the new version: complete after the first catch-up, not before
    const after = make();
    expect(after.currentVersion).to.equal('1.1.0');
    await after.caughtUp([upgradeTxn(1, '1.1.0', T0 + 60_000)]);
    expect(sent.map((r) => (r.operation.data as { action: string }).action)).to.deep.equal(['in_progress', 'complete']);
    expect(new UpgradeLog(dir).lastEvent()?.event).to.equal(ActionEvent.SUCCEEDED);
    // a later catch-up replays without doing it again
    await after.caughtUp([upgradeTxn(1, '1.1.0', T0 + 60_000)]);
    await after.configTxnCommitted(upgradeTxn(2, '1.1.0', T0 + 60_000));
    expect(sent).to.have.length(2);
    after.close();
  });

  it('schedules a committed POOL_UPGRADE, and a forced one at receipt', async () => {
    const u = make();
    await u.caughtUp([]);
    await u.configTxnCommitted(upgradeTxn(3, '1.3.0', T0 + 3_600_000));
    expect(u.service.upgrader.scheduledUpgrade?.version).to.equal('1.3.0');
    const forced: Request = {
      identifier: 'V4SGRU86Z58d6TV7PBUe6f',
      reqId: 99,
      protocolVersion: 2,
      operation: {
        type: '109',
        name: 'f',
        version: '1.4.0',
        action: 'start',
        sha256: 'b'.repeat(64),
        schedule: { [keys.dest]: iso(T0 + 120_000) },
        force: true,
      },
    };
    await u.forcedPoolUpgrade(forced);
    expect(u.service.upgrader.scheduledUpgrade).to.deep.include({ version: '1.4.0', upgradeId: '99' });
    u.close();
    await u.forcedPoolUpgrade({ ...forced, reqId: 100 });
    expect(u.service.upgrader.scheduledUpgrade).to.equal(undefined);
  });

  it('restarts on POOL_RESTART, and logs the restart succeeded after the first catch-up of the next run', async () => {
    const u = make();
    await u.caughtUp([]);
    expect(
      u.poolRestart({
        identifier: 'V4SGRU86Z58d6TV7PBUe6f',
        reqId: 1,
        protocolVersion: 2,
        operation: { type: '118', action: 'start', datetime: iso(T0 + 1000) },
      }),
    ).to.equal('scheduled');
    clock.advance(1000);
    await waitUntil('the restart exit', () => exits.length > 0);
    expect(exits).to.deep.equal([RESTART_EXIT_CODE]);
    expect(new RestartLog(dir).lastEvent()?.event).to.equal(ActionEvent.STARTED);
    u.close();
    const next = make();
    expect(new RestartLog(dir).lastEvent()?.event).to.equal(ActionEvent.STARTED);
    await next.caughtUp([]);
    expect(new RestartLog(dir).lastEvent()?.event).to.equal(ActionEvent.SUCCEEDED);
    expect(next.poolRestart({ identifier: 'V4SGRU86Z58d6TV7PBUe6f', reqId: 2, protocolVersion: 2, operation: { type: '118', action: 'start' } })).to.equal(
      'restarting',
    );
    clock.advance(600);
    await waitUntil('the second restart exit', () => exits.length > 1);
    expect(exits).to.deep.equal([RESTART_EXIT_CODE, RESTART_EXIT_CODE]);
    next.close();
  });
});
