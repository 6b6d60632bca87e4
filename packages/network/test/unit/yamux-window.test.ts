// The Yamux receive window is topped up once half of it is used, not after every data frame.
import { expect } from 'chai';
import { YamuxStream } from '@chainsafe/libp2p-yamux/stream';
import { yamuxWindowPatch } from '../../src/yamux-window.js';

interface Sent {
  type: number;
  flag: number;
  length: number;
}

/** The members of a stream the rule reads and writes (private in the library's types). */
interface WindowProbe {
  recvWindow: number;
  recvWindowCapacity: number;
  sendWindowUpdate(): void;
}

function stream(sent: Sent[], state = 3): WindowProbe {
  return new YamuxStream({
    id: 't',
    streamId: 1,
    direction: 'inbound',
    state,
    log: undefined,
    getRTT: () => -1,
    sendFrame: (f: Sent) => (sent.push(f), true),
  } as unknown as ConstructorParameters<typeof YamuxStream>[0]) as unknown as WindowProbe;
}

describe('yamux window updates', () => {
  before(() => {
    expect(yamuxWindowPatch()).to.deep.equal({ applied: true });
  });

  it('sends no update while at least half of the receive window is open', () => {
    const sent: Sent[] = [];
    const s = stream(sent);
    const window = s.recvWindow;
    s.recvWindowCapacity = window - 1000;
    s.sendWindowUpdate();
    s.recvWindowCapacity = Math.ceil(window / 2);
    s.sendWindowUpdate();
    expect(sent).to.deep.equal([]);
  });

  it('restores the full window in one update once more than half is used', () => {
    const sent: Sent[] = [];
    const s = stream(sent);
    const window = s.recvWindow;
    s.recvWindowCapacity = Math.floor(window / 2) - 1;
    s.sendWindowUpdate();
    expect(sent).to.have.length(1);
    expect(sent[0]!.length).to.equal(window - (Math.floor(window / 2) - 1));
    expect(s.recvWindowCapacity).to.equal(window);
  });

  it('still answers at once while the stream is being opened (the update carries the ACK flag)', () => {
    const sent: Sent[] = [];
    const s = stream(sent, 2 /* SYNReceived */);
    s.recvWindowCapacity = s.recvWindow - 10;
    s.sendWindowUpdate();
    expect(sent).to.have.length(1);
    expect(sent[0]!.flag).to.not.equal(0);
  });

  it('installs once', () => {
    const before = (YamuxStream.prototype as unknown as { sendWindowUpdate: unknown }).sendWindowUpdate;
    yamuxWindowPatch();
    expect((YamuxStream.prototype as unknown as { sendWindowUpdate: unknown }).sendWindowUpdate).to.equal(before);
  });
});
