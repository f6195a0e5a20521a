/** The HTTP server: a Fastify instance around the app plugin. */
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RouteOptions } from 'fastify';
import type { Runtime } from '../runtime.js';
import { SitesCommandHandler } from '../commands/handler.js';
import { app } from './app.js';
import { QueryStringCache } from './query-strings.js';
import { refusalOptions, refuseLongUrls } from './refusals.js';
import { RequestLog } from './request-log.js';
import type { RateLimitSettings } from './protection.js';
import { workInBackground } from '../readmodel/background.js';
import type { Readiness } from '../readmodel/warm-up.js';
import { WebhookCommands } from '../commands/webhooks.js';
import { AddressGuard } from '../webhooks/address-guard.js';
import { Deliverer } from '../webhooks/deliverer.js';
import { SecretBox } from '../webhooks/secrets.js';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from '../webhooks/settings.js';

export const BODY_LIMIT = 1024 * 1024;

/** A request must arrive whole within this time (else 408). */
export const REQUEST_TIMEOUT_MS = 30_000;

export interface ServerOptions {
  readonly publicBaseUrl?: string | undefined;
  /** Whether the read model is ready to serve (absent: it is). */
  readonly readiness?: Readiness | undefined;
  readonly requestTimeoutMs?: number;
  /** /readyz's bound on the read model's lag (ms). */
  readonly readyMaxLagMs?: number;
  /** Requests per API key per window (absent: no limit). */
  readonly rateLimit?: RateLimitSettings | undefined;
  /** Origins allowed to call from a browser (absent: CORS off). */
  readonly corsOrigins?: readonly string[] | undefined;
  /** Told of every route as it is registered. */
  readonly onRoute?: (route: RouteOptions) => void;
  /**
   * false: the API alone, without compression, ETags, metrics, rate limit,
   * CORS and security headers (for the benchmark's comparison; default true).
   */
  readonly surface?: boolean;
  /** More routes under /api/ (behind the key and every hook): the benchmark's constant routes. */
  readonly apiRoutes?: (api: FastifyInstance) => void;
  /** The WEBHOOK_* settings (the defaults when absent). */
  readonly webhooks?: WebhookSettings;
}

export async function createServer(runtime: Runtime, logger: FastifyBaseLogger, options: ServerOptions = {}): Promise<FastifyInstance> {
  const requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const server = Fastify({
    loggerInstance: logger,
    logController: new RequestLog(),
    routerOptions: { ignoreTrailingSlash: true, querystringParser: new QueryStringCache().parse },
    bodyLimit: BODY_LIMIT,
    requestTimeout,
    // Node looks for requests past their time every 30 s by default: a 408 would come that much late.
    http: { connectionsCheckingInterval: Math.min(1000, requestTimeout) },
    ...refusalOptions,
  });
  refuseLongUrls(server);
  if (options.onRoute) server.addHook('onRoute', options.onRoute);
  const { publicBaseUrl, readiness } = options;
  const commands = new SitesCommandHandler(runtime.store, runtime.projector);
  const settings = options.webhooks ?? DEFAULT_WEBHOOK_SETTINGS;
  const secrets = new SecretBox(settings.secretKey);
  const webhooks = new WebhookCommands({
    store: runtime.store,
    projector: runtime.projector,
    model: runtime.model,
    secrets,
    guard: new AddressGuard(settings.allowPrivateNetworks),
    allowHttp: settings.allowHttp,
  });
  await server.register(app, { model: runtime.model, projector: runtime.projector, commands, webhooks, publicBaseUrl, readiness, readyMaxLagMs: options.readyMaxLagMs ?? 5000,
    rateLimit: options.rateLimit,
    corsOrigins: options.corsOrigins,
    surface: options.surface ?? true,
    apiRoutes: options.apiRoutes,
  });
  // An answer finished while the server closes tells the client to let go of the connection, which then closes: a
  // keep-alive connection left idle after it would hold the close until its timeout (and SIGTERM past its 10 s).
  let closing = false;
  server.addHook('preClose', async () => {
    closing = true;
  });
  // A callback hook, not an async one: it runs on every answer, and a flag test needs no promise.
  server.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  // Not while the read model loads (it would slow the load, and be made again as more records come).
  const background = workInBackground(runtime.model, readiness && (() => readiness.ready()));
  server.addHook('onClose', async () => background.stop());
  // Every institution's sites registry folded once the read model is ready, ahead of its first command (the first
  // fold reads the registry's whole history). Stopped at close after the page under way, without waiting for it (a
  // read that fails as the log closes is left to a command to meet again: there will be none).
  const folding = new AbortController();
  server.addHook('onReady', async () => {
    void (async () => {
      while (!(readiness?.ready() ?? true)) {
        await sleep(100);
        if (folding.signal.aborted) return;
      }
      await commands.foldAll(Array.from(runtime.model.records('institution'), (institution) => institution.id), folding.signal);
    })();
  });
  server.addHook('onClose', async () => folding.abort());
  // Webhook deliveries run beside the server: from when it is ready until it closes (before the log does).
  const deliverer = new Deliverer({ ...runtime, settings, secrets, log: logger, ready: readiness && (() => readiness.ready()) });
  server.addHook('onReady', async () => deliverer.start());
  server.addHook('onClose', async () => deliverer.stop());
  return server;
}
