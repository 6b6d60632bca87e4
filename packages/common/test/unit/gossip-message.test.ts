// The message rules of the unsigned gossip topics, shared by the validators' hosts and the observers' transport: the
// id is SHA-256 of the data (what IHAVE/IWANT name on both sides), and the inbound bound holds four messages.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { gossipInboundLimit, gossipMessageId } from '@quire/common';

describe('gossip message rules', () => {
  it('a message id is the SHA-256 of its data, and only of its data', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), fc.string(), (data, topic) => {
        const id = gossipMessageId({ data });
        expect(Buffer.from(id).equals(createHash('sha256').update(data).digest())).to.equal(true);
        expect(Buffer.from(gossipMessageId({ data, topic } as { data: Uint8Array })).equals(Buffer.from(id))).to.equal(true);
      }),
    );
  });

  it('a peer may send four messages of the largest size and the framing in one RPC', () => {
    expect(gossipInboundLimit(128 * 1024)).to.equal(4 * 128 * 1024 + 4096);
    expect(gossipInboundLimit(0)).to.equal(4096);
  });
});
