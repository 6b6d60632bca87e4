/**
 * The client's libp2p stack, made by one factory, `createClientLibp2p` (the validators' hosts have theirs in
 * @quire/network, which the client never imports: the package map): TCP + Noise + Yamux with the library's own window
 * rule + Identify, no listener, no redial by libp2p, and a liveness ping that tolerates a late node. `NodeConnection`
 * dials the client protocol over it; `GossipTransport` is the same stack plus gossipsub, with the observer's own
 * ed25519 key, listening, admitting only the pool's validators, dialing and redialing their node listeners,
 * subscribed to one topic (an observer follows the ordered-batch topic; it never publishes).
 */
import '@quire/common/polyfill';
import { isIPv6 } from 'node:net';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { gossipsub, StrictNoSign, TopicValidatorResult, type GossipSub } from '@libp2p/gossipsub';
import { identify, type Identify } from '@libp2p/identify';
import type { AbortOptions, PeerId, PrivateKey, ServiceMap } from '@libp2p/interface';
import { tcp } from '@libp2p/tcp';
import type { Multiaddr } from '@multiformats/multiaddr';
import { createLibp2p, type Libp2p, type Libp2pInit, type ServiceFactoryMap } from 'libp2p';
import { backoffDelay, gossipInboundLimit, gossipMessageId, repairGossipOutbound } from '@quire/common';
import { CryptoError, libp2pPrivateKeyFromSeed } from '@quire/crypto';
import { ClientError, ClientErrorCode, abortedBy } from '../errors.js';
import { silentLogger, type ClientLogger } from '../logger.js';
import { clientMultiaddr, peerIdOfDest, type NodeAddress } from './connection.js';
import { startLivenessPing } from './liveness-ping.js';

/** A connection whose liveness ping is not answered in this time (of a client not stalled) is closed, ms. */
export const CLIENT_PING_TIMEOUT_MS = 30_000;
/** The period of the liveness ping of a client's connections, ms. */
export const CLIENT_PING_INTERVAL_MS = 10_000;
/** The period at which an observer looks for gossip streams to a validator left closed (gossip-streams.ts), ms. */
const GOSSIP_REPAIR_INTERVAL_MS = 500;

/** The services of every client stack: identify (what gossipsub's topology and the dialer's protocol checks read). */
export interface ClientServices extends ServiceMap {
  identify: Identify;
}

/**
 * What a client stack may set of libp2p's init besides its services; the pool and the tools set none of it (a random
 * transport key, no listener), an observer all of it (its key, its listener, its gater, its ping).
 */
export type ClientLibp2pInit = Pick<Libp2pInit, 'privateKey' | 'addresses' | 'connectionGater' | 'connectionManager' | 'connectionMonitor'>;

/** The options of {@link createClientLibp2p}. */
export interface ClientLibp2pOptions<S extends ServiceMap = ServiceMap> extends ClientLibp2pInit {
  /** Services beside `identify`, started after it (an observer's gossipsub). */
  services?: ServiceFactoryMap<S>;
}

/**
 * Creates and starts a client's libp2p stack (the SDK's pool, `NodeConnection.connect`, an observer, the tools and the
 * tests alike). Its Yamux keeps the library's window rule, an update after every data frame: a client's one stream
 * per node carries the answers to all its requests in flight (512 reads of the benchmark: over 1 MB), and that rule
 * lets the receive window grow towards its 16 MiB bound while data arrives, where the half-window rule of the
 * validators' stacks keeps it at its initial 256 KiB (with that rule on the client, bench:pool's verified reads fell
 * from 2,894/s to about 1,280/s). libp2p does not redial (the dialer redials on its next request), and the liveness
 * ping tolerates a node whose event loop is late under overload: libp2p's default (closed after 5 s without an
 * answer) failed every request in flight on such a node. `signal` aborted before or while it starts: the stack is
 * stopped and the promise rejects with ClientError ABORTED.
 */
