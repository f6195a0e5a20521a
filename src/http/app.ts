/**
 * The HTTP application as a Fastify plugin: error handling, /healthz, and
 * under /api the key-authenticated read routes of every resource.
 */
import type { FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { ReadModel } from '../readmodel/model.js';
import type { Projector } from '../readmodel/projector.js';
import type { Position } from '../eventstore/port.js';
import type { Kind } from '../../projections/records.js';
import type { ResourceDef } from '../query/resource.js';
import { resources } from '../resources/index.js';
import { authPlugin } from './auth.js';
import { rememberingQueryValidators } from './query-strings.js';
import { installErrorHandlers } from './errors.js';
import { ResponseBuffers } from './response-buffers.js';
import { readRoutes } from './routes/read.js';
import { sitesWriteRoutes } from './routes/sites-write.js';
import type { SitesCommandHandler } from '../commands/handler.js';

export interface AppServices {
  model: ReadModel;
  projector: Projector;
  commands: SitesCommandHandler;
  publicBaseUrl: string | undefined;
}

export async function app(instance: FastifyInstance, services: AppServices): Promise<void> {
  instance.setValidatorCompiler(rememberingQueryValidators(validatorCompiler));
  instance.setSerializerCompiler(serializerCompiler);
  installErrorHandlers(instance);

  instance.get('/healthz', async () => {
    const { position, caughtUp, eventsApplied, lastError, reconnecting, reconnects } = services.projector.status();
    const lag = await services.projector.lag();
    const at = (p: Position) => ({ commit: p.commit.toString(), prepare: p.prepare.toString() });
    return {
      status: reconnecting ? 'reconnecting' : caughtUp ? 'ok' : 'catching_up',
      position: at(position),
      head: at(lag.head),
      lag: { positions: lag.positions.toString(), ms: lag.ms },
      events_applied: eventsApplied,
      reconnects,
      last_error: lastError ?? null,
    };
  });

  await instance.register(
    async (api) => {
      await api.register(authPlugin, { model: services.model });
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
    },
    { prefix: '/api' },
  );
}
