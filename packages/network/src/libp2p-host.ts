import type { Libp2p, ServiceMap } from '@libp2p/interface';
import { TypedEmitter } from '@quire/common';
import { tcpPortOf } from './multiaddrs.js';
import { emptyStats, type NetworkLogger, type NetworkStats } from './stats.js';

/**
 * What the node host and the client host share: one libp2p instance with this node's key, counters, a logger that
 * hears of listener errors (counted, never thrown), and an idempotent close that runs the host's own teardown
 * before stopping libp2p.
 */
export abstract class Libp2pHost<Events extends { [K in keyof Events]: (...args: any[]) => void }, Services extends ServiceMap> extends TypedEmitter<Events> {
  readonly peerId: string;
  protected readonly stats_: NetworkStats = emptyStats();
  /** Set by the first close(); every entry point refuses or drops work once it is. */
  protected closing: Promise<void> | undefined;

  protected constructor(
    protected readonly libp2p: Libp2p<Services>,
    protected readonly log: NetworkLogger,
  ) {
    super((event, err) => {
      this.stats_.listenerErrors++;
      this.log.warn({ event, err }, 'listener threw');
    });
    this.peerId = libp2p.peerId.toString();
  }

  /** The TCP port actually listened on. */
  get port(): number {
    return tcpPortOf(this.libp2p.getMultiaddrs());
  }

  get multiaddrs(): string[] {
    return this.libp2p.getMultiaddrs().map((a) => a.toString());
  }

  /** Counters of denied, dropped, malformed and delivered traffic (a copy). */
  stats(): NetworkStats {
    return { ...this.stats_ };
  }

  /** Closes every stream, connection and the listener. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  /** The host's own teardown (timers, streams), run once before libp2p stops. */
  protected abstract shutdown(): void;

  private async doClose(): Promise<void> {
    this.shutdown();
    try {
      await this.libp2p.stop();
    } catch (err) {
      this.log.warn({ err }, 'libp2p stop failed');
    }
    this.removeAllListeners();
  }
}
