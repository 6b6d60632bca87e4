import { gossipsub, StrictNoSign, StrictSign, type GossipSub } from '@libp2p/gossipsub';
import type { Identify } from '@libp2p/identify';
import type { AbortOptions, Connection, PeerId, Stream } from '@libp2p/interface';
import type { Multiaddr } from '@multiformats/multiaddr';
import { MSG_LEN_LIMIT, backoffDelay, gossipInboundLimit, gossipMessageId, repairGossipOutbound } from '@quire/common';
import type { Libp2p } from 'libp2p';
import { NetworkError, NetworkErrorCode } from './errors.js';
import { FramedStream, type FramedStreamOptions } from './framed-stream.js';
import { GossipRouter, type GossipHandler, type GossipValidator } from './gossip.js';
import { nodePrivateKeyFromSeed } from './identity.js';
import { Libp2pHost } from './libp2p-host.js';
import { listenAddress, tcpMultiaddr } from './multiaddrs.js';
import { resolvePeers, type ObserverInfo, type ResolvedPeer, type ValidatorInfo } from './peers.js';
import { abortedError, createQuireLibp2p, isAborted } from './stack.js';
import { silentLogger, type NetworkLogger } from './stats.js';
import { TokenBucket } from './token-bucket.js';

/** Protocol of the node-to-node direct messages: one long-lived stream per peer and direction, frames one way. */
export const NODE_PROTOCOL = '/quire/node/1.0.0';

export interface NodeHostOptions {
  /** This node's alias. */
  name: string;
  /** 32-byte ed25519 seed of the node key (its verkey is `NODE.dest`). */
  seed: Uint8Array;
  /** Listen address (node_ip / node_port); port 0 picks a free port. */
  host: string;
  port: number;
  /** Largest message (frame body, gossip payload). */
  maxMessageLength: number;
  /** Per validator peer: inbound direct messages per second and burst, bytes per second (= byte burst). */
  nodeRate: number;
  nodeBurst: number;
  nodeByteRate: number;
  /** Per relaying peer: gossip messages per second and burst. */
  gossipRate: number;
  gossipBurst: number;
  /** Reconnect backoff bounds (exponential, jittered). */
  reconnectMinMs: number;
  reconnectMaxMs: number;
  dialTimeoutMs: number;
  /**
   * Liveness ping period of every connection, ms. Each ping opens a stream (protocol negotiation, the ping, a reset)
   * on every connection, both ends of each pair of validators dialing: at 1 s that was 6 pings sent and 6 answered
   * per second and node, 10-18 ms of CPU per second of a node of four (scripts/bench/network-idle.bench.ts). A link
   * that stops answering is closed `pingTimeoutMs` after the first ping it leaves unanswered: within 40 s at 10 s
   * (31 s at 1 s). A crashed peer's connection closes at once whatever the period.
   */
  pingIntervalMs: number;
  /**
   * A connection whose ping is not answered in this time is closed, ms. Long enough for a validator
   * whose event loop stalls for seconds under overload (3-8 s were seen): at 3 s its links dropped
   * and every message broadcast meanwhile (INSTANCE_CHANGE, VIEW_CHANGE) was lost, which left one
   * node in a view change the others never joined (#16). A crashed peer's connection closes at once;
   * a hung primary is voted out by the monitor (M1) without waiting for the ping.
   */
  pingTimeoutMs: number;
  /** An inbound frame begun but not completed within this time resets its stream (slowloris guard). */
  partialFrameTimeoutMs: number;
  /** Messages and bytes queued per peer while its stream opens; beyond them sends are dropped. */
  maxQueuedMessages: number;
  /** Bytes buffered for a peer that does not read before its stream is reset. */
  maxWriteBufferBytes: number;
  /**
   * Gossipsub signature policy. StrictNoSign (default): payloads carry their own proofs, message id =
   * sha256(data), no originator. StrictSign: each message signed by its originator's node key; `from` is known.
   */
  gossipSignaturePolicy: 'StrictNoSign' | 'StrictSign';
  /** Topics this host may subscribe or publish to (gossipsub allowedTopics); undefined = any. */
  topics: string[] | undefined;
}

