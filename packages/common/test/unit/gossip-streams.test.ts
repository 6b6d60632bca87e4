import { expect } from 'chai';
import { canRepairGossipOutbound, repairGossipOutbound } from '@quire/common';

/** A stand-in for gossipsub's registry: the three members the repair reads, and the calls it makes. */
function registry(entries: Record<string, { status: string; writeStatus: string }>, known: string[]) {
  const connected: [unknown, unknown][] = [];
  return {
    streamsOutbound: new Map<string, unknown>(Object.entries(entries).map(([id, raw]) => [id, { rawStream: raw }])),
    peers: new Map<string, unknown>(known.map((id) => [id, { id }])),
    connected,
    onPeerConnected(this: { connected: [unknown, unknown][] }, peerId: unknown, connection: unknown): void {
      this.connected.push([peerId, connection]);
    },
  };
}

describe('gossip outbound stream repair', () => {
  it('drops closed streams, keeps open ones, and reopens over an open connection of a known peer', () => {
    const open = { status: 'open', writeStatus: 'writable' };
    const r = registry(
      {
        A: open,
        B: { status: 'closed', writeStatus: 'closed' },
        C: { status: 'open', writeStatus: 'closed' },
        D: { status: 'reset', writeStatus: 'closed' },
      },
      ['A', 'B', 'C'],
    );
    const conns: Record<string, { status: string }> = { A: { status: 'open' }, B: { status: 'open' }, C: { status: 'closing' } };
    expect(repairGossipOutbound(r, (id) => conns[id])).to.equal(3);
    expect([...r.streamsOutbound.keys()]).to.deep.equal(['A']);
    // B: known and connected, reopened; C: its connection is closing; D: no longer a known peer
    expect(r.connected).to.deep.equal([[{ id: 'B' }, { status: 'open' }]]);
    expect(repairGossipOutbound(r, (id) => conns[id])).to.equal(0);
  });

  it('leaves a registry of another shape alone', () => {
    expect(canRepairGossipOutbound({})).to.equal(false);
    expect(canRepairGossipOutbound(undefined)).to.equal(false);
    expect(repairGossipOutbound({ streamsOutbound: new Map([['A', { rawStream: { status: 'closed' } }]]) }, () => undefined)).to.equal(0);
    // an entry without a raw stream it can read is not judged stale
    const r = registry({}, ['A']);
    r.streamsOutbound.set('A', {});
    expect(canRepairGossipOutbound(r)).to.equal(true);
    expect(repairGossipOutbound(r, () => ({ status: 'open' }))).to.equal(0);
  });
});
