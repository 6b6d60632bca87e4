// The one libp2p stack of Quire (stack.ts): its Yamux window rule on real connections, and creation under an
// AbortSignal (an aborted start closes what it opened and rejects with ABORTED).
import { expect } from 'chai';
import { createServer } from 'node:net';
import type { Stream } from '@libp2p/interface';
import { expectCodeAsync } from '@quire/testing';
import {
  ClientHost,
  NetworkError,
  NetworkErrorCode,
  NodeConnection,
  NodeHost,
  createClientLibp2p,
  createQuireLibp2p,
  type YamuxWindowUpdate,
} from '../../src/index.js';
import { destOf, nodeSeed, waitFor } from './helpers.js';

const PROTOCOL = '/quire/test/window/1.0.0';

interface WindowFields {
  recvWindow: number;
  recvWindowCapacity: number;
}

/** Sends `bytes` over a stream between two stacks; resolves with the receiving stream once it has them all. */
async function receiverAfter(windowUpdate: YamuxWindowUpdate, bytes: number): Promise<{ stream: Stream; stop: () => Promise<void> }> {
  const listener = await createQuireLibp2p({ listen: ['/ip4/127.0.0.1/tcp/0'], yamux: { windowUpdate } });
  const dialer = await createClientLibp2p();
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

/** A node's answers of `bytes` to a client's stack: resolves with the client's stream once it has them all. */
async function clientAfter(bytes: number): Promise<{ stream: Stream; stop: () => Promise<void> }> {
  const node = await createQuireLibp2p({ listen: ['/ip4/127.0.0.1/tcp/0'] });
  const client = await createClientLibp2p();
  const stop = async (): Promise<void> => {
    await client.stop();
    await node.stop();
  };
  try {
    await node.handle(PROTOCOL, (stream) => {
      stream.send(new Uint8Array(bytes));
    });
    const stream = await client.dialProtocol(node.getMultiaddrs()[0]!, PROTOCOL);
    let received = 0;
    stream.addEventListener('message', (evt) => {
      received += evt.data.byteLength;
    });
    stream.send(Uint8Array.of(1)); // opens the stream at the node
    await waitFor(() => received === bytes, `${bytes} bytes received`);
    return { stream, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** A signal that reads as not aborted at its first check and aborts at the second: an abort while a host starts. */
function abortedAtSecondCheck(): AbortSignal {
  const ac = new AbortController();
  let checks = 0;
  return new Proxy(ac.signal, {
    get(target, key) {
      if (key === 'aborted' && ++checks === 2) ac.abort(new Error('stopped while starting'));
      const v: unknown = Reflect.get(target, key, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** A free loopback port, closed again. */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** Listens on `port` and closes again: resolves when the port could be taken (nothing left holding it). */
async function portIsFree(port: number): Promise<boolean> {
  const srv = createServer();
  return new Promise<boolean>((resolve) => {
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
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

  it("a client's stack keeps the library's rule: its window is topped up as answers arrive (and may grow)", async () => {
    const { stream, stop } = await clientAfter(100 * 1024);
    try {
      const w = stream as unknown as WindowFields;
      expect(Object.hasOwn(stream, 'sendWindowUpdate')).to.equal(false);
      expect(w.recvWindowCapacity).to.equal(w.recvWindow);
    } finally {
      await stop();
    }
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
      await expectCodeAsync(ClientHost.create({ seed: nodeSeed(1), port }, {}, { signal: abortedAtSecondCheck() }), NetworkError, NetworkErrorCode.ABORTED);
      expect(await portIsFree(port)).to.equal(true);
      const again = await ClientHost.create({ seed: nodeSeed(1), port });
      expect(again.port).to.equal(port);
      await again.close();
    });

    it('a node host aborted while it starts closes its listener: the same port can be taken at once', async () => {
      const port = await freePort();
      await expectCodeAsync(
        NodeHost.create({ name: 'Node1', seed: nodeSeed(1), port }, {}, { signal: abortedAtSecondCheck() }),
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

    it('a dialer aborted before its session opens rejects with ABORTED', async () => {
      const ac = new AbortController();
      ac.abort();
      await expectCodeAsync(
        NodeConnection.connect({ host: '127.0.0.1', port: await freePort(), dest: await destOf(nodeSeed(1)) }, { signal: ac.signal }),
        NetworkError,
        NetworkErrorCode.ABORTED,
      );
    });

    it('a dialer to a closed port fails with NODE_UNREACHABLE, naming the node', async () => {
      const e = await expectCodeAsync(
        NodeConnection.connect({ host: '127.0.0.1', port: await freePort(), dest: await destOf(nodeSeed(1)), alias: 'Node1', timeoutMs: 2000 }),
        NetworkError,
        NetworkErrorCode.NODE_UNREACHABLE,
      );
      expect(e.data.node).to.equal('Node1');
    });
  });
});
