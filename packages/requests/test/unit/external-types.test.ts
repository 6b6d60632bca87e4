// Types a client may not send (requests.md §3.12, formats.md §10.1): an AUDIT txn is appended by the nodes for every
// batch and a NODE_UPGRADE is sent by a node about itself; a client's is refused at receipt with its own code and the
// spec's words, and a type nobody handles is UNKNOWN_TYPE.
import { expect } from 'chai';
import { TxnType } from '@quire/common';
import { RequestErrorCode } from '../../src/errors.js';
import { RequestPipeline } from '../../src/pipeline/receive.js';
import { createHarness, PP_TIME, signed, TRUSTEE, type Harness } from './helpers/harness.js';

describe('types a client may not send', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  async function refusal(op: Record<string, unknown>): Promise<{ code: string; reason: string }> {
    const out = await new RequestPipeline(h.executor, h.stores).receive(signed(TRUSTEE, op), { now: PP_TIME, writable: true });
    if (out.kind !== 'nack') throw new Error(`not refused: ${out.kind}`);
    return { code: out.error.code, reason: out.error.reason };
  }

  it("refuses a client's AUDIT txn with EXTERNAL_AUDIT, 'External audit requests are not allowed'", async () => {
    const r = await refusal({ type: TxnType.AUDIT, viewNo: 0, ppSeqNo: 1 });
    expect(r.code).to.equal(RequestErrorCode.EXTERNAL_AUDIT);
    expect(r.reason).to.equal('External audit requests are not allowed');
  });

  it("refuses a client's NODE_UPGRADE with EXTERNAL_NODE_UPGRADE, and a type nobody handles with UNKNOWN_TYPE", async () => {
    expect((await refusal({ type: TxnType.NODE_UPGRADE, action: 'complete', version: '1.2.3' })).code).to.equal(RequestErrorCode.EXTERNAL_NODE_UPGRADE);
    expect((await refusal({ type: '9999' })).code).to.equal(RequestErrorCode.UNKNOWN_TYPE);
  });
});
