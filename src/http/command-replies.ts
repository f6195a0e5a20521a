/**
 * What the write routes share: the Idempotency-Key header, a request's
 * identity for it, and a command's answer sent as JSON.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { CommandResult } from '../commands/handler.js';

/** The Idempotency-Key header, as `description` says it is kept. */
export const idempotencyHeader = (description: string) =>
  z.object({ 'idempotency-key': z.string().min(1).max(255).optional().meta({ description }) });

/** The key sent and the request's identity (the operation and its parsed body); undefined without a key. */
export const idempotencyOf = (key: string | undefined, operation: string, body: unknown) =>
  key === undefined ? undefined : { key, sha256: createHash('sha256').update(`${operation}\n${JSON.stringify(body)}`).digest('hex') };

/** A command's answer: its body, or {detail}. */
export function send(reply: FastifyReply, result: CommandResult) {
  if ('detail' in result) return reply.code(result.status).send({ detail: result.detail });
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(result.status).send(result.body);
}
