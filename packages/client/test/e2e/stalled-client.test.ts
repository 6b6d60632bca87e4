// A client whose process stalls (a load generator on a saturated machine falls seconds behind) must not turn its
// late timers into failures: the dial whose handshake answers wait in the socket, or the request whose answer does,
// succeeds once the stall ends. Before, AbortSignal.timeout / setTimeout fired in the timers phase that follows the
// stall, before the poll phase read them: NODE_UNREACHABLE "The operation was aborted due to timeout" for the dial,
// REQUEST_TIMEOUT for the request (#16).
import { expect } from 'chai';
import { waitUntil } from '@quire/testing';
import { parseJson, stringifyJson } from '@quire/common';
import { ClientHost, type Respond } from '@quire/network';
import { NodeConnection, type ConnectionMessage } from '../../src/index.js';
import { createClientLibp2p } from '../../src/transport/libp2p.js';
import { startLivenessPing } from '../../src/transport/liveness-ping.js';
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
    new NodeConnection(
      { address: { alias: NODE_NAMES[0]!, dest: nodeDests[0]!, host: '127.0.0.1', port: host.port }, maxMessageLength: 1 << 20, ...timeouts },
      { libp2p },
    );

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

// The node's partial-frame guard (a slowloris) cut the session of a live client whose process stalled in the middle
// of sending a request while the node still had its earlier requests to answer: every request in flight on it failed
// (bench:pool's generator, seconds behind at 2,500 writes/s: sessions with 94-426 requests pending reset as 'idle').
describe('ClientHost: a client stalled mid-frame during an exchange keeps its session', function () {
  this.timeout(30_000);
  let host: ClientHost;
  const held: Respond[] = [];

  before(async () => {
    host = await ClientHost.create({
      seed: enc.encode(nodeSeed(NODE_NAMES[0]!)),
      host: '127.0.0.1',
      port: 0,
      partialFrameTimeoutMs: 300,
      idleTimeoutMs: 2_500,
    });
    host.on('request', (_clientId, _bytes, respond) => held.push(respond));
  });

  after(async () => {
    await host?.close();
  });

  /** A session with one request the host holds unanswered, then 2 bytes of a 50-byte frame. */
  async function stalledMidFrame(): Promise<{ conn: NodeConnection; answers: ConnectionMessage[]; closed: Promise<number> }> {
    const conn = await NodeConnection.connect({ host: '127.0.0.1', port: host.port, dest: nodeDests[0]!, timeoutMs: 10_000 });
    const answers: ConnectionMessage[] = [];
    const before = held.length;
    await conn.request(enc.encode('{"n":1}'), (m) => answers.push(m));
    await waitUntil('the request held by the stalled node', () => held.length > before, 5_000, 10);
    (conn as unknown as { stream: { send(b: Uint8Array): boolean } }).stream.send(Uint8Array.of(50, 1, 7));
    const closed = new Promise<number>((resolve) => conn.on('close', () => resolve(performance.now())));
    return { conn, answers, closed };
  }

  it('is not cut while its request is unanswered, gets the answer, and the guard cuts the partial frame after the exchange', async () => {
    const { conn, answers, closed } = await stalledMidFrame();
    try {
      let cutAt: number | undefined;
      void closed.then((t) => (cutAt = t));
      await new Promise((r) => setTimeout(r, 1_200)); // 4 x partialFrameTimeoutMs
      expect(cutAt, 'session cut while the node owed it an answer').to.equal(undefined);
      held[held.length - 1]!(enc.encode('answer'));
      await waitUntil('the answer', () => answers.length > 0, 5_000, 10);
      expect(answers[0]!.kind).to.equal('response');
      const answeredAt = performance.now();
      const at = await closed; // the slowloris guard still applies once the exchange is over
      expect(at - answeredAt).to.be.at.least(250);
    } finally {
      await conn.close();
    }
  });

  it('a partial frame is still cut within idleTimeoutMs while a request stays unanswered', async () => {
    const { conn, answers, closed } = await stalledMidFrame();
    try {
      const t0 = performance.now();
      const at = await closed;
      expect(at - t0).to.be.at.least(2_000);
      expect(answers.map((m) => m.kind)).to.deep.equal(['closed']);
    } finally {
      await conn.close();
    }
  });
});

// The client's liveness ping: libp2p's monitor bounded it by AbortSignal.timeout, which fired after a stall of the
// client before the node's answer was read, and the client aborted its own live connection (every session on it).
describe("the client stack's liveness ping and a stall of the client process", function () {
  this.timeout(30_000);
  let host: ClientHost;

  before(async () => {
    host = await ClientHost.create({ seed: enc.encode(nodeSeed(NODE_NAMES[0]!)), host: '127.0.0.1', port: 0 });
    host.on('request', (_clientId, bytes, respond) => void respond(bytes));
  });

  after(async () => {
    await host?.close();
  });

  it('a ping whose answer waits behind a stall longer than its timeout keeps the connection', async () => {
    const libp2p = await createClientLibp2p();
    const conn = new NodeConnection({ address: { alias: NODE_NAMES[0]!, dest: nodeDests[0]!, host: '127.0.0.1', port: host.port } }, { libp2p });
    try {
      await conn.open();
      const closed: string[] = [];
      conn.on('close', (reason) => closed.push(reason));
      const stop = startLivenessPing(libp2p, { intervalMs: 100, timeoutMs: 300 });
      // due with the first pings (same period, armed after them): each stall begins with a ping on the wire
      for (let i = 0; i < 3; i++) {
        await new Promise<void>((resolve) =>
          setTimeout(() => {
            stall(1_000);
            resolve();
          }, 100),
        );
      }
      await new Promise((r) => setTimeout(r, 500));
      stop();
      expect(closed).to.deep.equal([]);
      expect(libp2p.getConnections().length).to.equal(1);
      expect(dec.decode(await conn.request(enc.encode('after'), { timeoutMs: 10_000 }))).to.equal('after');
    } finally {
      await conn.close();
      await libp2p.stop();
    }
  });
});
