/**
 * GET /metrics in Prometheus's text format (prom-client), without a key:
 * requests by route pattern and status code (a counter and a latency
 * histogram), the projection's position, its lag in events and in
 * milliseconds, events applied, resubscriptions, records per resource,
 * the bytes of the records' JSON cache and of the rank matrices, requests
 * refused by the rate limit, and prom-client's default process metrics.
 * Each registry is the server's own (tests start many servers).
 */
import { OPERATIONS } from './contract/operations.js';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { kinds } from '../../projections/records.js';
import { LOG_BUFFER_BYTES, logDrops } from '../logger.js';
import { fragmentArena } from '../readmodel/fragment-store.js';
import { rankMatrices } from '../readmodel/order-ranks.js';
import type { ReadModel } from '../readmodel/model.js';
import type { Projector } from '../readmodel/projector.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts a request the rate limit refused (the rate-limit plugin calls it). */
    countRateLimited(): void;
  }
}

/**
 * How often the default metrics' event-loop monitor samples, in ms (prom-client's default, made explicit). Its
 * `nodejs_eventloop_lag_*` figures are the intervals it measured between its samples, this interval included: an
 * idle loop reads about 0.010 s, and a loop held d ms reads d to d + 10 ms, as the hold falls between two samples
 * (held 25 ms, five times: 26.6-34.5 ms).
 */
export const EVENT_LOOP_SAMPLE_MS = 10;

export interface MetricsOptions {
  model: ReadModel;
  projector: Projector;
}

export const metricsPlugin = fp(
  async (app: FastifyInstance, { model, projector }: MetricsOptions) => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    const labelNames = ['route', 'status'] as const;
    const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered, by route pattern and status code', labelNames, registers: [registry] });
    const latency = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to sending its answer, by route pattern and status code',
      labelNames,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    });
    const limited = new Counter({ name: 'http_rate_limited_total', help: 'Requests refused by the rate limit', registers: [registry] });
    const status = () => projector.status();
    new Gauge({
      name: 'projection_position',
      help: 'The log position the read model reflects (commit)',
      registers: [registry],
      collect() {
        this.set(Number(status().position.commit));
      },
    });
    new Gauge({
      name: 'projection_events_applied',
      help: 'Events applied by the projector since start',
      registers: [registry],
      collect() {
        this.set(status().eventsApplied);
      },
    });
    new Gauge({
      name: 'projection_resubscriptions',
      help: 'Times the projection subscription was lost and re-established',
      registers: [registry],
      collect() {
        this.set(status().reconnects);
      },
    });
    const lagEvents = new Gauge({ name: 'projection_lag_positions', help: 'How far the read model is behind the log head (events on the embedded log, bytes on EventStoreDB)', registers: [registry] });
    const lagMs = new Gauge({ name: 'projection_lag_milliseconds', help: 'How long the read model has been behind the log head', registers: [registry] });
    new Gauge({
      name: 'read_model_records',
      help: 'Records in the read model, by kind',
      labelNames: ['kind'],
      registers: [registry],
      collect() {
        for (const kind of kinds) this.set({ kind }, model.count(kind));
      },
    });

    new Gauge({
      name: 'read_model_fragment_cache_bytes',
      help: 'Bytes the cache of records\' JSON holds (FRAGMENT_CACHE_MB bounds it; it fills as pages are asked for)',
      registers: [registry],
      collect() {
        this.set(fragmentArena.bytes);
      },
    });

    new Gauge({
      name: 'read_model_rank_matrix_bytes',
      help: 'Bytes of the rank matrices made for searches read in another index\'s order, and of the positions and codes walks read instead of columns (made as searches want them, within RANK_MATRIX_MB)',
      registers: [registry],
      collect() {
        this.set(model.rankBytes());
      },
    });

    let matricesCounted = 0;
    new Counter({
      name: 'read_model_rank_matrices_let_go_total',
      help: 'Rank matrices let go of to stay within RANK_MATRIX_MB (growing steadily: the searches of the day want more, and make them again)',
      registers: [registry],
      collect() {
        this.inc(rankMatrices.letGoForBudget - matricesCounted);
        matricesCounted = rankMatrices.letGoForBudget;
      },
    });

    let dropsCounted = 0;
    new Counter({
      name: 'log_lines_dropped_total',
      help: `Log lines dropped because stdout took no more and the lines waiting filled their buffer (${LOG_BUFFER_BYTES / 2 ** 20} MB)`,
      registers: [registry],
      collect() {
        this.inc(logDrops.count - dropsCounted);
        dropsCounted = logDrops.count;
      },
    });

    app.decorate('countRateLimited', () => limited.inc());
    // The children of each route and status, made once: prom-client hashes the labels on every call otherwise.
    const children = new Map<string, { requests: Counter.Internal; latency: Histogram.Internal<(typeof labelNames)[number]> }>();
    app.addHook('onResponse', (request, reply, done) => {
      const route = request.routeOptions.url ?? 'unknown';
      const key = `${reply.statusCode} ${route}`;
      let child = children.get(key);
      if (!child) {
        const labels = { route, status: String(reply.statusCode) };
        child = { requests: requests.labels(labels), latency: latency.labels(labels) };
        children.set(key, child);
      }
      child.requests.inc();
      child.latency.observe(reply.elapsedTime / 1000);
      done();
    });
    app.get('/metrics', { schema: OPERATIONS.metrics }, async (_request, reply) => {
      const lag = await projector.lag();
      lagEvents.set(Number(lag.positions));
      lagMs.set(lag.ms);
      return reply.type(registry.contentType).send(await registry.metrics());
    });
  },
  { name: 'metrics' },
);
