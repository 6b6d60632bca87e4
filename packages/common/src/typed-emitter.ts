/** Typed events of long-lived components (network hosts, the SDK's follower), over node:events. */
import { EventEmitter } from 'node:events';

/**
 * An event emitter whose event names map to listener signatures. A listener that throws stops
 * neither the others nor the emitter: the error goes to `onListenerError`.
 */
export class TypedEmitter<Events extends { [K in keyof Events]: (...args: any[]) => void }> {
  private readonly ee = new EventEmitter();

  constructor(private readonly onListenerError: (event: string, err: unknown) => void) {
    this.ee.setMaxListeners(0);
  }

  on<K extends keyof Events & string>(event: K, listener: Events[K]): this {
    this.ee.on(event, listener);
    return this;
  }

  once<K extends keyof Events & string>(event: K, listener: Events[K]): this {
    this.ee.once(event, listener);
    return this;
  }

  off<K extends keyof Events & string>(event: K, listener: Events[K]): this {
    this.ee.off(event, listener);
    return this;
  }

  listenerCount<K extends keyof Events & string>(event: K): number {
    return this.ee.listenerCount(event);
  }

  protected emit<K extends keyof Events & string>(event: K, ...args: Parameters<Events[K]>): void {
    // rawListeners keeps once() wrappers, which remove themselves when called
    for (const l of this.ee.rawListeners(event)) {
      try {
        (l as (...a: unknown[]) => void)(...args);
      } catch (err) {
        this.onListenerError(event, err);
      }
    }
  }

  protected removeAllListeners(): void {
    this.ee.removeAllListeners();
  }
}
