// GatewayError's table of each code's data (GatewayErrorData): a `new GatewayError` is checked to carry its code's data
// (the @ts-expect-error lines fail the tests' typecheck once the table is dropped), and the bodies of the errors made
// from Fastify's own carry the data their codes document (the limit of a body too large, the malformed content type).
import { expect } from 'chai';
import { parseJson } from '@quire/common';
import { QuireError } from '@quire/common';
import { Gateway, GatewayError, GatewayErrorCode, ResolutionFailure, type GatewayPool } from '../../src/index.js';

type Json = Record<string, unknown>;

/** A pool the requests of these tests never reach: Fastify refuses them first. */
const unreachedPool = {
  f: 1,
  n: 4,
  status: () => ({ ledgerSize: 4, root: 'r', n: 4, f: 1, validators: [], demoted: [] }),
  ledger: { size: 0 },
  submitRead: () => Promise.reject(new Error('not reached')),
  submitWrite: () => Promise.reject(new Error('not reached')),
  submitAction: () => Promise.reject(new Error('not reached')),
} as unknown as GatewayPool;

describe('GatewayError: data typed per code', function () {
  this.timeout(20_000);

  it('holds the data of its code and sends it in its body', () => {
    const e = new GatewayError(GatewayErrorCode.RATE_LIMITED, { limit: 10, windowMs: 1000 });
    expect([e.status, e.body()]).to.deep.equal([429, { code: 'RATE_LIMITED', limit: 10, windowMs: 1000, reason: 'more than 10 requests in 1000 ms' }]);
    expect(new GatewayError(GatewayErrorCode.SHUTTING_DOWN).data).to.deep.equal({});
  });

  it('a DID that cannot be resolved is a coded error: its code the DID Resolution error, its reason the message', () => {
    const e = new ResolutionFailure('methodNotSupported', "DID method 'web' is not supported (did:indy, did:sov)");
    expect(e).to.be.instanceOf(QuireError);
    expect([e.code, e.error, e.data, e.message]).to.deep.equal([
      'methodNotSupported',
      'methodNotSupported',
      { reason: "DID method 'web' is not supported (did:indy, did:sov)" },
      "DID method 'web' is not supported (did:indy, did:sov)",
    ]);
  });

  it('refuses, at compile time, a code without its data, with a datum of the wrong type or with another code data', () => {
    const made: unknown[] = [
      // @ts-expect-error BODY_TOO_LARGE names the limit
      () => new GatewayError(GatewayErrorCode.BODY_TOO_LARGE, { limit: undefined }),
      // @ts-expect-error NOT_FOUND requires { method, path }
      () => new GatewayError(GatewayErrorCode.NOT_FOUND),
      // @ts-expect-error POOL_TIMEOUT's timeoutMs is a number
      () => new GatewayError(GatewayErrorCode.POOL_TIMEOUT, { timeoutMs: '5', tried: { errors: [] } }),
      // @ts-expect-error SHUTTING_DOWN carries nothing
      () => new GatewayError(GatewayErrorCode.SHUTTING_DOWN, { reason: 'closing' }),
    ];
    expect(made).to.have.length(4);
  });

  it('a body above the limit is 413 naming the limit; a malformed content type is 415 naming it', async () => {
    const gw = await Gateway.create({ port: 0, metrics: false, bodyLimitBytes: 1024 }, { pool: unreachedPool });
    try {
      const big = await gw.app.inject({
        method: 'POST',
        url: '/submit',
        headers: { 'content-type': 'application/json' },
        payload: `{"x":"${'a'.repeat(2048)}"}`,
      });
      expect(big.statusCode).to.equal(413);
      expect(parseJson(big.body) as Json).to.include({ code: 'BODY_TOO_LARGE', limit: 1024 });
      const text = await gw.app.inject({ method: 'POST', url: '/submit', headers: { 'content-type': 'text/' }, payload: 'a,b' });
      expect(text.statusCode).to.equal(415);
      expect(parseJson(text.body) as Json).to.include({ code: 'UNSUPPORTED_MEDIA_TYPE', contentType: 'text/' });
    } finally {
      await gw.close();
    }
  });
});
