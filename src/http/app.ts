/**
 * The HTTP application as a Fastify plugin: error handling, /healthz, and
 * under /api the key-authenticated read routes of every resource.
 */
import type { FastifyInstance } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { docsPage, openApiDocument } from './contract/document.js';
import { OPERATIONS } from './contract/operations.js';
import type { ReadModel } from '../readmodel/model.js';
import type { Projector } from '../readmodel/projector.js';
import type { Position } from '../eventstore/port.js';
import type { Kind } from '../../projections/records.js';
import type { ResourceDef } from '../query/resource.js';
import { resources } from '../resources/index.js';
import { identifyKey, requireKey } from './auth.js';
import { rememberingQueryValidators } from './query-strings.js';
import { HttpError, installErrorHandlers } from './errors.js';
import { metricsPlugin } from './metrics.js';
import { limitRate, protect, type RateLimitSettings } from './protection.js';
import { conditionalGets } from './etags.js';
import compress from '@fastify/compress';
import zlib from 'node:zlib';
import type { Readiness } from '../readmodel/warm-up.js';
import { ResponseBuffers } from './response-buffers.js';
import { readRoutes } from './routes/read.js';
import { sitesWriteRoutes } from './routes/sites-write.js';
import { changesRoutes } from './routes/changes.js';
import type { SitesCommandHandler } from '../commands/handler.js';
import type { WebhookCommands } from '../commands/webhooks.js';
import { webhookRoutes } from './routes/webhooks.js';

/** Behind the log's head for this long, /healthz says catching_up rather than ok (an append is applied within ms). */
export const BEHIND_AFTER_MS = 1000;

export interface AppServices {
  model: ReadModel;
  projector: Projector;
  commands: SitesCommandHandler;
  webhooks: WebhookCommands;
  publicBaseUrl: string | undefined;
  /** Whether the read model is ready to serve, and how far it is (absent: it is). */
  readiness?: Readiness | undefined;
  /** /readyz says not ready while the read model is more than this far behind the log (ms). */
  readyMaxLagMs: number;
  /** Requests per API key per window (absent: no limit). */
  rateLimit?: RateLimitSettings | undefined;
  /** Origins allowed to call from a browser (absent: CORS off). */
  corsOrigins?: readonly string[] | undefined;
  /** false: without compression, ETags, metrics, CORS and security headers (the benchmark's comparison). */
  surface: boolean;
  /** More routes under /api/, after the resources' (the benchmark's constant routes: through the same hooks). */
  apiRoutes?: ((api: FastifyInstance) => void) | undefined;
}

export async function app(instance: FastifyInstance, services: AppServices): Promise<void> {
  instance.setValidatorCompiler(rememberingQueryValidators(validatorCompiler));
  // Response schemas document the answers (the OpenAPI document); the answers themselves are written as they are.
  instance.setSerializerCompiler(() => (data) => JSON.stringify(data));
  await openApiDocument(instance);
  installErrorHandlers(instance);
  // Bodies are JSON: any other Content-Type is a 415.
  instance.removeContentTypeParser('text/plain');
  if (services.surface) {
    await protect(instance, services.corsOrigins);
    // gzip or brotli when the client asks; brotli at a quality that costs about what gzip does (11, the default, is far slower).
    // Every answer (at most a few hundred KB) is compressed in one synchronous call: the plugin's stream path, its default
    // above 8 KB on two cores, cost 700 µs of CPU per 27 KB answer, against about 100 µs in one call.
    await instance.register(compress, {
      threshold: 1024,
      syncThreshold: 1024 * 1024,
      brotliOptions: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } },
    });
  }

  const { readiness } = services;
  instance.get('/healthz', { schema: OPERATIONS.health }, async () => {
    const { position, caughtUp, eventsApplied, lastError, reconnecting, reconnects } = services.projector.status();
    const lag = await services.projector.lag();
    const at = (p: Position) => ({ commit: p.commit.toString(), prepare: p.prepare.toString() });
    const ready = readiness?.ready() ?? true;
    const warming = ready ? null : readiness!.progress();
    return {
      // Behind the log for more than a moment (a live import, a burst of writes) is catching up too, not ok.
      status: !ready ? 'catching_up' : reconnecting ? 'reconnecting' : caughtUp && lag.ms < BEHIND_AFTER_MS ? 'ok' : 'catching_up',
      position: at(position),
      head: at(lag.head),
      lag: { positions: lag.positions.toString(), ms: lag.ms },
      events_applied: eventsApplied,
      reconnects,
      last_error: lastError ?? null,
      // While the read model is being made ready: what it is doing, how far, and about how long is left.
      warm_up: warming && { phase: warming.phase, done: warming.done, total: warming.total, percent: warming.percent, eta_seconds: warming.etaSeconds },
    };
  });

  // Readiness for a load balancer: the read model ready, caught up with the log, and not too far behind it.
  instance.get('/readyz', { schema: OPERATIONS.ready }, async (_request, reply) => {
    const { caughtUp } = services.projector.status();
    const lag = await services.projector.lag();
    const ready = (readiness?.ready() ?? true) && caughtUp && lag.ms <= services.readyMaxLagMs;
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'not_ready',
      lag: { positions: lag.positions.toString(), ms: lag.ms },
      max_lag_ms: services.readyMaxLagMs,
    });
  });
  if (services.surface) await instance.register(metricsPlugin, { model: services.model, projector: services.projector });
  await docsPage(instance);

  await instance.register(
    async (api) => {
      if (readiness) {
        // Until the read model is ready nothing under /api/ can be answered: say so, and when to come back.
        api.addHook('onRequest', async (_request, reply) => {
          if (readiness.ready()) return;
          const { phase, percent, etaSeconds } = readiness.progress();
          const retry = Math.min(60, Math.max(1, etaSeconds ?? 5));
          reply.header('retry-after', String(retry));
          throw new HttpError(503, `The read model is being prepared (${phase.replace('_', ' ')}, ${percent} %); retry in ${retry} s.`);
        });
      }
      await api.register(identifyKey, { model: services.model });
      if (services.surface) await limitRate(api, services.rateLimit, () => instance.countRateLimited());
      requireKey(api);
      if (services.surface) conditionalGets(api, services.model);
      const options = { model: services.model, publicBaseUrl: services.publicBaseUrl, buffers: new ResponseBuffers() };
      const register = <K extends Kind>(def: ResourceDef<K>) => api.register(readRoutes(def), options);
      await register(resources.shifts);
      await register(resources.opportunities);
      await register(resources.profiles);
      await register(resources.reservations);
      await register(resources.formSubmissions);
      await register(resources.sequences);
      await register(resources.userSequences);
      await register(resources.sites);
      await api.register(sitesWriteRoutes, { model: services.model, commands: services.commands });
      await api.register(changesRoutes, { changes: services.projector.changes });
      await api.register(webhookRoutes, { model: services.model, commands: services.webhooks, publicBaseUrl: services.publicBaseUrl });
      services.apiRoutes?.(api);
    },
    { prefix: '/api' },
  );
}
