// The observer's gossip transport against real validator node hosts (@quire/network's NodeHost): it connects with
// the observer key the validator admits, receives what the validator publishes on the topic, rejects oversize
// messages, is refused by a validator that does not list it, and redials a validator that restarts.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { canRepairGossipOutbound } from '@quire/common';
import { Ed25519Signer } from '@quire/crypto';
import { NodeHost } from '@quire/network';
import { ClientError, ClientErrorCode } from '../../src/index.js';
import { GossipTransport, privateKeyFromSeed } from '../../src/transport/libp2p.js';
import { waitFor } from './wait.js';

const TOPIC = '/quire/TestPool/ordered/1';

describe('GossipTransport (observer) against validator node hosts', function () {
  this.timeout(30_000);
  const observerSeed = randomBytes(32);
  const observer = { name: 'Obs1', dest: Ed25519Signer.fromSeed(observerSeed).fullVerkey };
  const validatorSeed = randomBytes(32);
  const validatorDest = Ed25519Signer.fromSeed(validatorSeed).fullVerkey;
  const opened: { close(): Promise<void> }[] = [];

  async function validator(port = 0, observers = [observer]): Promise<NodeHost> {
    const h = await NodeHost.create({ name: 'V1', seed: validatorSeed, port, topics: [TOPIC] });
    opened.push(h);
    h.setObservers(observers);
    h.subscribe(TOPIC, () => undefined);
    return h;
  }

  async function transport(port: number, received: Uint8Array[] = []): Promise<GossipTransport> {
    const t = await GossipTransport.create(
      {
        seed: observerSeed,
        topic: TOPIC,
        maxMessageLength: 1024,
        validators: [{ alias: 'V1', dest: validatorDest, host: '127.0.0.1', port }],
        reconnectMinMs: 50,
        reconnectMaxMs: 200,
      },
      { deliver: (data) => received.push(data) },
    );
    opened.push(t);
    return t;
  }

  afterEach(async () => {
    for (const o of opened.splice(0).reverse()) await o.close();
  });

  it('derives its PeerId from the seed and refuses a seed that is not 32 bytes', async () => {
    const a = (await privateKeyFromSeed(observerSeed)).publicKey.toString();
    const b = (await privateKeyFromSeed(Uint8Array.from(observerSeed))).publicKey.toString();
    expect(a).to.equal(b);
    try {
      await privateKeyFromSeed(new Uint8Array(31));
      expect.fail('accepted a 31-byte seed');
    } catch (e) {
      expect((e as ClientError).code).to.equal(ClientErrorCode.INVALID_SEED);
    }
  });

  it('connects with the admitted key, follows the topic and rejects oversize messages', async () => {
    const v = await validator();
    const received: Uint8Array[] = [];
    const t = await transport(v.port, received);
    await waitFor('connected', () => (t.connectedPeers().includes('V1') ? true : undefined));
    await waitFor('the observer on the validator topic', () => (v.topicPeers(TOPIC).includes('Obs1') ? true : undefined));
    await waitFor('the validator on the observer topic', () => (t.topicPeers().includes('V1') ? true : undefined));
    await v.publish(TOPIC, new Uint8Array(2_000).fill(7)); // above the transport's 1024 limit
    await v.publish(TOPIC, Uint8Array.of(1, 2, 3));
    await waitFor('the small message', () => (received.length > 0 ? true : undefined));
    expect(received.map((d) => [...d])).to.deep.equal([[1, 2, 3]]);
  });

  it('is refused by a validator that does not list it as an observer', async () => {
    const v = await validator(0, []);
    const t = await transport(v.port);
    // the handshake completes on the observer's side before the validator hangs up: each attempt is refused
    await waitFor('two denied connections', () => (v.stats().deniedConnections >= 2 ? true : undefined));
    await waitFor('no connection left', () => (t.connectedPeers().length === 0 ? true : undefined));
    expect(v.connectedPeers()).to.not.include('Obs1');
  });

  it('redials a validator that restarts on the same port', async () => {
    const v = await validator();
    const port = v.port;
    const received: Uint8Array[] = [];
    const t = await transport(port, received);
    await waitFor('connected', () => (t.connectedPeers().includes('V1') ? true : undefined));
    await v.close();
    await waitFor('disconnected', () => (t.connectedPeers().length === 0 ? true : undefined));
    const v2 = await validator(port);
    await waitFor('reconnected', () => (t.connectedPeers().includes('V1') ? true : undefined));
    await waitFor('the observer on the topic again', () => (v2.topicPeers(TOPIC).includes('Obs1') ? true : undefined));
    await v2.publish(TOPIC, Uint8Array.of(9));
    await waitFor('the message after the restart', () => (received.length > 0 ? true : undefined));
  });

  it('reopens a gossip stream to a validator left registered after its connection closed', async () => {
    // gossipsub stores a stream whose negotiation ends after its connection closed, and then opens no other to that
    // validator, which never learns the observer's subscription: the state is planted with the real closed stream
    const v = await validator();
    const port = v.port;
    const t = await transport(port);
    const streams = (t.libp2p.services.pubsub as unknown as { streamsOutbound: Map<string, unknown> }).streamsOutbound;
    expect(canRepairGossipOutbound(t.libp2p.services.pubsub), 'the installed gossipsub has the state the repair reads').to.equal(true);
    await waitFor('a gossip stream to the validator', () => (streams.has(v.peerId) ? true : undefined));
    const stale = streams.get(v.peerId);
    await v.close();
    await waitFor('disconnected', () => (t.connectedPeers().length === 0 && !streams.has(v.peerId) ? true : undefined));
    streams.set(v.peerId, stale);
    const v2 = await validator(port);
    await waitFor('the observer on the topic again', () => (v2.topicPeers(TOPIC).includes('Obs1') ? true : undefined));
    expect(t.gossipStreamsRepaired).to.be.greaterThan(0);
    expect(streams.get(v2.peerId)).to.not.equal(stale);
  });
});
