import { TopicValidatorResult, type GossipSub } from '@libp2p/gossipsub';
import type { PeerId } from '@libp2p/interface';
import { NetworkError, NetworkErrorCode } from './errors.js';
import type { NetworkStats } from './stats.js';
import { TokenBucket } from './token-bucket.js';

/** A gossip message as delivered to a subscriber. */
export interface GossipMessage {
  topic: string;
  data: Uint8Array;
  /** Name of the originator, known only under the StrictSign policy (the gossipsub `from`), else undefined. */
  from: string | undefined;
  /** Name of the peer that relayed it to this node (undefined for an admitted peer without a name). */
  relayedBy: string | undefined;
}

/** Verdict of a topic validator: accept (deliver, forward), ignore (drop quietly), reject (drop, penalise the relay). */
export type GossipVerdict = 'accept' | 'ignore' | 'reject';
export type GossipHandler = (msg: GossipMessage) => void;
export type GossipValidator = (msg: GossipMessage) => GossipVerdict;

interface Subscription {
  handler: GossipHandler;
  validate: GossipValidator | undefined;
}

export interface GossipRouterOptions {
  maxMessageLength: number;
  /** Messages per second accepted from one relaying peer, and the burst. */
  peerRate: number;
  peerBurst: number;
}

const verdicts: Record<GossipVerdict, TopicValidatorResult> = {
  accept: TopicValidatorResult.Accept,
  ignore: TopicValidatorResult.Ignore,
  reject: TopicValidatorResult.Reject,
};

/**
 * Topic subscriptions over a gossipsub service: size and per-peer rate checks in the (synchronous) topic validator,
 * then the subscriber's own validator, then delivery through 'gossipsub:message' (which names the relaying peer).
 */
export class GossipRouter {
  private readonly subs = new Map<string, Subscription>();
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly pubsub: GossipSub,
    private readonly opts: GossipRouterOptions,
    private readonly nameOf: (peerId: string) => string | undefined,
    private readonly stats: NetworkStats,
    private readonly onListenerError: (err: unknown) => void,
  ) {
    pubsub.addEventListener('gossipsub:message', (evt) => {
      const { propagationSource, msg } = evt.detail;
      const sub = this.subs.get(msg.topic);
      if (sub === undefined) return;
      this.stats.messagesIn++;
      try {
        sub.handler(this.toMessage(propagationSource, msg));
      } catch (err) {
        this.onListenerError(err);
      }
    });
  }

  subscribe(topic: string, handler: GossipHandler, validate?: GossipValidator): void {
    this.subs.set(topic, { handler, validate });
    this.pubsub.topicValidators.set(topic, (peer, msg) => this.validate(peer, msg));
    this.pubsub.subscribe(topic);
  }

  unsubscribe(topic: string): void {
    if (!this.subs.delete(topic)) return;
    this.pubsub.topicValidators.delete(topic);
    this.pubsub.unsubscribe(topic);
  }

  /** Publishes to every subscribed peer (flood publish); resolves to the number of peers it was sent to. */
  async publish(topic: string, data: Uint8Array): Promise<number> {
    if (data.length > this.opts.maxMessageLength) {
      throw new NetworkError(NetworkErrorCode.MESSAGE_TOO_LARGE, { length: data.length, limit: this.opts.maxMessageLength });
    }
    const res = await this.pubsub.publish(topic, data);
    this.stats.messagesOut++;
    return res.recipients.length;
  }

  /** Names of the peers known to be subscribed to `topic`. */
  subscribers(topic: string): string[] {
    return this.pubsub.getSubscribers(topic).map((p) => this.nameOf(p.toString()) ?? p.toString());
  }

  forgetPeer(peerId: string): void {
    this.buckets.delete(peerId);
  }

  private validate(peer: PeerId, msg: { topic: string; data: Uint8Array; type: 'signed' | 'unsigned'; from?: PeerId }): TopicValidatorResult {
    if (msg.data.length > this.opts.maxMessageLength) {
      this.stats.oversizeFrames++;
      return TopicValidatorResult.Reject;
    }
    const key = peer.toString();
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = new TokenBucket(this.opts.peerRate, this.opts.peerBurst);
      this.buckets.set(key, bucket);
    }
    if (!bucket.take(1)) {
      this.stats.rateLimited++;
      return TopicValidatorResult.Ignore;
    }
    const sub = this.subs.get(msg.topic);
    if (sub?.validate === undefined) return TopicValidatorResult.Accept;
    try {
      return verdicts[sub.validate(this.toMessage(peer, msg))] ?? TopicValidatorResult.Reject;
    } catch (err) {
      this.onListenerError(err);
      return TopicValidatorResult.Reject;
    }
  }

  private toMessage(relay: PeerId, msg: { topic: string; data: Uint8Array; type: 'signed' | 'unsigned'; from?: PeerId }): GossipMessage {
    return {
      topic: msg.topic,
      data: msg.data,
      from: msg.type === 'signed' && msg.from !== undefined ? this.nameOf(msg.from.toString()) : undefined,
      relayedBy: this.nameOf(relay.toString()),
    };
  }
}
