/** One error handler and one not-found handler: every error body is `{"detail": …}`. */
import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { StoreUnavailableError } from '../eventstore/port.js';

export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}

export const notFound = () => new HttpError(404, 'Not found.');

/** A header's name as it is usually written (idempotency-key → Idempotency-Key). */
const headerName = (name: string) => name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | HttpError | StoreUnavailableError, request, reply) => {
    if (error instanceof HttpError) return reply.code(error.statusCode).send({ detail: error.detail });
    if (hasZodFastifySchemaValidationErrors(error)) {
      const issue = error.validation[0];
      const field = issue?.instancePath.replace(/^\//, '').replaceAll('/', '.');
      const message = issue?.message ?? 'Invalid request.';
      const detail =
        error.validationContext === 'body' && field
          ? `${field}: ${message}`
          : error.validationContext === 'headers' && field
            ? `${headerName(field)} header: ${message}`
            : message;
      return reply.code(400).send({ detail });
    }
    if (error instanceof StoreUnavailableError) {
      request.log.warn({ err: error }, 'event store unavailable');
      return reply.code(503).send({ detail: 'The event store is unavailable; retry the request.' });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const detail = status === 413 ? 'Request body is too large.' : error.message;
      return reply.code(status).send({ detail });
    }
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send({ detail: 'A server error occurred.' });
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ detail: 'Not found.' }));
}

/** (A CORS preflight, an OPTIONS with Access-Control-Request-Method, is answered by @fastify/cors's hook first.) */
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** Answer 405 on `url` to the methods it does not take (Fastify alone would say 404). */
export function rejectOtherMethods(app: FastifyInstance, url: string, allowed: readonly (typeof METHODS)[number][]): void {
  // (Fastify answers HEAD wherever GET is taken.)
  const allow = (allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed).join(', ');
  app.route({
    method: METHODS.filter((m) => !allowed.includes(m)),
    url,
    // The catch-all for other methods: the document lists the methods a path takes (and 405 under each).
    schema: { hide: true },
    handler: async (request, reply) => {
      reply.header('allow', allow);
      throw new HttpError(405, `Method "${request.method}" not allowed.`);
    },
  });
}
