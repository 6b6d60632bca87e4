// A client whose process stalls (a load generator on a saturated machine falls seconds behind) must not turn its
// late timers into failures: the dial whose handshake answers wait in the socket, or the request whose answer does,
// succeeds once the stall ends. Before, AbortSignal.timeout / setTimeout fired in the timers phase that follows the
// stall, before the poll phase read them: NODE_UNREACHABLE "The operation was aborted due to timeout" for the dial,
// REQUEST_TIMEOUT for the request (#16).
import { expect } from 'chai';
import { parseJson, stringifyJson } from '@quire/common';
import { ClientHost, type Respond } from '@quire/network';
import { NodeConnection } from '../../src/index.js';
import { createClientLibp2p } from '../../src/transport/libp2p.js';
import { NODE_NAMES, nodeDests, nodeSeed } from '../unit/fixtures.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy, as a process behind its schedule is
  }
}

describe('NodeConnection: a stall of the client process does not fail what the node answered', function () {
  this.timeout(30_000);
  let host: ClientHost;
  let libp2p: Awaited<ReturnType<typeof createClientLibp2p>>;
  /** what the host does with a request: by default, answer it */
  let onRequest: (n: unknown, respond: Respond) => void;

  before(async () => {
    host = await ClientHost.create({ seed: enc.encode(nodeSeed(NODE_NAMES[0]!)), host: '127.0.0.1', port: 0 });
    host.on('request', (_clientId, bytes, respond) => onRequest((parseJson(bytes) as Record<string, unknown>).n, respond));
    libp2p = await createClientLibp2p();
  });

  beforeEach(() => {
    onRequest = (n, respond) => void respond(enc.encode(stringifyJson({ op: 'REPLY', result: { echo: n } })));
  });

  after(async () => {
    await libp2p?.stop();
    await host?.close();
  });

  const connection = (timeouts: { dialTimeoutMs: number; requestTimeoutMs: number }): NodeConnection =>
    new NodeConnection(libp2p, { alias: NODE_NAMES[0]!, dest: nodeDests[0]!, host: '127.0.0.1', port: host.port }, { maxMessageLength: 1 << 20, ...timeouts });

  it('a dial begun before a stall longer than the dial timeout opens the session', async () => {
    const conn = connection({ dialTimeoutMs: 300, requestTimeoutMs: 10_000 });
    try {
      const opened = conn.open().then(
        () => 'open',
        (e: unknown) => `${(e as { code?: string }).code}: ${(e as { data?: { reason?: string } }).data?.reason}`,
      );
      stall(1_000);
      expect(await opened).to.equal('open');
      const answer = await conn.request(enc.encode(stringifyJson({ n: 1 })), { timeoutMs: 10_000 });
      expect(parseJson(dec.decode(answer))).to.deep.equal({ op: 'REPLY', result: { echo: 1 } });
    } finally {
      await conn.close();
    }
  });

  it('a request answered by the node while the client stalls past its deadline resolves with the answer', async () => {
    const conn = connection({ dialTimeoutMs: 10_000, requestTimeoutMs: 10_000 });
    try {
      await conn.open();
      // the host answers, its frame leaves once its flush has run (setImmediate), then the process stalls past the
      // request's deadline with the answer unread
      onRequest = (n, respond) => {
        respond(enc.encode(stringifyJson({ op: 'REPLY', result: { echo: n } })));
        setImmediate(() => stall(1_000));
      };
      const answer = await conn.request(enc.encode(stringifyJson({ n: 2 })), { timeoutMs: 300 }).then(
        (b) => parseJson(dec.decode(b)),
        (e: unknown) => `${(e as { code?: string }).code}`,
      );
      expect(answer).to.deep.equal({ op: 'REPLY', result: { echo: 2 } });
    } finally {
      await conn.close();
    }
  });

  it('a node that does not answer still fails the request with REQUEST_TIMEOUT', async () => {
    const conn = connection({ dialTimeoutMs: 10_000, requestTimeoutMs: 10_000 });
    try {
      await conn.open();
      onRequest = () => undefined;
      const t0 = performance.now();
      const outcome = await conn.request(enc.encode(stringifyJson({ n: 3 })), { timeoutMs: 200 }).then(
        () => 'answered',
        (e: unknown) => `${(e as { code?: string }).code}`,
      );
      expect(outcome).to.equal('REQUEST_TIMEOUT');
      expect(performance.now() - t0).to.be.at.least(195);
    } finally {
      await conn.close();
    }
  });
});
