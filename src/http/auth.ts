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

export const authPlugin = fp(
  async (app: FastifyInstance, { model }: { model: ReadModel }) => {
    const hashes = new HashCache(1024);
    app.decorateRequest('institutionId', '');
    app.decorateRequest('apiKeyId', '');
    app.addHook('onRequest', (request, reply, done) => {
      const key = request.headers['api-key'];
      if (key === undefined || key === '') {
        return done(new HttpError(401, 'Authentication credentials were not provided.'));
      }
      const record = typeof key === 'string' ? model.apiKey(hashes.hash(key)) : undefined;
      if (!record) return done(new HttpError(401, 'Invalid API key.'));
      request.institutionId = record.institution_id;
      // (The request's line says whose it was: see request-log.ts.)
      request.apiKeyId = record.id;
      done();
    });
  },
  { name: 'api-key-auth' },
);
