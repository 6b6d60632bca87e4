// The gateway: one Fastify server over one SDK pool handle. Construction wires the plugins (CORS, rate limit, OpenAPI),
// the error mapping (every failure a JSON body with a stable code), the metrics hooks and the route groups; close()
// stops taking connections, lets the requests in flight finish, then closes the pool if the gateway opened it.
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import { pino, type Logger } from 'pino';
import { Pool, buildGetNymRequest, type PoolOptions } from '@quire/client';
import { GatewayError, GatewayErrorCode, abortedBy, invalidConfig, isAborted } from './errors.js';
import { VERIFIED_HEADER, sendJson, sendValue } from './http.js';
import { jsonText } from './json.js';
import { GatewayMetrics } from './metrics.js';
import { PoolCaller, PoolRefusal, type GatewayPool } from './pool-call.js';
import { registerAnonCredsRoutes } from './anoncreds.js';
import { registerResolverRoutes } from './resolver.js';
import { registerVdrRoutes, type RouteContext } from './vdr-routes.js';
import { registerExplorer, type Explorer, type ExplorerOptions } from './explorer/index.js';

export interface GatewayOptions {
  /** Address to listen on (default 127.0.0.1; 0.0.0.0 to serve other hosts). */
  host: string;
  /** Port (default 9000; 0 for a free one). */
  port: number;
  /** The pool's did:indy namespace (the devnet's is `quire:devnet`). */
  namespace: string;
  /** CORS: false (default: no CORS headers), true (any origin) or the allowed origins. */
  cors: boolean | string[];
  /** Largest request body accepted, in bytes (default 128 KiB, above the nodes' client message limit). */
  bodyLimitBytes: number;
  /** Requests per client address per window (`max` 0: no limit). */
  rateLimit: { max: number; windowMs: number };
  /** Serve GET /metrics (Prometheus). */
  metrics: boolean;
  /** Trust X-Forwarded-For for the client address (behind a reverse proxy). */
  trustProxy: boolean;
  /** Refresh the pool ledger (catch-up) at start and every so many ms (0: never after the start). */
  refreshIntervalMs: number;
  /** Log level (pino): 'silent' unless set. */
  logLevel: string;
  /** How long close() waits for requests in flight (ms). */
  closeGraceMs: number;
  /** The ledger explorer's web pages (docs/explorer.md): served unless `enabled: false`; the register form only when asked (the devnet). */
  explorer: Partial<ExplorerOptions>;
}

export const defaultGatewayOptions: GatewayOptions = {
  host: '127.0.0.1',
  port: 9000,
  namespace: 'quire:devnet',
  cors: false,
  bodyLimitBytes: 128 * 1024,
  rateLimit: { max: 6000, windowMs: 60_000 },
  metrics: true,
  trustProxy: false,
  refreshIntervalMs: 0,
  logLevel: process.env.LOG_LEVEL ?? 'silent',
  closeGraceMs: 10_000,
  explorer: {},
};

export interface GatewayModules {
  /** The pool to serve; when absent, `genesisFile` is opened (and closed with the gateway). */
  pool?: GatewayPool;
  genesisFile?: string;
  poolOptions?: Partial<PoolOptions>;
  logger?: Logger;
  /** Clock in seconds (tests). */
  now?: () => number;
}

export class Gateway {
  private closing: Promise<void> | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private lastRefresh: number | undefined;
  /** The ledger explorer, when served. */
  explorer: Explorer | undefined;

  private constructor(
    readonly app: FastifyInstance,
    readonly pool: GatewayPool,
    private readonly ownsPool: boolean,
    readonly metrics: GatewayMetrics | undefined,
    readonly options: GatewayOptions,
    readonly log: Logger,
  ) {}

