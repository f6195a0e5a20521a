/**
 * What protects the API and its clients: a rate limit per API key
 * (@fastify/rate-limit, keyed by the key's id, never the key), answering 429
 * `{detail}` with Retry-After and RateLimit-Limit/-Remaining/-Reset headers
 * on every /api/ answer; CORS only for the origins configured
 * (@fastify/cors); `X-Content-Type-Options: nosniff` on every answer.
 */
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { HttpError } from './errors.js';

export interface RateLimitSettings {
  /** Requests per key per window; 0: no limit. */
  readonly max: number;
  /** "1 minute", "30 seconds", or milliseconds. */
  readonly window: string;
}

/** The rate limit of the /api/ scope it is registered in (after authentication: it is keyed by the key's id). */
export async function limitRate(api: FastifyInstance, settings: RateLimitSettings | undefined, onLimited: () => void): Promise<void> {
  if (!settings || settings.max === 0) return;
  await api.register(rateLimit, {
    global: true,
    hook: 'preHandler',
    max: settings.max,
    timeWindow: /^\d+$/.test(settings.window) ? Number(settings.window) : settings.window,
    keyGenerator: (request) => request.apiKeyId,
    enableDraftSpec: true,
    onExceeded: onLimited,
    errorResponseBuilder: (_request, context) =>
      new HttpError(429, `Too many requests: at most ${context.max} per ${settings.window} for this key; retry in ${context.after}.`),
  });
}

/** Headers for every answer of a JSON API, and CORS for the origins listed (none: off). */
export async function protect(app: FastifyInstance, corsOrigins: readonly string[] | undefined): Promise<void> {
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('x-content-type-options', 'nosniff');
    done(null, payload);
  });
  if (corsOrigins && corsOrigins.length > 0) await app.register(cors, { origin: [...corsOrigins], allowedHeaders: ['API-KEY', 'Content-Type', 'Idempotency-Key'] });
}
