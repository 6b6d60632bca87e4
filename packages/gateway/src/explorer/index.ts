// The ledger explorer: server-rendered HTML pages served by the gateway itself (same process, same port), built from
// verified reads of the SDK. Its paths are its own (the gateway's JSON API keeps /nym, /txn, /schema, /did, /genesis...):
//
//   GET /            the pool page, for a browser (Accept: text/html); programs still get the JSON pool status
//   GET /pool        the pool page (?part=live: only its live part, re-read by the page every few seconds)
//   GET /ledger/{pool|domain|config|audit}   txns newest first (?from=N, ?type=NYM, ?count=20)
//   GET /ledger/{ledger}/{seqNo}             one txn and how it was verified
//   GET /dids/{did}  GET /schemas/{id}  GET /cred-defs/{id}   GET /agreement   GET /search?q=
//   GET|POST /register                      the devnet's "register a DID" form (only when enabled)
//
// and, through the gateway's not-found handler, a friendly 404 page for a browser.
import { DidKey } from '@quire/client';
import { LedgerId } from '@quire/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError, GatewayErrorCode, invalidConfig } from '../errors.js';
import { VERIFIED_HEADER } from '../http.js';
import { PoolRefusal } from '../pool-call.js';
import { ResolutionFailure } from '../resolver.js';
import type { RouteContext } from '../vdr-routes.js';
import { ExplorerData, LEDGER_NAMES, type LedgerName, type VerifiedTxn, defaultExplorerDataOptions } from './data.js';
import { type Html, html, page, type Shell } from './html.js';
import { LEDGER_IDS, MAX_PAGE_SIZE, PAGE_SIZE, ledgerList, parseTypes, txnDetail } from './ledger-page.js';
import { NotOnLedger, type SearchCoverage, agreementPage, credDefPage, didPage, directHit, matches, schemaPage, searchResults } from './object-pages.js';
import { SearchIndex, type SearchIndexOptions, defaultSearchIndexOptions, exactForms } from './search-index.js';
import { POOL_SCRIPT, poolLive } from './pool-page.js';
import { MAX_FORM_BYTES, parseForm, register, registerForm } from './register.js';

export interface ExplorerOptions {
  /** Serve the explorer (default true). */
  enabled: boolean;
  /** Serve the "register a DID" form (devnet only; default false). Needs `signerSeed`. */
  registerForm: boolean;
  /** Seed of a trustee (or steward) key: signs VALIDATOR_INFO for the pool page, and the register form's NYMs. */
  signerSeed: string | undefined;
  /**
   * Domain txns a text search reads directly, newest first, above what the search index holds (all of them when the
   * index is off).
   */
  searchDepth: number;
  /** The search index over the whole domain ledger (built while the gateway listens; search-index.ts). */
  searchIndex: Partial<SearchIndexOptions>;
}

export const defaultExplorerOptions: ExplorerOptions = { enabled: true, registerForm: false, signerSeed: undefined, searchDepth: 500, searchIndex: {} };

/** Matches shown by one search (the newest). */
export const MAX_SEARCH_HITS = 100;

/** What the gateway needs to hand the explorer its 404s. */
export interface Explorer {
  data: ExplorerData;
  /** The request is from a browser (it prefers HTML) and should get a page rather than JSON. */
  wantsPage(req: FastifyRequest): boolean;
  /** The friendly 404 page. */
  notFound(req: FastifyRequest, reply: FastifyReply): FastifyReply;
  /** The search index (undefined when turned off). */
  index: SearchIndex | undefined;
  /** Starts building and following the search index (a listening gateway calls it). */
  start(): void;
  /** Stops the search index (the gateway's close). */
  stop(): void;
}

/** Accept prefers text/html over JSON (a browser's navigation); a bare or JSON Accept does not. */
export function prefersHtml(req: FastifyRequest): boolean {
  const accept = String(req.headers.accept ?? '');
  const h = accept.indexOf('text/html');
  if (h < 0) return false;
  const j = accept.indexOf('application/json');
  return j < 0 || h < j;
}