export const defaultNodeHostOptions: Omit<NodeHostOptions, 'name' | 'seed'> = {
  host: '127.0.0.1',
  port: 0,
  maxMessageLength: MSG_LEN_LIMIT,
  nodeRate: 10_000,
  nodeBurst: 20_000,
  nodeByteRate: 64 * 1024 * 1024,
  gossipRate: 10_000,
  gossipBurst: 20_000,
  reconnectMinMs: 250,
  reconnectMaxMs: 5_000,
  dialTimeoutMs: 5_000,
  pingIntervalMs: 10_000,
  pingTimeoutMs: 30_000,
  partialFrameTimeoutMs: 10_000,
  maxQueuedMessages: 4_096,
  maxWriteBufferBytes: 16 * 1024 * 1024,
  gossipSignaturePolicy: 'StrictNoSign',
  topics: undefined,
};

export interface NodeHostEvents {
  /** A direct message from validator `from`. */
  message: (from: string, data: Uint8Array) => void;
  /** A validator or observer got its first connection / lost its last one. */
  'peer:connect': (name: string) => void;
  'peer:disconnect': (name: string) => void;
}

type NodeLibp2p = Libp2p<{ identify: Identify; pubsub: GossipSub }>;

interface PeerState extends ResolvedPeer {
  validator: boolean;
  self: boolean;
  addr: Multiaddr | undefined;
  out: FramedStream | undefined;
  opening: boolean;
  queue: Uint8Array[];
  attempt: number;
  timer: NodeJS.Timeout | undefined;
  dialing: boolean;
  inMsgs: TokenBucket;
  inBytes: TokenBucket;
}

/**
 * The node-to-node host: libp2p (TCP + Noise + Yamux + Identify + Gossipsub) on node_ip:node_port, admitting only
 * the pool's validators and configured observers, dialing and redialing every validator, with one long-lived
 * framed stream per peer and direction for direct messages and gossipsub for broadcast topics. It moves bytes only.
 */
export class NodeHost extends Libp2pHost<NodeHostEvents, { identify: Identify; pubsub: GossipSub }> {
  private readonly peers = new Map<string, PeerState>(); // by PeerId string
  private readonly byName = new Map<string, PeerState>();
  private readonly inbound = new Set<FramedStream>();
  private readonly abort = new AbortController();
  private readonly sweep: NodeJS.Timeout;
  private readonly gossip: GossipRouter;
  private validators: (ValidatorInfo & ResolvedPeer)[] = [];
  private observers: (ObserverInfo & ResolvedPeer)[] = [];

  private constructor(
    readonly options: NodeHostOptions,
    libp2p: NodeLibp2p,
    log: NetworkLogger,
  ) {
    super(libp2p, log);
    this.gossip = new GossipRouter(
      libp2p.services.pubsub,
      { maxMessageLength: options.maxMessageLength, peerRate: options.gossipRate, peerBurst: options.gossipBurst },
      (id) => this.peers.get(id)?.name,
      this.stats_,
      (err) => {
        this.stats_.listenerErrors++;
        this.log.warn({ err }, 'gossip listener threw');
      },
    );
    libp2p.addEventListener('peer:connect', (evt) => this.onConnect(evt.detail));
    libp2p.addEventListener('peer:disconnect', (evt) => this.onDisconnect(evt.detail));
    this.sweep = setInterval(() => this.sweepStreams(), Math.max(100, Math.min(1000, options.partialFrameTimeoutMs / 4)));
  }

