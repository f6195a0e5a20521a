/**
 * The read routes of a resource, generic over its declaration: list,
 * retrieve and (for searchable resources) search. Handlers only parse, call
 * the read model and send the serialized JSON.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Kind } from '../../../projections/records.js';
import { search } from '../../query/engine.js';
import type { ResourceDef } from '../../query/resource.js';
import { pagingSchema, searchSchema } from '../../query/schema.js';
import type { ReadModel } from '../../readmodel/model.js';
import { notFound, rejectOtherMethods } from '../errors.js';
import { checkPage, envelope, offsetOf } from '../pagination.js';
import type { ResponseBuffers } from '../response-buffers.js';

export interface ReadRouteOptions {
  model: ReadModel;
  publicBaseUrl: string | undefined;
  buffers: ResponseBuffers;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const idParams = z.object({ id: z.string() });

export function sendJson(reply: FastifyReply, json: Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}

export function readRoutes<K extends Kind>(def: ResourceDef<K>, { search: searchable }: { search: boolean }) {
  const querySchema = searchSchema(def);
  return async (parent: FastifyInstance, { model, publicBaseUrl, buffers }: ReadRouteOptions) => {
    const app = parent.withTypeProvider<ZodTypeProvider>();
    const base = `/${def.path}`;

    app.get(`${base}/`, { schema: { querystring: pagingSchema } }, async (request, reply) => {
      const paging = request.query;
      const table = model.table(def.kind, request.institutionId);
      const { count, items } = search(table, { filters: [], ordering: def.defaultOrdering }, offsetOf(paging), paging.limit, model);
      checkPage(paging, count);
      const results = items.map((r) => def.serialize(r, model));
      return sendJson(reply, envelope(request, publicBaseUrl, paging, count, results, (n) => buffers.take(n, reply.raw)));
    });

    if (searchable) {
      app.get(`${base}/search/`, { schema: { querystring: querySchema } }, async (request, reply) => {
        const query = request.query;
        const table = model.table(def.kind, request.institutionId);
        const { count, items } = search(table, query, offsetOf(query), query.limit, model);
        checkPage(query, count);
        const results = items.map((r) => def.serialize(r, model));
        return sendJson(reply, envelope(request, publicBaseUrl, query, count, results, (n) => buffers.take(n, reply.raw)));
      });
    }

    app.get(`${base}/:id/`, { schema: { params: idParams } }, async (request, reply) => {
      const { id } = request.params;
      if (!UUID.test(id)) throw notFound();
      const record = model.table(def.kind, request.institutionId)?.get(id.toLowerCase());
      if (!record) throw notFound();
      return sendJson(reply, def.serialize(record, model));
    });

    for (const url of [`${base}/`, `${base}/:id/`, ...(searchable ? [`${base}/search/`] : [])]) {
      rejectOtherMethods(parent, url, ['GET']);
    }
  };
}
