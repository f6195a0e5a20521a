/**
 * /api/webhooks/: subscribe, list, retrieve, unsubscribe, resume, and
 * each subscription's delivery attempts. Parse, run the command or read
 * the model, send. A key sees only its institution's webhooks (another's
 * is a 404).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { deliveryId } from '../../../projections/webhooks.js';
import type { WebhookRecord } from '../../../projections/records.js';
import type { WebhookCommands } from '../../commands/webhooks.js';
import { deliverableType, webhookUrl } from '../../events/catalog.js';
import { type Paging, pagingSchema, UUID } from '../../query/schema.js';
import type { ReadModel } from '../../readmodel/model.js';
import { deliveryView, webhookView } from '../../webhooks/views.js';
import { idempotencyHeader, idempotencyOf, send } from '../command-replies.js';
import { webhookOperation } from '../contract/operations.js';
import { notFound, rejectOtherMethods } from '../errors.js';
import { checkPage, envelope, offsetOf } from '../pagination.js';
import { idParams, sendJson } from './read.js';

const headers = idempotencyHeader(
  'A retry with the same key and body answers the first response again, secret included (Idempotent-Replayed: true), and appends nothing; the key names the subscription for good, so another body with it is a 422.',
);

export const subscribeBody = z.strictObject({
  url: webhookUrl,
  event_types: z
    .array(deliverableType)
    .max(100)
    .optional()
    .meta({ description: 'Event types of the catalog to deliver; empty or absent: every type webhooks deliver' }),
});

export interface WebhookRouteOptions {
  model: ReadModel;
  commands: WebhookCommands;
  publicBaseUrl: string | undefined;
}

export async function webhookRoutes(parent: FastifyInstance, { model, commands, publicBaseUrl }: WebhookRouteOptions) {
  const app = parent.withTypeProvider<ZodTypeProvider>();

  /** The key's institution's webhook named by the path (else 404). */
  const webhookOf = (request: FastifyRequest, id: string): WebhookRecord => {
    const webhook = UUID.test(id) ? model.get('webhook', id.toLowerCase()) : undefined;
    if (webhook?.institution_id !== request.institutionId) throw notFound();
    return webhook;
  };

  /** A page of rows as the list envelope. */
  const page = <T>(request: FastifyRequest, reply: FastifyReply, query: Paging, count: number, rows: readonly T[]) => {
    checkPage(query, count);
    const runs = rows.length === 0 ? [] : [Buffer.from(rows.map((row) => `${JSON.stringify(row)},`).join(''), 'utf8')];
    return sendJson(reply, envelope(request, publicBaseUrl, query, count, runs, (n) => Buffer.allocUnsafe(n)));
  };

  app.post('/webhooks/', { schema: { body: subscribeBody, headers, ...webhookOperation('create') } }, async (request, reply) => {
    const { url, event_types = [] } = request.body;
    const idempotency = idempotencyOf(request.headers['idempotency-key'], 'webhook', [url, [...new Set(event_types)].sort()]);
    return send(reply, await commands.subscribe(request.institutionId, { url, event_types, idempotency }));
  });

  app.get('/webhooks/', { schema: { querystring: pagingSchema, ...webhookOperation('list') } }, async (request, reply) => {
    const mine = [...model.records('webhook')]
      .filter((w) => w.institution_id === request.institutionId)
      .sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const offset = offsetOf(request.query);
    return page(request, reply, request.query, mine.length, mine.slice(offset, offset + request.query.limit).map(webhookView));
  });

  app.get('/webhooks/:id/', { schema: { params: idParams, ...webhookOperation('retrieve') } }, async (request) =>
    webhookView(webhookOf(request, request.params.id)),
  );

  app.delete('/webhooks/:id/', { schema: { params: idParams, ...webhookOperation('delete') } }, async (request, reply) => {
    const webhook = webhookOf(request, request.params.id);
    return send(reply, await commands.unsubscribe(request.institutionId, webhook.id));
  });

  app.post('/webhooks/:id/resume/', { schema: { params: idParams, ...webhookOperation('resume') } }, async (request, reply) => {
    const webhook = webhookOf(request, request.params.id);
    return send(reply, await commands.resume(request.institutionId, webhook.id));
  });

  app.get('/webhooks/:id/deliveries/', { schema: { params: idParams, querystring: pagingSchema, ...webhookOperation('deliveries') } }, async (request, reply) => {
    const webhook = webhookOf(request, request.params.id);
    const from = offsetOf(request.query);
    const to = Math.min(from + request.query.limit, webhook.deliveries);
    const rows = [];
    for (let n = from; n < to; n++) {
      const delivery = model.get('webhookdelivery', deliveryId(webhook.id, n));
      if (delivery) rows.push(deliveryView(delivery));
    }
    return page(request, reply, request.query, webhook.deliveries, rows);
  });

  rejectOtherMethods(parent, '/webhooks/', ['GET', 'POST']);
  rejectOtherMethods(parent, '/webhooks/:id/', ['GET', 'DELETE']);
  rejectOtherMethods(parent, '/webhooks/:id/resume/', ['POST']);
  rejectOtherMethods(parent, '/webhooks/:id/deliveries/', ['GET']);
}
