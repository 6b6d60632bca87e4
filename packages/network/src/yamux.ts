// The Yamux muxer of every Quire libp2p stack, its window configured explicitly.
//
// The window sizes and the largest frame go to @chainsafe/libp2p-yamux 8 through its own options
// (`initialStreamWindowSize`, `maxStreamWindowSize`, `maxMessageSize`). When a stream's receive window is topped up
// is not one of them: by itself the library answers every data frame it receives with a WINDOW_UPDATE frame as soon
// as any part of the receive window is used. On our long-lived streams that doubled the frames on the wire (a Yamux
// frame, a Noise encryption and a socket write on the receiver, a decryption and a dispatch on the sender; socket
// writes were 10.4 % of the nodes' CPU with it, 3.8 % without, docs/benchmarks-history.md). The Yamux spec leaves the
// timing of updates to the receiver; go-yamux and rust-yamux send one once half of the window is consumed, which is
// what `windowUpdate: 'half'` makes the streams of this muxer do. The sender never stalls: with a window of at least
// 256 KiB an update is due after 128 KiB at the latest, long before the window runs out.
//
// The rule is given to each stream of the muxers this factory creates (an own method of the stream object), never
// to the library's classes: another libp2p stack in the same process keeps the library's behaviour. It is given only
// when the stream has the shape it was written against (`halfWindowRuleSupported()` checks a probe); otherwise the
// library's own rule stays in force, and a unit test fails.
import { yamux } from '@chainsafe/libp2p-yamux';
import { YamuxStream } from '@chainsafe/libp2p-yamux/stream';
import type { StreamMuxerFactory } from '@libp2p/interface';

/** When a stream's receive window is topped up: once half of it is used, or after every data frame (the library's rule). */
export type YamuxWindowUpdate = 'half' | 'every-frame';

/** The Yamux options of a Quire stack. */
export interface YamuxOptions {
  /** Receive window a stream starts with, bytes (at least the spec's 256 KiB). */
  initialStreamWindowSize: number;
  /** Largest receive window a stream grows to, bytes (the window doubles while data arrives within 4 round trips). */
  maxStreamWindowSize: number;
  /** Largest Yamux data frame sent, bytes. */
  maxMessageSize: number;
  /** When the receive window is topped up (see the module comment). */
  windowUpdate: YamuxWindowUpdate;
}

/** The library's window and frame sizes, stated here so that a change of them is a change of this file. */
export const defaultYamuxOptions: YamuxOptions = {
  initialStreamWindowSize: 256 * 1024,
  maxStreamWindowSize: 16 * 1024 * 1024,
  maxMessageSize: 64 * 1024,
  windowUpdate: 'half',
};

/** StreamState.Established of the library: updates in this state carry no flags and may be deferred. */
const ESTABLISHED = 3;

/** The members of a YamuxStream the rule reads (private in the library's types). */
interface WindowFields {
  state: number;
  recvWindow: number;
  recvWindowCapacity: number;
  sendWindowUpdate: (this: WindowFields) => void;
}

/**
 * Gives `stream` the half-window update rule (an own method shadowing the class's). Returns false, leaving the
 * stream as it is, when it is not a stream of the shape the rule was written against.
 */
export function deferWindowUpdates(stream: unknown): boolean {
  if (!hasWindowFields(stream)) return false;
  const sendNow = stream.sendWindowUpdate;
  stream.sendWindowUpdate = function sendWindowUpdate(this: WindowFields): void {
    if (this.state === ESTABLISHED && this.recvWindowCapacity * 2 >= this.recvWindow) return;
    sendNow.call(this);
  };
  return true;
}

function hasWindowFields(s: unknown): s is WindowFields {
  if (typeof s !== 'object' || s === null) return false;
  const f = s as Partial<WindowFields>;
  return (
    typeof f.sendWindowUpdate === 'function' &&
    typeof f.state === 'number' &&
    typeof f.recvWindow === 'number' &&
    typeof f.recvWindowCapacity === 'number' &&
    f.recvWindow > 0
  );
}

/** Whether the half-window rule can be given to this version's streams (a probe stream, never used for I/O). */
export function halfWindowRuleSupported(): boolean {
  try {
    const probe = new YamuxStream({
      id: 'probe',
      streamId: 0,
      direction: 'outbound',
      state: ESTABLISHED,
      log: undefined,
      getRTT: () => -1,
      sendFrame: () => true,
    } as unknown as ConstructorParameters<typeof YamuxStream>[0]) as unknown;
    return hasWindowFields(probe) && probe.state === ESTABLISHED && probe.recvWindowCapacity === probe.recvWindow && deferWindowUpdates(probe);
  } catch {
    return false;
  }
}

/** The part of the library's muxer the rule hooks: the one place that creates its streams, inbound and outbound. */
interface StreamCreator {
  _newStream?: (...args: unknown[]) => unknown;
}

/**
 * The Yamux muxer factory of a Quire stack: the library's muxer with `options` (each missing one from
 * {@link defaultYamuxOptions}); with `windowUpdate: 'half'` every stream of its muxers gets the half-window rule.
 */
export function quireYamux(options: Partial<YamuxOptions> = {}): (components: unknown) => StreamMuxerFactory {
  const o: YamuxOptions = { ...defaultYamuxOptions, ...options };
  const base = yamux({
    maxMessageSize: o.maxMessageSize,
    streamOptions: { initialStreamWindowSize: o.initialStreamWindowSize, maxStreamWindowSize: o.maxStreamWindowSize },
  });
  return () => {
    const factory = base();
    if (o.windowUpdate !== 'half') return factory;
    const createMuxer = factory.createStreamMuxer.bind(factory);
    factory.createStreamMuxer = (maConn) => {
      const muxer = createMuxer(maConn);
      const creator = muxer as unknown as StreamCreator;
      const newStream = creator._newStream;
      if (typeof newStream === 'function') {
        creator._newStream = (...args: unknown[]): unknown => {
          const stream = newStream.apply(muxer, args);
          deferWindowUpdates(stream);
          return stream;
        };
      }
      return muxer;
    };
    return factory;
  };
}
