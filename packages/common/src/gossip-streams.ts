/**
 * A repair of gossipsub's outbound-stream registry, shared by the validators' hosts and the observers' transport.
 *
 * @libp2p/gossipsub (17.1) keeps at most one outbound stream per peer in `streamsOutbound` and opens none while an
 * entry exists. It opens that stream asynchronously after a peer connects; when the connection closes while the
 * stream is being negotiated, the peer is removed first and the stream stored after, already closed, with a close
 * listener that never fires. When that peer connects again, no outbound stream is opened to it: it is never sent this
 * host's subscriptions, grafts or messages (an observer that reconnected to a validator restarted on the same port was
 * never seen on the topic again). This module finds such entries, drops them, and has gossipsub open a stream again
 * over the peer's open connection.
 *
 * It reads gossipsub's state structurally (no import: this package has no dependencies), so an update of the library
 * that moves it is caught by {@link canRepairGossipOutbound}, which the hosts' tests assert on the installed version.
 */

/** The parts of a libp2p connection the repair reads. */
export interface GossipRepairConnection {
  status: string;
}

interface OutboundView {
  rawStream?: { status?: unknown; writeStatus?: unknown };
}

interface RegistryView {
  streamsOutbound?: unknown;
  peers?: unknown;
  onPeerConnected?: unknown;
}

/** Whether `pubsub` (a started gossipsub service) has the state {@link repairGossipOutbound} reads and repairs. */
export function canRepairGossipOutbound(pubsub: unknown): boolean {
  if (typeof pubsub !== 'object' || pubsub === null) return false;
  const view = pubsub as RegistryView;
  return view.streamsOutbound instanceof Map && view.peers instanceof Map && typeof view.onPeerConnected === 'function';
}

/** Whether an outbound stream entry can no longer carry anything (its raw stream closed or its writable end gone). */
function isStale(entry: unknown): boolean {
  const raw = (entry as OutboundView | undefined)?.rawStream;
  if (raw === undefined || raw === null) return false; // not a shape this repair knows: left alone
  return raw.status !== 'open' || raw.writeStatus !== 'writable';
}

/**
 * Drops every outbound stream entry of `pubsub` that is closed, and for each such peer that gossipsub knows and that
 * has an open connection (`openConnection`, by PeerId string), has gossipsub open a new stream over it (which sends
 * this host's subscriptions first). Returns the number of entries dropped; 0 when `pubsub` has no such state
 * ({@link canRepairGossipOutbound} false). Cheap: one pass over at most one entry per connected peer.
 */
export function repairGossipOutbound<C extends GossipRepairConnection>(pubsub: unknown, openConnection: (peerId: string) => C | undefined): number {
  if (!canRepairGossipOutbound(pubsub)) return 0;
  const view = pubsub as { streamsOutbound: Map<string, unknown>; peers: Map<string, unknown>; onPeerConnected: (peerId: unknown, connection: C) => void };
  let dropped = 0;
  for (const [id, entry] of [...view.streamsOutbound]) {
    if (!isStale(entry)) continue;
    view.streamsOutbound.delete(id);
    dropped++;
    const peerId = view.peers.get(id);
    const connection = openConnection(id);
    if (peerId !== undefined && connection !== undefined && connection.status === 'open') view.onPeerConnected(peerId, connection);
  }
  return dropped;
}
