// An observer's start under an AbortSignal (conventions: public async APIs take `{ signal }`): GossipTransport.create
// and BatchFollower.start aborted before or at any step of their start close what they opened (the listener's port is
// free again at once) and reject with ClientError ABORTED; a signal that never aborts changes nothing.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { expectCodeAsync, freePort, portIsFree, signalAbortingAtCheck } from '@quire/testing';
import { BatchFollower, ClientError, ClientErrorCode } from '../../src/index.js';
import { GossipTransport } from '../../src/transport/libp2p.js';
import { nodeDests, poolGenesis } from '../unit/fixtures.js';

const TOPIC = '/quire/TestPool/ordered/1';

describe("an observer's start under an AbortSignal", function () {
  this.timeout(30_000);
  const seed = randomBytes(32);

  /** The transport of an observer listening on `port`, its validator's node listener at `validatorPort`. */
  function transport(port: number, validatorPort: number, signal: AbortSignal): Promise<GossipTransport> {
    const validators = [{ alias: 'Node1', dest: nodeDests[0]!, host: '127.0.0.1', port: validatorPort }];
    return GossipTransport.create({ seed, port, topic: TOPIC, validators }, { deliver: () => undefined }, { signal });
  }

  // check 1: before anything; 2: before the stack is created; 3: once it is up (its listener open)
  for (const at of [1, 2, 3]) {
    it(`GossipTransport.create aborted at its check ${at} rejects with ABORTED and leaves its port free`, async () => {
      const port = await freePort();
      const e = await expectCodeAsync(transport(port, await freePort(), signalAbortingAtCheck(at)), ClientError, ClientErrorCode.ABORTED);
      expect(e.data.reason).to.equal('stopped while starting');
      expect(await portIsFree(port)).to.equal(true);
    });
  }

  it('GossipTransport.create with a signal that never aborts is up as before', async () => {
    const port = await freePort();
    const t = await transport(port, await freePort(), new AbortController().signal);
    try {
      expect(await portIsFree(port)).to.equal(false);
      expect(Object.keys(t.libp2p.services)).to.deep.equal(['identify', 'pubsub']);
    } finally {
      await t.close();
    }
    expect(await portIsFree(port)).to.equal(true);
  });

  // check 1: the follower's own, before anything; 4: its transport's stack is up
  for (const at of [1, 4]) {
    it(`BatchFollower.start aborted at its check ${at} rejects with ABORTED and leaves its port free`, async () => {
      const port = await freePort();
      const genesis = poolGenesis({ nodePorts: [await freePort(), await freePort(), await freePort(), await freePort()] });
      const e = await expectCodeAsync(
        BatchFollower.start(genesis, { seed, port }, {}, { signal: signalAbortingAtCheck(at) }),
        ClientError,
        ClientErrorCode.ABORTED,
      );
      expect(e.data.reason).to.equal('stopped while starting');
      expect(await portIsFree(port)).to.equal(true);
    });
  }

  it('BatchFollower.start with a signal that never aborts follows as before', async () => {
    const port = await freePort();
    const genesis = poolGenesis({ nodePorts: [await freePort(), await freePort(), await freePort(), await freePort()] });
    const f = await BatchFollower.start(genesis, { seed, port }, {}, { signal: new AbortController().signal });
    try {
      expect(await portIsFree(port)).to.equal(false);
      expect(f.topic).to.equal(`/quire/${f.poolId}/ordered/1`);
    } finally {
      await f.close();
    }
  });
});
