// The libp2p stack of the validators' hosts: TCP + Noise + Yamux (its window stated explicitly, yamux.ts) + Identify,
// with the services, gater, limits and liveness a host asks for. The node host and the client host are both built
// here. Clients (the SDK's pool, observers, the tools) build theirs with @quire/client's createClientLibp2p: the
// package map lets the client import common, crypto and storage's verifiers only.
import { noise } from '@chainsafe/libp2p-noise';
import { identify, type Identify } from '@libp2p/identify';
import type { AbortOptions, ConnectionGater, PrivateKey, ServiceMap } from '@libp2p/interface';
import { tcp } from '@libp2p/tcp';
import { createLibp2p, type Libp2p, type Libp2pInit, type ServiceFactoryMap } from 'libp2p';
import { NetworkError, NetworkErrorCode } from './errors.js';
import { quireYamux, type YamuxOptions } from './yamux.js';

/** What a host chooses of its stack; everything else is the same for every validator host. */
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

/** The services every host stack runs: identify (what gossipsub's topology and the dialers' protocol checks use). */
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
 * Creates and starts a validator host's libp2p stack. `signal` aborted before or while it starts: the stack is stopped (its
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
