// Prometheus metrics of the gateway (prom-client, a registry of its own so that several gateways or a node in the
// same process never share series).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** What the metrics ask of the explorer's search index. */
export interface IndexGaugeSource {
  status(): { count: number; size: number; complete: boolean; nameChars: number };
}

export class GatewayMetrics {
  readonly registry = new Registry();
  /** HTTP requests by route (the route pattern, `unmatched` for 404s), method and status. */
  readonly httpRequests = new Counter({
    name: 'quire_gateway_http_requests_total',
    help: 'HTTP requests by route, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpSeconds = new Histogram({
    name: 'quire_gateway_http_request_duration_seconds',
    help: 'HTTP request time by route',
    labelNames: ['route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  /** Time the pool took to answer (read: first verified reply or f+1 agreement; write: f+1 REPLYs). */
  readonly poolSeconds = new Histogram({
    name: 'quire_gateway_pool_request_duration_seconds',
    help: 'Pool round trip by kind (read, write, action) and outcome',
    labelNames: ['kind', 'outcome'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  /** Verified reads by how: proof (state proof + BLS multi-signature) or consensus (f+1 matching replies). */
  readonly reads = new Counter({
    name: 'quire_gateway_reads_total',
    help: 'Reads answered, by verification',
    labelNames: ['verified'] as const,
    registers: [this.registry],
  });
  /** Node replies the SDK refused (a failed proof, multi-signature or freshness check), by code. */
  readonly verificationFailures = new Counter({
    name: 'quire_gateway_verification_failures_total',
    help: 'Node replies that failed verification and were not served, by code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  constructor(defaults = true) {
    if (defaults) collectDefaultMetrics({ register: this.registry, prefix: 'quire_gateway_' });
  }

  /** Gauges of the explorer's search index, read when scraped: txns indexed, the ledger size seen, complete or not, name characters kept. */
  watchSearchIndex(index: IndexGaugeSource): void {
    const gauge = (name: string, help: string, value: (s: ReturnType<IndexGaugeSource['status']>) => number): void => {
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(value(index.status()));
        },
      });
    };
    gauge('quire_gateway_search_index_txns', 'Domain txns in the explorer search index', (s) => s.count);
    gauge('quire_gateway_search_index_ledger_size', 'Domain ledger size the search index last saw', (s) => s.size);
    gauge(
      'quire_gateway_search_index_complete',
      '1 when the search index covers all it means to (the whole ledger, or its newest part within the bound)',
      (s) => (s.complete ? 1 : 0),
    );
    gauge('quire_gateway_search_index_name_chars', 'Characters of aliases and schema names the search index keeps', (s) => s.nameChars);
  }
}
