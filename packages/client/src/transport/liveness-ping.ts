/**
 * The client stack's liveness ping, in place of libp2p's connection monitor: every `intervalMs`, each connection opens
 * a ping stream (the protocol negotiation is the round trip: a node that does not serve the ping protocol answers
 * "unsupported", and is alive); a connection that does not answer within `timeoutMs` is aborted. Its deadline is a
 * {@link stallTolerantTimeoutSignal}: libp2p's monitor bounds the ping by AbortSignal.timeout, which fires in the
 * timers phase that follows a stall of the client's event loop, before the poll phase reads the answer, and a client
 * seconds behind on a saturated machine aborted its own live connections, failing every request in flight on them.
 */
import type { Connection, Libp2p } from '@libp2p/interface';
import { ClientError, ClientErrorCode } from '../errors.js';
import { stallTolerantTimeoutSignal } from './stall-timer.js';

/** The protocol libp2p's connection monitor uses: the nodes answer it as unsupported. */
export const PING_PROTOCOL = '/ipfs/ping/1.0.0';

export interface LivenessPingOptions {
  intervalMs: number;
  timeoutMs: number;
}

/** Pings `libp2p`'s connections until it stops; returns the function that stops the pings. */
export function startLivenessPing(libp2p: Libp2p, opts: LivenessPingOptions): () => void {
  const inFlight = new Set<string>();
  const ping = async (conn: Connection): Promise<void> => {
    if (inFlight.has(conn.id)) return; // the previous ping of this connection is still waiting
    inFlight.add(conn.id);
    const deadline = stallTolerantTimeoutSignal(opts.timeoutMs);
    try {
      const stream = await conn.newStream(PING_PROTOCOL, { signal: deadline.signal, runOnLimitedConnection: true });
      stream.abort(new ClientError(ClientErrorCode.CLOSED, { reason: 'liveness ping answered' }));
    } catch (e) {
      const name = (e as { name?: string }).name;
      if (name !== 'UnsupportedProtocolError' && deadline.signal.aborted && conn.status === 'open') conn.abort(e as Error);
    } finally {
      deadline.clear();
      inFlight.delete(conn.id);
    }
  };
  const timer = setInterval(() => {
    if (libp2p.status !== 'started') return;
    for (const conn of libp2p.getConnections()) void ping(conn);
  }, opts.intervalMs);
  timer.unref();
  const stop = (): void => clearInterval(timer);
  libp2p.addEventListener('stop', stop, { once: true });
  return stop;
}