  /**
   * Starts a host listening on options.host:options.port. Call setValidators to admit and dial the pool. `signal`
   * aborted before the host is up: whatever was opened is closed and the promise rejects with NetworkError ABORTED.
   */
  static async create(
    options: Partial<NodeHostOptions> & Pick<NodeHostOptions, 'name' | 'seed'>,
    modules: { logger?: NetworkLogger } = {},
    abort: AbortOptions = {},
  ): Promise<NodeHost> {
    const opts: NodeHostOptions = { ...defaultNodeHostOptions, ...options };
    const privateKey = await nodePrivateKeyFromSeed(opts.seed);
    const ref: { host?: NodeHost } = {};
    const admitted = (peerId: PeerId): boolean => ref.host?.peers.has(peerId.toString()) === true;
    const deny = (peerId: PeerId): boolean => {
      if (admitted(peerId)) return false;
      if (ref.host !== undefined) ref.host.stats_.deniedConnections++;
      return true;
    };
    const signed = opts.gossipSignaturePolicy === 'StrictSign';
    const libp2p = await createQuireLibp2p<{ pubsub: GossipSub }>(
      {
        privateKey,
        listen: [listenAddress(opts.host, opts.port)],
        connectionGater: {
          denyDialPeer: (peerId) => !admitted(peerId),
          denyInboundEncryptedConnection: (peerId) => deny(peerId),
          denyOutboundEncryptedConnection: (peerId) => deny(peerId),
        },
        connectionManager: { maxConnections: 256, inboundConnectionThreshold: 64, reconnectRetries: 0 },
        connectionMonitor: {
          pingInterval: opts.pingIntervalMs,
          pingTimeout: { minTimeout: opts.pingTimeoutMs, maxTimeout: opts.pingTimeoutMs },
          abortConnectionOnPingFailure: true,
        },
        services: {
          pubsub: gossipsub({
            globalSignaturePolicy: signed ? StrictSign : StrictNoSign,
            ...(signed ? {} : { msgIdFn: gossipMessageId }),
            allowPublishToZeroTopicPeers: true,
            ignoreDuplicatePublishError: true,
            emitSelf: false,
            floodPublish: true,
            fallbackToFloodsub: false,
            doPX: false,
            maxInboundDataLength: gossipInboundLimit(opts.maxMessageLength),
            ...(opts.topics === undefined ? {} : { allowedTopics: opts.topics }),
            scoreParams: { IPColocationFactorWeight: 0 },
          }),
        },
      },
      abort,
    );
    const self = new NodeHost(opts, libp2p, modules.logger ?? silentLogger);
    ref.host = self;
    try {
      await libp2p.handle(NODE_PROTOCOL, (stream, connection) => self.onInboundStream(stream, connection), {
        maxInboundStreams: 32,
        maxOutboundStreams: 32,
      });
      abort.signal?.throwIfAborted();
    } catch (e) {
      await self.close();
      throw isAborted(abort.signal) ? abortedError(abort.signal) : e;
    }
    return self;
  }

  get name(): string {
    return this.options.name;
  }

  /**
   * Replaces the validator set (all NODE entries that are validators; this node's own entry may be included and is
   * recognised by key). The gater admits exactly validators and observers from now on; removed peers are hung up,
   * new or moved validators are dialed. Throws NetworkError INVALID_PEER_INFO / INVALID_VERKEY / DUPLICATE_PEER.
   */
  setValidators(validators: readonly ValidatorInfo[]): void {
    const list = resolvePeers(validators, true);
    this.update(list, this.observers);
    this.validators = list;
  }

  /** Replaces the observers: admitted to connect (and follow gossip) but never dialed and refused direct streams. */
  setObservers(observers: readonly ObserverInfo[]): void {
    const list = resolvePeers(observers, false);
    this.update(this.validators, list);
    this.observers = list;
  }

  /** Names of validators and observers with at least one open connection. */
  connectedPeers(): string[] {
    const out: string[] = [];
    for (const p of this.peers.values()) if (!p.self && this.isConnected(p)) out.push(p.name);
    return out.sort();
  }