function sendPage(reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply
    .code(status)
    .header(VERIFIED_HEADER, 'none')
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(text);
}

const SEQNO = /^[1-9][0-9]{0,15}$/;

function safeHost(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}

/** Registers the explorer's routes on the gateway's Fastify instance. */
export function registerExplorer(app: FastifyInstance, ctx: RouteContext, opts: Partial<ExplorerOptions> = {}): Explorer {
  const o: ExplorerOptions = { ...defaultExplorerOptions, ...opts };
  const signer = o.signerSeed !== undefined ? DidKey.fromSeed(o.signerSeed) : undefined;
  if (o.registerForm && signer === undefined) throw invalidConfig('explorer.signerSeed', 'the explorer register form needs a signer seed (the devnet trustee)');
  const data = new ExplorerData(ctx.pool, ctx.caller, signer, defaultExplorerDataOptions);
  const indexOptions: SearchIndexOptions = { ...defaultSearchIndexOptions, ...o.searchIndex };
  const indexLog = app.log.child({ module: 'search-index' });
  const index = indexOptions.enabled
    ? new SearchIndex(
        { size: () => data.size(LedgerId.DOMAIN), read: (seqNos, concurrency) => data.many(LedgerId.DOMAIN, seqNos, { concurrency, keep: false }) },
        indexOptions,
        (e) => indexLog.warn({ err: e }, 'search index: reading the domain ledger failed; trying again later'),
      )
    : undefined;
  const shell = (s: Shell): Shell => ({ ...s, register: o.registerForm });
  const nowSec = (): number => Math.floor(Date.now() / 1000);

  const errorPage = (reply: FastifyReply, status: number, code: string, title: string, message: Html | string, query?: string): FastifyReply =>
    sendPage(
      reply.header('x-quire-error', code),
      status,
      page(
        shell({ title, ...(query !== undefined ? { query } : {}) }),
        html`<h1>${title}</h1><p class="error" role="alert" data-code="${code}">${message}</p><p><a href="/pool">Pool</a> · <a href="/ledger/domain">Domain ledger</a></p>`,
      ),
    );

  const notFound = (req: FastifyRequest, reply: FastifyReply, what?: string): FastifyReply =>
    errorPage(
      reply,
      404,
      GatewayErrorCode.NOT_FOUND,
      'Not found',
      what ?? html`There is no page at <code>${req.url.split('?')[0].slice(0, 200)}</code>. Try the search box, or start from the pool or a ledger.`,
    );

  /** Every page handler: failures become an HTML page with the gateway's stable code. */
  const route =
    (fn: (req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>) =>
    async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      try {
        return await fn(req, reply);
      } catch (e) {
        if (e instanceof NotOnLedger) return notFound(req, reply, e.what);
        if (e instanceof ResolutionFailure)
          return errorPage(
            reply,
            e.error === 'notFound' ? 404 : 400,
            e.error === 'notFound' ? GatewayErrorCode.NOT_FOUND : GatewayErrorCode.INVALID_PARAMETER,
            e.error === 'notFound' ? 'Not found' : 'Bad request',
            e.message,
          );
        if (e instanceof PoolRefusal) return errorPage(reply, 400, e.code, 'Refused by the pool', e.message);
        if (e instanceof GatewayError)
          return errorPage(
            reply,
            e.status,
            e.code,
            e.status === 400 ? 'Bad request' : e.status >= 500 ? 'The pool did not answer' : 'Error',
            String(e.body().reason),
          );
        req.log.error({ err: e }, 'explorer page failed');
        return errorPage(reply, 500, GatewayErrorCode.INTERNAL, 'Internal error', 'The page could not be made; the gateway logged why.');
      }
    };

  const hidden = { schema: { hide: true } };

  // the pool page at / for a browser; the gateway's JSON status stays for everyone else
  app.addHook('onRequest', async (req, reply) => {
    if ((req.method === 'GET' || req.method === 'HEAD') && (req.url === '/' || req.url.startsWith('/?')) && !req.url.includes('fmt') && prefersHtml(req)) {
      return route(poolPage)(req, reply);
    }
    return undefined;
  });

  async function poolPage(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const live = await poolLive(data, nowSec());
    if ((req.query as { part?: string } | undefined)?.part === 'live') return sendPage(reply, 200, live.text);
    return sendPage(reply, 200, page(shell({ title: 'Pool', current: 'pool', script: POOL_SCRIPT }), html`<h1>Pool</h1><div id="live">${live}</div>`));
  }
  app.get('/pool', hidden, route(poolPage));

  const ledgerOf = (name: string): LedgerName => {
    const l = name.toLowerCase() as LedgerName;
    if (!(LEDGER_NAMES as readonly string[]).includes(l))
      throw new NotOnLedger(`There is no ledger “${name.slice(0, 40)}”: pool, domain, config and audit are.`);
    return l;
  };
  const positive = (v: unknown, field: string, max = Number.MAX_SAFE_INTEGER): number | undefined => {
    if (v === undefined || v === '') return undefined;
    const s = String(v);
    if (!SEQNO.test(s) || Number(s) > max)
      throw new GatewayError(GatewayErrorCode.INVALID_PARAMETER, { field, reason: `a whole number from 1 to ${max} expected` });
    return Number(s);
  };

  app.get(
    '/ledger/:ledger',
    hidden,
    route(async (req, reply) => {
      const ledger = ledgerOf((req.params as { ledger: string }).ledger);
      const q = req.query as { from?: string; type?: string | string[]; count?: string };
      const { types, unknown } = parseTypes(LEDGER_IDS[ledger], q.type);
      const from = positive(q.from, 'from');
      const count = positive(q.count, 'count', MAX_PAGE_SIZE) ?? PAGE_SIZE;
      const { title, body } = await ledgerList(data, ledger, {
        ...(from !== undefined ? { from } : {}),
        count,
        ...(types !== undefined ? { types } : {}),
        unknown,
      });
      return sendPage(reply, 200, page(shell({ title, current: ledger === 'pool' ? 'pool-ledger' : ledger }), body));
    }),
  );

  app.get(
    '/ledger/:ledger/:seqNo',
    hidden,
    route(async (req, reply) => {
      const p = req.params as { ledger: string; seqNo: string };
      const ledger = ledgerOf(p.ledger);
      if (!SEQNO.test(p.seqNo)) throw new NotOnLedger(`“${p.seqNo.slice(0, 40)}” is not a txn number (seqNo 1, 2, ...).`);
      const lid = LEDGER_IDS[ledger];
      const seqNo = Number(p.seqNo);
      const [t, size] = await Promise.all([data.txn(lid, seqNo), data.size(lid)]);
      if (t === null) throw new NotOnLedger(`The ${ledger} ledger has no txn #${seqNo} (it has ${size}).`);
      return sendPage(
        reply,
        200,
        page(shell({ title: `${ledger} #${seqNo}`, current: ledger === 'pool' ? 'pool-ledger' : ledger }), txnDetail(t, ledger, size)),
      );
    }),
  );

  const wildcard = (req: FastifyRequest): string => {
    const v = (req.params as { '*': string })['*'] ?? '';
    try {
      return decodeURIComponent(v);
    } catch {
      throw new GatewayError(GatewayErrorCode.INVALID_PARAMETER, { field: 'id', reason: 'bad percent-encoding' });
    }
  };

  app.get(
    '/dids/*',
    hidden,
    route(async (req, reply) => {
      const { title, body } = await didPage(data, ctx.namespace, wildcard(req));
      return sendPage(reply, 200, page(shell({ title }), body));
    }),
  );
  app.get(
    '/schemas/*',
    hidden,
    route(async (req, reply) => {
      const { title, body } = await schemaPage(data, wildcard(req));
      return sendPage(reply, 200, page(shell({ title }), body));
    }),
  );
  app.get(
    '/cred-defs/*',
    hidden,
    route(async (req, reply) => {
      const { title, body } = await credDefPage(data, wildcard(req));
      return sendPage(reply, 200, page(shell({ title }), body));
    }),
  );
  app.get(
    '/agreement',
    hidden,
    route(async (_req, reply) => {
      const { title, body } = await agreementPage(data);
      return sendPage(reply, 200, page(shell({ title, current: 'agreement' }), body));
    }),
  );

  app.get(
    '/search',
    hidden,
    route(async (req, reply) => {
      const q = String((req.query as { q?: unknown }).q ?? '')
        .trim()
        .slice(0, 300);
      if (q === '') return reply.redirect('/ledger/domain');
      const hit = await directHit(data, q);
      if (hit !== undefined) return reply.redirect(hit);
      const size = await data.size(LedgerId.DOMAIN);
      const st = index?.status();
      const indexed = st !== undefined && st.count > 0 ? { from: st.from, to: Math.min(st.to, size) } : undefined;
      // the txns above the index (new since its last look, or all of the newest while it is being built), read now
      const tailFrom = Math.max(1, (indexed?.to ?? 0) + 1, size - o.searchDepth + 1);
      const tail = Array.from({ length: Math.max(0, size - tailFrom + 1) }, (_, i) => size - i);
      const forms = [q, ...exactForms(q)];
      const matchOf = (t: VerifiedTxn): string | undefined => forms.map((f) => matches(t, f)).find((m) => m !== undefined);
      const hits: { t: VerifiedTxn; on: string }[] = [];
      let more = false;
      for (const t of await data.many(LedgerId.DOMAIN, tail)) {
        const on = matchOf(t);
        if (on === undefined) continue;
        if (hits.length < MAX_SEARCH_HITS) hits.push({ t, on });
        else more = true;
      }
      if (index !== undefined && indexed !== undefined && hits.length >= MAX_SEARCH_HITS) more ||= index.search(q, 1).hits.length > 0;
      else if (index !== undefined && indexed !== undefined) {
        const found = index.search(q, MAX_SEARCH_HITS - hits.length);
        more = found.more;
        // a hash hit is a candidate only: the txn (verified, usually cached) must match on its real fields
        for (const t of await data.many(
          LedgerId.DOMAIN,
          found.hits.map((h) => h.seqNo).filter((s) => s <= indexed.to),
        )) {
          const on = matchOf(t);
          if (on !== undefined) hits.push({ t, on });
        }
      }
      const coverage: SearchCoverage = { size, tail: tail.length > 0 ? { from: tailFrom, to: size } : undefined, indexed, index: st, more };
      return sendPage(reply, 200, page(shell({ title: `Search ${q}`, query: q }), searchResults(q, hits, coverage)));
    }),
  );

  if (o.registerForm && signer !== undefined) {
    app.get(
      '/register',
      hidden,
      route(async (_req, reply) => sendPage(reply, 200, page(shell({ title: 'Register a DID', current: 'register' }), registerForm()))),
    );
    app.post(
      '/register',
      { ...hidden, bodyLimit: MAX_FORM_BYTES },
      route(async (req, reply) => {
        // a form posted from another site's page (cross-site request forgery) is refused
        const origin = req.headers.origin;
        if (origin !== undefined && origin !== 'null' && safeHost(origin) !== req.headers.host) {
          return errorPage(reply, 403, GatewayErrorCode.INVALID_REQUEST, 'Forbidden', 'The form was posted from another site.');
        }
        if (origin === 'null') return errorPage(reply, 403, GatewayErrorCode.INVALID_REQUEST, 'Forbidden', 'The form was posted from an opaque origin.');
        let input;
        try {
          input = parseForm(req.body);
        } catch (e) {
          if (!(e instanceof GatewayError)) throw e;
          return errorPage(reply, 400, e.code, 'Bad request', `${String(e.data.field)}: ${String(e.data.reason)}`);
        }
        const { status, body } = await register(ctx.caller, signer, input);
        return sendPage(reply, status, page(shell({ title: 'Register a DID', current: 'register' }), body));
      }),
    );
  }

  return {
    data,
    wantsPage: (req) => (req.method === 'GET' || req.method === 'HEAD') && prefersHtml(req),
    notFound: (req, reply) => notFound(req, reply),
    index,
    start: () => index?.start(),
    stop: () => index?.stop(),
  };
}