  /**
   * Builds the server (not listening yet: call listen(), or use app.inject in tests). `signal` aborted before it is
   * built: what it opened (the pool of `genesisFile`) is closed and the promise rejects with GatewayError ABORTED.
   */
  static async create(opts: Partial<GatewayOptions> = {}, modules: GatewayModules = {}, abort: { signal?: AbortSignal } = {}): Promise<Gateway> {
    const { signal } = abort;
    if (isAborted(signal)) throw abortedBy(signal);
    const options: GatewayOptions = { ...defaultGatewayOptions, ...opts };
    const log = modules.logger ?? pino({ name: 'quire-gateway', level: options.logLevel });
    let pool = modules.pool;
    let ownsPool = false;
    if (pool === undefined) {
      if (modules.genesisFile === undefined) throw invalidConfig('genesisFile', 'Gateway.create needs a pool or a genesisFile');
      try {
        pool = await Pool.open(modules.genesisFile, modules.poolOptions, { signal });
      } catch (e) {
        if (isAborted(signal)) throw abortedBy(signal);
        throw e;
      }
      ownsPool = true;
    }
    const metrics = options.metrics ? new GatewayMetrics() : undefined;
    const app: FastifyInstance = Fastify({
      // per-request lines are info: the HTTP logger starts at warn (metrics count requests)
      loggerInstance: log.child({ module: 'http' }, { level: log.levelVal > 40 ? log.level : 'warn' }) as FastifyBaseLogger,
      bodyLimit: options.bodyLimitBytes,
      trustProxy: options.trustProxy,
      return503OnClosing: true,
      forceCloseConnections: 'idle',
      ajv: { customOptions: { coerceTypes: true, allErrors: false } },
    });
    const gw = new Gateway(app, pool, ownsPool, metrics, options, log);
    try {
      await gw.setup(modules.now ?? (() => Math.floor(Date.now() / 1000)));
    } catch (e) {
      await gw.close();
      throw e;
    }
    if (isAborted(signal)) {
      await gw.close();
      throw abortedBy(signal);
    }
    return gw;
  }

