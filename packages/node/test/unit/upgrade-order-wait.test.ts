// At its time in the schedule a node writes NODE_UPGRADE in_progress and runs the upgrade action
// only once that txn is ordered (requests.md §6.2; bounded wait): unrelated NODE_UPGRADEs do not
// count, the txn may come by ordering or by a catch-up replay; past the bound the action runs
// anyway (logged), a refused submission does not wait, the POOL_UPGRADE timeout still fails the
// upgrade during the wait, and a node closing meanwhile runs nothing. Every log line of the
// upgrade wiring carries `module: "upgrade"`.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { waitUntil } from '@quire/testing';
import { TxnType, requestToTxn, type Request, type Txn } from '@quire/common';
import { nodeSeed } from '../../src/genesis-gen.js';
import { deriveNodeKeys } from '../../src/keys.js';
import { createLogger } from '../../src/logger.js';
import { NodeUpgrades } from '../../src/node-upgrades.js';
import {
  ActionEvent,
  DEFAULT_IN_PROGRESS_ORDER_TIMEOUT_MS,
  ManualClock,
  RESTART_EXIT_CODE,
  UpgradeLog,
  buildNodeUpgradeRequest,
} from '../../src/upgrade/index.js';

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);
const WAIT = 120_000;
const keys = deriveNodeKeys('Node1', Buffer.from(nodeSeed('Node1')));
const other = deriveNodeKeys('Node2', Buffer.from(nodeSeed('Node2')));
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', '+00:00');
/** A quiet moment: lets pending timers and I/O run before a check that something did *not* happen. */
const tick = (ms = 5): Promise<void> => new Promise((r) => setTimeout(r, ms));

function upgradeTxn(seqNo: number, version: string, whenMs: number, timeout = 10): Txn {
  return {
    ver: '1',
    txn: {
      type: TxnType.POOL_UPGRADE,
      protocolVersion: 2,
      data: {
        name: `up-${version}`,
        version,
        action: 'start',
        sha256: 'a'.repeat(64),
        schedule: { [keys.dest]: iso(whenMs) },
        force: false,
        reinstall: false,
        timeout,
      },
      metadata: { from: 'V4SGRU86Z58d6TV7PBUe6f', reqId: 1_700_000_000_000 + seqNo },
    },
    txnMetadata: { seqNo, txnTime: Math.floor(T0 / 1000) },
    reqSignature: {},
  } as unknown as Txn;
}

/** The committed form of a NODE_UPGRADE request at `seqNo`. */
function committed(r: Request, seqNo: number): Txn {
  const t = requestToTxn(r);
  t.txnMetadata = { seqNo, txnTime: Math.floor(T0 / 1000) };
  return t;
}

