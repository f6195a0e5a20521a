/**
 * POST /api/sites/bulk-create/, /api/sites/assign/, /api/sites/unassign/:
 * parse the body and the Idempotency-Key, build the command, run it
 * through the command handler and send its answer.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { SitesCommandHandler } from '../../commands/handler.js';
import { id } from '../../events/catalog.js';
import type { ReadModel } from '../../readmodel/model.js';
import { formatTimestamp } from '../../time.js';
import { idempotencyHeader, idempotencyOf, send } from '../command-replies.js';
import { writeOperation } from '../contract/operations.js';
import { rejectOtherMethods } from '../errors.js';

export const bulkCreateBody = z.strictObject({
  sites: z
    .array(z.strictObject({ title: z.string().max(200), address: z.string().max(500).optional() }))
    .min(1)
    .max(100),
});

export const membershipBody = z.strictObject({
  site_ids: z.array(id).min(1).max(100),
  user_ids: z.array(id).min(1).max(100),
});

const headers = idempotencyHeader(
  'A retry with the same key and body within 24 hours answers the first response again (Idempotent-Replayed: true) and appends nothing.',
);

export interface SitesWriteOptions {
  model: ReadModel;
  commands: SitesCommandHandler;
}

export async function sitesWriteRoutes(parent: FastifyInstance, { model, commands }: SitesWriteOptions) {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  /** The time the events record. */
  const now = () => formatTimestamp(Date.now() * 1000);

  app.post('/sites/bulk-create/', { schema: { body: bulkCreateBody, headers, ...writeOperation('bulk-create') } }, async (request, reply) => {
    const institution_id = request.institutionId;
    const { sites } = request.body;
    const key = idempotencyOf(request.headers['idempotency-key'], 'bulk-create', sites.map((s) => [s.title, s.address ?? null]));
    const result = await commands.execute(institution_id, () => ({
      kind: 'bulk-create',
      institution_id,
      occurred_at: now(),
      idempotency: key,
      sites,
      new_ids: sites.map(() => randomUUID()),
    }));
    return send(reply, result);
  });

  for (const kind of ['assign', 'unassign'] as const) {
    app.post(`/sites/${kind}/`, { schema: { body: membershipBody, headers, ...writeOperation(kind) } }, async (request, reply) => {
      const institution_id = request.institutionId;
      const { site_ids, user_ids } = request.body;
      const key = idempotencyOf(request.headers['idempotency-key'], kind, [site_ids, user_ids]);
      const result = await commands.execute(institution_id, () => ({
        kind,
        institution_id,
        occurred_at: now(),
        idempotency: key,
        site_ids,
        user_ids,
        known_users: new Set(user_ids.filter((u) => model.get('profile', u)?.institution_id === institution_id)),
      }));
      return send(reply, result);
    });
  }

  for (const path of ['bulk-create', 'assign', 'unassign']) rejectOtherMethods(parent, `/sites/${path}/`, ['POST']);
}
