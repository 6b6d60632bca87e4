// The consensus core's request check: a client write the client path admitted is taken as checked
// (one object, once), and what the client path hands over equals what the full check finds.
import { expect } from 'chai';
import { TxnType, parseJson, signatureInput } from '@quire/common';
import { RequestErrorCode } from '@quire/requests';
import type { RequestInfo } from '@quire/consensus';
import { ClientPath } from '../../src/client-path.js';
import { testLogger } from '../../src/logger.js';
import { ExecutorRequestAnalyzer } from '../../src/request-analyzer.js';
import { type Fixture, memoryFixture, nymRequest, trustee, user } from './helpers.js';

describe('request analyzer', () => {
  let fx: Fixture;

  beforeEach(async () => {
    fx = await memoryFixture();
  });

  afterEach(async () => {
    await fx.stores.kv.close();
  });

  it('hands the core the same digests, ledger and envelope the full check computes', async () => {
    const handed: { request: Record<string, unknown>; info: RequestInfo }[] = [];
    const path = new ClientPath(
      {},
      {
        pipeline: fx.pipeline,
        stores: fx.stores,
        submit: (_c, request, info) => handed.push({ request, info }),
        now: () => 1_700_000_000,
        logger: testLogger(),
      },
    );
    const req = nymRequest(trustee, user(7));
    await path.handle(new TextEncoder().encode(JSON.stringify(req)), { respond: () => true, push: () => true });
    expect(handed).to.have.length(1);
    const full = new ExecutorRequestAnalyzer(fx.reqExecutor).analyze(handed[0]!.request);
    expect(full.ok).to.equal(true);
    expect(full.ok && full.info).to.deep.equal(handed[0]!.info);
    expect(handed[0]!.info.ledgerId).to.equal(1);
  });

  it("refuses a peer's PROPAGATE of an AUDIT txn with EXTERNAL_AUDIT, as a client's copy is refused", () => {
    const req: Record<string, unknown> = {
      identifier: trustee.did,
      reqId: 9_001,
      protocolVersion: 2,
      operation: { type: TxnType.AUDIT, viewNo: 0, ppSeqNo: 1 },
    };
    req.signature = trustee.signBase58(signatureInput(req));
    const check = new ExecutorRequestAnalyzer(fx.reqExecutor).analyze(parseJson(JSON.stringify(req)) as Record<string, unknown>);
    expect(check.ok).to.equal(false);
    expect(!check.ok && check.code).to.equal(RequestErrorCode.EXTERNAL_AUDIT);
  });

  it('takes an admitted object once, then checks that object in full again', () => {
    const analyzer = new ExecutorRequestAnalyzer(fx.reqExecutor);
    const bad = parseJson(JSON.stringify({ ...nymRequest(trustee, user(8)), signature: '1111' })) as Record<string, unknown>;
    const info: RequestInfo = { digest: 'ab'.repeat(32), payloadDigest: 'cd'.repeat(32), ledgerId: 1, identifier: trustee.did, reqId: 1 };
    analyzer.admit(bad, info);
    expect(analyzer.analyze(bad)).to.deep.equal({ ok: true, info });
    const again = analyzer.analyze(bad);
    expect(again.ok).to.equal(false);
    // an equal copy of an admitted request is another object: checked in full
    analyzer.admit(bad, info);
    expect(analyzer.analyze({ ...bad }).ok).to.equal(false);
  });
});
