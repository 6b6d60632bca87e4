import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { consensusOptionsOf, defaultNodeConfig, loadConfigFile, mergeConfig, resolvePath, validateConfig } from '../../src/config.js';
import { expectCode, expectCodeAsync } from '@quire/testing';
import { NodeError, NodeErrorCode } from '../../src/errors.js';

/** base58 of a 32-byte ed25519 key */
const OBSERVER_DEST = '8QhFxKxyaFsJy4CyxeYX34dFH8oWqyBv1P4HLQCsoeLy';

describe('config', () => {
  it('takes a list of observers (name + base58 ed25519 verkey), empty by default', () => {
    expect(defaultNodeConfig.observers).to.deep.equal([]);
    expect(mergeConfig(defaultNodeConfig, { observers: [{ name: 'Obs1', dest: OBSERVER_DEST }] }).observers).to.deep.equal([
      { name: 'Obs1', dest: OBSERVER_DEST },
    ]);
  });

  it('takes a wall-clock offset for fault tests, 0 by default, at most a day either way', () => {
    expect(defaultNodeConfig.clockOffsetMs).to.equal(0);
    expect(mergeConfig(defaultNodeConfig, { clockOffsetMs: -120_000 }).clockOffsetMs).to.equal(-120_000);
    for (const bad of [86_400_001, -86_400_001, 1.5, '10'])
      expectCode(() => mergeConfig(defaultNodeConfig, { clockOffsetMs: bad }), NodeError, NodeErrorCode.CONFIG_INVALID);
  });

  it('the defaults are valid and carry the Quire consensus timers', () => {
    validateConfig(defaultNodeConfig);
    expect(defaultNodeConfig.consensus.max3pcBatchWaitMs).to.equal(100);
    expect(defaultNodeConfig.consensus.stateFreshnessUpdateIntervalSec).to.equal(60);
    expect(defaultNodeConfig.metricsPort).to.equal(null);
  });

  it('derives the consensus MSG_LEN_LIMIT from limits.maxMessageLength and refuses a second value', () => {
    expect(consensusOptionsOf(defaultNodeConfig).msgLenLimit).to.equal(defaultNodeConfig.limits.maxMessageLength);
    const c = mergeConfig(defaultNodeConfig, { limits: { maxMessageLength: 4096 } });
    const opts = consensusOptionsOf(c);
    expect(opts.msgLenLimit).to.equal(4096);
    expect(opts.chkFreq).to.equal(defaultNodeConfig.consensus.chkFreq);
    expect(Object.keys(defaultNodeConfig.consensus)).to.not.include('msgLenLimit');
    const e = expectCode(() => mergeConfig(defaultNodeConfig, { consensus: { msgLenLimit: 1_000_000 } }), NodeError, NodeErrorCode.CONFIG_INVALID);
    expect(e.message).to.contain('consensus.msgLenLimit').and.to.contain('limits.maxMessageLength');
  });

  it('merges a file over the defaults, nested groups key by key', () => {
    const c = mergeConfig(defaultNodeConfig, { name: 'Node9', consensus: { max3pcBatchSize: 10 }, limits: { clientRate: 5 }, metricsPort: 9100 });
    expect(c.name).to.equal('Node9');
    expect(c.consensus.max3pcBatchSize).to.equal(10);
    expect(c.consensus.chkFreq).to.equal(defaultNodeConfig.consensus.chkFreq);
    expect(c.limits.clientRate).to.equal(5);
    expect(c.limits.clientBurst).to.equal(defaultNodeConfig.limits.clientBurst);
    expect(c.limits.clientMaxPending).to.equal(4096);
    expect(c.metricsPort).to.equal(9100);
    expect(defaultNodeConfig.consensus.max3pcBatchSize).to.equal(500);
    // CLIENT_REPLY_TIMEOUT (consensus.md §10) is the client's: a node keeps a write's REPLY target as long as consensus may order it
    expect(defaultNodeConfig.limits).to.not.have.property('clientReplyTimeoutMs');
  });

  it('refuses an option of an earlier version that is gone (limits.clientReplyTimeoutMs) with a reason of its own, from a file too', async () => {
    for (const override of [{ limits: { clientReplyTimeoutMs: 15_000 } }, { limits: { clientRate: 5, clientReplyTimeoutMs: 30_000 } }]) {
      const e = expectCode(() => mergeConfig(defaultNodeConfig, override), NodeError, NodeErrorCode.CONFIG_INVALID);
      expect(e.data.option).to.equal('limits.clientReplyTimeoutMs');
      expect(e.data.reason).to.match(/^removed: /);
    }
    // a key that was never an option is still unknown, including names of Object.prototype
    for (const [override, option] of [
      [{ limits: { clientReplyTimeout: 1 } }, 'limits.clientReplyTimeout'],
      [JSON.parse('{"limits": {"__proto__": 1}}'), 'limits.__proto__'],
      [{ constructor: 1 }, 'constructor'],
    ] as const) {
      const e = expectCode(() => mergeConfig(defaultNodeConfig, override), NodeError, NodeErrorCode.CONFIG_INVALID);
      expect(e.data.option).to.equal(option);
      expect(e.data.reason).to.equal('unknown option');
    }
    const dir = await mkdtemp(join(tmpdir(), 'quire-config-removed-'));
    try {
      const f = join(dir, 'old.json');
      await writeFile(f, JSON.stringify({ limits: { clientReplyTimeoutMs: 15_000 } }));
      await expectCodeAsync(loadConfigFile(f), NodeError, NodeErrorCode.CONFIG_INVALID, { option: 'limits.clientReplyTimeoutMs' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses unknown options and bad values with one-line reasons naming the option', () => {
    const cases: [unknown, string][] = [
      [{ nmae: 'x' }, 'nmae'],
      [{ consensus: { chkFreqq: 3 } }, 'consensus.chkFreqq'],
      [{ consensus: { chkFreq: 0 } }, 'consensus.chkFreq'],
      [{ consensus: { chkFreq: 400 } }, 'consensus.logSize'],
      [{ consensus: { throughputDelta: 1.5 } }, 'consensus.throughputDelta'],
      [{ nodePort: 70000 }, 'nodePort'],
      [{ logLevel: 'loud' }, 'logLevel'],
      [{ durable: 'yes' }, 'durable'],
      [{ limits: 3 }, 'limits'],
      [{ upgrade: { actionCommand: '' } }, 'upgrade.actionCommand'],
      [{ upgrade: { timeoutSec: 0 } }, 'upgrade.timeoutSec'],
      [{ limits: { clientIdleTimeoutMs: 10 } }, 'limits.clientIdleTimeoutMs'],
      [{ limits: { clientMaxPending: 0 } }, 'limits.clientMaxPending'],
      [{ limits: { clientMaxPending: 100_000 } }, 'limits.clientMaxPending'],
      [[1, 2], '(root)'],
      [{ observers: {} }, 'observers'],
      [{ observers: [{ name: 'Obs1' }] }, 'observers[0].dest'],
      [{ observers: [{ name: 'Obs1', dest: '4cU41vWW82ArfxJxHkzXPG' }] }, 'observers[0].dest'],
      [{ observers: [{ name: '', dest: OBSERVER_DEST }] }, 'observers[0].name'],
      [{ observers: [{ name: 'Obs1', dest: OBSERVER_DEST, host: 'x' }] }, 'observers[0].host'],
      [
        {
          observers: [
            { name: 'Obs1', dest: OBSERVER_DEST },
            { name: 'Obs1', dest: 'Gw6pDLhcBcoQesN72qfotTgFa7cbuqZpkX3Xo6pLhPhv' },
          ],
        },
        'observers[1].name',
      ],
    ];
    for (const [override, option] of cases) {
      const e = expectCode(() => mergeConfig(defaultNodeConfig, override), NodeError, NodeErrorCode.CONFIG_INVALID);
      expect(e.message).to.contain(`config option ${option}:`);
      expect(e.message).to.not.contain('\n');
    }
  });

  describe('files', () => {
    let dir: string;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'quire-config-'));
    });
    after(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('loads a JSON file', async () => {
      const f = join(dir, 'ok.json');
      await writeFile(f, JSON.stringify({ clientPort: 9999, durable: false }));
      const c = await loadConfigFile(f);
      expect(c.clientPort).to.equal(9999);
      expect(c.durable).to.equal(false);
    });

    it('reports a missing file, bad JSON and a non-object', async () => {
      const attempts: [string, string | null, string][] = [
        [join(dir, 'missing.json'), null, NodeErrorCode.CONFIG_UNREADABLE],
        [join(dir, 'bad.json'), '{"a":', NodeErrorCode.CONFIG_INVALID_JSON],
        [join(dir, 'list.json'), '[1]', NodeErrorCode.CONFIG_INVALID_JSON],
      ];
      for (const [f, content, code] of attempts) {
        if (content !== null) await writeFile(f, content);
        try {
          await loadConfigFile(f);
          expect.fail('expected an error');
        } catch (e) {
          expect((e as NodeError).code).to.equal(code);
        }
      }
    });

    it('resolves relative paths against the data directory', () => {
      expect(resolvePath('/data', 'db')).to.equal('/data/db');
      expect(resolvePath('/data', '/abs/g')).to.equal('/abs/g');
    });
  });
});