  /**
   * Sends one message to validator `to` over this node's long-lived stream to it. Returns false (and counts a drop)
   * when `to` is unknown, is this node, is not connected, or its queue is full. Throws MESSAGE_TOO_LARGE.
   */
  send(to: string, data: Uint8Array): boolean {
    if (data.length > this.options.maxMessageLength) {
      throw new NetworkError(NetworkErrorCode.MESSAGE_TOO_LARGE, { length: data.length, limit: this.options.maxMessageLength });
    }
    const p = this.byName.get(to);
    if (this.closing !== undefined || p === undefined || !p.validator || p.self) {
      this.stats_.droppedSends++;
      return false;
    }
    return this.sendTo(p, data);
  }

  /** Sends one message to every other validator; returns how many accepted it for sending. */
  broadcast(data: Uint8Array): number {
    if (data.length > this.options.maxMessageLength) {
      throw new NetworkError(NetworkErrorCode.MESSAGE_TOO_LARGE, { length: data.length, limit: this.options.maxMessageLength });
    }
    if (this.closing !== undefined) return 0;
    let n = 0;
    for (const p of this.byName.values()) if (p.validator && !p.self && this.sendTo(p, data)) n++;
    return n;
  }

  /** Publishes on a gossip topic (flood publish to every subscribed peer); resolves to the number of recipients. */
  async publish(topic: string, data: Uint8Array): Promise<number> {
    this.checkTopic(topic);
    if (this.closing !== undefined) throw new NetworkError(NetworkErrorCode.CLOSED);
    return this.gossip.publish(topic, data);
  }

  /** Subscribes to a gossip topic; `validate` (synchronous, cheap) decides accept / ignore / reject before delivery. */
  subscribe(topic: string, handler: GossipHandler, validate?: GossipValidator): void {
    this.checkTopic(topic);
    this.gossip.subscribe(topic, handler, validate);
  }

  unsubscribe(topic: string): void {
    this.gossip.unsubscribe(topic);
  }

  /** Names of the peers subscribed to `topic`. */
  topicPeers(topic: string): string[] {
    return this.gossip.subscribers(topic);
  }

  /** Stops dialing and closes every stream (close() then stops libp2p). */
  protected shutdown(): void {
    clearInterval(this.sweep);
    this.abort.abort();
    for (const p of this.peers.values()) {
      if (p.timer !== undefined) clearTimeout(p.timer);
      p.timer = undefined;
      p.queue = [];
      p.out?.abort('local');
    }
    for (const s of this.inbound) s.abort('local');
    this.inbound.clear();
  }

  private checkTopic(topic: string): void {
    if (this.options.topics !== undefined && !this.options.topics.includes(topic)) {
      throw new NetworkError(NetworkErrorCode.TOPIC_NOT_ALLOWED, { topic });
    }
  }

  private update(validators: (ValidatorInfo & ResolvedPeer)[], observers: (ObserverInfo & ResolvedPeer)[]): void {
    if (this.closing !== undefined) throw new NetworkError(NetworkErrorCode.CLOSED);
    // by PeerId: the peer, and its validator entry when it is one (a validator listed as an observer too stays a validator)
    const next = new Map<string, { info: ResolvedPeer; v: (ValidatorInfo & ResolvedPeer) | undefined }>();
    for (const o of observers) next.set(o.peerIdStr, { info: o, v: undefined });
    for (const v of validators) next.set(v.peerIdStr, { info: v, v });
    // removed peers: forget and hang up
    for (const [id, p] of this.peers) {
      if (next.has(id)) continue;
      this.forget(p);
      this.peers.delete(id);
      if (!p.self) void this.libp2p.hangUp(p.peerId).catch(() => undefined);
    }
    this.byName.clear();
    const direct = (this.libp2p.services.pubsub as unknown as { direct: Set<string> }).direct;
    for (const [id, { info, v }] of next) {
      let p = this.peers.get(id);
      if (p === undefined) {
        p = {
          name: info.name,
          dest: info.dest,
          peerId: info.peerId,
          peerIdStr: id,
          validator: false,
          self: id === this.peerId,
          addr: undefined,
          out: undefined,
          opening: false,
          queue: [],
          attempt: 0,
          timer: undefined,
          dialing: false,
          inMsgs: new TokenBucket(this.options.nodeRate, this.options.nodeBurst),
          inBytes: new TokenBucket(this.options.nodeByteRate, this.options.nodeByteRate),
        };
        this.peers.set(id, p);
      }
      p.name = info.name;
      const wasValidator = p.validator;
      p.validator = v !== undefined;
      if (v === undefined) {
        if (wasValidator) this.forget(p);
        p.addr = undefined;
        direct.delete(id);
      } else if (!p.self) {
        const addr = tcpMultiaddr(v.host, v.port, id);
        const moved = p.addr !== undefined && !p.addr.equals(addr);
        p.addr = addr;
        direct.add(id);
        void this.libp2p.peerStore.merge(p.peerId, { multiaddrs: [tcpMultiaddr(v.host, v.port)] }).catch(() => undefined);
        if (moved) void this.libp2p.hangUp(p.peerId).catch(() => undefined);
        if (moved || !this.isConnected(p)) {
          p.attempt = 0;
          this.scheduleDial(p, 0, moved);
        }
      }
      this.byName.set(p.name, p);
    }
  }

