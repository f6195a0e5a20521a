/**
 * API-KEY authentication: the key's SHA-256 is looked up among the live
 * keys of the read model; the request then sees only that institution.
 * Keys are never logged or stored in plain text.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { ReadModel } from '../readmodel/model.js';
import { HttpError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    institutionId: string;
    /** The id of the API key the request was made with (never the key: rate limits and logs use this). */
    apiKeyId: string;
    /** Why the request has no live key ('' when it has one): what its 401 says. */
    keyRefusal: string;
  }
}

export const sha256 = (key: string): string => createHash('sha256').update(key).digest('hex');

/**
 * Recently seen keys and their hashes, so a client's every request does not
 * hash its key again. Only the mapping key → hash is cached: whether the
 * hash belongs to a live key is looked up on every request, so revocation
 * takes effect at once. Bounded; the oldest entry goes first.
 */
class HashCache {
  private readonly entries = new Map<string, string>();

  constructor(private readonly capacity: number) {}

  hash(key: string): string {
    let hashed = this.entries.get(key);
    if (hashed === undefined) {
      hashed = sha256(key);
      if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, hashed);
    }
    return hashed;
  }
}

/**
 * Who a request is from: the institution and key id of its API-KEY, or why
 * it has none (`keyRefusal`). Refused by `requireKey`, registered after the
 * rate limit: that way a request without a valid key is counted too (by its
 * address), and its 401 carries the RateLimit headers every /api/ answer has.
 */
export const identifyKey = fp(
  async (app: FastifyInstance, { model }: { model: ReadModel }) => {
    const hashes = new HashCache(1024);
    app.decorateRequest('institutionId', '');
    app.decorateRequest('apiKeyId', '');
    app.decorateRequest('keyRefusal', '');
    app.addHook('onRequest', (request, _reply, done) => {
      const key = request.headers['api-key'];
      const record = typeof key === 'string' && key !== '' ? model.apiKey(hashes.hash(key)) : undefined;
      if (record) {
        request.institutionId = record.institution_id;
        // (The request's line says whose it was: see request-log.ts.)
        request.apiKeyId = record.id;
      } else request.keyRefusal = key === undefined || key === '' ? 'Authentication credentials were not provided.' : 'Invalid API key.';
      done();
    });
  },
  { name: 'api-key-identify' },
);

/** Answer 401 to a request `identifyKey` found no live key on. */
export function requireKey(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => done(request.keyRefusal === '' ? undefined : new HttpError(401, request.keyRefusal)));
}
