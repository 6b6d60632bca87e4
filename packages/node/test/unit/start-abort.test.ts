// QuireNode.create under an AbortSignal: a start aborted at any step (before the stores are opened, after, while
// either host starts, once everything is up) rejects with NodeError ABORTED and leaves nothing open: the LevelDB
// lock of the data dir and both listening ports are free again at once, so the same node starts right after.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { expectCodeAsync } from '@quire/testing';
import { type NodeConfig, mergeConfig } from '../../src/config.js';
import { NodeError, NodeErrorCode } from '../../src/errors.js';
import { nodeSeed } from '../../src/genesis-gen.js';
import { deriveNodeKeys } from '../../src/keys.js';
import { createLogger } from '../../src/logger.js';
import { QuireNode } from '../../src/node.js';
import { soloNodeConfig } from './helpers.js';

const keys = deriveNodeKeys('Node1', Buffer.from(nodeSeed('Node1')));

/**
 * A signal that reads as not aborted until its `at`-th check and aborts there: an abort at a chosen step of the
 * start, the same on every run (the start checks its signal between the steps that open something).
 */
function abortedAtCheck(at: number): { signal: AbortSignal; checks: () => number } {
  const ac = new AbortController();
  let checks = 0;
  const signal = new Proxy(ac.signal, {
    get(target, key) {
      if (key === 'aborted' && ++checks === at) ac.abort(new Error(`stopped at check ${at}`));
      const v: unknown = Reflect.get(target, key, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { signal, checks: () => checks };
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** True when `port` can be listened on (nothing holds it). */
async function portIsFree(port: number): Promise<boolean> {
  const srv = createServer();
  return new Promise<boolean>((resolve) => {
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

describe('QuireNode.create under an AbortSignal', function () {
  this.timeout(60_000);
  let dir: string;
  let config: NodeConfig;
  const logger = createLogger({ level: 'silent' });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-start-abort-'));
    config = mergeConfig(await soloNodeConfig(dir), { nodePort: await freePort(), clientPort: await freePort() });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a signal aborted before the start opens nothing', async () => {
    const ac = new AbortController();
    ac.abort(new Error('not wanted'));
    const e = await expectCodeAsync(QuireNode.create({ dataDir: dir, config }, { logger, keys }, { signal: ac.signal }), NodeError, NodeErrorCode.ABORTED);
    expect(e.data.reason).to.equal('not wanted');
  });

  // checks: 1 before the stores open, 2 after, 3-4 around the node host's start, 5-6 around the client host's,
  // 7 once everything is up
  for (const at of [1, 2, 3, 4, 5, 6, 7]) {
    it(`aborted at check ${at}: ABORTED, and the data dir and both ports can be used again at once`, async () => {
      const { signal, checks } = abortedAtCheck(at);
      await expectCodeAsync(QuireNode.create({ dataDir: dir, config }, { logger, keys }, { signal }), NodeError, NodeErrorCode.ABORTED);
      expect(checks(), 'the start reached the check').to.be.at.least(at);
      expect(await portIsFree(config.nodePort as number), 'node port').to.equal(true);
      expect(await portIsFree(config.clientPort as number), 'client port').to.equal(true);
      const again = await QuireNode.create({ dataDir: dir, config }, { logger, keys });
      await again.close();
    });
  }

  it('a signal that never aborts starts the node as before', async () => {
    const node = await QuireNode.create({ dataDir: dir, config }, { logger, keys }, { signal: new AbortController().signal });
    expect(node.clientPort).to.equal(config.clientPort);
    await node.close();
  });
});
