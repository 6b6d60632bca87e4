// #16: a validator whose event loop stalls for a few seconds under overload is alive, and its links
// must stay up: at the 3 s ping timeout they dropped, the INSTANCE_CHANGE and VIEW_CHANGE messages
// broadcast meanwhile were lost, and one node was left in a view change the others never joined.
// A peer that answers no ping is still cut off, after `pingTimeoutMs`.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { NodeHost, defaultNodeHostOptions } from '../../src/index.js';
import { destOf, nodeSeed, validatorInfo } from './helpers.js';
import { SOURCE_RUN_ARGS } from '@quire/testing';

const here = dirname(fileURLToPath(import.meta.url));

function stallingValidator(port: number, stallMs: number, pingTimeoutMs?: number): Promise<{ disconnects?: number; sent?: boolean }> {
  return new Promise((resolve, reject) => {
    const args = [String(port), String(stallMs), ...(pingTimeoutMs !== undefined ? [String(pingTimeoutMs)] : [])];
    const child = spawn(process.execPath, [...SOURCE_RUN_ARGS, join(here, 'fixtures', 'stalling-validator.ts'), ...args], {
      cwd: join(here, '..', '..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    child.stdout.on('data', (b: Buffer) => (text += b.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
    child.on('error', reject);
    child.on('exit', () => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(text.trim().split('\n').pop() ?? '{}') as { disconnects?: number; sent?: boolean });
      } catch {
        reject(new Error(`the validator printed ${JSON.stringify(text)}`));
      }
    });
  });
}

describe('validator links under a stalled validator (#16)', function () {
  this.timeout(60_000);

  async function host(pingTimeoutMs?: number): Promise<{ h: NodeHost; got: { text: string; disconnectsBefore: number }[]; disconnects: () => number }> {
    const h = await NodeHost.create({ name: 'Node1', seed: nodeSeed(1), ...(pingTimeoutMs !== undefined ? { pingIntervalMs: 200, pingTimeoutMs } : {}) });
    const got: { text: string; disconnectsBefore: number }[] = [];
    let disconnects = 0;
    h.on('message', (_from, data) => got.push({ text: new TextDecoder().decode(data), disconnectsBefore: disconnects }));
    h.on('peer:disconnect', () => disconnects++);
    h.setValidators([validatorInfo('Node1', await destOf(nodeSeed(1)), h.port), validatorInfo('Node2', await destOf(nodeSeed(2)), 1)]);
    return { h, got, disconnects: () => disconnects };
  }

  it('keep the link to a validator whose process stalls for longer than the former 3 s ping timeout (default options)', async () => {
    const { h, got } = await host();
    try {
      const r = await stallingValidator(h.port, 4_500);
      // the validator's own count is taken before it closes; this host's when each message arrived
      expect({ ...r, got }).to.deep.equal({
        disconnects: 0,
        sent: true,
        got: [
          { text: 'before', disconnectsBefore: 0 },
          { text: 'after', disconnectsBefore: 0 },
        ],
      });
    } finally {
      await h.close();
    }
  });

  it('cut off a validator that answers no ping for longer than the ping timeout', async () => {
    const { h, disconnects } = await host(400);
    try {
      await stallingValidator(h.port, 2_500, 400);
      expect(disconnects()).to.be.at.least(1);
    } finally {
      await h.close();
    }
  });

  it('wait 30 s for a ping by default', () => {
    expect(defaultNodeHostOptions.pingTimeoutMs).to.be.at.least(30_000);
  });

  it('ping every 10 s by default, not every second (each ping is a stream opened on every connection)', () => {
    expect(defaultNodeHostOptions.pingIntervalMs).to.equal(10_000);
    expect(defaultNodeHostOptions.pingIntervalMs).to.be.below(defaultNodeHostOptions.pingTimeoutMs);
  });
});
