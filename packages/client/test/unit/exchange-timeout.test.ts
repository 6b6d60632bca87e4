// exchange's own timer (ExchangeOptions.timeoutMs), which a read's ask of one node uses instead of a signal of its
// own: a node silent past it ends the exchange with TIMEOUT, an answer before it wins and stops the timer, and the
// caller's signal still ends it first (SETTLED without an error of its own, any other reason as TIMEOUT).
import { expect } from 'chai';
import { stringifyJson } from '@quire/common';
import { ClientErrorCode } from '../../src/index.js';
import { SETTLED, exchange, type NodeAnswer } from '../../src/pool/exchange.js';
import type { ConnectionMessage, NodeConnection } from '../../src/transport/node-connection.js';

/** A connection that answers each request after `answerMs` (never when undefined), counting what it was sent. */
function fakeConnection(answerMs?: number): { conn: NodeConnection; released: () => number } {
  let released = 0;
  const conn = {
    alias: 'Node1',
    // no session ready to send on at once: the request goes through request()
    sendNow: () => undefined,
    request(_payload: Uint8Array, listener: (m: ConnectionMessage) => void) {
      if (answerMs !== undefined) {
        const reply = new TextEncoder().encode(stringifyJson({ op: 'REPLY', result: { type: '105', data: null } }));
        setTimeout(() => listener({ kind: 'response', payload: reply } as ConnectionMessage), answerMs);
      }
      return Promise.resolve({ id: 1, release: () => void released++ });
    },
  };
  return { conn: conn as unknown as NodeConnection, released: () => released };
}

const payload = new Uint8Array([123, 125]);

describe('exchange: the timer of its own (timeoutMs)', () => {
  it('a silent node: TIMEOUT once timeoutMs has passed, the request released', async () => {
    const { conn, released } = fakeConnection();
    const t0 = performance.now();
    const a = await exchange(conn, payload, undefined, undefined, { signal: new AbortController().signal, timeoutMs: 30 });
    expect(performance.now() - t0).to.be.at.least(25);
    expect(a.kind).to.equal('error');
    expect((a as Extract<NodeAnswer, { kind: 'error' }>).error.code).to.equal(ClientErrorCode.TIMEOUT);
    expect(released()).to.equal(1);
  });

  it('an answer before the timer: the reply, and the timer no longer holds the process', async () => {
    const { conn } = fakeConnection(5);
    const a = await exchange(conn, payload, undefined, undefined, { signal: new AbortController().signal, timeoutMs: 60_000 });
    expect(a.kind).to.equal('reply');
    // the 60 s timer was cleared: nothing of this test is left for the event loop
    const handles = (process as unknown as { getActiveResourcesInfo(): string[] }).getActiveResourcesInfo();
    expect(handles.filter((h) => h === 'Timeout').length).to.be.at.most(1); // mocha's own test timeout
  });

  it("the caller's signal ends it before the timer: SETTLED as the shared settled error, another reason as TIMEOUT", async () => {
    for (const [reason, settled] of [
      [SETTLED, true],
      [undefined, false],
    ] as const) {
      const { conn } = fakeConnection();
      const ctl = new AbortController();
      const pending = exchange(conn, payload, undefined, undefined, { signal: ctl.signal, timeoutMs: 60_000 });
      setTimeout(() => ctl.abort(reason), 5);
      const a = (await pending) as Extract<NodeAnswer, { kind: 'error' }>;
      expect(a.kind).to.equal('error');
      expect(a.error.code).to.equal(ClientErrorCode.TIMEOUT);
      expect(a.error.data.reason !== undefined).to.equal(settled);
    }
  });
});