  private async setup(now: () => number): Promise<void> {
    const { app, options, metrics } = this;
    await app.register(swagger, {
      openapi: {
        openapi: '3.0.3',
        info: {
          title: 'Quire gateway',
          version: '0.1.0',
          description:
            "The HTTP face of a Quire pool: indy-vdr-proxy's routes, did:indy resolution, health and metrics. Every ledger read was verified by the SDK (X-Quire-Verified: proof | consensus).",
        },
      },
    });
    if (options.cors !== false)
      await app.register(cors, { origin: options.cors === true ? true : options.cors, exposedHeaders: [VERIFIED_HEADER, 'x-quire-nodes', 'x-quire-error'] });
    if (options.rateLimit.max > 0) {
      await app.register(rateLimit, {
        max: options.rateLimit.max,
        timeWindow: options.rateLimit.windowMs,
        errorResponseBuilder: () => new GatewayError(GatewayErrorCode.RATE_LIMITED, { limit: options.rateLimit.max, windowMs: options.rateLimit.windowMs }),
      });
    }

    // bodies are taken as bytes whatever their content type: a signed request is parsed losslessly by the route
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

    app.setErrorHandler((err: FastifyError | GatewayError | PoolRefusal, req, reply) => {
      if (err instanceof PoolRefusal) {
        return reply
          .code(400)
          .header(VERIFIED_HEADER, 'consensus')
          .header('x-quire-error', err.code)
          .type('application/json')
          .send(jsonText(err.message_, false));
      }
      const g = gatewayErrorOf(err, req.method, req.url, options.bodyLimitBytes, req.headers['content-type']);
      if (g.code === GatewayErrorCode.INTERNAL) req.log.error({ err }, 'request failed');
      reply.header('x-quire-error', g.code);
      return sendJson(reply, g.status, jsonText(g.body(), false));
    });
    app.setNotFoundHandler((req, reply) => {
      const explorer = this.explorer;
      if (explorer?.wantsPage(req) === true) return explorer.notFound(req, reply);
      reply.header('x-quire-error', GatewayErrorCode.NOT_FOUND);
      return sendJson(reply, 404, jsonText(new GatewayError(GatewayErrorCode.NOT_FOUND, { method: req.method, path: req.url.split('?')[0] }).body(), false));
    });
    if (metrics !== undefined) {
      app.addHook('onResponse', async (req, reply) => {
        const route = req.routeOptions.url ?? 'unmatched';
        metrics.httpRequests.inc({ route, method: req.method, status: String(reply.statusCode) });
        metrics.httpSeconds.observe({ route }, reply.elapsedTime / 1000);
      });
    }

    const caller = new PoolCaller(this.pool, metrics);
    const ctx: RouteContext = { pool: this.pool, caller, namespace: options.namespace, now, lastRefresh: () => this.lastRefresh };
    registerVdrRoutes(app, ctx);
    registerResolverRoutes(app, ctx);
    registerAnonCredsRoutes(app, ctx);
    // the ledger explorer (its own HTML paths, and / for a browser)
    if (options.explorer.enabled !== false) this.explorer = registerExplorer(app, ctx, options.explorer);
    if (metrics !== undefined && this.explorer?.index !== undefined) metrics.watchSearchIndex(this.explorer.index);

    // operations
    app.get('/health', { schema: { tags: ['operations'], summary: 'Liveness: the process serves HTTP' } }, async (req, reply) =>
      sendValue(req, reply, { status: 'ok' }, 'none'),
    );
    app.get(
      '/ready',
      { schema: { tags: ['operations'], summary: 'Readiness: the pool answers a verified read (GET_NYM of the first trustee or a probe DID)' } },
      async (req, reply) => {
        const out = await caller.read(buildGetNymRequest({ dest: 'V4SGRU86Z58d6TV7PBUe6f' }));
        return sendValue(
          req,
          reply,
          { status: 'ready', verified: out.verified ? 'proof' : 'consensus', nodes: out.nodes },
          out.verified ? 'proof' : 'consensus',
        );
      },
    );
    if (metrics !== undefined) {
      app.get('/metrics', { schema: { tags: ['operations'], summary: 'Prometheus metrics' } }, async (_req, reply) => {
        const text = await metrics.registry.metrics();
        return reply.header(VERIFIED_HEADER, 'none').type(metrics.registry.contentType).send(text);
      });
    }
    app.get('/openapi.json', { schema: { hide: true } }, async (req, reply) => sendValue(req, reply, app.swagger(), 'none'));
    app.get('/docs', { schema: { hide: true } }, async (_req, reply) =>
      reply
        .header(VERIFIED_HEADER, 'none')
        .type('text/html; charset=utf-8')
        .send(referencePage(app.swagger() as OpenApiDoc)),
    );
    await app.ready();
  }

  /**
   * Starts listening; resolves with the URL. Refreshes the pool ledger first when a refresh interval is set; then the
   * explorer's search index starts reading the domain ledger in the background. `signal` aborted before it listens
   * (during the first refresh, or while the listener opens): nothing stays open but the gateway itself, which the
   * caller closes, and the promise rejects with GatewayError ABORTED.
   */
  async listen(abort: { signal?: AbortSignal } = {}): Promise<string> {
    const { signal } = abort;
    if (isAborted(signal)) throw abortedBy(signal);
    if (this.options.refreshIntervalMs > 0) {
      await this.refresh(signal);
      if (isAborted(signal)) throw abortedBy(signal);
      this.refreshTimer = setInterval(() => void this.refresh(), this.options.refreshIntervalMs);
      this.refreshTimer.unref();
    }
    await this.app.listen({ host: this.options.host, port: this.options.port });
    if (isAborted(signal)) {
      clearInterval(this.refreshTimer);
      await this.app.close();
      throw abortedBy(signal);
    }
    this.explorer?.start();
    return this.url;
  }

