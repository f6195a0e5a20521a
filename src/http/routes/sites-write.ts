/**
 * POST /api/sites/bulk-create/, /api/sites/assign/, /api/sites/unassign/:
 * parse the body and the Idempotency-Key, build the command, run it
 * through the command handler and send its answer.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { CommandResult, SitesCommandHandler } from '../../commands/handler.js';
import { id } from '../../events/catalog.js';
import type { ReadModel } from '../../readmodel/model.js';
import { formatTimestamp } from '../../time.js';
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

/** The Idempotency-Key header, as `description` says it is kept. */
export const idempotencyHeader = (description: string) =>
  z.object({ 'idempotency-key': z.string().min(1).max(255).optional().meta({ description }) });

const headers = idempotencyHeader(
  'A retry with the same key and body within 24 hours answers the first response again (Idempotent-Replayed: true) and appends nothing.',
);

export interface SitesWriteOptions {
  model: ReadModel;
  commands: SitesCommandHandler;
}

/** The request's identity for Idempotency-Key: the operation and its parsed body. */
export const requestSha256 = (operation: string, body: unknown) =>
  createHash('sha256').update(`${operation}\n${JSON.stringify(body)}`).digest('hex');

/** A command's answer: its body, or {detail}. */
export function send(reply: FastifyReply, result: CommandResult) {
  if ('detail' in result) return reply.code(result.status).send({ detail: result.detail });
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(result.status).send(result.body);
}

export async function sitesWriteRoutes(parent: FastifyInstance, { model, commands }: SitesWriteOptions) {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  /** The time the events record. */
  const now = () => formatTimestamp(Date.now() * 1000);
  const idempotency = (key: string | undefined, operation: string, body: unknown) =>
    key === undefined ? undefined : { key, sha256: requestSha256(operation, body) };

  app.post('/sites/bulk-create/', { schema: { body: bulkCreateBody, headers, ...writeOperation('bulk-create') } }, async (request, reply) => {
    const institution_id = request.institutionId;
    const { sites } = request.body;
    const key = idempotency(request.headers['idempotency-key'], 'bulk-create', sites.map((s) => [s.title, s.address ?? null]));
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
      const key = idempotency(request.headers['idempotency-key'], kind, [site_ids, user_ids]);
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
