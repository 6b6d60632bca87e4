// indy-vdr-proxy's REST routes (hyperledger/indy-vdr, indy-vdr-proxy/src/handlers.rs at 203c29e): the same paths,
// methods and bodies (the ledger's reply JSON), every read verified by the SDK before it is answered.
//
// Where the gateway departs from the proxy (docs/gateway.md lists them): malformed ids are 400 with a JSON error body
// naming the field (the proxy answers 400 with a text message, or 404 for a bad ledger name); unknown routes are 404
// JSON; a pool that cannot be reached is 503 and no agreement in time 504 with what was tried; `?fmt` asks for the
// proxy's pretty format (its `?html` page is not served); GET /status is the pool status (the proxy's GET /; the
// validator info request needs a trustee's signature, so it goes through POST /submit).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  Pool,
  buildGetAcceptanceMechanismsRequest,
  buildGetAttribRequest,
  buildGetAuthRuleRequest,
  buildGetCredDefRequest,
  buildGetNymRequest,
  buildGetRevocRegDefRequest,
  buildGetRevocRegDeltaRequest,
  buildGetRevocRegRequest,
  buildGetSchemaRequest,
  buildGetTxnAuthorAgreementRequest,
  buildGetTxnRequest,
} from '@quire/client';
import { isPlainObject, parseJson, stringifyJson, type Request } from '@quire/common';
import { GatewayError, GatewayErrorCode } from './errors.js';
import { NODES_HEADER, sendJson, sendRead, sendValue, wantsPretty } from './http.js';
import { parseCredDefId, parseDid, parseLedger, parseRevRegDefId, parseSchemaId } from './ids.js';
import { jsonText } from './json.js';
import type { GatewayPool, PoolCaller } from './pool-call.js';

export interface RouteContext {
  pool: GatewayPool;
  caller: PoolCaller;
  /** did:indy namespace of the pool. */
  namespace: string;
  /** Seconds since the epoch, from the gateway's clock (GET_REVOC_REG's timestamp, as the proxy's). */
  now: () => number;
  /** When the pool ledger was last refreshed (ms since the epoch), if ever. */
  lastRefresh: () => number | undefined;
}

const ID = { type: 'string', minLength: 1, maxLength: 1024 } as const;
const FMT = { fmt: { type: 'string' }, raw: { type: 'string' } } as const;
const HISTORIC = {
  type: 'object',
  properties: { seq_no: { type: 'integer', minimum: 1, maximum: 2 ** 53 - 1 }, timestamp: { type: 'integer', minimum: 0, maximum: 2 ** 53 - 1 }, ...FMT },
} as const;
const FMT_ONLY = { type: 'object', properties: FMT } as const;

function params(...names: string[]): Record<string, unknown> {
  return { type: 'object', required: names, properties: Object.fromEntries(names.map((n) => [n, ID])) };
}

function readRoute(tag: string, summary: string, p: string[], querystring: object = FMT_ONLY): Record<string, unknown> {
  return {
    schema: {
      tags: [tag],
      summary,
      ...(p.length > 0 ? { params: params(...p) } : {}),
      querystring,
      response: {
        200: {
          description: "The ledger's reply {op: 'REPLY', result}, verified (X-Quire-Verified: proof | consensus)",
          type: 'object',
          additionalProperties: true,
        },
      },
    },
  };
}

/** The pool status object of indy-vdr-proxy's GET / (status, pool_mt_root, pool_mt_size, pool_nodes, last_refresh). */
export function poolStatusBody(ctx: RouteContext): Record<string, unknown> {
  const st = ctx.pool.status();
  const refreshed = ctx.lastRefresh();
  return {
    status: 'active',
    pool_mt_root: st.root,
    pool_mt_size: st.ledgerSize,
    pool_nodes: st.validators.map((v) => v.alias),
    last_refresh: refreshed === undefined ? null : Math.floor((Date.now() - refreshed) / 1000),
  };
}

