// quire-gateway: serves a pool over HTTP until SIGINT/SIGTERM, then shuts down gracefully (requests in flight finish).
import { parseArgs } from 'node:util';
import { Gateway, defaultGatewayOptions, type GatewayOptions } from './gateway.js';
import { defaultExplorerOptions } from './explorer/index.js';
import { BLOCK, defaultSearchIndexOptions } from './explorer/search-index.js';
import { invalidConfig } from './errors.js';

const USAGE = `usage: quire-gateway --genesis FILE [options]

  --genesis FILE          pool genesis file (default $QUIRE_GENESIS)
  --host ADDR             address to listen on (default ${defaultGatewayOptions.host})
  --port N                port (default ${defaultGatewayOptions.port}; 0 for a free one)
  --namespace NS          the pool's did:indy namespace (default ${defaultGatewayOptions.namespace})
  --cors ORIGINS          allow these origins ('*' for any; comma-separated list)
  --body-limit BYTES      largest request body (default ${defaultGatewayOptions.bodyLimitBytes})
  --rate-limit N          requests per client address per minute (default ${defaultGatewayOptions.rateLimit.max}; 0: none)
  --refresh-minutes M     refresh the pool ledger at start and every M minutes (default 0: at start only when > 0)
  --trust-proxy           take the client address from X-Forwarded-For
  --no-metrics            do not serve /metrics
  --log-level LEVEL       pino level (default info)
  --no-explorer           do not serve the ledger explorer's web pages
  --explorer-seed SEED    a trustee's or steward's seed (default $QUIRE_EXPLORER_SEED): the pool page's validator info
  --register-form         serve the explorer's "register a DID" form, NYMs signed by --explorer-seed (devnet only)
  --search-index-max N    domain txns the explorer's search index keeps, the newest (default ${defaultSearchIndexOptions.maxTxns})
  --no-search-index       do not index the domain ledger: search scans the newest ${defaultExplorerOptions.searchDepth} txns only
  --json                  print the startup line as JSON
  -h, --help              this text`;

function fail(reason: string): number {
  console.error(`error: ${reason}\n${USAGE.split('\n')[0]}\nsee --help`);
  return 1;
}

function int(v: string | undefined, name: string, min: number): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[0-9]+$/.test(v) || Number(v) < min) throw invalidConfig(`--${name}`, `an integer >= ${min} expected`);
  return Number(v);
}

export async function main(argv: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        genesis: { type: 'string' },
        host: { type: 'string' },
        port: { type: 'string' },
        namespace: { type: 'string' },
        cors: { type: 'string' },
        'body-limit': { type: 'string' },
        'rate-limit': { type: 'string' },
        'refresh-minutes': { type: 'string' },
        'trust-proxy': { type: 'boolean' },
        'no-metrics': { type: 'boolean' },
        'log-level': { type: 'string' },
        'no-explorer': { type: 'boolean' },
        'explorer-seed': { type: 'string' },
        'register-form': { type: 'boolean' },
        'search-index-max': { type: 'string' },
        'no-search-index': { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (e) {
    return fail((e as Error).message);
  }
  if (values.help === true) {
    console.log(USAGE);
    return 0;
  }
  const genesis = (values.genesis as string | undefined) ?? process.env.QUIRE_GENESIS;
  if (genesis === undefined) return fail('--genesis FILE is required');
  const opts: Partial<GatewayOptions> = { logLevel: (values['log-level'] as string | undefined) ?? process.env.LOG_LEVEL ?? 'info' };
  try {
    if (values.host !== undefined) opts.host = values.host as string;
    const port = int(values.port as string | undefined, 'port', 0);
    if (port !== undefined) opts.port = port;
    if (values.namespace !== undefined) opts.namespace = values.namespace as string;
    if (values.cors !== undefined) opts.cors = values.cors === '*' ? true : (values.cors as string).split(',').map((s) => s.trim());
    const body = int(values['body-limit'] as string | undefined, 'body-limit', 1024);
    if (body !== undefined) opts.bodyLimitBytes = body;
    const rate = int(values['rate-limit'] as string | undefined, 'rate-limit', 0);
    if (rate !== undefined) opts.rateLimit = { max: rate, windowMs: 60_000 };
    const refresh = int(values['refresh-minutes'] as string | undefined, 'refresh-minutes', 0);
    if (refresh !== undefined) opts.refreshIntervalMs = refresh * 60_000;
    if (values['trust-proxy'] === true) opts.trustProxy = true;
    if (values['no-metrics'] === true) opts.metrics = false;
    const explorerSeed = (values['explorer-seed'] as string | undefined) ?? process.env.QUIRE_EXPLORER_SEED;
    if (values['register-form'] === true && explorerSeed === undefined)
      throw invalidConfig('--register-form', 'needs --explorer-seed (the devnet trustee seed)');
    const indexMax = int(values['search-index-max'] as string | undefined, 'search-index-max', BLOCK);
    opts.explorer = {
      enabled: values['no-explorer'] !== true,
      registerForm: values['register-form'] === true,
      ...(explorerSeed !== undefined ? { signerSeed: explorerSeed } : {}),
      searchIndex: { enabled: values['no-search-index'] !== true, ...(indexMax !== undefined ? { maxTxns: indexMax } : {}) },
    };
  } catch (e) {
    return fail((e as Error).message);
  }
  let gw: Gateway;
  try {
    gw = await Gateway.create(opts, { genesisFile: genesis });
  } catch (e) {
    console.error(`error: ${(e as Error).message}`);
    return 1;
  }
  let url: string;
  try {
    url = await gw.listen();
  } catch (e) {
    await gw.close();
    console.error(`error: cannot listen on ${gw.options.host}:${gw.options.port}: ${(e as Error).message}`);
    return 1;
  }
  console.log(
    values.json === true ? JSON.stringify({ url, namespace: gw.options.namespace }) : `quire-gateway listening on ${url} (namespace ${gw.options.namespace})`,
  );
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await gw.close();
  return 0;
}
