// A node's transport refusal (an ERROR envelope: TOO_MANY_PENDING, RATE_LIMITED...) ends the exchange with
// NODE_REFUSED naming the node's code and reason, built without a stack trace (a client offering more than the pool
// takes gets thousands a second), and the process's stack trace limit is left as it was.
import { expect } from 'chai';
import { ClientErrorCode } from '../../src/index.js';
import { exchange, type NodeAnswer } from '../../src/pool/exchange.js';
import type { ConnectionMessage, NodeConnection } from '../../src/transport/node-connection.js';

function refusingConnection(code: string, reason: string): NodeConnection {
  const conn = {
    alias: 'Node2',
    // no session ready to send on at once: the request goes through request()
    sendNow: () => undefined,
    request(_payload: Uint8Array, listener: (m: ConnectionMessage) => void) {
      setImmediate(() => listener({ kind: 'refused', code, reason }));
      return Promise.resolve({ id: 1, release: () => undefined });
    },
  };
  return conn as unknown as NodeConnection;
}

describe('exchange: a node that refuses at the transport', () => {
  it('ends with NODE_REFUSED, its code and reason, and no stack trace', async () => {
    const limit = Error.stackTraceLimit;
    const a = await exchange(refusingConnection('TOO_MANY_PENDING', 'too many requests pending'), new Uint8Array([123, 125]), undefined, undefined, {
      signal: new AbortController().signal,
    });
    expect(a.kind).to.equal('error');
    const { error } = a as Extract<NodeAnswer, { kind: 'error' }>;
    expect(error.code).to.equal(ClientErrorCode.NODE_REFUSED);
    expect(error.data).to.deep.equal({ node: 'Node2', refusal: 'TOO_MANY_PENDING', reason: 'too many requests pending' });
    expect(error.message).to.equal('Node2 refused the request: TOO_MANY_PENDING: too many requests pending');
    expect(error.stack ?? '').to.not.match(/\n\s+at /);
    expect(Error.stackTraceLimit).to.equal(limit);
    // other errors keep theirs
    expect(new Error('x').stack).to.match(/\n\s+at /);
  });
});
