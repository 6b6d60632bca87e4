import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import { canRepairGossipOutbound } from '@quire/common';
import { NodeHost, peerIdFromVerkey, type GossipMessage, type ValidatorInfo } from '../../src/index.js';
import { peerIdObjectFromVerkey } from '../../src/identity.js';
import { destOf, nodeSeed, validatorInfo, waitFor } from './helpers.js';

const TOPIC = '/quire/test/ordered/1';

/** The host's libp2p node, to play a misbehaving validator from inside the pool. */
function libp2pOf(h: NodeHost): { dialProtocol(p: unknown, proto: string): Promise<{ send(b: Uint8Array): boolean }> } {
  return (h as unknown as { libp2p: { dialProtocol(p: unknown, proto: string): Promise<{ send(b: Uint8Array): boolean }> } }).libp2p;
}

/** The host's gossipsub registry of outbound streams (by PeerId string). */
function outboundStreams(h: NodeHost): Map<string, unknown> {
  const pubsub = (h as unknown as { libp2p: { services: { pubsub: { streamsOutbound: Map<string, unknown> } } } }).libp2p.services.pubsub;
  expect(canRepairGossipOutbound(pubsub), 'the installed gossipsub has the state the repair reads').to.equal(true);
  return pubsub.streamsOutbound;
}

