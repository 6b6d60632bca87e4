// What pool failures become over HTTP, through the real Fastify app (app.inject) with a stand-in pool whose SDK
// calls fail as the SDK fails: REQNACK/REJECT passed through as the ledger's message (400), no answer in time 504,
// too few nodes 503, disagreeing nodes 409, a per-client rate limit 429, and errors never escaping as a crash.
import { expect } from 'chai';
import { ClientError, ClientErrorCode } from '@quire/client';
import { parseJson } from '@quire/common';
import { Gateway, GatewayError, GatewayErrorCode, type GatewayPool } from '../../src/index.js';

type Json = Record<string, unknown>;
const DID = 'V4SGRU86Z58d6TV7PBUe6f';

function poolFailing(error: unknown): GatewayPool {
  const fail = async (): Promise<never> => {
    throw error;
  };
  return {
    f: 1,
    n: 4,
    status: () => ({ ledgerSize: 4, root: 'r', n: 4, f: 1, validators: [], demoted: [] }),
    ledger: { size: 0 },
    submitRead: fail,
    submitWrite: fail,
    submitAction: fail,
  } as unknown as GatewayPool;
}

async function ask(
  error: unknown,
  url = `/nym/${DID}`,
  opts: Record<string, unknown> = {},
): Promise<{ status: number; body: Json; headers: Record<string, unknown> }> {
  const gw = await Gateway.create({ port: 0, metrics: false, ...opts }, { pool: poolFailing(error) });
  try {
    const r = await gw.app.inject({ method: 'GET', url });
    return { status: r.statusCode, body: parseJson(r.body) as Json, headers: r.headers };
  } finally {
    await gw.close();
  }
}

describe('pool failures over HTTP', function () {
  this.timeout(20_000);

  it('f+1 REQNACK / REJECT: 400 with the ledger message', async () => {
    const nack = await ask(new ClientError(ClientErrorCode.REQUEST_NACKED, { reason: 'client request invalid: bad', code: null, nodes: ['Node1', 'Node2'] }));
    expect(nack.status).to.equal(400);
    expect(nack.body).to.include({ op: 'REQNACK', reason: 'client request invalid: bad', identifier: 'LibindyDid111111111111' });
    expect(nack.headers['x-quire-error']).to.equal('REQUEST_NACKED');
    const rej = await ask(new ClientError(ClientErrorCode.REQUEST_REJECTED, { reason: 'no', code: 3, nodes: [] }));
    expect(rej.body).to.include({ op: 'REJECT', reason: 'no', code: 3 });
  });

  it('timeout 504, unreachable 503, disagreement 409, each with what was tried; an unexpected error 500', async () => {
    const errors = [{ node: 'Node1', code: 'NODE_UNREACHABLE' }];
    const t = await ask(new ClientError(ClientErrorCode.TIMEOUT, { timeoutMs: 5, replies: [], errors, answered: [], n: 4 }));
    expect(t.status).to.equal(504);
    expect(t.body.code).to.equal('POOL_TIMEOUT');
    expect((t.body.tried as Json).errors).to.deep.equal(errors);
    const u = await ask(new ClientError(ClientErrorCode.NO_VERIFIED_REPLY, { errors, nacks: [] }));
    expect([u.status, u.body.code]).to.deep.equal([503, 'POOL_UNAVAILABLE']);
    const behind = await ask(
      new ClientError(ClientErrorCode.READ_BEHIND, {
        ledgerId: 1,
        seen: { time: 1700000000, seqNo: 12 },
        behind: { node: 'Node2', ledgerId: 1, timestamp: 1699999999, root: 'root', seenTime: 1700000000 },
        errors,
        nacks: [],
      }),
    );
    expect([behind.status, behind.body.code]).to.deep.equal([503, 'POOL_UNAVAILABLE']);
    expect((behind.body.tried as Json).errors).to.deep.equal(errors);
    const few = await ask(new ClientError(ClientErrorCode.NO_CONSENSUS, { groups: [['Node1']], errors }));
    expect([few.status, few.body.code]).to.deep.equal([503, 'POOL_UNAVAILABLE']);
    const split = await ask(new ClientError(ClientErrorCode.NO_CONSENSUS, { groups: [['Node1'], ['Node2'], ['Node3']], errors: [] }));
    expect([split.status, split.body.code]).to.deep.equal([409, 'NO_CONSENSUS']);
    const bug = await ask(new TypeError('boom'));
    expect([bug.status, bug.body.code]).to.deep.equal([500, 'INTERNAL']);
  });

  it('the per-client rate limit answers 429 RATE_LIMITED', async () => {
    const gw = await Gateway.create({ port: 0, metrics: false, rateLimit: { max: 2, windowMs: 60_000 } }, { pool: poolFailing(new Error('x')) });
    try {
      const codes: number[] = [];
      for (let i = 0; i < 3; i++) codes.push((await gw.app.inject({ method: 'GET', url: '/health' })).statusCode);
      expect(codes).to.deep.equal([200, 200, 429]);
      const r = await gw.app.inject({ method: 'GET', url: '/health' });
      expect((parseJson(r.body) as Json).code).to.equal('RATE_LIMITED');
    } finally {
      await gw.close();
    }
  });
});

describe('options that cannot work are refused with INVALID_CONFIG', () => {
  it('Gateway.create without a pool or genesis file, and the register form without a signer', async () => {
    for (const [make, field] of [
      [() => Gateway.create({ port: 0, metrics: false }), 'genesisFile'],
      [
        () => Gateway.create({ port: 0, metrics: false, explorer: { enabled: true, registerForm: true } }, { pool: poolFailing(new Error('unused')) }),
        'explorer.signerSeed',
      ],
    ] as const) {
      const e = await make().then(
        async (gw) => {
          await gw.close();
          return expect.fail('created');
        },
        (err: unknown) => err as GatewayError,
      );
      expect(e).to.be.instanceOf(GatewayError);
      expect(e.code).to.equal(GatewayErrorCode.INVALID_CONFIG);
      expect(e.data.field).to.equal(field);
    }
  });
});