  private forget(p: PeerState): void {
    if (p.timer !== undefined) clearTimeout(p.timer);
    p.timer = undefined;
    p.queue = [];
    p.out?.abort('local');
    p.out = undefined;
    this.gossip.forgetPeer(p.peerIdStr);
    (this.libp2p.services.pubsub as unknown as { direct: Set<string> }).direct.delete(p.peerIdStr);
  }

  private isConnected(p: PeerState): boolean {
    return this.libp2p.getConnections(p.peerId).some((c) => c.status === 'open');
  }

  private scheduleDial(p: PeerState, delayMs: number, replace = false): void {
    if (this.closing !== undefined || p.dialing) return;
    if (p.timer !== undefined) {
      if (!replace) return;
      clearTimeout(p.timer);
    }
    p.timer = setTimeout(() => {
      p.timer = undefined;
      void this.dial(p);
    }, delayMs);
  }

  private async dial(p: PeerState): Promise<void> {
    if (this.closing !== undefined || this.peers.get(p.peerIdStr) !== p || !p.validator || p.addr === undefined) return;
    if (this.isConnected(p)) {
      p.attempt = 0;
      return;
    }
    p.dialing = true;
    try {
      await this.libp2p.dial(p.addr, { signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.options.dialTimeoutMs)]) });
      p.attempt = 0;
    } catch (err) {
      p.attempt++;
      this.log.debug({ peer: p.name, attempt: p.attempt, err: (err as Error).message }, 'dial failed');
    } finally {
      p.dialing = false;
    }
    if (this.closing === undefined && this.peers.get(p.peerIdStr) === p && p.validator && !this.isConnected(p)) {
      this.scheduleDial(p, backoffDelay(p.attempt, this.options.reconnectMinMs, this.options.reconnectMaxMs));
    }
  }

  private onConnect(peerId: PeerId): void {
    const p = this.peers.get(peerId.toString());
    if (p === undefined || p.self) return;
    p.attempt = 0;
    this.log.debug({ peer: p.name }, 'connected');
    if (p.validator) this.openOut(p);
    this.emit('peer:connect', p.name);
  }

  private onDisconnect(peerId: PeerId): void {
    const p = this.peers.get(peerId.toString());
    if (p === undefined || p.self) return;
    this.log.debug({ peer: p.name }, 'disconnected');
    if (p.validator && this.closing === undefined) this.scheduleDial(p, backoffDelay(p.attempt, this.options.reconnectMinMs, this.options.reconnectMaxMs));
    this.emit('peer:disconnect', p.name);
  }

  private sendTo(p: PeerState, data: Uint8Array): boolean {
    if (p.out !== undefined) {
      if (p.out.send(data)) {
        this.stats_.messagesOut++;
        return true;
      }
      p.out = undefined;
    }
    if (p.queue.length >= this.options.maxQueuedMessages || !this.isConnected(p)) {
      this.stats_.droppedSends++;
      return false;
    }
    p.queue.push(data);
    this.openOut(p);
    return true;
  }

  private openOut(p: PeerState): void {
    if (p.opening || p.out?.open === true || this.closing !== undefined) return;
    p.opening = true;
    void (async () => {
      let stream: Stream | undefined;
      try {
        stream = await this.libp2p.dialProtocol(p.peerId, NODE_PROTOCOL, {
          signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.options.dialTimeoutMs)]),
        });
      } catch (err) {
        this.log.debug({ peer: p.name, err: (err as Error).message }, 'opening stream failed');
      } finally {
        p.opening = false;
      }
      if (stream === undefined || this.closing !== undefined || this.peers.get(p.peerIdStr) !== p || !p.validator) {
        stream?.abort(new NetworkError(NetworkErrorCode.CLOSED));
        this.stats_.droppedSends += p.queue.length;
        p.queue = [];
        return;
      }
      const out: FramedStream = new FramedStream(stream, this.streamOptions(), {
        frame: () => this.stats_.malformedMessages++, // the stream is one-way: the remote must not write
        oversize: () => this.stats_.oversizeFrames++,
        closed: (reason) => {
          if (p.out === out) p.out = undefined;
          this.countClose(reason);
        },
      });
      p.out = out;
      const queued = p.queue;
      p.queue = [];
      for (const m of queued) {
        if (out.send(m)) this.stats_.messagesOut++;
        else this.stats_.droppedSends++;
      }
    })();
  }

  private onInboundStream(stream: Stream, connection: Connection): void {
    const p = this.peers.get(connection.remotePeer.toString());
    if (p === undefined || !p.validator || p.self || this.closing !== undefined) {
      this.stats_.deniedConnections++;
      stream.abort(new NetworkError(NetworkErrorCode.CLOSED, { reason: 'not a validator' }));
      return;
    }
    const fs: FramedStream = new FramedStream(stream, this.streamOptions(), {
      frame: (data) => {
        if (!p.validator || !p.inMsgs.take(1) || !p.inBytes.take(data.length)) {
          this.stats_.rateLimited++;
          return;
        }
        this.stats_.messagesIn++;
        this.emit('message', p.name, data);
      },
      oversize: () => this.stats_.oversizeFrames++,
      closed: (reason) => {
        this.inbound.delete(fs);
        this.countClose(reason);
      },
    });
    this.inbound.add(fs);
  }

  private streamOptions(): FramedStreamOptions {
    // a length prefix above the limit resets the stream without reading the body (consensus.md 9.3)
    return { maxFrameLength: this.options.maxMessageLength, maxSkipLength: 0, maxWriteBufferBytes: this.options.maxWriteBufferBytes, fatalOversize: 'reset' };
  }

  private countClose(reason: string): void {
    if (reason === 'malformed') this.stats_.malformedFrames++;
    else if (reason === 'oversize') {
      this.stats_.oversizeFrames++;
      this.stats_.malformedFrames++;
    } else if (reason === 'reset') this.stats_.resets++;
    else if (reason === 'idle') this.stats_.idleTimeouts++;
    else if (reason === 'slow-consumer') this.stats_.droppedSends++;
  }

  private sweepStreams(): void {
    const now = performance.now();
    const limit = this.options.partialFrameTimeoutMs;
    for (const s of this.inbound) if (s.partialSince !== undefined && now - s.partialSince > limit) s.abort('idle');
    // a gossip stream left registered after its connection closed blocks every later one to that peer (gossip-streams.ts)
    this.stats_.gossipStreamsRepaired += repairGossipOutbound(this.libp2p.services.pubsub, (peerId) =>
      this.libp2p.getConnections().find((c) => c.status === 'open' && c.remotePeer.toString() === peerId),
    );
  }
}
