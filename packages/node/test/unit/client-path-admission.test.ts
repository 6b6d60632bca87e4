// Admission control at the client path's door (consensus.md §2 step 5, intake.ts): a write that
// consensus refuses as overloaded is answered REQNACK "pool overloaded" before it is verified or
// queued; reads and writes consensus admits take their usual path.
import { expect } from 'chai';
import { POOL_OVERLOADED_REASON, parseJson } from '@quire/common';
import { ClientPath, type ClientChannel } from '../../src/client-path.js';
import { testLogger } from '../../src/logger.js';
import { type Fixture, memoryFixture, nymRequest, trustee, user } from './helpers.js';

const enc = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));

function recorder(): ClientChannel & { responses: Record<string, unknown>[] } {
  const r = {
    responses: [] as Record<string, unknown>[],
    respond: (b: Uint8Array) => (r.responses.push(parseJson(new TextDecoder().decode(b)) as Record<string, unknown>), true),
    push: () => true,
  };
  return r;
}

describe('client path: admission at the door', () => {
  let fx: Fixture;
  let submitted: string[];
  let asked: Record<string, unknown>[];
  let admit: boolean;
  let path: ClientPath;

  beforeEach(async () => {
    fx = await memoryFixture();
    submitted = [];
    asked = [];
    admit = true;
    path = new ClientPath({
      pipeline: fx.pipeline,
      stores: fx.stores,
      submit: (connId) => submitted.push(connId),
      admit: (r) => (asked.push(r), admit),
      now: () => 1_700_000_000,
      logger: testLogger(),
    });
  });

  afterEach(async () => {
    await fx.stores.kv.close();
  });

  it('answers a refused write with REQNACK "pool overloaded" without verifying or submitting it', async () => {
    admit = false;
    const req = nymRequest(trustee, user(1));
    // a bad signature would be a REQNACK of its own if the write were verified
    const ch = recorder();
    await path.handle(enc({ ...req, signature: '1111' }), ch);
    expect(ch.responses).to.deep.equal([{ op: 'REQNACK', identifier: req.identifier, reqId: req.reqId, reason: POOL_OVERLOADED_REASON }]);
    expect(submitted).to.deep.equal([]);
    expect(asked).to.have.length(1);
    expect(asked[0]!.reqId).to.equal(req.reqId);
  });

  it('submits a write consensus admits, and never asks about reads', async () => {
    await path.handle(enc(nymRequest(trustee, user(2))), recorder());
    expect(submitted).to.have.length(1);
    admit = false;
    const ch = recorder();
    await path.handle(enc({ operation: { type: '105', dest: user(2).did }, identifier: trustee.did, reqId: 7, protocolVersion: 2 }), ch);
    expect(asked).to.have.length(1);
    expect(ch.responses[0]!.op).to.equal('REPLY');
  });
});
