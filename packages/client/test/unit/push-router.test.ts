// A PUSH naming no request in flight (a REPLY after its listener was released) reaches the exchange waiting for that
// request on that node through the connection's typed `unroutedPush` event, and nothing else does.
import { expect } from 'chai';
import type { Libp2p } from '@libp2p/interface';
import { stringifyJson } from '@quire/common';
import { PushRouter, exchange, requestKey } from '../../src/pool/exchange.js';
import { NodeConnection, type ConnectionMessage } from '../../src/transport/node-connection.js';

/** A connection whose node sends `payload` as a PUSH with no request id (nothing is dialled). */
class PushingConnection extends NodeConnection {
  constructor(alias: string) {
    super({ address: { alias, dest: '11111111111111111111111111111111', host: '127.0.0.1', port: 1 } }, { libp2p: {} as Libp2p });
  }

  /** `requestId`: the id the node names (0: none; else a request whose listener was released) */
  pushUnrouted(payload: unknown, requestId = 0): void {
    this.emit('unroutedPush', new TextEncoder().encode(typeof payload === 'string' ? payload : stringifyJson(payload)), requestId);
  }
}

/** A router with a connection attached for each of `names` (two connections may name one node) */
function attached(first: string, second: string): [PushRouter, PushingConnection, PushingConnection] {
  const router = new PushRouter();
  const a = new PushingConnection(first);
  const b = new PushingConnection(second);
  router.attach(a);
  router.attach(b);
  return [router, a, b];
}

describe('PushRouter: unrouted PUSHes to the exchange that waits for them', () => {
  it('delivers a REPLY by its request key on its node only, and not after the wait is released', () => {
    const [router, a, b] = attached('Node1', 'Node2');
    const got: unknown[] = [];
    const release = router.wait('Node1', requestKey('did1', 7), (m) => got.push(m));
    const reply = { op: 'REPLY', result: { identifier: 'did1', reqId: 7, seqNo: 3 } };
    b.pushUnrouted(reply);
    a.pushUnrouted({ op: 'REPLY', result: { identifier: 'did1', reqId: 8 } });
    a.pushUnrouted('not json');
    a.pushUnrouted(reply);
    expect(got).to.deep.equal([reply]);
    release();
    a.pushUnrouted(reply);
    expect(got).to.have.length(1);
  });

  it("drops, unparsed, a push on the id of a request nobody waits for any more (a settled write's later REPLYs)", () => {
    const router = new PushRouter();
    const a = new PushingConnection('Node1');
    router.attach(a);
    const got: unknown[] = [];
    const key = requestKey('did1', 7);
    const reply = { op: 'REPLY', result: { identifier: 'did1', reqId: 7, seqNo: 3 } };
    router.sent(a, 41, key);
    const release = router.wait('Node1', key, (m) => got.push(m));
    // still waited for: parsed and routed by the request it names, as before
    a.pushUnrouted(reply, 41);
    expect(got).to.deep.equal([reply]);
    expect(router.unparsed).to.equal(0);
    release();
    // settled: the later REPLYs on its id are not parsed (bytes that are not even JSON are dropped the same way)
    a.pushUnrouted(reply, 41);
    a.pushUnrouted('not json', 41);
    expect(router.unparsed).to.equal(2);
    expect(got).to.have.length(1);
  });

  it('parses a push on an id it did not see sent with a key (0, another request, or an older id of the same slot)', () => {
    const [router, a, b] = attached('Node1', 'Node1');
    const got: unknown[] = [];
    const reply = { op: 'REPLY', result: { identifier: 'did1', reqId: 7, seqNo: 3 } };
    router.wait('Node1', requestKey('did1', 7), (m) => got.push(m));
    router.sent(a, 5, requestKey('did1', 6));
    a.pushUnrouted(reply, 0);
    a.pushUnrouted(reply, 6);
    a.pushUnrouted(reply, 5 + 4_096);
    // another connection's ids are its own
    b.pushUnrouted(reply, 5);
    expect(got).to.have.length(4);
    expect(router.unparsed).to.equal(0);
  });

  it('an exchange names to the router the id its request was sent with: the REPLY pushed there after it ended is not parsed', async () => {
    const router = new PushRouter();
    const conn = new PushingConnection('Node1');
    router.attach(conn);
    const reply = { op: 'REPLY', result: { identifier: 'did1', reqId: 7, seqNo: 3 } };
    const bytes = new TextEncoder().encode(stringifyJson(reply));
    Object.assign(conn, {
      request: (_payload: Uint8Array, listener: (m: ConnectionMessage) => void) => {
        queueMicrotask(() => listener({ kind: 'push', payload: bytes }));
        return Promise.resolve({ id: 9, release: () => undefined });
      },
    });
    const a = await exchange(conn, new Uint8Array([123, 125]), requestKey('did1', 7), router, { timeoutMs: 5_000 });
    expect(a.kind).to.equal('reply');
    conn.pushUnrouted(reply, 9);
    expect(router.unparsed).to.equal(1);
  });

  it('a connection with no session ready sends nothing at once (sendNow), and registers no listener', () => {
    const conn = new PushingConnection('Node1');
    expect(conn.sendNow(new Uint8Array([123, 125]), () => undefined)).to.equal(undefined);
    expect(conn.inFlight).to.equal(0);
  });
});
