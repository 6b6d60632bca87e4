// Whole-pool acceptance of a plugin ledger (issue #21: "a freeze of a test ledger, a write to it refused,
// GET_FROZEN_LEDGERS verified by proof") on four real quire-node processes that load the test plugin
// test/fixtures/plugins/kv-ledger.mjs (ledger 1001: KV_PUT "20000" and GET_KV "20001") through their
// config's `plugins`:
// - a KV_PUT is ordered on ledger 1001 and read back with GET_KV, whose state proof and BLS multi-signature
//   (over ledger 1001's state root) are checked with the SDK's verifiers, and with GET_TXN on ledger 1001,
//   verified by the SDK (audit path + multi-signature);
// - a node stopped during plugin writes catches ledger 1001 up when it starts again, and reopens it from its database
//   when restarted;
// - three trustees freeze ledger 1001 (LEDGERS_FREEZE), a further KV_PUT is refused with the frozen-ledger
//   reason, and GET_FROZEN_LEDGERS, verified by the SDK, records ledger 1001's root, state root and size.
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { parseJson, stringifyJson, type Request } from '@quire/common';
import {
  ClientError,
  DidKey,
  buildGetFrozenLedgersRequest,
  buildGetTxnRequest,
  buildLedgersFreezeRequest,
  buildNymRequest,
  multiSignRequest,
  nextReqId,
  signRequest,
  verifyMultiSignature,
  verifyTrieProof,
  type Pool,
} from '@quire/client';
import { TRUSTEE_SEED } from '../../devnet/lib/node-api.js';
import { askNode } from '../support/client.js';
import { TestPool, type TestNode } from '../support/test-pool.js';
import { secs, waitFor } from '../support/wait.js';
import { GET_KV, KV_LEDGER_ID, KV_PUT, kvStateKey } from '../fixtures/plugins/kv-ledger.mjs';

type Json = Record<string, unknown>;
const PLUGIN_FILE = fileURLToPath(new URL('../fixtures/plugins/kv-ledger.mjs', import.meta.url));
const trustee = DidKey.fromSeed(TRUSTEE_SEED);
const dec = new TextDecoder();

function kvPut(key: string, value: string, by: DidKey = trustee): Request {
  return signRequest({ identifier: by.did, reqId: nextReqId(), protocolVersion: 2, operation: { type: KV_PUT, key, value } }, by);
}

function getKv(key: string): Request {
  return { identifier: trustee.did, reqId: nextReqId(), protocolVersion: 2, operation: { type: GET_KV, key } };
}

/** GET_TXN of the plugin ledger, built by the SDK. */
function getPluginTxn(seqNo: number): Request {
  return buildGetTxnRequest({ ledgerId: KV_LEDGER_ID, seqNo });
}

