// The libp2p stack of the validators' hosts (stack.ts): its Yamux window rule on real connections, and creation under
// an AbortSignal (an aborted start closes what it opened and rejects with ABORTED). The client's stack and dialer are
// tested in @quire/client (test/e2e/client-stack.test.ts).
import { expect } from 'chai';
import type { Stream } from '@libp2p/interface';
import { expectCodeAsync, freePort, portIsFree, signalAbortingAtCheck } from '@quire/testing';
import { ClientHost, NetworkError, NetworkErrorCode, NodeHost, createQuireLibp2p, type YamuxWindowUpdate } from '../../src/index.js';
import { nodeSeed, waitFor } from './helpers.js';

const PROTOCOL = '/quire/test/window/1.0.0';

interface WindowFields {
  recvWindow: number;
  recvWindowCapacity: number;
}

/** Sends `bytes` over a stream between two stacks; resolves with the receiving stream once it has them all. */
async function receiverAfter(windowUpdate: YamuxWindowUpdate, bytes: number): Promise<{ stream: Stream; stop: () => Promise<void> }> {
  const listener = await createQuireLibp2p({ listen: ['/ip4/127.0.0.1/tcp/0'], yamux: { windowUpdate } });
  const dialer = await createQuireLibp2p({});
  const stop = async (): Promise<void> => {
    await dialer.stop();
    await listener.stop();
  };
  try {
    let received = 0;
    const inbound = Promise.withResolvers<Stream>();
    await listener.handle(PROTOCOL, (stream) => {
      stream.addEventListener('message', (evt) => {
        received += evt.data.byteLength;
      });
      inbound.resolve(stream);
    });
    const out = await dialer.dialProtocol(listener.getMultiaddrs()[0]!, PROTOCOL);
    out.send(new Uint8Array(bytes));
    const stream = await inbound.promise;
    await waitFor(() => received === bytes, `${bytes} bytes received`);
    return { stream, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

describe('the Quire libp2p stack', function () {
  this.timeout(20_000);

  describe('yamux window rule on a connection', () => {
    it("'half': 100 KiB received on a 256 KiB window leave the window unrefilled (no WINDOW_UPDATE sent)", async () => {
      const { stream, stop } = await receiverAfter('half', 100 * 1024);
      try {
        const w = stream as unknown as WindowFields;
        expect(Object.hasOwn(stream, 'sendWindowUpdate'), 'the rule is an own method of the stream').to.equal(true);
        expect(w.recvWindow - w.recvWindowCapacity).to.equal(100 * 1024);
      } finally {
        await stop();
      }
    });

    it("'every-frame' (the library's rule): the window is topped up after the data frames", async () => {
      const { stream, stop } = await receiverAfter('every-frame', 100 * 1024);
      try {
        const w = stream as unknown as WindowFields;
        expect(Object.hasOwn(stream, 'sendWindowUpdate')).to.equal(false);
        expect(w.recvWindowCapacity).to.equal(w.recvWindow);
      } finally {
        await stop();
      }
    });
  });

  describe('creation under an AbortSignal', () => {
    it('a signal aborted before the start opens nothing and rejects with ABORTED', async () => {
      const ac = new AbortController();
      ac.abort(new Error('not wanted'));
      const e = await expectCodeAsync(createQuireLibp2p({ listen: ['/ip4/127.0.0.1/tcp/0'] }, { signal: ac.signal }), NetworkError, NetworkErrorCode.ABORTED);
      expect(e.data.reason).to.equal('not wanted');
    });

    it('a client host aborted while it starts closes its listener: the same port can be taken at once', async () => {
      const port = await freePort();
      await expectCodeAsync(ClientHost.create({ seed: nodeSeed(1), port }, {}, { signal: signalAbortingAtCheck(2) }), NetworkError, NetworkErrorCode.ABORTED);
      expect(await portIsFree(port)).to.equal(true);
      const again = await ClientHost.create({ seed: nodeSeed(1), port });
      expect(again.port).to.equal(port);
      await again.close();
    });

    it('a node host aborted while it starts closes its listener: the same port can be taken at once', async () => {
      const port = await freePort();
      await expectCodeAsync(
        NodeHost.create({ name: 'Node1', seed: nodeSeed(1), port }, {}, { signal: signalAbortingAtCheck(2) }),
        NetworkError,
        NetworkErrorCode.ABORTED,
      );
      expect(await portIsFree(port)).to.equal(true);
    });

    it('a host started with a signal that never aborts is up as before', async () => {
      const h = await NodeHost.create({ name: 'Node1', seed: nodeSeed(1) }, {}, { signal: new AbortController().signal });
      expect(h.port).to.be.greaterThan(0);
      await h.close();
    });
  });
});
