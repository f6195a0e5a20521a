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
  }
}

export const sha256 = (key: string): string => createHash('sha256').update(key).digest('hex');

export const authPlugin = fp(
  async (app: FastifyInstance, { model }: { model: ReadModel }) => {
    app.decorateRequest('institutionId', '');
    app.addHook('onRequest', async (request) => {
      const key = request.headers['api-key'];
      if (key === undefined || key === '') {
        throw new HttpError(401, 'Authentication credentials were not provided.');
      }
      const record = typeof key === 'string' ? model.apiKey(sha256(key)) : undefined;
      if (!record) throw new HttpError(401, 'Invalid API key.');
      request.institutionId = record.institution_id;
    });
  },
  { name: 'api-key-auth' },
);