describe('whole pool: a plugin ledger (test plugin kv-ledger, ledger 1001): writes, proofs, catch-up, freeze', function () {
  this.timeout(600_000);
  let pool: TestPool;
  let client: Pool;
  let fileStarted = 0;

  async function write(req: Request): Promise<Json> {
    return (await client.submitWrite(req)).result;
  }

  async function refusedReason(req: Request): Promise<string> {
    let refused: unknown;
    await client.submitWrite(req).then(
      () => undefined,
      (e: unknown) => (refused = e),
    );
    expect(refused, 'the write was refused').to.be.instanceOf(ClientError);
    return String((refused as ClientError).data.reason);
  }

  /**
   * GET_KV asked of one node until it answers `value` with a state proof and a multi-signature, both checked here
   * with the SDK's verifiers (the SDK knows no plugin type, so its reads of them settle by f+1 identical replies).
   */
  async function verifiedKv(node: TestNode, key: string, value: string): Promise<{ root: string; seqNo: number }> {
    return waitFor(
      `${node.name} to prove ${key} = ${value}`,
      async () => {
        const reply = await askNode(node, getKv(key));
        const result = reply.result as Json | undefined;
        const sp = result?.state_proof as Json | undefined;
        if (reply.op !== 'REPLY' || result?.data !== value || sp?.multi_signature === undefined) return undefined;
        const ms = verifyMultiSignature({ multiSignature: sp.multi_signature, pool: client.ledger.blsKeys(), freshness: { kind: 'none' } });
        expect(ms.value.ledger_id).to.equal(KV_LEDGER_ID);
        expect(ms.value.state_root_hash).to.equal(sp.root_hash);
        const proven = verifyTrieProof({ rootHash: String(sp.root_hash), key: kvStateKey(key), proofNodes: String(sp.proof_nodes) });
        expect(proven, 'the proof holds the key').to.not.equal(null);
        const stored = parseJson(dec.decode(proven!)) as Json;
        expect(stored.val).to.equal(value);
        expect(stored.lsn).to.equal(result.seqNo);
        return { root: String(sp.root_hash), seqNo: Number(result.seqNo) };
      },
      60_000,
      1000,
    );
  }

  before(async function () {
    this.timeout(240_000);
    fileStarted = Date.now();
    pool = await TestPool.start({
      name: 'plugin-ledger',
      orderingTimeoutMs: 120_000,
      config: { plugins: [PLUGIN_FILE], consensus: { stateFreshnessUpdateIntervalSec: 20 } },
    });
    client = await pool.client();
    console.log(`      [timing] pool ordering ${secs(pool.startMs)} after spawn (${TestPool.binDescription()})`);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') pool?.dumpLogs(`failed: ${this.currentTest.fullTitle()}`);
  });

  after(async () => {
    await pool?.close();
    if (fileStarted > 0) console.log(`      [timing] plugin ledger file: ${secs(Date.now() - fileStarted)} wall time`);
  });

  it('a KV_PUT is ordered on ledger 1001 and read back: GET_KV by state proof and multi-signature, GET_TXN verified by the SDK', async () => {
    const r = await write(kvPut('colour', 'blue'));
    const txn = r.txn as Json;
    expect(txn.type).to.equal(KV_PUT);
    expect((txn.data as Json).value).to.equal('blue');
    expect((r.txnMetadata as Json).seqNo).to.equal(1);
    // every node proves it
    for (const node of pool.nodes) expect((await verifiedKv(node, 'colour', 'blue')).seqNo).to.equal(1);
    // GET_TXN of ledger 1001, verified by the SDK (audit path against the signed ledger root)
    const got = await client.submitRead(getPluginTxn(1));
    expect(got.verified, stringifyJson(got.rejected)).to.equal(true);
    expect(((got.result.data as Json).txn as Json).data).to.deep.include({ key: 'colour', value: 'blue' });
    // the plugin's own authorization: a DID without a role may not write
    const nobody = DidKey.random();
    await write(signRequest(buildNymRequest({ submitter: trustee.did, dest: nobody.did, verkey: nobody.verkey }), trustee));
    expect(await refusedReason(kvPut('colour', 'red', nobody))).to.contain('KV_PUT needs a TRUSTEE or a STEWARD');
    // a type no plugin registers is still unknown
    const unknown = await askNode(pool.nodes[0]!, { ...getKv('x'), operation: { type: '20999', key: 'x' } });
    expect(unknown.op).to.equal('REQNACK');
  });

  it('a node stopped during plugin writes catches ledger 1001 up when it starts again, and reopens it when restarted', async () => {
    const victim = pool.node('Node4');
    await victim.stop();
    await write(kvPut('shape', 'square'));
    await write(kvPut('size', 'large'));
    const restarted = Date.now();
    victim.start();
    await verifiedKv(victim, 'size', 'large');
    await verifiedKv(victim, 'shape', 'square');
    console.log(`      [timing] ${victim.name} restarted and proving the plugin ledger's writes after ${secs(Date.now() - restarted)}`);
    // its ledger 1001 has the same txns as the others: GET_TXN of its last txn verifies from it alone
    const reply = await askNode(victim, getPluginTxn(3));
    expect(reply.op).to.equal('REPLY');
    expect((((reply.result as Json).data as Json).txn as Json).data).to.deep.include({ key: 'size', value: 'large' });
    // restarted again, it reopens ledger 1001 and its state from its database (checked against its audit ledger)
    await victim.stop();
    victim.start();
    await verifiedKv(victim, 'colour', 'blue');
    await write(kvPut('weight', 'heavy'));
    await verifiedKv(victim, 'weight', 'heavy');
  });

  it('LEDGERS_FREEZE of ledger 1001 by three trustees: a further KV_PUT is refused, GET_FROZEN_LEDGERS proves its root, state root and size', async () => {
    const before = await verifiedKv(pool.nodes[0]!, 'weight', 'heavy');
    const lastTxn = await client.submitRead(getPluginTxn(4));
    expect(lastTxn.verified).to.equal(true);
    const ledgerRoot = String((lastTxn.result.data as Json).rootHash);
    // two more trustees (the default rule needs three signatures)
    const trustees = [trustee, DidKey.random(), DidKey.random()];
    for (const t of trustees.slice(1)) await write(signRequest(buildNymRequest({ submitter: trustee.did, dest: t.did, verkey: t.verkey, role: '0' }), trustee));
    let freeze = buildLedgersFreezeRequest({ submitter: trustee.did, ledgersIds: [KV_LEDGER_ID] });
    for (const t of trustees) freeze = multiSignRequest(freeze, t);
    const frozen = await write(freeze);
    expect((frozen.txn as Json).type).to.equal('9');

    // a write to the frozen ledger is refused; the base ledgers take writes
    expect(await refusedReason(kvPut('colour', 'green'))).to.contain(`'${KV_PUT}' transaction is forbidden because of '${KV_LEDGER_ID}' ledger is frozen`);
    await write(signRequest(buildNymRequest({ submitter: trustee.did, dest: DidKey.random().did }), trustee));

    // GET_FROZEN_LEDGERS, verified by the SDK: ledger 1001 with its root, state root and size at the freeze
    const read = await waitFor(
      'a verified GET_FROZEN_LEDGERS naming ledger 1001',
      async () => {
        const out = await client.submitRead(buildGetFrozenLedgersRequest({}));
        return out.verified && (out.result.data as Json | null)?.[String(KV_LEDGER_ID)] !== undefined ? out : undefined;
      },
      45_000,
      1000,
    );
    expect(read.result.data).to.deep.equal({ [String(KV_LEDGER_ID)]: { ledger: ledgerRoot, state: before.root, seq_no: 4 } });
    // the frozen ledger is still read
    await verifiedKv(pool.nodes[1]!, 'colour', 'blue');
  });
});