export async function createClientLibp2p<S extends ServiceMap = Record<string, never>>(
  options: ClientLibp2pOptions<S> = {},
  abort: AbortOptions = {},
): Promise<Libp2p<S & ClientServices>> {
  const { signal } = abort;
  if (isAborted(signal)) throw abortedBy(signal);
  const { services, ...init } = options;
  // the default ping is the stall-tolerant one (liveness-ping.ts); a caller's own settings keep libp2p's monitor
  const ownPing = init.connectionMonitor === undefined;
  const libp2p = await createLibp2p<S & ClientServices>({
    connectionMonitor: { enabled: false },
    ...init,
    connectionManager: { reconnectRetries: 0, ...init.connectionManager },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    // identify first: services start in this order, and gossipsub's topology reads the protocols identify learns on
    // each new connection (registered after gossipsub, a re-dialled validator was at times never sent the topic
    // subscriptions)
    services: { identify: identify(), ...services } as ServiceFactoryMap<S & ClientServices>,
  });
  if (ownPing) startLivenessPing(libp2p, { intervalMs: CLIENT_PING_INTERVAL_MS, timeoutMs: CLIENT_PING_TIMEOUT_MS });
  if (isAborted(signal)) {
    // libp2p's start takes no signal: an abort meanwhile is seen once it is up, and undone
    await libp2p.stop();
    throw abortedBy(signal);
  }
  return libp2p;
}

/** Whether `signal` has aborted (a function, so that the check is made again after an await). */
function isAborted(signal: AbortSignal | undefined): signal is AbortSignal {
  return signal?.aborted === true;
}

/**
 * The libp2p private key of an ed25519 seed (crypto's `libp2pPrivateKeyFromSeed`, the nodes' rule too): the same seed
 * always gives the same key, hence the same PeerId. Throws ClientError INVALID_SEED (data `length`).
 */
export async function privateKeyFromSeed(seed: Uint8Array): Promise<PrivateKey> {
  try {
    return await libp2pPrivateKeyFromSeed(seed);
  } catch (e) {
    if (e instanceof CryptoError) throw new ClientError(ClientErrorCode.INVALID_SEED, { length: typeof e.data.length === 'number' ? e.data.length : -1 });
    throw e;
  }
}

export type GossipLibp2p = Libp2p<ClientServices & { pubsub: GossipSub }>;

export interface GossipTransportOptions {
  /** 32-byte ed25519 seed of the observer key (its verkey is what validators list as an observer). */
  seed: Uint8Array;
  /** Listen address (never needs to be reachable: validators do not dial observers); port 0 picks a free port. */
  host: string;
  port: number;
  /** The one topic subscribed to (gossipsub allowedTopics). */
  topic: string;
  /** Largest gossip payload accepted; larger ones are rejected before delivery. */
  maxMessageLength: number;
  /** The validators to admit and dial: alias, NODE.dest, node_ip (host), node_port (port). */
  validators: NodeAddress[];
  /** Redial backoff bounds (exponential, jittered). */
  reconnectMinMs: number;
  reconnectMaxMs: number;
  dialTimeoutMs: number;
  /** Liveness ping period and timeout of every connection (a dead connection is closed, then redialed). */
  pingIntervalMs: number;
  pingTimeoutMs: number;
}

export const defaultGossipTransportOptions: Omit<GossipTransportOptions, 'seed' | 'topic' | 'validators'> = {
  host: '127.0.0.1',
  port: 0,
  maxMessageLength: 128 * 1024,
  reconnectMinMs: 250,
  reconnectMaxMs: 5_000,
  dialTimeoutMs: 5_000,
  pingIntervalMs: 1_000,
  pingTimeoutMs: 3_000,
};

/** One topic message as delivered: its payload and the alias of the validator that relayed it. */
export type GossipDelivery = (data: Uint8Array, relayedBy: string | undefined) => void;

interface Peer {
  alias: string;
  peerId: string;
  addr: Multiaddr;
  attempt: number;
  timer: NodeJS.Timeout | undefined;
  dialing: boolean;
}

/**
 * A gossip-only libp2p host of an observer: it subscribes to one topic and hands each accepted message to `deliver`.
 * The topic runs StrictNoSign with message id sha256(data), as the validators' hosts do, so ids match across the
 * pool (IHAVE / IWANT) and unsigned messages are accepted.
 */
