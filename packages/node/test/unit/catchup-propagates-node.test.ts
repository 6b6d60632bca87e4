// The PROPAGATEs a QuireNode holds while it catches up (catchup-propagates.ts) do not outlive the catch-up: a failure
// after it (the caught-up txns' flush, the clients' answers) no longer leaves them held until the next catch-up.
import { expect } from 'chai';
import type { CatchupPropagateStash } from '../../src/catchup-propagates.js';
import { nodeSeed } from '../../src/genesis-gen.js';
import { deriveNodeKeys } from '../../src/keys.js';
import { testLogger } from '../../src/logger.js';
import { QuireNode } from '../../src/node.js';
import { encodePeerMessage } from '../../src/peer-wire.js';
import { nymRequest, soloNodeDir, trustee, user } from './helpers.js';

const keys = deriveNodeKeys('Node1', Buffer.from(nodeSeed('Node1')));

/** The node's catch-up parts this test drives (private to QuireNode). */
interface CatchupInternals {
  catchingUp: boolean;
  catchupPropagates: CatchupPropagateStash;
  onPeerMessage(from: string, data: Uint8Array): void;
  onCaughtUp(): Promise<void>;
}

describe('QuireNode: the PROPAGATEs held during a catch-up', function () {
  this.timeout(30_000);
  const solo = soloNodeDir('quire-held-');

  it('are let go when the work after the catch-up fails before their replay', async () => {
    const node = await QuireNode.create({ dataDir: solo.dir, config: solo.config, inMemory: true }, { logger: testLogger(), keys });
    try {
      const internals = node as unknown as CatchupInternals;
      internals.catchingUp = true;
      internals.onPeerMessage('Node2', encodePeerMessage({ op: 'PROPAGATE', request: nymRequest(trustee, user(1)), senderClient: null }));
      expect(internals.catchupPropagates.size.entries).to.equal(1);
      internals.catchingUp = false;
      node.executor.flush = () => Promise.reject(new Error('the disk is full'));
      await internals.onCaughtUp();
      expect(internals.catchupPropagates.size).to.deep.equal({ entries: 0, bytes: 0 });
    } finally {
      await node.close();
    }
  });
});
