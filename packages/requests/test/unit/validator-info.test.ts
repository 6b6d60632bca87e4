// VALIDATOR_INFO ("119", requests.md §7.5): static validation of `{type: "119"}`, authorization at
// receipt by 119--ADD--*--*--* (1 TRUSTEE, 1 STEWARD or 1 NETWORK_MONITOR) for every role, the
// REJECT reason of auth-rules.md for the others, read-only mode, and that it is never ordered.
import { expect } from 'chai';
import { RequestError, RequestErrorCode, wrapReason } from '../../src/errors.js';
import { parseRequest } from '../../src/pipeline/parse.js';
import { RequestPipeline } from '../../src/pipeline/receive.js';
import { createDefaultRegistry } from '../../src/registry.js';
import { validatorInfoHandler } from '../../src/types/validator-info.js';
import { createHarness, newSigner, nymOp, PP_TIME, signed, STEWARDS, TRUSTEE, type Harness } from './helpers/harness.js';

const OP = { type: '119' };

describe('VALIDATOR_INFO (119)', () => {
  let h: Harness;
  let pipeline: RequestPipeline;
  const monitor = newSigner();
  const endorser = newSigner();
  const plain = newSigner();
  const offLedger = newSigner();

  before(async () => {
    h = await createHarness();
    const r = await h.order(1, [signed(TRUSTEE, nymOp(monitor, '201')), signed(TRUSTEE, nymOp(endorser, '101')), signed(TRUSTEE, nymOp(plain, null))]);
    expect(r.results.every((x) => x.valid)).to.equal(true);
    pipeline = new RequestPipeline(h.executor, h.stores);
  });
  after(async () => {
    await h.close();
  });

  describe('static validation', () => {
    it('is registered as an action named VALIDATOR_INFO', () => {
      const reg = createDefaultRegistry();
      expect(reg.action('119')).to.equal(validatorInfoHandler);
      expect(reg.nameOf('119')).to.equal('VALIDATOR_INFO');
      expect(reg.write('119')).to.equal(undefined);
    });

    it('accepts {type: "119"}, and tolerates extra operation fields', () => {
      validatorInfoHandler.validateStatic(parseRequest(signed(TRUSTEE, OP)));
      validatorInfoHandler.validateStatic(parseRequest(signed(TRUSTEE, { ...OP, note: 'x', n: 1 })));
    });

    it('refuses a request without identifier/signature before the type is looked at', async () => {
      const out = await pipeline.receive({ reqId: 1, protocolVersion: 2, operation: OP }, { now: PP_TIME, writable: true });
      expect(out.kind).to.equal('nack');
      expect(out.kind === 'nack' && out.error.code).to.equal(RequestErrorCode.MISSING_IDENTIFIER);
    });

    it('is signature-checked like a write: an unsigned or forged one is a REQNACK, an unknown signer too', async () => {
      const unsigned = await pipeline.receive({ identifier: TRUSTEE.did, reqId: 2, protocolVersion: 2, operation: OP }, { now: PP_TIME, writable: true });
      expect(unsigned.kind).to.equal('nack');
      const forged = { ...signed(TRUSTEE, OP), signature: signed(STEWARDS[0]!, OP).signature };
      const f = await pipeline.receive(forged, { now: PP_TIME, writable: true });
      expect(f.kind === 'nack' && f.error.reason).to.contain('insufficient number of valid signatures');
      const u = await pipeline.receive(signed(offLedger, OP), { now: PP_TIME, writable: true });
      expect(u.kind === 'nack' && u.error.reason).to.equal(`could not authenticate, verkey for ${offLedger.did} cannot be found`);
    });
  });

  describe('authorization at receipt (119--ADD--*--*--*)', () => {
    for (const [who, signer] of [
      ['TRUSTEE', TRUSTEE],
      ['STEWARD', STEWARDS[1]!],
      ['NETWORK_MONITOR', monitor],
    ] as const) {
      it(`${who} is authorized, also while the pool is read-only`, async () => {
        for (const writable of [true, false]) {
          const out = await pipeline.receive(signed(signer, OP), { now: PP_TIME, writable });
          expect(out.kind, `writable=${writable}`).to.equal('action');
          if (out.kind !== 'action') return;
          expect(out.error?.reason ?? null).to.equal(null);
          expect(out.handler).to.equal(validatorInfoHandler);
          expect(out.request.type).to.equal('119');
        }
      });
    }

    for (const [who, signer] of [
      ['ENDORSER', endorser],
      ['a DID without a role', plain],
    ] as const) {
      it(`${who} is refused with the auth-rules.md reason`, async () => {
        const req = signed(signer, OP);
        const out = await pipeline.receive(req, { now: PP_TIME, writable: true });
        expect(out.kind).to.equal('action');
        if (out.kind !== 'action') return;
        const err = out.error!;
        expect(err).to.be.instanceOf(RequestError);
        expect(err.code).to.equal(RequestErrorCode.AUTH_OR_FAILED);
        expect(err.reason).to.equal(
          [
            'Rule for this action is: 1 TRUSTEE signature is required OR 1 STEWARD signature is required OR 1 NETWORK_MONITOR signature is required',
            'Failed checks:',
            'Constraint: 1 TRUSTEE signature is required, Error: Not enough TRUSTEE signatures',
            'Constraint: 1 STEWARD signature is required, Error: Not enough STEWARD signatures',
            'Constraint: 1 NETWORK_MONITOR signature is required, Error: Not enough NETWORK_MONITOR signatures',
          ].join('\n'),
        );
        expect(err.replyCode).to.equal(null);
        expect(wrapReason(err, signer.did, req.reqId as bigint)).to.match(/^client request invalid: UnauthorizedClientRequest\('/);
      });
    }

    it('an AUTH_RULE override of 119--ADD--*--*--* decides from then on', async () => {
      const rule = {
        type: '120',
        auth_type: '119',
        auth_action: 'ADD',
        field: '*',
        new_value: '*',
        constraint: { constraint_id: 'ROLE', role: '0', sig_count: 1, need_to_be_owner: false, metadata: {} },
      };
      const r = await h.order(2, [signed(TRUSTEE, rule)]);
      expect(r.results[0]!.valid, (r.results[0] as { reason?: string }).reason).to.equal(true);
      const steward = await pipeline.receive(signed(STEWARDS[0]!, OP), { now: PP_TIME, writable: true });
      expect(steward.kind === 'action' && steward.error?.reason).to.equal('Not enough TRUSTEE signatures');
      const trustee = await pipeline.receive(signed(TRUSTEE, OP), { now: PP_TIME, writable: true });
      expect(trustee.kind === 'action' && trustee.error).to.equal(null);
    });
  });

  it('is never ordered: in a batch it is refused as not a write and changes nothing', async () => {
    const sizes = [0, 1, 2].map((l) => h.stores.ledgers[l as 0 | 1 | 2].size);
    const r = h.executor.applyBatch(2, [signed(TRUSTEE, OP)], PP_TIME);
    expect((r.results[0] as { valid: boolean; code?: string }).code).to.equal('NOT_A_WRITE');
    h.executor.revert();
    expect([0, 1, 2].map((l) => h.stores.ledgers[l as 0 | 1 | 2].size)).to.deep.equal(sizes);
  });
});
