/** Counters of what a host saw and did; every rejected or dropped input is counted here. */
export interface NetworkStats {
  /** Connections refused by the gater or a connection limit. */
  deniedConnections: number;
  /** Streams closed because a frame prefix was malformed or a frame exceeded the limit on a protocol that resets. */
  malformedFrames: number;
  /** Frames above the size limit (refused or reset). */
  oversizeFrames: number;
  /** Streams closed because a frame stayed incomplete too long or the peer went idle. */
  idleTimeouts: number;
  /** Streams that ended with a reset or abort from the remote side. */
  resets: number;
  /** Inbound messages dropped or refused by a rate limit. */
  rateLimited: number;
  /** Outbound messages dropped (peer unknown or not connected, queue full, slow consumer). */
  droppedSends: number;
  /** Inbound frames that could not be decoded at the envelope level. */
  malformedMessages: number;
  /** Errors thrown by listeners of this host (caught and counted). */
  listenerErrors: number;
  /** Messages received and delivered to listeners. */
  messagesIn: number;
  /** Messages handed to streams for sending. */
  messagesOut: number;
  /** Closed gossip streams to a peer found still registered, dropped and opened again (@quire/common repairGossipOutbound). */
  gossipStreamsRepaired: number;
}

export function emptyStats(): NetworkStats {
  return {
    deniedConnections: 0,
    malformedFrames: 0,
    oversizeFrames: 0,
    idleTimeouts: 0,
    resets: 0,
    rateLimited: 0,
    droppedSends: 0,
    malformedMessages: 0,
    listenerErrors: 0,
    messagesIn: 0,
    messagesOut: 0,
    gossipStreamsRepaired: 0,
  };
}

/** A minimal structured logger: pino's shape, so a pino child logger can be passed as is. */
export interface NetworkLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const noop = (): void => undefined;
export const silentLogger: NetworkLogger = { debug: noop, info: noop, warn: noop, error: noop };
