// The SDK dials a node by the PeerId the pool ledger gives it: common's rule, with the SDK's own error for a bad dest.
import { expect } from 'chai';
import { peerIdOfNodeDest } from '@quire/common';
import { ClientError, ClientErrorCode } from '../../src/errors.js';
import { clientMultiaddr, peerIdOfDest } from '../../src/transport/connection.js';
import { nodeDests } from './fixtures.js';

describe("the SDK's PeerId of a node", () => {
  it("is common's peerIdOfNodeDest, and ends the node's client multiaddr", () => {
    for (const dest of nodeDests) expect(peerIdOfDest(dest)).to.equal(peerIdOfNodeDest(dest));
    const ma = clientMultiaddr({ alias: 'Node1', dest: nodeDests[0]!, host: '127.0.0.1', port: 9702 }).toString();
    expect(ma).to.equal(`/ip4/127.0.0.1/tcp/9702/p2p/${peerIdOfNodeDest(nodeDests[0]!)}`);
  });

  it('refuses a dest that is not base58 of 32 bytes with INVALID_ARGUMENT naming the field', () => {
    for (const [bad, reason] of [
      ['0OIl', 'not base58'],
      ['Gw6pDLhcBcoQesN72qfotT', 'decodes to 16 bytes, not 32'],
    ] as const) {
      try {
        peerIdOfDest(bad);
        expect.fail(`accepted ${bad}`);
      } catch (e) {
        expect(e).to.be.instanceOf(ClientError);
        expect((e as ClientError).code).to.equal(ClientErrorCode.INVALID_ARGUMENT);
        expect((e as ClientError).data).to.deep.equal({ field: 'dest', reason });
      }
    }
  });
});
