// A PUSH naming no request in flight (a REPLY after its listener was released) reaches the exchange waiting for that
// request on that node through the connection's typed `unroutedPush` event, and nothing else does.
import { expect } from 'chai';
import type { Libp2p } from '@libp2p/interface';
import { stringifyJson } from '@quire/common';
import { PushRouter, requestKey } from '../../src/pool/exchange.js';
import { NodeConnection } from '../../src/transport/node-connection.js';

/** A connection whose node sends `payload` as a PUSH with no request id (nothing is dialled). */
class PushingConnection extends NodeConnection {
  constructor(alias: string) {
    super({ address: { alias, dest: '11111111111111111111111111111111', host: '127.0.0.1', port: 1 } }, { libp2p: {} as Libp2p });
  }

  pushUnrouted(payload: unknown): void {
    this.emit('unroutedPush', new TextEncoder().encode(typeof payload === 'string' ? payload : stringifyJson(payload)));
  }
}

describe('PushRouter: unrouted PUSHes to the exchange that waits for them', () => {
  it('delivers a REPLY by its request key on its node only, and not after the wait is released', () => {
    const router = new PushRouter();
    const a = new PushingConnection('Node1');
    const b = new PushingConnection('Node2');
    router.attach(a);
    router.attach(b);
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
});
