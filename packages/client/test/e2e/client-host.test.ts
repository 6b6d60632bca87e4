import { expect } from 'chai';
import { connect } from 'node:net';
import { ClientError, ClientErrorCode, ClientRequestError, NodeConnection } from '../../src/index.js';
import { ClientRefusalCode, ClientHost, EnvelopeKind, encodeEnvelope, type ClientHostOptions } from '@quire/network';
import { waitUntil } from '@quire/testing';
import { hostDest, hostSeed } from './hosts.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array): string => new TextDecoder().decode(b);

describe('client host', function () {
  this.timeout(20_000);
  let host: ClientHost;
  let dest: string;
  const clients: NodeConnection[] = [];
  const pushes = new Map<string, string>(); // request text -> clientId, for later pushes

  async function start(opts: Partial<ClientHostOptions> = {}): Promise<ClientHost> {
    const h = await ClientHost.create({ seed: hostSeed(1), clientRate: 20, clientBurst: 20, ...opts });
    h.on('request', (clientId, data, respond) => {
      const text = dec(data);
      if (text.startsWith('write:')) {
        pushes.set(text, clientId);
        respond(enc(`ack ${text}`));
        setTimeout(() => h.push(clientId, enc(`reply ${text}`)), 20);
      } else if (text.startsWith('slow:')) {
        setTimeout(() => respond(enc(`done ${text}`)), 50);
      } else {
        respond(enc(`echo ${text}`));
      }
    });
    return h;
  }

  async function client(h = host): Promise<NodeConnection> {
    const c = await NodeConnection.connect({ host: '127.0.0.1', port: h.port, dest, timeoutMs: 5000 });
    clients.push(c);
    return c;
  }

  before(async () => {
    dest = hostDest(hostSeed(1));
    host = await start();
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await host.close();
    await host.close();
  });

  it('answers pipelined requests by id, in whatever order they complete', async () => {
    const c = await client();
    const answers = await Promise.all([c.request(enc('slow:a')), c.request(enc('b')), c.request(enc('c'))]);
    expect(answers.map(dec)).to.deep.equal(['done slow:a', 'echo b', 'echo c']);
  });

  it('pushes a later message on the same stream', async () => {
    const c = await client();
    const got: string[] = [];
    c.on('push', (data) => got.push(dec(data)));
    expect(dec(await c.request(enc('write:nym-1')))).to.equal('ack write:nym-1');
    await waitUntil('push', () => got.length === 1, 8000, 20);
    expect(got).to.deep.equal(['reply write:nym-1']);
    expect(host.push('c-unknown', enc('x'))).to.equal(false);
  });

  it('refuses a 200 KiB request with a reason, and the stream continues', async () => {
    const c = await client();
    const oversize = new Uint8Array(200 * 1024).fill(0x41);
    try {
      await c.request(oversize);
      expect.fail('accepted');
    } catch (err) {
      expect(err).to.be.instanceOf(ClientRequestError);
      expect((err as ClientRequestError).code).to.equal(ClientRefusalCode.MESSAGE_TOO_LARGE);
      expect((err as ClientRequestError).data.reason).to.equal('message too large: limit is 131072 bytes');
    }
    expect(c.connected).to.equal(true);
    expect(dec(await c.request(enc('after')))).to.equal('echo after');
    expect(host.stats().oversizeFrames).to.be.greaterThan(0);
  });

  it('closes the stream, after saying why, on a frame too large to skip', async () => {
    const h = await start({ maxSkipLength: 150 * 1024 });
    try {
      const c = await client(h);
      const refused: string[] = [];
      c.on('refused', (code) => refused.push(code));
      const closed = new Promise<void>((resolve) => c.on('close', () => resolve()));
      const r = c.request(new Uint8Array(200 * 1024)).catch((e: unknown) => e);
      await closed;
      expect(refused).to.deep.equal([ClientRefusalCode.MESSAGE_TOO_LARGE]);
      expect(((await r) as ClientError).code).to.equal(ClientErrorCode.STREAM_CLOSED);
    } finally {
      await h.close();
    }
  });

  it('throttles a flooding client while another client proceeds', async () => {
    const flooder = await client();
    const polite = await client();
    const results = await Promise.allSettled(Array.from({ length: 100 }, (_, i) => flooder.request(enc(`flood ${i}`))));
    const throttled = results.filter((r) => r.status === 'rejected' && (r.reason as ClientRequestError).code === ClientRefusalCode.RATE_LIMITED);
    const served = results.filter((r) => r.status === 'fulfilled');
    expect(served.length).to.be.within(20, 30); // the burst, plus what refilled meanwhile
    expect(throttled.length).to.equal(100 - served.length);
    expect((throttled[0] as PromiseRejectedResult).reason.data.reason).to.equal('rate limited');
    const politeAnswers = await Promise.all([polite.request(enc('p1')), polite.request(enc('p2'))]);
    expect(politeAnswers.map(dec)).to.deep.equal(['echo p1', 'echo p2']);
  });

  it('hands a burst of requests to the handler a few per turn of the event loop, in arrival order', async () => {
    const h = await ClientHost.create({ seed: hostSeed(1), clientRate: 10_000, clientBurst: 10_000, requestsPerTurn: 4, requestsTurnMs: 1_000 });
    try {
      const handled: string[] = [];
      let handledAtFirstTurn = -1;
      h.on('request', (_clientId, data, respond) => {
        // a timer or a peer's message queued while the burst is handled runs after this turn, not after the burst
        if (handled.length === 0) setImmediate(() => (handledAtFirstTurn = handled.length));
        handled.push(dec(data));
        respond(data);
      });
      const c = await NodeConnection.connect({ host: '127.0.0.1', port: h.port, dest, timeoutMs: 5000 });
      clients.push(c);
      const texts = Array.from({ length: 40 }, (_, i) => `burst ${i}`);
      const answers = await Promise.all(texts.map((t) => c.request(enc(t))));
      expect(answers.map(dec)).to.deep.equal(texts);
      expect(handled).to.deep.equal(texts);
      expect(handledAtFirstTurn).to.equal(4);
      expect(h.queuedRequests).to.equal(0);
    } finally {
      await h.close();
    }
  });

  it('answers the requests its door refuses as they are read, ahead of the queued ones, and hands the others on in order', async () => {
    const sessions = new Set<string>();
    const h = await ClientHost.create(
      { seed: hostSeed(1), clientRate: 10_000, clientBurst: 10_000, requestsPerTurn: 2, requestsTurnMs: 1_000 },
      {
        door: (payload, clientId) => {
          sessions.add(clientId);
          const t = dec(payload);
          if (t === 'throw') throw new Error('door failed');
          return t.startsWith('refuse') ? enc(`refused ${t}`) : undefined;
        },
      },
    );
    try {
      const handled: string[] = [];
      const answered: string[] = [];
      h.on('request', (_clientId, data, respond) => {
        handled.push(dec(data));
        // the handler answers a turn later: the door's answers go out before them
        setImmediate(() => respond(data));
      });
      const c = await NodeConnection.connect({ host: '127.0.0.1', port: h.port, dest, timeoutMs: 5000 });
      clients.push(c);
      const texts = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? `pass ${i}` : `refuse ${i}`));
      texts.push('throw');
      const answers = await Promise.all(texts.map((t) => c.request(enc(t)).then((b) => (answered.push(dec(b)), dec(b)))));
      expect(answers).to.deep.equal(texts.map((t) => (t.startsWith('refuse') ? `refused ${t}` : t)));
      // the door's answers never reached the handler, and all of them were sent before the handler's last ones
      expect(handled).to.deep.equal(texts.filter((t) => !t.startsWith('refuse')));
      expect(answered.indexOf('refused refuse 19')).to.be.lessThan(answered.indexOf('throw'));
      expect(h.doorAnswers + h.doorAnswersAtDispatch).to.equal(10);
      expect(sessions.size).to.equal(1);
      expect(h.queuedRequests).to.equal(0);
    } finally {
      await h.close();
    }
  });

  it('asks its door about a turn of requests as they are read: a burst beyond it is queued and seen by the door as dispatched', async () => {
    let doorCalls = 0;
    let doorCallsAtFirstTurn = -1;
    const h = await ClientHost.create(
      { seed: hostSeed(1), clientRate: 10_000, clientBurst: 10_000, requestsPerTurn: 4, requestsTurnMs: 1_000 },
      {
        door: (payload) => {
          // a timer or a peer's message queued while the burst is read runs after this turn's door calls
          if (doorCalls++ === 0) setImmediate(() => (doorCallsAtFirstTurn = doorCalls));
          const t = dec(payload);
          return t.startsWith('refuse') ? enc(`refused ${t}`) : undefined;
        },
      },
    );
    try {
      const handled: string[] = [];
      h.on('request', (_clientId, data, respond) => {
        handled.push(dec(data));
        respond(data);
      });
      const c = await NodeConnection.connect({ host: '127.0.0.1', port: h.port, dest, timeoutMs: 5000 });
      clients.push(c);
      const texts = Array.from({ length: 40 }, (_, i) => (i % 4 === 0 ? `pass ${i}` : `refuse ${i}`));
      const answers = await Promise.all(texts.map((t) => c.request(enc(t)).then(dec)));
      expect(answers).to.deep.equal(texts.map((t) => (t.startsWith('refuse') ? `refused ${t}` : t)));
      expect(handled).to.deep.equal(texts.filter((t) => t.startsWith('pass')));
      // every request seen by the door once, four of them in the turn that read the burst
      expect(doorCalls).to.equal(40);
      expect(doorCallsAtFirstTurn).to.equal(4);
      // three refused in the turn that read the burst, the other 27 as dispatched from the inbox: counted apart
      expect(h.doorAnswers).to.equal(3);
      expect(h.doorAnswersAtDispatch).to.equal(27);
      expect(h.queuedRequests).to.equal(0);
    } finally {
      await h.close();
    }
  });

  it("frees a session's pending slot when its request is answered: TOO_MANY_PENDING only while the cap is held by unanswered requests", async () => {
    const h = await ClientHost.create({ seed: hostSeed(1), clientRate: 10_000, clientBurst: 10_000, maxPendingPerSession: 2 });
    try {
      const held: (() => void)[] = [];
      h.on('request', (_clientId, data, respond) => {
        if (dec(data).startsWith('hold')) held.push(() => respond(data));
        else respond(data);
      });
      const c = await NodeConnection.connect({ host: '127.0.0.1', port: h.port, dest, timeoutMs: 5000 });
      clients.push(c);
      // answered one after another, many more than the cap: never refused
      for (let i = 0; i < 6; i++) expect(dec(await c.request(enc(`quick ${i}`)))).to.equal(`quick ${i}`);
      // two unanswered requests hold the cap: the third is refused
      const h1 = c.request(enc('hold 1'));
      const h2 = c.request(enc('hold 2'));
      await waitUntil('two held', () => held.length === 2, 8000, 20);
      try {
        await c.request(enc('third'));
        expect.fail('accepted');
      } catch (err) {
        expect((err as ClientRequestError).code).to.equal(ClientRefusalCode.TOO_MANY_PENDING);
      }
      // answering one frees its slot at once
      held[0]!();
      expect(dec(await h1)).to.equal('hold 1');
      expect(dec(await c.request(enc('after')))).to.equal('after');
      held[1]!();
      expect(dec(await h2)).to.equal('hold 2');
    } finally {
      await h.close();
    }
  });

  it('refuses malformed envelopes and duplicate ids without closing', async () => {
    const c = await client();
    const refused: string[] = [];
    c.on('refused', (code) => refused.push(code));
    c.sendRawFrame(Uint8Array.of(0x09, 0x01, 0x02));
    c.sendRawFrame(encodeEnvelope(EnvelopeKind.RESPONSE, 5, enc('not a request')));
    await waitUntil('two refusals', () => refused.length === 2, 8000, 20);
    expect(refused).to.deep.equal([ClientRefusalCode.MALFORMED_ENVELOPE, ClientRefusalCode.MALFORMED_ENVELOPE]);
    expect(dec(await c.request(enc('ok')))).to.equal('echo ok');
  });

  it('caps connections per IP', async () => {
    const h = await start({ maxConnectionsPerIp: 2 });
    try {
      await client(h);
      await client(h);
      let failed = false;
      try {
        await client(h);
      } catch {
        failed = true;
      }
      expect(failed).to.equal(true);
      expect(h.stats().deniedConnections).to.be.greaterThan(0);
    } finally {
      await h.close();
    }
  });

  it('closes idle sessions and slowloris frames', async () => {
    const h = await start({ idleTimeoutMs: 300, partialFrameTimeoutMs: 300 });
    try {
      const idle = await client(h);
      const idleClosed = new Promise<void>((resolve) => idle.on('close', () => resolve()));
      const slow = await client(h);
      const slowClosed = new Promise<void>((resolve) => slow.on('close', () => resolve()));
      // stall inside a frame: declare 50 bytes, send 2
      (slow as unknown as { stream: { send(b: Uint8Array): boolean } }).stream.send(Uint8Array.of(50, 1, 7));
      await Promise.all([idleClosed, slowClosed]);
      await waitUntil('sessions closed', () => h.sessionCount() === 0, 8000, 20);
      expect(h.stats().idleTimeouts).to.be.at.least(2);
    } finally {
      await h.close();
    }
  });

  it('survives garbage bytes on a raw TCP socket', async () => {
    await new Promise<void>((resolve) => {
      const sock = connect(host.port, '127.0.0.1', () => {
        sock.write(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
        sock.write(Buffer.alloc(100_000, 0xff));
      });
      sock.on('error', () => resolve());
      sock.on('close', () => resolve());
      setTimeout(() => sock.destroy(), 1500);
    });
    const c = await client();
    expect(dec(await c.request(enc('still up')))).to.equal('echo still up');
  });
});
