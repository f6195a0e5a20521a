/**
 * The read routes of a resource, generic over its declaration: list,
 * retrieve and (for searchable resources) search. Handlers only parse, call
 * the read model and send the serialized JSON.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Kind, Records } from '../../../projections/records.js';
import { search } from '../../query/engine.js';
import type { ResourceDef } from '../../query/resource.js';
import { listSchema, type SearchQuery, searchSchema, UUID } from '../../query/schema.js';
import type { ReadModel } from '../../readmodel/model.js';
import type { Table } from '../../readmodel/table.js';
import { stampOf } from '../../resources/json.js';
import { readOperation } from '../contract/operations.js';
import { formatOf, sendCsv } from '../csv.js';
import { notFound, rejectOtherMethods } from '../errors.js';
import { checkPage, envelope, offsetOf } from '../pagination.js';
import type { ResponseBuffers } from '../response-buffers.js';

export interface ReadRouteOptions {
  model: ReadModel;
  publicBaseUrl: string | undefined;
  buffers: ResponseBuffers;
}

export const idParams = z.object({ id: z.string().meta({ format: 'uuid', description: 'The record\'s id.' }) });

export function sendJson(reply: FastifyReply, json: Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}

/** Made once per version of a record and of what it nests. */
function stamp<K extends Kind>(def: ResourceDef<K>, model: ReadModel, institutionId: string): number {
  return stampOf(model, def.nests, institutionId) + (def.volatile?.(model) ?? 0);
}

/** The JSON of a page's rows, each followed by a comma, in as few runs of bytes as they are stored in. */
export function pageFragments<K extends Kind>(
  def: ResourceDef<K>,
  model: ReadModel,
  table: Table<Records[K]>,
  rows: readonly number[],
  institutionId: string,
): Buffer[] {
  return table.fragmentRuns(rows, stamp(def, model, institutionId), (record) => def.json(record, model));
}

export function readRoutes<K extends Kind>(def: ResourceDef<K>) {
  const { search: searchable, retrieve } = def.endpoints;
  const querySchema = searchSchema(def);
  return async (parent: FastifyInstance, { model, publicBaseUrl, buffers }: ReadRouteOptions) => {
    const app = parent.withTypeProvider<ZodTypeProvider>();
    const base = `/${def.path}`;

    const answer = (request: FastifyRequest, reply: FastifyReply, query: SearchQuery<Records[K]>) => {
      const table = model.table(def.kind, request.institutionId);
      const { count, rows } = search(table, query, offsetOf(query), query.limit, model, def.groups);
      checkPage(query, count);
      const results = table ? pageFragments(def, model, table, rows, request.institutionId) : [];
      const page = envelope(request, publicBaseUrl, query, count, results, (n) => buffers.take(n, reply.raw));
      // The same page in CSV when asked (with format= or Accept).
      reply.header('vary', 'accept');
      return formatOf(request, query.format) === 'csv' ? sendCsv(reply, page) : sendJson(reply, page);
    };

    app.get(`${base}/`, { schema: { querystring: listSchema(def), ...readOperation(def.path, 'list') } }, async (request, reply) =>
      answer(request, reply, request.query),
    );

    if (searchable) {
      app.get(`${base}/search/`, { schema: { querystring: querySchema, ...readOperation(def.path, 'search') } }, async (request, reply) =>
        answer(request, reply, request.query),
      );
    }

    if (retrieve) app.get(`${base}/:id/`, { schema: { params: idParams, ...readOperation(def.path, 'retrieve') } }, async (request, reply) => {
      const { id } = request.params;
      if (!UUID.test(id)) throw notFound();
      const table = model.table(def.kind, request.institutionId);
      const row = table?.rowOf(id.toLowerCase());
      if (table === undefined || row === undefined) throw notFound();
      if (def.retrieveJson) return sendJson(reply, Buffer.from(def.retrieveJson(table.record(row), model), 'utf8'));
      return sendJson(reply, table.fragment(row, stamp(def, model, request.institutionId), (record) => def.json(record, model)));
    });

    for (const url of [`${base}/`, ...(retrieve ? [`${base}/:id/`] : []), ...(searchable ? [`${base}/search/`] : [])]) {
      rejectOtherMethods(parent, url, ['GET']);
    }
  };
}