  get url(): string {
    const a = this.app.server.address();
    if (a === null || typeof a === 'string') return String(a);
    const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    return `http://${host}:${a.port}`;
  }

  private async refresh(signal?: AbortSignal): Promise<void> {
    const p = this.pool as Partial<Pool>;
    if (typeof p.refresh !== 'function') return;
    try {
      const r = await p.refresh.call(this.pool, signal === undefined ? {} : { signal });
      this.lastRefresh = Date.now();
      if (r.to !== r.from) this.log.info({ from: r.from, to: r.to }, 'pool ledger refreshed');
    } catch (e) {
      this.log.warn({ err: e }, 'pool ledger refresh failed');
    }
  }

  /** Graceful: stops accepting, waits for requests in flight (at most closeGraceMs), closes the pool it opened. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.refreshTimer !== undefined) clearInterval(this.refreshTimer);
      this.explorer?.stop();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.app.close(), new Promise<void>((r) => (timer = setTimeout(r, this.options.closeGraceMs)))]);
      clearTimeout(timer);
      if (this.ownsPool) await (this.pool as Pool).close();
    })();
    return this.closing;
  }
}

/** Fastify's own errors (validation, body size, media type) as gateway errors. */
function gatewayErrorOf(err: FastifyError | GatewayError, method: string, url: string, bodyLimit: number, contentType: string | undefined): GatewayError {
  if (err instanceof GatewayError) return err;
  const e = err as FastifyError & { validation?: { instancePath?: string; params?: Record<string, unknown>; message?: string }[]; validationContext?: string };
  if (e.validation !== undefined && e.validation.length > 0) {
    const v = e.validation[0];
    const name = v.instancePath?.replace(/^\//, '') || String(v.params?.missingProperty ?? v.params?.additionalProperty ?? e.validationContext ?? 'request');
    const code = e.validationContext === 'body' ? GatewayErrorCode.INVALID_REQUEST : GatewayErrorCode.INVALID_PARAMETER;
    return new GatewayError(code, { field: name, reason: v.message ?? 'invalid' });
  }
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError(GatewayErrorCode.BODY_TOO_LARGE, { limit: bodyLimit });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError(GatewayErrorCode.UNSUPPORTED_MEDIA_TYPE, { contentType: contentType ?? null });
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return new GatewayError(GatewayErrorCode.INVALID_PARAMETER, { field: 'path', reason: e.message });
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    if (e.statusCode === 404) return new GatewayError(GatewayErrorCode.NOT_FOUND, { method, path: url.split('?')[0] });
    return new GatewayError(GatewayErrorCode.INVALID_REQUEST, { field: 'request', reason: e.message });
  }
  return new GatewayError(GatewayErrorCode.INTERNAL, { reason: e.message });
}

interface OpenApiDoc {
  info?: { title?: string; description?: string };
  paths?: Record<string, Record<string, { summary?: string; tags?: string[] }>>;
}

/** A small rendered reference of the OpenAPI document (no external assets). */
function referencePage(doc: OpenApiDoc): string {
  const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const rows: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(ops))
      rows.push(
        `<tr><td><code>${esc(method.toUpperCase())}</code></td><td><code>${esc(path)}</code></td><td>${esc(op.tags?.join(', ') ?? '')}</td><td>${esc(op.summary ?? '')}</td></tr>`,
      );
  }
  return `<!doctype html><html><head><meta charset="utf-8"><title>${esc(doc.info?.title ?? 'Quire gateway')}</title>
<style>body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left}</style></head>
<body><h1>${esc(doc.info?.title ?? '')}</h1><p>${esc(doc.info?.description ?? '')}</p><p><a href="/openapi.json">openapi.json</a></p>
<table><tr><th>method</th><th>path</th><th>group</th><th>what</th></tr>${rows.join('\n')}</table></body></html>`;
}
