// The end of a write's exchanges without an AbortSignal each (ExchangeOptions.end, what Pool.submitWrite gives its
// four exchanges): ending it ends every exchange still waiting (SETTLED without an error of its own, any other reason
// as TIMEOUT) and releases its request; an exchange started after the end answers at once and sends nothing; and an
// exchange waiting for its session to be opened stops waiting and sends nothing once the dial completes.
import { expect } from 'chai';
import { ClientErrorCode } from '../../src/index.js';
import { ExchangeEnd, SETTLED, exchange, type NodeAnswer } from '../../src/pool/exchange.js';
import type { ConnectionMessage, NodeConnection } from '../../src/transport/node-connection.js';

/** A connection that never answers, counting what it sent and released; `dial`: the session is opened when it resolves. */
function silentConnection(dial?: Promise<void>): { conn: NodeConnection; sent: () => number; released: () => number } {
  let sent = 0;
  let released = 0;
  const conn = {
    alias: 'Node1',
    // no session ready to send on at once: the request goes through request()
    sendNow: () => undefined,
    ready: dial === undefined,
    async request(_payload: Uint8Array, _listener: (m: ConnectionMessage) => void, signal?: AbortSignal) {
      if (dial !== undefined) {
        await dial;
        if (signal?.aborted === true) throw signal.reason as Error;
      }
      sent++;
      return { id: sent, release: () => void released++ };
    },
  };
  return { conn: conn as unknown as NodeConnection, sent: () => sent, released: () => released };
}

const payload = new Uint8Array([123, 125]);
const errorOf = (a: NodeAnswer): Extract<NodeAnswer, { kind: 'error' }> => {
  if (a.kind !== 'error') throw new Error(`expected an error answer, got ${a.kind}`);
  return a;
};

describe('exchange: the end of a group of exchanges (ExchangeEnd)', () => {
  it('ends every exchange still waiting, each request released: SETTLED as the shared settled error, another reason as TIMEOUT', async () => {
    for (const [reason, settled] of [
      [SETTLED, true],
      [undefined, false],
    ] as const) {
      const end = new ExchangeEnd();
      const nodes = [silentConnection(), silentConnection()];
      const pending = nodes.map((n) => exchange(n.conn, payload, undefined, undefined, { end }));
      await Promise.resolve();
      end.end(reason);
      end.end('a second end changes nothing');
      expect(end.reason).to.equal(reason);
      for (const a of await Promise.all(pending)) {
        expect(errorOf(a).error.code).to.equal(ClientErrorCode.TIMEOUT);
        expect(errorOf(a).error.data.reason !== undefined).to.equal(settled);
      }
      expect(nodes.map((n) => n.released())).to.deep.equal([1, 1]);
    }
  });

  it('an exchange started after the end answers at once and sends nothing', async () => {
    const end = new ExchangeEnd();
    end.end(SETTLED);
    const n = silentConnection();
    const a = await exchange(n.conn, payload, undefined, undefined, { end });
    expect(errorOf(a).error.code).to.equal(ClientErrorCode.TIMEOUT);
    expect(n.sent()).to.equal(0);
  });

  it('an exchange waiting for its session stops waiting at the end, and nothing is sent once the dial completes', async () => {
    const end = new ExchangeEnd();
    const dial = Promise.withResolvers<void>();
    const n = silentConnection(dial.promise);
    const pending = exchange(n.conn, payload, undefined, undefined, { end });
    end.end(SETTLED);
    expect(errorOf(await pending).error.code).to.equal(ClientErrorCode.TIMEOUT);
    dial.resolve();
    await dial.promise;
    await new Promise((resolve) => setImmediate(resolve));
    expect(n.sent()).to.equal(0);
  });
});
