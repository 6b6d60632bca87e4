// QuireNode.create under an AbortSignal: a start aborted at any step (before the stores are opened, after, while
// either host starts, once everything is up) rejects with NodeError ABORTED and leaves nothing open: the LevelDB
// lock of the data dir and both listening ports are free again at once, so the same node starts right after.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { expectCodeAsync, freePort, portIsFree, signalAbortingAtCheck } from '@quire/testing';
import { type NodeConfig, mergeConfig } from '../../src/config.js';
import { NodeError, NodeErrorCode } from '../../src/errors.js';
import { nodeSeed } from '../../src/genesis-gen.js';
import { deriveNodeKeys } from '../../src/keys.js';
import { createLogger } from '../../src/logger.js';
import { QuireNode } from '../../src/node.js';
import { soloNodeConfig } from './helpers.js';

const keys = deriveNodeKeys('Node1', Buffer.from(nodeSeed('Node1')));

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
      const signal = signalAbortingAtCheck(at);
      await expectCodeAsync(QuireNode.create({ dataDir: dir, config }, { logger, keys }, { signal }), NodeError, NodeErrorCode.ABORTED);
      // it aborts at its `at`-th check only: aborted, the start reached that check
      expect(signal.aborted, 'the start reached the check').to.equal(true);
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
