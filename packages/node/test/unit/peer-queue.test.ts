// Backpressure on peer messages (#15, F9): each peer's decoded messages wait in a FIFO bounded in
// count and bytes, served round-robin, so one flooding validator neither grows the node's memory
// without bound nor delays the other peers' messages behind its backlog.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { waitUntil } from '@quire/testing';
import { encodeMsgpack } from '@quire/common';
import type { ConsensusEvent } from '@quire/consensus';
import { nodeSeed } from '../../src/genesis-gen.js';
import { deriveNodeKeys } from '../../src/keys.js';
import { createLogger } from '../../src/logger.js';
import { QuireNode } from '../../src/node.js';
import { PeerMessageQueue, defaultPeerQueueOptions } from '../../src/peer-queue.js';
import { soloNodeConfig } from './helpers.js';

describe('PeerMessageQueue (#15, F9)', () => {
  it('drops a peer’s messages past its count bound, never another peer’s', () => {
    const q = new PeerMessageQueue<number>({ maxMessagesPerPeer: 100, maxBytesPerPeer: 1e9 });
    for (let i = 0; i < 1_000; i++) q.push('Byz', i, 10);
    expect(q.waiting('Byz')).to.equal(100);
    expect(q.droppedFrom('Byz')).to.equal(900);
    expect(q.push('Honest', 1, 10)).to.equal(true);
    expect(q.size).to.equal(101);
    expect(q.dropped).to.equal(900);
  });

  it('drops past the byte bound, and frees bytes as messages leave', () => {
    const q = new PeerMessageQueue<number>({ maxMessagesPerPeer: 1e9, maxBytesPerPeer: 1_000 });
    for (let i = 0; i < 20; i++) q.push('Byz', i, 100);
    expect(q.waiting('Byz')).to.equal(10);
    expect(q.full('Byz', 1)).to.equal(true);
    expect(q.shift()).to.deep.equal({ peer: 'Byz', item: 0 });
    expect(q.full('Byz', 100)).to.equal(false);
    expect(q.full('Other', 1_001)).to.equal(true);
  });

  it('serves peers in turn, each in its own order', () => {
    const q = new PeerMessageQueue<string>();
    for (let i = 0; i < 5_000; i++) q.push('Byz', `b${i}`, 1);
    q.push('A', 'a0', 1);
    q.push('A', 'a1', 1);
    q.push('C', 'c0', 1);
    const out: string[] = [];
    for (let m = q.shift(); m !== undefined; m = q.shift()) out.push(m.item);
    expect(out.slice(0, 6)).to.deep.equal(['b0', 'a0', 'c0', 'b1', 'a1', 'b2']);
    expect(out.filter((x) => x.startsWith('b'))).to.deep.equal(Array.from({ length: 5_000 }, (_, i) => `b${i}`));
    expect(q.size).to.equal(0);
    q.push('A', 'again', 1);
    expect(q.shift()).to.deep.equal({ peer: 'A', item: 'again' });
  });
});

describe('QuireNode under a peer flood (#15, F9)', function () {
  this.timeout(120_000);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quire-flood-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('takes at most maxMessagesPerPeer waiting messages from one peer, and serves another peer before that backlog', async () => {
    const config = await soloNodeConfig(dir);
    const keys = deriveNodeKeys('Node1', Buffer.from(nodeSeed('Node1')));
    const node = await QuireNode.create({ dataDir: dir, config, inMemory: true }, { logger: createLogger({ level: 'silent' }), keys });
    try {
      const handled: string[] = [];
      const handle = node.core.handle.bind(node.core);
      node.core.handle = (e: ConsensusEvent) => {
        if (e.kind === 'nodeMessage') handled.push(e.from);
        return handle(e);
      };
      const host = (node as unknown as { nodeHost: { emit(ev: 'message', from: string, data: Uint8Array): void } }).nodeHost;
      const data = encodeMsgpack({ op: 'INSTANCE_CHANGE', viewNo: 1, reason: 25 });
      const FLOOD = 3 * defaultPeerQueueOptions.maxMessagesPerPeer;
      // one validator's burst arrives while the node is busy (all within one turn of the event loop)
      for (let i = 0; i < FLOOD; i++) host.emit('message', 'Node3', data);
      host.emit('message', 'Node2', data);
      await waitUntil('the backlog handled', () => handled.includes('Node2') && handled.length >= defaultPeerQueueOptions.maxMessagesPerPeer, 100_000, 20);
      await node.close();
      // bound: the message in hand plus maxMessagesPerPeer waiting (before #15: all FLOOD of them)
      expect(handled.filter((f) => f === 'Node3').length).to.be.at.most(defaultPeerQueueOptions.maxMessagesPerPeer + 1);
      // the other peer's message is not behind the backlog: it comes in the next turns
      expect(handled.indexOf('Node2')).to.be.at.most(2);
    } finally {
      await node.close();
    }
  });
});
