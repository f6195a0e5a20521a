/**
 * The OpenAPI 3.1 document, made at start-up by @fastify/swagger from the
 * routes as registered: their zod schemas (query strings as the resource
 * declarations describe them, bodies, headers, path parameters) turned into
 * JSON Schema by fastify-type-provider-zod's transforms, and the records of
 * ./records.ts as components. Served at GET /api/openapi.json (no key), and
 * rendered at /docs by Swagger UI, its assets served from its package (no
 * CDN). (Scalar's reference was tried first: its 4 MB script, one string in
 * its module, added 250 ms to every start-up.)
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { version } from '../../version.js';
import { TAGS } from './operations.js';

export const OPENAPI_PATH = '/api/openapi.json';
export const DOCS_PATH = '/docs';

type Document = ReturnType<typeof jsonSchemaTransformObject>;
interface WithSchemas {
  paths?: unknown;
  components?: { schemas?: Record<string, unknown> };
}

/**
 * The transform makes an input and an output component of every registered
 * schema; ours are answers, so the `…Input` copies that nothing refers to go.
 */
function withoutUnusedInputs(document: Document): Document {
  const { paths, components } = document as WithSchemas;
  const schemas = components?.schemas ?? {};
  const used = new Set<string>();
  const visit = (value: unknown) => {
    for (const [, name] of JSON.stringify(value ?? null).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      if (used.has(name!)) continue;
      used.add(name!);
      visit(schemas[name!]);
    }
  };
  visit(paths);
  for (const [name, schema] of Object.entries(schemas)) if (!name.endsWith('Input')) visit(schema);
  const kept = Object.fromEntries(Object.entries(schemas).filter(([name]) => !name.endsWith('Input') || used.has(name)));
  return { ...document, components: { ...components, schemas: kept } } as Document;
}

const header = (name: string, description: string) => ({ name, in: 'header' as const, required: true, schema: { type: 'string' as const }, description });

/** What a subscription's URL receives (OpenAPI 3.1 `webhooks`; WebhookPayload is a component as every record with an id is). */
const WEBHOOKS = {
  event: {
    post: {
      operationId: 'receiveEvent',
      summary: 'An event of the institution, delivered to a subscription\'s URL',
      description:
        'Standard Webhooks: POSTed once per event (at least once: a retry has the same webhook-id), in log order per subscription; ' +
        'verify webhook-signature with the subscription\'s secret (e.g. the standardwebhooks package). Answer 2xx within 10 s, ' +
        'else the attempt is retried with backoff, and the subscription pauses after the last.',
      tags: ['webhooks'],
      parameters: [
        header('webhook-id', 'The event\'s id: the same on every retry (deduplicate on it).'),
        header('webhook-timestamp', 'Unix seconds of this attempt.'),
        header('webhook-signature', 'v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>"> with the secret\'s bytes.'),
      ],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/WebhookPayload' } } } },
      responses: {
        '2XX': { description: 'Received: the next event of the subscription follows.' },
        default: { description: 'Any other answer, or none within the timeout: retried.' },
      },
    },
  },
};

/** Register before any route: the document is made of the routes registered after it. */
export async function openApiDocument(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Volunteer Management API',
        version: version(),
        description:
          'Read access to an institution\'s volunteer data — shifts, opportunities, profiles, reservations, form submissions, ' +
          'sequences, user sequences and sites — and writes of sites. Every /api/ operation needs the API-KEY header; a key ' +
          'sees only its institution\'s records. Lists are paginated ({count, next, previous, results}; page from 1, limit 1–100).',
      },
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'API-KEY' } } },
      tags: TAGS,
      webhooks: WEBHOOKS,
    },
    transform: jsonSchemaTransform,
    transformObject: (document) => withoutUnusedInputs(jsonSchemaTransformObject(document)),
  });
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async (_request, reply) => reply.type('application/json; charset=utf-8').send(JSON.stringify(app.swagger())));
}

/** The interactive reference at /docs (Swagger UI, its assets served from the package: nothing is fetched from the network). */
export async function docsPage(app: FastifyInstance): Promise<void> {
  await app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    logLevel: 'warn',
    // The package's policy, but for `upgrade-insecure-requests`: a server on plain HTTP at any address but loopback
    // would have the browser fetch every asset over HTTPS, and show a blank page.
    staticCSP: true,
    transformStaticCSP: (header) => header.replace(/\s*upgrade-insecure-requests;?/, ''),
    uiConfig: { docExpansion: 'list', deepLinking: true, defaultModelsExpandDepth: 0, tryItOutEnabled: true },
  });
}