describe('upgrade: the action waits for the node’s own in_progress to be ordered', () => {
  let dir: string;
  let clock: ManualClock;
  let sent: Request[];
  let exits: number[];
  let actions: string[];
  let lines: Record<string, unknown>[];
  let refuse: boolean;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quire-order-wait-'));
    clock = new ManualClock(T0);
    sent = [];
    exits = [];
    actions = [];
    lines = [];
    refuse = false;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function make(wait: number | undefined = WAIT): NodeUpgrades {
    const destination = new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const l of chunk.toString().split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
        cb();
      },
    });
    return new NodeUpgrades(
      {
        nodeName: 'Node1',
        nodeDest: keys.dest,
        dataDir: dir,
        packageVersion: '1.0.0',
        upgrade: { actionCommand: null, timeoutSec: 60 },
        ...(wait !== undefined ? { inProgressOrderTimeoutMs: wait } : {}),
      },
      {
        logger: createLogger({ level: 'debug', name: 'Node1', destination }),
        signer: keys.signer,
        submitOwn: async (r) => {
          if (refuse) throw new Error('REQNACK: refused');
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

  /** Schedules 1.1.0 at T0 + 1 min (config ledger of `size` txns) and lets its time come. */
  async function reachUpgradeTime(u: NodeUpgrades, size = 1, timeout = 10): Promise<void> {
    const txns = Array.from({ length: size }, (_, i) => upgradeTxn(i + 1, '1.1.0', T0 + 60_000, timeout));
    await u.caughtUp(txns);
    expect(u.service.upgrader.scheduledUpgrade?.version).to.equal('1.1.0');
    clock.advance(60_000);
    if (!refuse) await waitUntil('the in_progress NODE_UPGRADE submitted', () => sent.length > 0, 10_000, 1);
    await tick();
  }

  it('defaults to a bounded wait in the node wiring', () => {
    expect(DEFAULT_IN_PROGRESS_ORDER_TIMEOUT_MS).to.equal(60_000);
  });

  it('runs the action only when its own in_progress is ordered; other NODE_UPGRADEs do not count', async () => {
    const u = make();
    await reachUpgradeTime(u, 3);
    expect(sent.map((r) => (r.operation.data as { action: string }).action)).to.deep.equal(['in_progress']);
    expect(actions).to.deep.equal([]);
    expect(new UpgradeLog(dir).lastEvent()?.event).to.equal(ActionEvent.STARTED);
    // another node's in_progress, this node's in_progress of another version, this node's complete
    await u.configTxnCommitted(committed(buildNodeUpgradeRequest(other.signer, { action: 'in_progress', version: '1.1.0' }, 1), 4));
    await u.configTxnCommitted(committed(buildNodeUpgradeRequest(keys.signer, { action: 'in_progress', version: '1.2.0' }, 2), 5));
    await u.configTxnCommitted(committed(buildNodeUpgradeRequest(keys.signer, { action: 'complete', version: '1.1.0' }, 3), 6));
    await tick();
    expect(actions).to.deep.equal([]);
    expect(exits).to.deep.equal([]);
    await u.configTxnCommitted(committed(sent[0]!, 7));
    await u.service.upgrader.idle();
    await waitUntil('the restart exit', () => exits.length > 0);
    expect(actions).to.deep.equal(['1.1.0']);
    expect(exits).to.deep.equal([RESTART_EXIT_CODE]);
    expect(lines.some((l) => l.msg === 'NODE_UPGRADE in_progress ordered; running the upgrade action' && l.module === 'upgrade')).to.equal(true);
    u.close();
  });

  it('an in_progress learned by a catch-up replay ends the wait too, but not one already on the ledger before', async () => {
    const u = make();
    await reachUpgradeTime(u, 2);
    const ledger = [upgradeTxn(1, '1.1.0', T0 + 60_000), upgradeTxn(2, '1.1.0', T0 + 60_000)];
    // an earlier attempt's in_progress (seqNo 2, not after the ledger size seen at submission) does not count
    const earlier = committed(buildNodeUpgradeRequest(keys.signer, { action: 'in_progress', version: '1.1.0' }, 9), 2);
    // (replays queue behind the waiting upgrade: the node does not await them either)
    const first = u.caughtUp([ledger[0]!, earlier]);
    await tick();
    expect(actions).to.deep.equal([]);
    const second = u.caughtUp([...ledger, committed(sent[0]!, 3)]);
    await Promise.all([first, second]);
    await u.service.upgrader.idle();
    expect(actions).to.deep.equal(['1.1.0']);
    u.close();
  });

  it('past the bound, logs it and runs the action anyway (the spec makes the action depend on the submission only)', async () => {
    const u = make();
    await reachUpgradeTime(u);
    clock.advance(WAIT - 1);
    await tick();
    expect(actions).to.deep.equal([]);
    clock.advance(1);
    await u.service.upgrader.idle();
    await waitUntil('the restart exit', () => exits.length > 0);
    expect(actions).to.deep.equal(['1.1.0']);
    expect(exits).to.deep.equal([RESTART_EXIT_CODE]);
    const warn = lines.find((l) => l.msg === 'NODE_UPGRADE in_progress not ordered in time; running the upgrade action anyway');
    expect(warn).to.deep.include({ module: 'upgrade', node: 'Node1', version: '1.1.0', timeoutMs: WAIT, waitedMs: WAIT });
    u.close();
  });

  it('a refused submission is not waited for', async () => {
    const u = make();
    refuse = true;
    await reachUpgradeTime(u);
    await u.service.upgrader.idle();
    expect(actions).to.deep.equal(['1.1.0']);
    expect(lines.some((l) => l.msg === 'NODE_UPGRADE in_progress not submitted; running the upgrade action anyway')).to.equal(true);
    u.close();
  });

  it('the POOL_UPGRADE timeout during the wait fails the upgrade: no action, NODE_UPGRADE fail', async () => {
    const u = make(10 * 60_000);
    await reachUpgradeTime(u, 1, 1);
    clock.advance(60_000);
    await u.service.upgrader.idle();
    await tick();
    expect(actions).to.deep.equal([]);
    expect(exits).to.deep.equal([]);
    expect(new UpgradeLog(dir).lastEvent()?.event).to.equal(ActionEvent.FAILED);
    expect(sent.map((r) => (r.operation.data as { action: string }).action)).to.deep.equal(['in_progress', 'fail']);
    // the in_progress ordered late changes nothing
    await u.configTxnCommitted(committed(sent[0]!, 2));
    await tick();
    expect(actions).to.deep.equal([]);
    u.close();
  });

  it('a node closing during the wait runs nothing; with the wait off the action follows the submission at once', async () => {
    const u = make();
    await reachUpgradeTime(u);
    u.close();
    await u.service.upgrader.idle();
    clock.advance(WAIT);
    await tick();
    expect(actions).to.deep.equal([]);
    expect(exits).to.deep.equal([]);

    rmSync(dir, { recursive: true, force: true });
    dir = mkdtempSync(join(tmpdir(), 'quire-order-wait-'));
    sent = [];
    const v = make(0);
    await reachUpgradeTime(v);
    await v.service.upgrader.idle();
    expect(actions).to.deep.equal(['1.1.0']);
    v.close();
  });

  it('every log line of the upgrade wiring names its module', async () => {
    const u = make();
    await u.caughtUp([]);
    expect(lines.length).to.be.greaterThan(0);
    for (const l of lines) expect(l, JSON.stringify(l)).to.include({ module: 'upgrade', node: 'Node1' });
    u.close();
  });
});