describe('node host (4 nodes on loopback)', function () {
  this.timeout(30_000);
  const hosts: NodeHost[] = [];
  const dests: string[] = [];
  let pool: ValidatorInfo[] = [];
  const inbox = new Map<string, { from: string; text: string }[]>();
  const gossip = new Map<string, GossipMessage[]>();

  function listen(h: NodeHost): void {
    inbox.set(h.name, []);
    gossip.set(h.name, []);
    h.on('message', (from, data) => inbox.get(h.name)!.push({ from, text: new TextDecoder().decode(data) }));
    h.subscribe(TOPIC, (m) => gossip.get(h.name)!.push(m));
  }

  before(async () => {
    for (let i = 1; i <= 4; i++) {
      const h = await NodeHost.create({ name: `Node${i}`, seed: nodeSeed(i), reconnectMinMs: 50, reconnectMaxMs: 500, partialFrameTimeoutMs: 400 });
      hosts.push(h);
      dests.push(await destOf(nodeSeed(i)));
      listen(h);
    }
    pool = hosts.map((h, i) => validatorInfo(h.name, dests[i]!, h.port));
    for (const h of hosts) h.setValidators(pool);
    await waitFor(() => hosts.every((h) => h.connectedPeers().length === 3), 'full mesh');
  });

  after(async () => {
    await Promise.all(hosts.map((h) => h.close()));
  });

  it('uses the PeerId derived from its NODE.dest', () => {
    expect(hosts[0]!.peerId).to.equal(peerIdFromVerkey('Gw6pDLhcBcoQesN72qfotTgFa7cbuqZpkX3Xo6pLhPhv'));
    hosts.forEach((h, i) => expect(h.peerId).to.equal(peerIdFromVerkey(dests[i]!)));
  });

  it('exchanges direct messages between every pair, in order', async () => {
    for (const h of hosts)
      for (const to of hosts)
        if (to !== h) for (let k = 0; k < 5; k++) expect(h.send(to.name, new TextEncoder().encode(`${h.name}>${to.name}#${k}`))).to.equal(true);
    await waitFor(() => hosts.every((h) => inbox.get(h.name)!.length === 15), 'all direct messages');
    for (const h of hosts) {
      const got = inbox.get(h.name)!;
      for (const from of hosts) {
        if (from === h) continue;
        const texts = got.filter((m) => m.from === from.name).map((m) => m.text);
        expect(texts).to.deep.equal([0, 1, 2, 3, 4].map((k) => `${from.name}>${h.name}#${k}`));
      }
      inbox.set(h.name, []);
    }
    expect(hosts[0]!.send('Node1', Uint8Array.of(1))).to.equal(false); // itself
    expect(hosts[0]!.send('Nobody', Uint8Array.of(1))).to.equal(false);
  });

  it('broadcasts to every other validator', async () => {
    expect(hosts[2]!.broadcast(new TextEncoder().encode('all'))).to.equal(3);
    await waitFor(() => hosts.filter((h) => h !== hosts[2]).every((h) => inbox.get(h.name)!.some((m) => m.from === 'Node3' && m.text === 'all')), 'broadcast');
    expect(inbox.get('Node3')!).to.have.length(0);
    for (const h of hosts) inbox.set(h.name, []);
  });

  it('delivers gossip to every subscriber, once, with the relaying peer named', async () => {
    await waitFor(() => hosts.every((h) => h.topicPeers(TOPIC).length === 3), 'topic subscriptions');
    const n = await hosts[1]!.publish(TOPIC, new TextEncoder().encode('batch-1'));
    expect(n).to.equal(3);
    await waitFor(() => hosts.filter((h) => h !== hosts[1]).every((h) => gossip.get(h.name)!.length === 1), 'gossip delivery');
    await new Promise((r) => setTimeout(r, 200)); // relays must not deliver duplicates
    for (const h of hosts) {
      if (h === hosts[1]) continue;
      const [m] = gossip.get(h.name)!;
      expect(gossip.get(h.name)).to.have.length(1);
      expect(new TextDecoder().decode(m!.data)).to.equal('batch-1');
      expect(m!.from).to.equal(undefined); // StrictNoSign: no originator
      expect(['Node1', 'Node2', 'Node3', 'Node4']).to.include(m!.relayedBy);
    }
    expect(gossip.get('Node2')).to.have.length(0);
  });

  it('refuses a peer whose key is not in the validator set', async () => {
    const outsider = await NodeHost.create({ name: 'Outsider', seed: nodeSeed(9) });
    try {
      const denied = hosts[0]!.stats().deniedConnections;
      outsider.setValidators([...pool, validatorInfo('Outsider', await destOf(nodeSeed(9)), outsider.port)]);
      await waitFor(() => hosts[0]!.stats().deniedConnections > denied, 'a denied connection');
      // the outsider's side may see its half-upgraded connection for a moment before the refusal closes it
      await waitFor(() => outsider.connectedPeers().length === 0, 'refused connections torn down');
      expect(hosts[0]!.connectedPeers()).to.deep.equal(['Node2', 'Node3', 'Node4']);
      // with no connection to Node1 the outsider has nowhere to send: the message is dropped at its side
      const before = inbox.get('Node1')!.length;
      const dropped = outsider.stats().droppedSends;
      expect(outsider.send('Node1', Uint8Array.of(1))).to.equal(false);
      expect(outsider.stats().droppedSends).to.equal(dropped + 1);
      expect(inbox.get('Node1')!.length).to.equal(before);
    } finally {
      await outsider.close();
    }
  });

  it('drops a malformed stream from a validator and keeps serving it', async () => {
    // Node4 pretends: open a raw node stream and write an invalid length prefix
    const target = hosts[0]!;
    const before = target.stats().malformedFrames;
    const libp2p = libp2pOf(hosts[3]!);
    const stream = await libp2p.dialProtocol(peerIdObjectFromVerkey(dests[0]!), '/quire/node/1.0.0');
    stream.send(new Uint8Array(9).fill(0xff));
    await waitFor(() => target.stats().malformedFrames > before, 'malformed frame counted');
    expect(hosts[3]!.send('Node1', new TextEncoder().encode('still fine'))).to.equal(true);
    await waitFor(() => inbox.get('Node1')!.some((m) => m.text === 'still fine'), 'message after malformed stream');
  });

  it('resets a stream whose frame stays incomplete (slowloris)', async () => {
    const target = hosts[0]!;
    const before = target.stats().idleTimeouts;
    const libp2p = libp2pOf(hosts[2]!);
    const stream = await libp2p.dialProtocol(peerIdObjectFromVerkey(dests[0]!), '/quire/node/1.0.0');
    stream.send(Uint8Array.of(100, 1, 2, 3)); // declares 100 bytes, sends 3
    await waitFor(() => target.stats().idleTimeouts > before, 'partial frame timeout', 4000);
  });

  it('survives garbage bytes on a raw TCP connection', async () => {
    const target = hosts[1]!;
    await new Promise<void>((resolve) => {
      const sock: Socket = connect(target.port, '127.0.0.1', () => {
        sock.write(Buffer.from('\x00\xff\x13garbage that is not multistream-select\n'.repeat(50)));
        sock.write(Buffer.alloc(70_000, 0xab));
      });
      sock.on('error', () => resolve());
      sock.on('close', () => resolve());
      setTimeout(() => sock.destroy(), 1500);
    });
    expect(hosts[0]!.send(target.name, new TextEncoder().encode('after garbage'))).to.equal(true);
    await waitFor(() => inbox.get(target.name)!.some((m) => m.text === 'after garbage'), 'message after garbage');
  });

  it('reconnects to a peer that restarts on the same address', async () => {
    const old = hosts[3]!;
    const port = old.port;
    await old.close();
    await old.close(); // idempotent
    await waitFor(() => hosts.slice(0, 3).every((h) => !h.connectedPeers().includes('Node4')), 'disconnect noticed');
    const h = await NodeHost.create({ name: 'Node4', seed: nodeSeed(4), port });
    hosts[3] = h;
    listen(h);
    h.setValidators(pool);
    await waitFor(() => hosts.every((x) => x.connectedPeers().length === 3), 'mesh restored');
    expect(hosts[0]!.send('Node4', new TextEncoder().encode('welcome back'))).to.equal(true);
    await waitFor(() => inbox.get('Node4')!.some((m) => m.from === 'Node1' && m.text === 'welcome back'), 'message to restarted peer');
  });

  it('reopens a gossip stream to a peer left registered after its connection closed', async () => {
    // gossipsub stores a stream whose negotiation ends after its connection closed, and then opens no other to that
    // peer: the state is planted here with the real stream of a closed connection
    const [first, , , last] = hosts;
    await waitFor(() => outboundStreams(first!).has(last!.peerId), 'a gossip stream from Node1 to Node4');
    const stale = outboundStreams(first!).get(last!.peerId);
    const port = last!.port;
    await last!.close();
    await waitFor(() => !first!.connectedPeers().includes('Node4') && !outboundStreams(first!).has(last!.peerId), 'Node4 gone from Node1');
    outboundStreams(first!).set(last!.peerId, stale);
    const repaired = first!.stats().gossipStreamsRepaired;
    const h = await NodeHost.create({ name: 'Node4', seed: nodeSeed(4), port });
    hosts[3] = h;
    listen(h);
    h.setValidators(pool);
    // Node4 learns Node1's subscription only over Node1's own stream to it
    await waitFor(() => h.topicPeers(TOPIC).includes('Node1'), 'Node1 on the topic at Node4', 10_000);
    expect(first!.stats().gossipStreamsRepaired).to.be.greaterThan(repaired);
    expect(outboundStreams(first!).get(h.peerId)).to.not.equal(stale);
  });

  it('disconnects a validator removed by setValidators and refuses it afterwards', async () => {
    const reduced = pool.filter((v) => v.name !== 'Node4');
    for (const h of hosts.slice(0, 3)) h.setValidators(reduced);
    await waitFor(
      () => hosts.slice(0, 3).every((h) => !h.connectedPeers().includes('Node4')) && hosts[3]!.connectedPeers().length === 0,
      'Node4 cut off',
      10_000,
    );
    expect(hosts[3]!.send('Node1', Uint8Array.of(1))).to.equal(false);
    expect(hosts[0]!.send('Node4', Uint8Array.of(1))).to.equal(false);
    // Node4 keeps redialing and keeps being refused
    const denied = hosts[0]!.stats().deniedConnections;
    await waitFor(() => hosts[0]!.stats().deniedConnections > denied, 'redial refused');
    expect(hosts[0]!.connectedPeers()).to.deep.equal(['Node2', 'Node3']);
  });
});