export class GossipTransport {
  readonly peerId: string;
  private readonly peers = new Map<string, Peer>(); // by PeerId string
  private readonly abort = new AbortController();
  private closing: Promise<void> | undefined;
  private repairTimer: NodeJS.Timeout | undefined;
  private repairedStreams = 0;

  private constructor(
    readonly options: GossipTransportOptions,
    readonly libp2p: GossipLibp2p,
    peers: Peer[],
    private readonly log: ClientLogger,
  ) {
    this.peerId = libp2p.peerId.toString();
    for (const p of peers) this.peers.set(p.peerId, p);
  }

  /**
   * Starts the host, subscribes to `options.topic` and dials every validator. Throws ClientError INVALID_SEED, or
   * INVALID_ARGUMENT for a validator whose dest is not a 32-byte base58 key. `signal` aborted before or while it
   * starts: what it opened (its listener) is closed and the promise rejects with ClientError ABORTED.
   */
  static async create(
    options: Partial<GossipTransportOptions> & Pick<GossipTransportOptions, 'seed' | 'topic' | 'validators'>,
    modules: { deliver: GossipDelivery; logger?: ClientLogger },
    abort: AbortOptions = {},
  ): Promise<GossipTransport> {
    const { signal } = abort;
    if (isAborted(signal)) throw abortedBy(signal);
    const opts: GossipTransportOptions = { ...defaultGossipTransportOptions, ...options };
    const log = modules.logger ?? silentLogger;
    const privateKey = await privateKeyFromSeed(opts.seed);
    const peers: Peer[] = opts.validators.map((v) => ({
      alias: v.alias,
      peerId: peerIdOfDest(v.dest),
      addr: clientMultiaddr(v),
      attempt: 0,
      timer: undefined,
      dialing: false,
    }));
    const admitted = new Set(peers.map((p) => p.peerId));
    const deny = (peerId: PeerId): boolean => !admitted.has(peerId.toString());
    const libp2p = await createClientLibp2p<{ pubsub: GossipSub }>(
      {
        privateKey,
        addresses: { listen: [`/${isIPv6(opts.host) ? 'ip6' : 'ip4'}/${opts.host}/tcp/${opts.port}`] },
        connectionGater: {
          denyDialPeer: deny,
          denyInboundEncryptedConnection: deny,
          denyOutboundEncryptedConnection: deny,
        },
        connectionManager: { maxConnections: 64, reconnectRetries: 0 },
        connectionMonitor: { pingInterval: opts.pingIntervalMs, pingTimeout: { maxTimeout: opts.pingTimeoutMs }, abortConnectionOnPingFailure: true },
        services: {
          pubsub: gossipsub({
            // the payload carries its own proofs (sender signature, multi-signature): no envelope signature, and the
            // message id is the payload's hash, as on the validators
            globalSignaturePolicy: StrictNoSign,
            msgIdFn: gossipMessageId,
            emitSelf: false,
            fallbackToFloodsub: false,
            doPX: false,
            maxInboundDataLength: gossipInboundLimit(opts.maxMessageLength),
            allowedTopics: [opts.topic],
            // validators and observers often share one address (a host, a test): no colocation penalty
            scoreParams: { IPColocationFactorWeight: 0 },
          }),
        },
      },
      abort,
    );
    const self = new GossipTransport(opts, libp2p, peers, log);
    try {
      self.follow(modules.deliver);
    } catch (e) {
      await self.close();
      throw e;
    }
    return self;
  }

  /** Aliases of the validators with an open connection, sorted. */
  connectedPeers(): string[] {
    const out: string[] = [];
    for (const p of this.peers.values()) if (this.isConnected(p)) out.push(p.alias);
    return out.sort();
  }

  /** Aliases (or PeerIds, for a peer that is no validator) of the peers known to be subscribed to the topic. */
  topicPeers(): string[] {
    return this.libp2p.services.pubsub.getSubscribers(this.options.topic).map((id) => this.peers.get(id.toString())?.alias ?? id.toString());
  }

