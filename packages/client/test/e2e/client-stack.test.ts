// The client's libp2p stack (createClientLibp2p) and the one dialer of the client protocol (NodeConnection.connect)
// on real sockets: the library's Yamux window rule on a node's answers, and a start under an AbortSignal (an aborted
// start closes what it opened and rejects with ClientError ABORTED).
import { expect } from 'chai';
import { createQuireLibp2p } from '@quire/network';
import { expectCodeAsync, freePort, portIsFree, signalAbortingAtCheck } from '@quire/testing';
import { ClientError, ClientErrorCode, NodeConnection, createClientLibp2p } from '../../src/index.js';
import { nodeDests } from '../unit/fixtures.js';
import { waitFor } from './wait.js';

const PROTOCOL = '/quire/test/window/1.0.0';

interface WindowFields {
  recvWindow: number;
  recvWindowCapacity: number;
}

describe("the client's libp2p stack and dialer", function () {
  this.timeout(20_000);

  it("keeps the library's Yamux rule: its window is topped up as a node's answers arrive (and may grow)", async () => {
    const node = await createQuireLibp2p({ listen: ['/ip4/127.0.0.1/tcp/0'] });
    const client = await createClientLibp2p();
    try {
      await node.handle(PROTOCOL, (stream) => {
        stream.send(new Uint8Array(100 * 1024));
      });
      const stream = await client.dialProtocol(node.getMultiaddrs()[0]!, PROTOCOL);
      let received = 0;
      stream.addEventListener('message', (evt) => (received += evt.data.byteLength));
      stream.send(Uint8Array.of(1)); // opens the stream at the node
      await waitFor('100 KiB received', () => (received === 100 * 1024 ? true : undefined));
      const w = stream as unknown as WindowFields;
      expect(Object.hasOwn(stream, 'sendWindowUpdate')).to.equal(false);
      expect(w.recvWindowCapacity).to.equal(w.recvWindow);
    } finally {
      await client.stop();
      await node.stop();
    }
  });

  it('registers identify before the services it is given (gossipsub reads what identify learns)', async () => {
    const libp2p = await createClientLibp2p({ services: { other: () => ({}) } });
    try {
      expect(Object.keys(libp2p.services)).to.deep.equal(['identify', 'other']);
    } finally {
      await libp2p.stop();
    }
  });

  describe('creation under an AbortSignal', () => {
    it('a signal aborted before the start opens nothing and rejects with ABORTED', async () => {
      const ac = new AbortController();
      ac.abort(new Error('not wanted'));
      const e = await expectCodeAsync(createClientLibp2p({}, { signal: ac.signal }), ClientError, ClientErrorCode.ABORTED);
      expect(e.data.reason).to.equal('not wanted');
    });

    it('a stack aborted while it starts is stopped and rejects with ABORTED', async () => {
      const port = await freePort();
      const e = await expectCodeAsync(
        createClientLibp2p({ addresses: { listen: [`/ip4/127.0.0.1/tcp/${port}`] } }, { signal: signalAbortingAtCheck(2) }),
        ClientError,
        ClientErrorCode.ABORTED,
      );
      expect(e.data.reason).to.equal('stopped while starting');
      // its listener is closed: the port can be taken again at once
      expect(await portIsFree(port)).to.equal(true);
    });

    it('a dialer aborted before its session opens rejects with ABORTED', async () => {
      const ac = new AbortController();
      ac.abort();
      await expectCodeAsync(
        NodeConnection.connect({ host: '127.0.0.1', port: await freePort(), dest: nodeDests[0]! }, { signal: ac.signal }),
        ClientError,
        ClientErrorCode.ABORTED,
      );
    });
  });

  it('a dialer to a closed port fails with NODE_UNREACHABLE, naming the node', async () => {
    const e = await expectCodeAsync(
      NodeConnection.connect({ host: '127.0.0.1', port: await freePort(), dest: nodeDests[0]!, alias: 'Node1', timeoutMs: 2000 }),
      ClientError,
      ClientErrorCode.NODE_UNREACHABLE,
    );
    expect(e.data.node).to.equal('Node1');
  });

  it('a dialer refuses a dest that is not a 32-byte key and a seed that is not 32 bytes, before dialing', async () => {
    const port = await freePort();
    await expectCodeAsync(NodeConnection.connect({ host: '127.0.0.1', port, dest: 'Gw6pDLhcBcoQesN72qfotT' }), ClientError, ClientErrorCode.INVALID_ARGUMENT, {
      field: 'dest',
      reason: 'decodes to 16 bytes, not 32',
    });
    await expectCodeAsync(
      NodeConnection.connect({ host: '127.0.0.1', port, dest: nodeDests[0]!, seed: new Uint8Array(31) }),
      ClientError,
      ClientErrorCode.INVALID_SEED,
      {
        length: 31,
      },
    );
  });
});
