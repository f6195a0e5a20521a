/**
 * The HTTP application as a Fastify plugin: error handling, /healthz, and
 * under /api the key-authenticated read routes of every resource.
 */
import type { FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { ReadModel } from '../readmodel/model.js';
import type { Projector } from '../readmodel/projector.js';
import { resources } from '../resources/index.js';
import { authPlugin } from './auth.js';
import { HttpError, installErrorHandlers } from './errors.js';
import { readRoutes } from './routes/read.js';

export interface AppServices {
  model: ReadModel;
  projector: Projector;
  publicBaseUrl: string | undefined;
}

const OTHER_METHODS = ['DELETE', 'PATCH', 'POST', 'PUT'] as const;

/** Answer 405 to the methods a path does not take (Fastify would say 404). */
function methodNotAllowed(app: FastifyInstance, allowed: readonly string[]) {
  app.addHook('onRoute', (route) => {
    if ((route.config as { methodGuard?: boolean } | undefined)?.methodGuard) return;
    const methods = [route.method].flat();
    if (!methods.includes('GET')) return;
    const others = OTHER_METHODS.filter((m) => !allowed.includes(m) && !methods.includes(m));
    app.route({
      method: [...others],
      url: route.url,
      config: { methodGuard: true },
      handler: async (request) => {
        throw new HttpError(405, `Method "${request.method}" not allowed.`);
      },
    });
  });
}

export async function app(instance: FastifyInstance, services: AppServices): Promise<void> {
  instance.setValidatorCompiler(validatorCompiler);
  instance.setSerializerCompiler(serializerCompiler);
  installErrorHandlers(instance);

  instance.get('/healthz', async () => {
    const { position, caughtUp, eventsApplied, lastError } = services.projector.status();
    return {
      status: caughtUp ? 'ok' : 'catching_up',
      position: { commit: position.commit.toString(), prepare: position.prepare.toString() },
      events_applied: eventsApplied,
      last_error: lastError ?? null,
    };
  });

  await instance.register(
    async (api) => {
      methodNotAllowed(api, []);
      await api.register(authPlugin, { model: services.model });
      const options = { model: services.model, publicBaseUrl: services.publicBaseUrl };
      await api.register(readRoutes(resources.shifts, { search: true }), options);
      await api.register(readRoutes(resources.opportunities, { search: true }), options);
    },
    { prefix: '/api' },
  );
}