  /** Stops dialing and stops libp2p. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.abort.abort();
      clearInterval(this.repairTimer);
      for (const p of this.peers.values()) {
        if (p.timer !== undefined) clearTimeout(p.timer);
        p.timer = undefined;
      }
      try {
        await this.libp2p.stop();
      } catch (err) {
        this.log.warn({ err }, 'libp2p stop failed');
      }
    })();
    return this.closing;
  }

  private follow(deliver: GossipDelivery): void {
    const { topic, maxMessageLength } = this.options;
    const pubsub = this.libp2p.services.pubsub;
    pubsub.topicValidators.set(topic, (peer, msg) => {
      if (msg.data.length <= maxMessageLength) return TopicValidatorResult.Accept;
      this.log.debug({ peer: this.peers.get(peer.toString())?.alias ?? peer.toString(), length: msg.data.length }, 'oversize gossip message rejected');
      return TopicValidatorResult.Reject;
    });
    pubsub.addEventListener('gossipsub:message', (evt) => {
      const { propagationSource, msg } = evt.detail;
      if (msg.topic !== topic || this.closing !== undefined) return;
      try {
        deliver(msg.data, this.peers.get(propagationSource.toString())?.alias);
      } catch (err) {
        this.log.warn({ err }, 'gossip listener threw');
      }
    });
    // the backoff restarts only once a validator subscribed to the topic over the connection: one that accepts the
    // connection and then hangs up (it does not list this observer) is redialed ever more slowly
    pubsub.addEventListener('subscription-change', (evt) => {
      const p = this.peers.get(evt.detail.peerId.toString());
      if (p !== undefined && evt.detail.subscriptions.some((sub) => sub.topic === topic && sub.subscribe)) p.attempt = 0;
    });
    this.libp2p.addEventListener('peer:connect', (evt) => {
      const p = this.peers.get(evt.detail.toString());
      if (p !== undefined) this.log.debug({ peer: p.alias }, 'connected');
    });
    this.libp2p.addEventListener('peer:disconnect', (evt) => {
      const p = this.peers.get(evt.detail.toString());
      if (p === undefined) return;
      this.log.debug({ peer: p.alias, attempt: p.attempt }, 'disconnected');
      this.scheduleDial(p, backoffDelay(p.attempt++, this.options.reconnectMinMs, this.options.reconnectMaxMs));
    });
    pubsub.subscribe(topic);
    for (const p of this.peers.values()) this.scheduleDial(p, 0);
    // a gossip stream left registered after its connection closed blocks every later one to that validator, which then
    // never learns this observer's subscription (@quire/common's gossip-streams.ts): found and opened again each period
    this.repairTimer = setInterval(() => {
      this.repairedStreams += repairGossipOutbound(pubsub, (peerId) =>
        this.libp2p.getConnections().find((c) => c.status === 'open' && c.remotePeer.toString() === peerId),
      );
    }, GOSSIP_REPAIR_INTERVAL_MS);
    this.repairTimer.unref();
  }

  /** How many closed gossip streams to a validator were found still registered and opened again. */
  get gossipStreamsRepaired(): number {
    return this.repairedStreams;
  }

  private isConnected(p: Peer): boolean {
    return this.libp2p.getConnections().some((c) => c.status === 'open' && c.remotePeer.toString() === p.peerId);
  }

  private scheduleDial(p: Peer, delayMs: number): void {
    if (this.closing !== undefined || p.dialing || p.timer !== undefined) return;
    p.timer = setTimeout(() => {
      p.timer = undefined;
      void this.dial(p);
    }, delayMs);
  }

  private async dial(p: Peer): Promise<void> {
    if (this.closing !== undefined) return;
    if (this.isConnected(p)) return;
    p.dialing = true;
    try {
      await this.libp2p.dial(p.addr, { signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.options.dialTimeoutMs)]) });
    } catch (err) {
      p.attempt++;
      this.log.debug({ peer: p.alias, attempt: p.attempt, err: (err as Error).message }, 'dial failed');
    } finally {
      p.dialing = false;
    }
    if (this.closing === undefined && !this.isConnected(p)) {
      this.scheduleDial(p, backoffDelay(p.attempt, this.options.reconnectMinMs, this.options.reconnectMaxMs));
    }
  }
}
