// The one libp2p stack of Quire: TCP + Noise + Yamux (its window stated explicitly, yamux.ts) + Identify, with the
// services, gater, limits and liveness a host asks for. The validators' node host, their client host, the SDK's
// dialer and the observers' gossip host are all built here, so what the tests and the benchmarks run is what users run.
import { noise } from '@chainsafe/libp2p-noise';
import { identify, type Identify } from '@libp2p/identify';
import type { AbortOptions, ConnectionGater, PrivateKey, ServiceMap } from '@libp2p/interface';
import { tcp } from '@libp2p/tcp';
import { createLibp2p, type Libp2p, type Libp2pInit, type ServiceFactoryMap } from 'libp2p';
import { NetworkError, NetworkErrorCode } from './errors.js';
import { quireYamux, type YamuxOptions } from './yamux.js';

/** A connection of a client whose liveness ping is not answered in this time is closed, ms. */
export const CLIENT_PING_TIMEOUT_MS = 30_000;

/** What a host chooses of its stack; everything else is the same for every Quire host. */
export interface QuireLibp2pOptions<S extends ServiceMap = ServiceMap> {
  /** The host's libp2p key (a node's key from its seed); a fresh random key when absent. */
  privateKey?: PrivateKey;
  /** Multiaddrs to listen on; none for a host that only dials. */
  listen?: string[];
  connectionGater?: ConnectionGater;
  connectionManager?: Libp2pInit['connectionManager'];
  connectionMonitor?: Libp2pInit['connectionMonitor'];
  /** Yamux window and frame sizes (each missing one from `defaultYamuxOptions`). */
  yamux?: Partial<YamuxOptions>;
  /** Services beside `identify` (gossipsub). */
  services?: ServiceFactoryMap<S>;
}

/** The services every Quire stack runs: identify (what gossipsub's topology and the dialer's protocol checks use). */
export interface BaseServices extends ServiceMap {
  identify: Identify;
}

/** The error of a start that `signal` ended (data: `reason`, the signal's reason as text). */
export function abortedError(signal: AbortSignal): NetworkError {
  const r: unknown = signal.reason;
  return new NetworkError(NetworkErrorCode.ABORTED, { reason: r instanceof Error ? r.message : String(r) });
}

/** Whether `signal` has aborted (a function, so that the check is made again after an await). */
export function isAborted(signal: AbortSignal | undefined): signal is AbortSignal {
  return signal?.aborted === true;
}

/**
 * Creates and starts a Quire libp2p stack. `signal` aborted before or while it starts: the stack is stopped (its
 * listener closed) and the promise rejects with NetworkError ABORTED.
 */
export async function createQuireLibp2p<S extends ServiceMap = Record<string, never>>(
  options: QuireLibp2pOptions<S>,
  abort: AbortOptions = {},
): Promise<Libp2p<S & BaseServices>> {
  const { signal } = abort;
  if (isAborted(signal)) throw abortedError(signal);
  // identify first: services start in this order, and gossipsub's topology reads the protocols identify learns on each
  // new connection (registered after gossipsub, a re-dialled peer was at times never sent the topic subscriptions)
  const services = { identify: identify(), ...options.services } as ServiceFactoryMap<S & BaseServices>;
  const libp2p = await createLibp2p<S & BaseServices>({
    ...(options.privateKey === undefined ? {} : { privateKey: options.privateKey }),
    addresses: { listen: options.listen ?? [] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [quireYamux(options.yamux)],
    ...(options.connectionGater === undefined ? {} : { connectionGater: options.connectionGater }),
    ...(options.connectionManager === undefined ? {} : { connectionManager: options.connectionManager }),
    ...(options.connectionMonitor === undefined ? {} : { connectionMonitor: options.connectionMonitor }),
    services,
  });
  if (isAborted(signal)) {
    // libp2p's start takes no signal: an abort meanwhile is seen once it is up, and undone
    await libp2p.stop();
    throw abortedError(signal);
  }
  return libp2p;
}

/**
 * The Yamux of a client's stack (the SDK's pool, an observer, the tools): the library's window rule, an update after
 * every data frame. A client's one stream per node carries the answers to all its requests in flight (512 reads of
 * the benchmark: over 1 MB); the library's rule lets that receive window grow towards `maxStreamWindowSize` while data
 * arrives, where the half-window rule keeps it at its initial 256 KiB (the window doubles only when an update is
 * sent within 4 round trips of the previous one). With the half-window rule on the client, a node's answers waited
 * for the client's late updates under load: bench:pool's verified reads fell from 2,894/s to about 1,280/s. The
 * validators keep the half-window rule on their own streams (fewer frames to encrypt and send).
 */
export const clientYamuxOptions: Partial<YamuxOptions> = { windowUpdate: 'every-frame' };

/** The options of a client's stack: what {@link createClientLibp2p} takes. */
export interface ClientLibp2pOptions {
  /** The client's transport key (not a ledger identity); a fresh random key when absent. */
  privateKey?: PrivateKey;
  /** Yamux window options (default {@link clientYamuxOptions}). */
  yamux?: Partial<YamuxOptions>;
}

/**
 * The stack of a client of the client protocol (the SDK's pool, the tools and the tests alike): the client's Yamux
 * window rule ({@link clientYamuxOptions}), no listener, no
 * redial by libp2p (the dialer redials on its next request), and a liveness ping that tolerates a node whose event
 * loop is late under overload: libp2p's default (a ping every 10 s, closed after 5 s without an answer) failed every
 * request in flight on such a node.
 */
export function createClientLibp2p(options: ClientLibp2pOptions = {}, abort: AbortOptions = {}): Promise<Libp2p<BaseServices>> {
  return createQuireLibp2p(
    {
      ...(options.privateKey === undefined ? {} : { privateKey: options.privateKey }),
      yamux: options.yamux ?? clientYamuxOptions,
      connectionManager: { reconnectRetries: 0 },
      connectionMonitor: {
        pingInterval: 10_000,
        pingTimeout: { minTimeout: CLIENT_PING_TIMEOUT_MS, maxTimeout: CLIENT_PING_TIMEOUT_MS },
        abortConnectionOnPingFailure: true,
      },
    },
    abort,
  );
}
