// Replays of stored txns: genesis ATTRIB originals reach the attribute store, and a state rebuilt
// from the ledger alone gets back the timestamp -> state root index (historic reads work again).
import { b58decode, b64decode, canonicalJson, canonicalJsonBytes, parseJson, sha256Hex, toHex } from '@quire/common';
import { expect } from 'chai';
import { RequestExecutor } from '../../src/executor/executor.js';
import type { ExecutorStores } from '../../src/executor/stores.js';
import type { Txn } from '../../src/handler.js';
import { StoresReadContext, answerRead } from '../../src/reads/read-context.js';
import { parseRequest } from '../../src/pipeline/parse.js';
import { attribKey, nymKey } from '../../src/state-keys.js';
import { verifyTrieProofAt } from '@quire/storage';
import {
  DOMAIN_GENESIS,
  PP_TIME,
  STEWARDS,
  TRUSTEE,
  createHarness,
  genesisTxns,
  newSigner,
  nymOp,
  openStores,
  signed,
  testRegistry,
} from './helpers/harness.js';

const STEWARD = STEWARDS[0]!;
const ENDPOINT = '{"endpoint":{"ha":"127.0.0.1:9702"}}';

/** The standard domain genesis plus a raw and an enc ATTRIB of Steward1, as a genesis file holds them. */
function genesisWithAttribs(): Txn[] {
  const txns = genesisTxns(DOMAIN_GENESIS);
  const attrib = (seqNo: number, data: Record<string, unknown>): Txn =>
    parseJson(
      JSON.stringify({
        reqSignature: {},
        txn: { data: { dest: STEWARD.did, ...data }, metadata: { from: STEWARD.did }, type: '100' },
        txnMetadata: { seqNo },
        ver: '1',
      }),
    ) as Txn;
  return [...txns, attrib(txns.length + 1, { raw: ENDPOINT }), attrib(txns.length + 2, { enc: 'genesis-secret' })];
}

async function readOn(stores: ExecutorStores, operation: Record<string, unknown>): Promise<Record<string, unknown>> {
  const parsed = parseRequest({ identifier: TRUSTEE.did, reqId: 1, protocolVersion: 2, operation });
  const handler = testRegistry().read(parsed.type)!;
  handler.validateStatic(parsed);
  return (await answerRead(handler, parsed, new StoresReadContext(stores))).result;
}

function proven(result: Record<string, unknown>, key: string | Uint8Array): string | null {
  const sp = result.state_proof as { root_hash: string; proof_nodes: string };
  const v = verifyTrieProofAt(b58decode(sp.root_hash), key, b64decode(sp.proof_nodes));
  return v === null ? null : Buffer.from(v).toString();
}

/** Fresh stores holding only the committed ledger txns of `src` (no state, no side stores). */
async function ledgerOnlyCopy(src: ExecutorStores): Promise<ExecutorStores> {
  const dst = await openStores();
  for (const lid of [0, 1, 2] as const) {
    const from = src.ledgers[lid];
    if (from.size === 0) continue;
    for await (const [, txn] of from.range(1, from.size)) dst.ledgers[lid].append([txn]);
    await dst.ledgers[lid].commit();
  }
  return dst;
}

describe('replays: genesis attributes and rebuild', () => {
  it('puts the originals of genesis ATTRIB raw/enc into the attribute store, so GET_ATTR answers them', async () => {
    const h = await createHarness({ domainGenesis: genesisWithAttribs() });
    try {
      const raw = await readOn(h.stores, { type: '104', dest: STEWARD.did, raw: 'endpoint' });
      expect(raw.data).to.equal(canonicalJson(parseJson(ENDPOINT)));
      expect(raw.seqNo).to.equal(6);
      const key = attribKey(STEWARD.did, 'raw', 'endpoint');
      expect(proven(raw, key)).to.equal(canonicalJson({ lsn: 6, lut: null, val: sha256Hex(canonicalJson(parseJson(ENDPOINT))) }));
      const enc = await readOn(h.stores, { type: '104', dest: STEWARD.did, enc: 'genesis-secret' });
      expect(enc.data).to.equal('genesis-secret');
      // the genesis ledger keeps the txns as given
      expect((await h.stores.ledgers[1].get(6))!.txn.data.raw).to.equal(ENDPOINT);
    } finally {
      await h.close();
    }
  });

  it('rebuilds the timestamp -> root index and the attribute store from the ledger alone', async () => {
    const h = await createHarness({ domainGenesis: genesisWithAttribs() });
    const users = [newSigner(), newSigner(), newSigner(), newSigner()];
    const owner = newSigner();
    // four batch times, the second with two txns, then a raw ATTRIB written at runtime
    await h.order(1, [signed(TRUSTEE, nymOp(users[0]!, '101'))], PP_TIME);
    await h.order(1, [signed(TRUSTEE, nymOp(users[1]!)), signed(users[0]!, nymOp(owner))], PP_TIME + 5);
    await h.order(1, [signed(TRUSTEE, nymOp(users[2]!))], PP_TIME + 9);
    await h.order(1, [signed(owner, { type: '100', dest: owner.did, raw: '{"name":"x"}' })], PP_TIME + 12);
    const copy = await ledgerOnlyCopy(h.stores);
    // the attribute store is kept (and transferred in catch-up), not rebuilt: carry the runtime entry over
    const runtimeHash = sha256Hex(canonicalJson({ name: 'x' }));
    const wb = copy.kv.batch();
    copy.attributes.put((await h.stores.attributes.get(runtimeHash))!, wb);
    await wb.write();
    try {
      const executor = new RequestExecutor({}, { stores: copy, registry: testRegistry() });
      const root = await executor.rebuildState(1);
      expect(toHex(root)).to.equal(toHex(h.stores.states[1].committedRoot));
      for (const t of [PP_TIME - 1, PP_TIME, PP_TIME + 3, PP_TIME + 5, PP_TIME + 9, PP_TIME + 12, PP_TIME + 100]) {
        const [a, b] = [await h.stores.timestamps!.getEqualOrPrevious(1, t), await copy.timestamps!.getEqualOrPrevious(1, t)];
        expect(b === undefined ? undefined : toHex(b), `root at ${t}`).to.equal(a === undefined ? undefined : toHex(a));
      }
      // a historic read on the rebuilt store: owner did not exist at PP_TIME, did at PP_TIME + 5
      const before = await readOn(copy, { type: '105', dest: owner.did, timestamp: PP_TIME });
      expect(before.data).to.equal(null);
      expect(proven(before, nymKey(owner.did))).to.equal(null);
      const after = await readOn(copy, { type: '105', dest: owner.did, timestamp: PP_TIME + 5 });
      const original = await readOn(h.stores, { type: '105', dest: owner.did, timestamp: PP_TIME + 5 });
      expect(after).to.deep.equal(original);
      const rec = parseJson(after.data as string) as Record<string, unknown>;
      delete rec.dest;
      expect(proven(after, nymKey(owner.did))).to.equal(Buffer.from(canonicalJsonBytes(rec)).toString());
      // genesis attribute originals are back (the runtime one cannot come from the ledger: its hash only)
      const raw = await readOn(copy, { type: '104', dest: STEWARD.did, raw: 'endpoint' });
      expect(raw.data).to.equal(canonicalJson(parseJson(ENDPOINT)));
    } finally {
      await Promise.all([h.close(), copy.kv.close()]);
    }
  });
});
