/**
 * What the OpenAPI document says of each route besides its parameters:
 * operation id, summary, tag and the answers it can give (records from
 * ./records.ts, errors as {detail}). Routes spread these into their
 * `schema`; the app serializes with JSON.stringify, so response schemas
 * here document the answers and never touch them.
 */
import { z } from 'zod';
import * as records from './records.js';

export const SECURITY = [{ apiKey: [] }];

const json = (description: string, schema: z.ZodType) => ({ description, content: { 'application/json': { schema } } });

const ERRORS = {
  400: 'A parameter or the body is invalid; the message names it.',
  401: 'The API-KEY header is missing or not a valid key.',
  404: 'No such record in the institution, or a page past the last ("Invalid page.").',
  405: 'Another method than the path takes (the Allow header lists them).',
  413: 'The body is over 1 MiB.',
  415: 'The body is not application/json.',
  422: 'The Idempotency-Key was used with another body.',
  429: 'Too many requests for this key: retry after Retry-After seconds.',
  503: 'Not ready yet (the read model is being prepared) or the log is unavailable: retry after Retry-After seconds.',
} as const;

/** The {detail} answers of these statuses. */
export function errors(...statuses: Array<keyof typeof ERRORS>) {
  return Object.fromEntries(statuses.map((status) => [status, json(ERRORS[status], records.detail)]));
}

interface Named {
  /** The tag, as the path names it (shifts, form-submissions). */
  readonly tag: string;
  /** One and many, for operation ids (Shift, Shifts). */
  readonly one: string;
  readonly many: string;
  readonly record: z.ZodType;
  readonly description: string;
}

/** By resource path. */
export const RESOURCES: Readonly<Record<string, Named>> = {
  shifts: { tag: 'shifts', one: 'Shift', many: 'Shifts', record: records.shift, description: 'Shifts of opportunities: when, how many spots, how many taken.' },
  opportunities: { tag: 'opportunities', one: 'Opportunity', many: 'Opportunities', record: records.opportunity, description: 'Opportunity roles and their categories.' },
  profiles: { tag: 'profiles', one: 'Profile', many: 'Profiles', record: records.profile, description: 'Volunteer profiles with hours, tags and custom fields.' },
  reservations: { tag: 'reservations', one: 'Reservation', many: 'Reservations', record: records.reservation, description: 'Reservations of shifts by volunteers, with logged hours.' },
  'form-submissions': { tag: 'form-submissions', one: 'FormSubmission', many: 'FormSubmissions', record: records.formSubmission, description: 'Submitted forms with their answers.' },
  sequences: { tag: 'sequences', one: 'Sequence', many: 'Sequences', record: records.sequence, description: 'Onboarding sequences and their steps.' },
  'user-sequences': { tag: 'user-sequences', one: 'UserSequence', many: 'UserSequences', record: records.userSequence, description: 'Volunteers going through sequences.' },
  sites: { tag: 'sites', one: 'Site', many: 'Sites', record: records.site, description: 'Sites and who is assigned to them (the only resource written through the API).' },
};

const pages = new Map<string, z.ZodType>();
/** The list envelope of a resource's records (one schema per resource: a component each). */
export function pageOf(path: string): z.ZodType {
  let page = pages.get(path);
  if (!page) {
    const named = RESOURCES[path]!;
    page = records.page(named.record, `${named.many}Page`);
    pages.set(path, page);
  }
  return page;
}

/** The OpenAPI parts of a read route's schema. */
export function readOperation(path: string, kind: 'list' | 'search' | 'retrieve') {
  const named = RESOURCES[path]!;
  const summary = { list: `List ${named.tag}`, search: `Search ${named.tag}`, retrieve: `Retrieve one of the ${named.tag}` }[kind];
  const operationId = kind === 'retrieve' ? `retrieve${named.one}` : `${kind}${named.many}`;
  return {
    operationId,
    summary,
    tags: [named.tag],
    security: SECURITY,
    response:
      kind === 'retrieve'
        ? { 200: json(`The ${named.one} record.`, named.record), ...errors(401, 404, 405, 429, 503) }
        : {
            200: {
              description: `A page of ${named.tag}; in CSV with format=csv or Accept: text/csv (the count in X-Total-Count, the pages in Link).`,
              content: { 'application/json': { schema: pageOf(path) }, 'text/csv': { schema: z.string() } },
            },
            ...errors(400, 401, 404, 405, 429, 503),
          },
  };
}

/** The OpenAPI parts of a sites write route's schema. */
export function writeOperation(kind: 'bulk-create' | 'assign' | 'unassign') {
  const [operationId, summary, status, description, answer] = {
    'bulk-create': ['bulkCreateSites', 'Create sites (1 to 100; titles unique per institution)', 201, 'The sites created.', records.bulkCreated],
    assign: ['assignUsersToSites', 'Assign every profile to every site given', 200, 'How many pairs were assigned and how many already were.', records.assigned],
    unassign: ['unassignUsersFromSites', 'Remove every profile from every site given', 200, 'How many pairs were removed and how many were not assigned.', records.unassigned],
  }[kind] as [string, string, number, string, z.ZodType];
  return {
    operationId,
    summary,
    tags: ['sites'],
    security: SECURITY,
    response: { [status]: json(description, answer), ...errors(400, 401, 405, 413, 415, 422, 429, 503) },
  };
}