export function registerVdrRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const read = async (req: FastifyRequest, reply: FastifyReply, request: Request): Promise<FastifyReply> =>
    sendRead(req, reply, await ctx.caller.read(request));
  type Q = { seq_no?: number; timestamp?: number };
  const historic = (q: Q): { seqNo?: number; timestamp?: number } => ({
    ...(q.seq_no !== undefined ? { seqNo: q.seq_no } : {}),
    ...(q.timestamp !== undefined ? { timestamp: q.timestamp } : {}),
  });

  app.get('/', { schema: { tags: ['pool'], summary: "The pool status (indy-vdr-proxy's GET /)", querystring: FMT_ONLY } }, async (req, reply) =>
    sendValue(req, reply, poolStatusBody(ctx), 'none'),
  );
  app.get(
    '/status',
    { schema: { tags: ['pool'], summary: 'The pool status with the validators the gateway is connected to', querystring: FMT_ONLY } },
    async (req, reply) => {
      const st = ctx.pool.status();
      return sendValue(
        req,
        reply,
        { ...poolStatusBody(ctx), namespace: ctx.namespace, n: st.n, f: st.f, validators: st.validators, demoted: st.demoted },
        'none',
      );
    },
  );

  app.get(
    '/genesis',
    { schema: { tags: ['pool'], summary: 'The pool ledger the gateway holds (genesis and caught-up NODE txns), one txn per line' } },
    async (_req, reply) => {
      const lines: string[] = [];
      for (let s = 1; s <= ctx.pool.ledger.size; s++) lines.push(stringifyJson(ctx.pool.ledger.txn(s)));
      return sendJson(reply, 200, lines.join('\n'), 'consensus');
    },
  );

  app.get('/taa', readRoute('ledger', 'GET_TXN_AUTHOR_AGREEMENT: the latest agreement', []), async (req, reply) =>
    read(req, reply, buildGetTxnAuthorAgreementRequest()),
  );
  app.get('/aml', readRoute('ledger', 'GET_TXN_AUTHOR_AGREEMENT_AML: the latest acceptance mechanisms', []), async (req, reply) =>
    read(req, reply, buildGetAcceptanceMechanismsRequest()),
  );

  app.get('/nym/:did', readRoute('ledger', 'GET_NYM (?seq_no, ?timestamp for an older version)', ['did'], HISTORIC), async (req, reply) => {
    const { did } = req.params as { did: string };
    return read(req, reply, buildGetNymRequest({ dest: parseDid(did, 'did').id, ...historic(req.query as Q) }));
  });

  app.get('/attrib/:did/:attr', readRoute('ledger', 'GET_ATTR of a raw attribute (?seq_no, ?timestamp)', ['did', 'attr'], HISTORIC), async (req, reply) => {
    const { did, attr } = req.params as { did: string; attr: string };
    return read(req, reply, buildGetAttribRequest({ dest: parseDid(did, 'did').id, raw: attr, ...historic(req.query as Q) }));
  });

  app.get('/schema/:id', readRoute('ledger', 'GET_SCHEMA by schema id', ['id']), async (req, reply) => {
    const s = parseSchemaId((req.params as { id: string }).id, 'id');
    return read(req, reply, buildGetSchemaRequest({ dest: s.dest, name: s.name, version: s.version }));
  });

  app.get('/cred_def/:id', readRoute('ledger', 'GET_CLAIM_DEF by credential definition id', ['id']), async (req, reply) => {
    const c = parseCredDefId((req.params as { id: string }).id, 'id');
    return read(req, reply, buildGetCredDefRequest({ origin: c.origin, ref: c.ref, signatureType: c.signatureType, tag: c.tag }));
  });

  app.get('/rev_reg_def/:id', readRoute('ledger', 'GET_REVOC_REG_DEF by revocation registry id', ['id']), async (req, reply) => {
    const r = parseRevRegDefId((req.params as { id: string }).id, 'id');
    return read(req, reply, buildGetRevocRegDefRequest({ id: r.id }));
  });

  app.get('/rev_reg/:id', readRoute('ledger', 'GET_REVOC_REG: the accumulator now', ['id']), async (req, reply) => {
    const r = parseRevRegDefId((req.params as { id: string }).id, 'id');
    return read(req, reply, buildGetRevocRegRequest({ revocRegDefId: r.id, timestamp: ctx.now() }));
  });

  app.get('/rev_reg_delta/:id', readRoute('ledger', 'GET_REVOC_REG_DELTA from the start to now', ['id']), async (req, reply) => {
    const r = parseRevRegDefId((req.params as { id: string }).id, 'id');
    return read(req, reply, buildGetRevocRegDeltaRequest({ revocRegDefId: r.id, to: ctx.now() }));
  });

  app.get('/auth', readRoute('ledger', 'GET_AUTH_RULE: every rule (verified by f+1 matching replies)', []), async (req, reply) =>
    read(req, reply, buildGetAuthRuleRequest({})),
  );
  app.get(
    '/auth/:type/:action',
    readRoute('ledger', "GET_AUTH_RULE of one rule: field '*' and new_value '*' unless ?field, ?new_value, ?old_value", ['type', 'action'], {
      type: 'object',
      properties: { field: ID, new_value: { type: 'string', maxLength: 1024 }, old_value: { type: 'string', maxLength: 1024 }, ...FMT },
    }),
    async (req, reply) => {
      const { type, action } = req.params as { type: string; action: string };
      const q = req.query as { field?: string; new_value?: string; old_value?: string };
      if (action !== 'ADD' && action !== 'EDIT')
        throw new GatewayError(GatewayErrorCode.INVALID_PARAMETER, { field: 'action', reason: "'ADD' or 'EDIT' expected" });
      return read(
        req,
        reply,
        buildGetAuthRuleRequest({
          authType: type,
          authAction: action,
          field: q.field ?? '*',
          newValue: q.new_value ?? '*',
          ...(action === 'EDIT' ? { oldValue: q.old_value ?? '*' } : {}),
        }),
      );
    },
  );

  app.get(
    '/txn/:ledger/:seqNo',
    readRoute('ledger', 'GET_TXN: one txn of the pool, domain, config or audit ledger (verified by its audit path)', ['ledger', 'seqNo']),
    async (req, reply) => {
      const p = req.params as { ledger: string; seqNo: string };
      const ledgerId = parseLedger(p.ledger, 'ledger');
      if (!/^[1-9][0-9]{0,15}$/.test(p.seqNo) || !Number.isSafeInteger(Number(p.seqNo)))
        throw new GatewayError(GatewayErrorCode.INVALID_PARAMETER, { field: 'seqNo', reason: 'an integer >= 1 expected' });
      return read(req, reply, buildGetTxnRequest({ ledgerId, seqNo: Number(p.seqNo) }));
    },
  );

  app.get('/submit', { schema: { hide: true } }, async (req) => {
    throw new GatewayError(GatewayErrorCode.METHOD_NOT_ALLOWED, { method: req.method, path: '/submit' });
  });
  app.post(
    '/submit',
    {
      schema: {
        tags: ['ledger'],
        summary:
          'Submits a signed request JSON as indy-vdr would: writes to every validator (f+1 matching REPLYs), reads verified, VALIDATOR_INFO and POOL_RESTART to every node',
        body: { description: 'A signed request JSON (any content type)' },
      },
    },
    async (req, reply) => {
      const body = req.body;
      const bytes = body instanceof Uint8Array ? body : typeof body === 'string' ? new TextEncoder().encode(body) : undefined;
      if (bytes === undefined || bytes.length === 0)
        throw new GatewayError(GatewayErrorCode.INVALID_REQUEST, { field: 'body', reason: 'a signed request JSON is required' });
      let request: unknown;
      try {
        request = parseJson(bytes);
      } catch (e) {
        throw new GatewayError(GatewayErrorCode.INVALID_REQUEST, { field: 'body', reason: `not JSON: ${(e as Error).message}` });
      }
      const req_ = checkRequestShape(request);
      const kind = Pool.kindOf(req_);
      if (kind === 'read') return sendRead(req, reply, await ctx.caller.read(req_, bytes));
      if (kind === 'action') return sendValue(req, reply, await ctx.caller.action(req_, bytes), 'none');
      const out = await ctx.caller.write(req_, bytes);
      reply.header(NODES_HEADER, out.nodes.join(','));
      return sendJson(reply, 200, jsonText({ op: 'REPLY', result: out.result }, wantsPretty(req)), 'consensus');
    },
  );
}

/** The fields every request needs before it is worth sending to the pool. */
function checkRequestShape(v: unknown): Request {
  const bad = (field: string, reason: string): GatewayError => new GatewayError(GatewayErrorCode.INVALID_REQUEST, { field, reason });
  if (!isPlainObject(v)) throw bad('body', 'a JSON object is required');
  if (!isPlainObject(v.operation)) throw bad('operation', 'an object is required');
  if (typeof v.operation.type !== 'string' || v.operation.type === '') throw bad('operation.type', 'a non-empty string is required');
  if (typeof v.reqId !== 'number' && typeof v.reqId !== 'bigint') throw bad('reqId', 'an integer is required');
  if (v.identifier !== undefined && typeof v.identifier !== 'string') throw bad('identifier', 'a string is required');
  return v as unknown as Request;
}
