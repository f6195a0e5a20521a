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

/**
 * The rate limit of the /api/ scope it is registered in: after the key is
 * identified (it is keyed by the key's id) and before anything can refuse
 * the request (a 401, a 400 of its parameters: every answer carries the
 * headers and counts). Requests without a live key are counted by their
 * address: trying keys one after another is limited too.
 */
export async function limitRate(api: FastifyInstance, settings: RateLimitSettings | undefined, onLimited: () => void): Promise<void> {
  if (!settings || settings.max === 0) return;
  await api.register(rateLimit, {
    // Its hook is added below, with the scope's: the plugin's own (`global`) would run after them.
    global: false,
    max: settings.max,
    timeWindow: /^\d+$/.test(settings.window) ? Number(settings.window) : settings.window,
    keyGenerator: (request) => request.apiKeyId || `address ${request.ip}`,
    enableDraftSpec: true,
    onExceeded: onLimited,
    errorResponseBuilder: (request, context) =>
      new HttpError(
        429,
        `Too many requests: at most ${context.max} per ${settings.window} ${request.apiKeyId ? 'for this key' : 'from this address without a valid key'}; retry in ${context.after}.`,
      ),
  });
  api.addHook('onRequest', api.rateLimit());
}

/** Headers for every answer of a JSON API, and CORS for the origins listed (none: off). */
export async function protect(app: FastifyInstance, corsOrigins: readonly string[] | undefined): Promise<void> {
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('x-content-type-options', 'nosniff');
    done(null, payload);
  });
  if (corsOrigins && corsOrigins.length > 0) {
    await app.register(cors, {
      origin: [...corsOrigins],
      // Every method the API answers (a webhook is deleted), and what a page's script sends and reads.
      methods: ['GET', 'HEAD', 'POST', 'DELETE'],
      allowedHeaders: ['API-KEY', 'Content-Type', 'Idempotency-Key', 'If-None-Match'],
      exposedHeaders: ['ETag', 'Link', 'X-Total-Count', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'Idempotent-Replayed'],
    });
  }
}