/** The OpenAPI parts of the change feed's route. */
export const CHANGES_OPERATION = {
  operationId: 'listChanges',
  summary: 'The institution\'s changes in log order, after a cursor',
  description:
    'Each event that changed a record of the institution, oldest first: sync what changed since the last run by passing the last next_cursor as after=. No gap and no repeat across pages, also while events are appended; a cursor is a position in the log, valid across restarts, rebuilds and replicas.',
  tags: ['changes'],
  security: SECURITY,
  response: { 200: json('A page of changes.', records.changesPage), ...errors(400, 401, 405, 429, 503) },
};

const WEBHOOK_OPERATIONS = {
  create: ['createWebhook', 'Subscribe a URL to the institution\'s events (Standard Webhooks)', 201, 'The subscription, with its secret (shown only here).', records.webhookCreated, [400, 401, 405, 413, 415, 422, 429, 503]],
  list: ['listWebhooks', 'List the institution\'s webhook subscriptions', 200, 'A page of subscriptions (without their secrets).', records.page(records.webhook, 'WebhooksPage'), [400, 401, 404, 405, 429, 503]],
  retrieve: ['retrieveWebhook', 'Retrieve one webhook subscription', 200, 'The subscription (without its secret).', records.webhook, [401, 404, 405, 429, 503]],
  delete: ['deleteWebhook', 'Unsubscribe: deliveries stop', 204, 'Unsubscribed.', undefined, [400, 401, 404, 405, 413, 415, 429, 503]],
  resume: ['resumeWebhook', 'Resume a paused subscription from the event it stopped at', 200, 'The subscription, active again.', records.webhook, [400, 401, 404, 405, 413, 415, 429, 503]],
  deliveries: ['listWebhookDeliveries', 'Every delivery attempt of a subscription, oldest first', 200, 'A page of attempts.', records.page(records.webhookDelivery, 'WebhookDeliveriesPage'), [400, 401, 404, 405, 429, 503]],
} as const satisfies Record<string, readonly [string, string, number, string, z.ZodType | undefined, ReadonlyArray<keyof typeof ERRORS>]>;

/** The OpenAPI parts of a webhooks route's schema. */
export function webhookOperation(kind: keyof typeof WEBHOOK_OPERATIONS) {
  const [operationId, summary, status, description, answer, statuses] = WEBHOOK_OPERATIONS[kind];
  return {
    operationId,
    summary,
    tags: ['webhooks'],
    security: SECURITY,
    response: { [status]: answer ? json(description, answer) : z.null().meta({ description }), ...errors(...statuses) },
  };
}

/** The tags, in the order the document lists them. */
export const TAGS = [
  ...Object.values(RESOURCES).map(({ tag, description }) => ({ name: tag, description })),
  { name: 'changes', description: 'What changed, in log order: the change feed for incremental sync.' },
  { name: 'webhooks', description: 'Standard Webhooks: subscriptions, signed deliveries of the institution\'s events, and every attempt.' },
  { name: 'operations', description: 'Health, readiness and metrics for operators (no key).' },
];

const position = z.object({ commit: z.string(), prepare: z.string() }).meta({ id: 'LogPosition', description: 'A position in the log (decimal strings)' });
const lag = z
  .object({
    positions: z.string().meta({ description: 'events (embedded log) or bytes of the transaction log (EventStoreDB) behind the head' }),
    ms: z.number().meta({ description: 'how long the read model has been behind that head' }),
  })
  .meta({ id: 'Lag' });

const health = z
  .object({
    status: z.enum(['ok', 'catching_up', 'reconnecting']),
    position,
    head: position,
    lag,
    events_applied: z.int(),
    reconnects: z.int(),
    last_error: z.string().nullable(),
    warm_up: z
      .object({
        phase: z.enum(['starting', 'replaying', 'loading', 'catching_up']),
        done: z.number(),
        total: z.number(),
        percent: z.number(),
        eta_seconds: z.number().nullable(),
      })
      .nullable()
      .meta({ description: 'while serve makes its read model ready: how far' }),
  })
  .meta({ id: 'Health' });

const readiness = z
  .object({ status: z.enum(['ready', 'not_ready']), lag, max_lag_ms: z.int() })
  .meta({ id: 'Readiness' });

/** The operators' routes (no key). */
export const OPERATIONS = {
  health: {
    operationId: 'health',
    summary: 'Liveness, and how far the read model is behind the log',
    tags: ['operations'],
    response: { 200: json('Alive.', health) },
  },
  ready: {
    operationId: 'ready',
    summary: 'Readiness for a load balancer',
    tags: ['operations'],
    response: { 200: json('Ready and caught up.', readiness), 503: json('Not ready, or too far behind the log.', readiness) },
  },
  metrics: {
    operationId: 'metrics',
    summary: 'Prometheus metrics',
    tags: ['operations'],
    response: { 200: { description: 'Prometheus text format.', content: { 'text/plain': { schema: z.string() } } } },
  },
};
