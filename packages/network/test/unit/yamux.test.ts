// The Yamux muxer of the Quire stack: its window options go to the library, and its streams top the receive window
// up once half of it is used (not after every data frame), without touching the library's classes.
import { expect } from 'chai';
import { YamuxStream } from '@chainsafe/libp2p-yamux/stream';
import { deferWindowUpdates, halfWindowRuleSupported } from '../../src/yamux.js';

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

/** A stream with the half-window rule. */
function halfWindowStream(sent: Sent[], state = 3): WindowProbe {
  const s = stream(sent, state);
  expect(deferWindowUpdates(s)).to.equal(true);
  return s;
}

describe('yamux window updates', () => {
  it('the rule can be given to the streams of the installed library version', () => {
    expect(halfWindowRuleSupported()).to.equal(true);
  });

  it('sends no update while at least half of the receive window is open', () => {
    const sent: Sent[] = [];
    const s = halfWindowStream(sent);
    const window = s.recvWindow;
    s.recvWindowCapacity = window - 1000;
    s.sendWindowUpdate();
    s.recvWindowCapacity = Math.ceil(window / 2);
    s.sendWindowUpdate();
    expect(sent).to.deep.equal([]);
  });

  it('restores the full window in one update once more than half is used', () => {
    const sent: Sent[] = [];
    const s = halfWindowStream(sent);
    const window = s.recvWindow;
    s.recvWindowCapacity = Math.floor(window / 2) - 1;
    s.sendWindowUpdate();
    expect(sent).to.have.length(1);
    expect(sent[0]!.length).to.equal(window - (Math.floor(window / 2) - 1));
    expect(s.recvWindowCapacity).to.equal(window);
  });

  it('still answers at once while the stream is being opened (the update carries the ACK flag)', () => {
    const sent: Sent[] = [];
    const s = halfWindowStream(sent, 2 /* SYNReceived */);
    s.recvWindowCapacity = s.recvWindow - 10;
    s.sendWindowUpdate();
    expect(sent).to.have.length(1);
    expect(sent[0]!.flag).to.not.equal(0);
  });

  it('is given to one stream, never to the library class: other streams keep the library rule', () => {
    const sent: Sent[] = [];
    const before = (YamuxStream.prototype as unknown as { sendWindowUpdate: unknown }).sendWindowUpdate;
    halfWindowStream([]);
    expect((YamuxStream.prototype as unknown as { sendWindowUpdate: unknown }).sendWindowUpdate).to.equal(before);
    const plain = stream(sent);
    plain.recvWindowCapacity = plain.recvWindow - 1000;
    plain.sendWindowUpdate();
    expect(sent).to.have.length(1);
  });

  it('leaves anything that is not a stream of the expected shape alone', () => {
    expect(deferWindowUpdates(undefined)).to.equal(false);
    expect(deferWindowUpdates({ sendWindowUpdate: () => undefined })).to.equal(false);
    const odd = { state: 3, recvWindow: 0, recvWindowCapacity: 0, sendWindowUpdate: () => undefined };
    expect(deferWindowUpdates(odd)).to.equal(false);
  });
});
