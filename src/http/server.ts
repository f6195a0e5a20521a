/** The HTTP server: a Fastify instance around the app plugin. */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Runtime } from '../runtime.js';
import { SitesCommandHandler } from '../commands/handler.js';
import { app } from './app.js';
import { QueryStringCache } from './query-strings.js';
import { workInBackground } from '../readmodel/background.js';
import type { Readiness } from '../readmodel/warm-up.js';

export const BODY_LIMIT = 1024 * 1024;

export async function createServer(runtime: Runtime, logger: FastifyBaseLogger, publicBaseUrl?: string, readiness?: Readiness): Promise<FastifyInstance> {
  const server = Fastify({
    loggerInstance: logger,
    routerOptions: { ignoreTrailingSlash: true, querystringParser: new QueryStringCache().parse },
    bodyLimit: BODY_LIMIT,
  });
  const commands = new SitesCommandHandler(runtime.store, runtime.projector);
  await server.register(app, { model: runtime.model, projector: runtime.projector, commands, publicBaseUrl, readiness });
  const background = workInBackground(runtime.model);
  server.addHook('onClose', async () => background.stop());
  return server;
}
