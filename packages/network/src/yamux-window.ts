// Yamux receive-window updates at half a window, not after every data frame.
//
// @chainsafe/libp2p-yamux 8 answers every data frame it receives with a WINDOW_UPDATE frame as soon as any part of
// the receive window is used. On our long-lived streams that doubles the frames on the wire: each update is a Yamux
// frame, a Noise encryption and a socket write on the receiver, and a Noise decryption and a frame dispatch on the
// sender. Under load the updates outnumbered the data chunks a node sent (docs/benchmarks.md). The Yamux spec leaves
// the timing of updates to the receiver; go-yamux and rust-yamux send one once half of the window is consumed, which
// is what this module makes the JavaScript streams do. The sender never stalls: with a window of at least 256 KiB an
// update is due after 128 KiB at the latest, long before the window runs out.
//
// The change is applied once, to the stream class the package exports, and only when that class has the shape it was
// written against (checked field by field on a probe); otherwise the library's behaviour is left as it is and
// `yamuxWindowPatch()` reports why.
import { yamux } from '@chainsafe/libp2p-yamux';
import { YamuxStream } from '@chainsafe/libp2p-yamux/stream';

/** StreamState.Established of the library: updates in this state carry no flags and may be deferred. */
const ESTABLISHED = 3;

interface WindowFields {
  state: number;
  recvWindow: number;
  recvWindowCapacity: number;
}

export type YamuxWindowPatch = { applied: true } | { applied: false; reason: string };

let status: YamuxWindowPatch | undefined;

/** Installs the half-window update rule (idempotent) and says whether it is in force. */
export function yamuxWindowPatch(): YamuxWindowPatch {
  status ??= install();
  return status;
}

function install(): YamuxWindowPatch {
  const proto = YamuxStream.prototype as unknown as { sendWindowUpdate?: unknown };
  const original = proto.sendWindowUpdate;
  if (typeof original !== 'function') return { applied: false, reason: 'YamuxStream.prototype.sendWindowUpdate is not a function' };
  if (!hasWindowFields()) return { applied: false, reason: 'YamuxStream fields differ from @chainsafe/libp2p-yamux 8' };
  const sendNow = original as (this: unknown) => void;
  proto.sendWindowUpdate = function sendWindowUpdate(this: WindowFields): void {
    if (this.state === ESTABLISHED && this.recvWindowCapacity * 2 >= this.recvWindow) return;
    sendNow.call(this);
  };
  return { applied: true };
}

/** A probe stream (never used for I/O) has the numeric fields and the state numbering the rule relies on. */
function hasWindowFields(): boolean {
  try {
    const probe = new YamuxStream({
      id: 'probe',
      streamId: 0,
      direction: 'outbound',
      state: ESTABLISHED,
      log: undefined,
      getRTT: () => -1,
      sendFrame: () => true,
    } as unknown as ConstructorParameters<typeof YamuxStream>[0]) as unknown as WindowFields;
    return probe.state === ESTABLISHED && typeof probe.recvWindow === 'number' && probe.recvWindowCapacity === probe.recvWindow && probe.recvWindow > 0;
  } catch {
    return false;
  }
}

/** The Yamux muxer of every Quire libp2p host, with the half-window update rule installed. */
export function quireYamux(): ReturnType<typeof yamux> {
  yamuxWindowPatch();
  return yamux();
}
