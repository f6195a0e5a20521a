/**
 * Query-string schemas, generated with zod from a resource's declarations:
 * every parameter under its name and aliases, with the range suffixes where
 * it takes them, page, limit and ordering. Parsing yields typed filters or
 * a 400 whose message names the parameter as it was sent.
 */
import { z } from 'zod';
import { parseDate, parseTimeOfDay, parseTimestamp } from '../time.js';
import type { OrderingDef, ParamDef, ResourceDef } from './resource.js';
import type { Kind } from '../../projections/records.js';

export const operators = ['eq', 'gt', 'gte', 'lt', 'lte'] as const;
export type Operator = (typeof operators)[number];

export interface Filter<R> {
  readonly param: ParamDef<R>;
  readonly op: Operator;
  readonly value: string | number | boolean;
  /** The parameter as it was sent (`date.gte`). */
  readonly sent: string;
}

export interface Paging {
  readonly page: number;
  readonly limit: number;
}

export interface SearchQuery<R> extends Paging {
  readonly ordering: OrderingDef;
  readonly filters: readonly Filter<R>[];
}

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;

/** A UUID as query strings and paths take it (any case). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INTEGER = /^[+-]?\d{1,15}$/;

/** One query-string value: a string, or an error when the key was repeated. `''` means absent. */
function single<T>(sent: string, parse: (text: string) => T | undefined, message: (text: string) => string) {
  // Fastify gives a string, or an array of strings for a repeated key.
  return z
    .unknown()
    .optional()
    .transform((value, ctx): T | undefined => {
      if (Array.isArray(value)) {
        ctx.addIssue({ code: 'custom', message: `Parameter ${sent} was sent more than once.` });
        return z.NEVER;
      }
      if (value === undefined || value === '') return undefined;
      if (typeof value !== 'string') {
        ctx.addIssue({ code: 'custom', message: message(String(value)) });
        return z.NEVER;
      }
      const parsed = parse(value);
      if (parsed === undefined) {
        ctx.addIssue({ code: 'custom', message: message(value) });
        return z.NEVER;
      }
      return parsed;
    });
}

const parseInteger = (s: string) => (INTEGER.test(s) ? Number(s) : undefined);

function valueSchema<R>(param: ParamDef<R>, sent: string) {
  switch (param.type) {
    case 'text':
      return single(sent, (s) => s, () => '');
    case 'uuid':
      return single(sent, (s) => (UUID.test(s) ? s.toLowerCase() : undefined), () => `Invalid UUID value for ${sent}.`);
    case 'timestamp':
      return single(sent, parseTimestamp, () => `Invalid datetime format for ${sent}.`);
    case 'date':
      return single(sent, parseDate, () => `Invalid date format for ${sent}.`);
    case 'time':
      return single(sent, parseTimeOfDay, () => `Invalid time format for ${sent}.`);
    case 'integer':
      return single(sent, parseInteger, () => `Invalid integer value for ${sent}.`);
    case 'choice':
      return single(
        sent,
        (s) => {
          const n = parseInteger(s);
          return n !== undefined && param.choices.includes(n) ? n : undefined;
        },
        () => `Invalid value for ${sent}.`,
      );
    case 'boolean':
      return single(
        sent,
        (s) => ({ true: true, false: false, '1': true, '0': false })[s.toLowerCase()],
        () => `Invalid boolean value for ${sent}.`,
      );
  }
}

export const pagingShape = {
  page: single(
    'page',
    (s) => {
      const n = parseInteger(s);
      return n !== undefined && n >= 1 ? n : undefined;
    },
    () => 'Invalid page: must be an integer of at least 1.',
  ).transform((n) => n ?? 1),
  limit: single(
    'limit',
    (s) => {
      const n = parseInteger(s);
      return n !== undefined && n >= 1 && n <= MAX_LIMIT ? n : undefined;
    },
    () => `Invalid limit: must be an integer from 1 to ${MAX_LIMIT}.`,
  ).transform((n) => n ?? DEFAULT_LIMIT),
};

/** page and limit only (list endpoints). */
export const pagingSchema = z.object(pagingShape);

/** Every key a parameter answers to: name and aliases, each with the range suffixes where they apply. */
export function keysOf<R>(param: ParamDef<R>): Array<{ key: string; op: Operator }> {
  const names = [param.name, ...(param.aliases ?? [])];
  const ranged = 'range' in param && param.range;
  return names.flatMap((name) => [
    { key: name, op: 'eq' as Operator },
    ...(ranged ? operators.filter((op) => op !== 'eq').map((op) => ({ key: `${name}.${op}`, op })) : []),
  ]);
}

/**
 * The search query-string schema of a resource. Only the keys a request
 * sends are parsed (a resource answers to a hundred keys or more, a query
 * sends a few); unknown keys are ignored. Errors are reported in
 * declaration order whatever the order of the query string.
 */
export function searchSchema<K extends Kind, R extends { id: string }>(def: ResourceDef<K, R>) {
  interface Field {
    readonly rank: number;
    readonly schema: z.ZodType;
    readonly route?: { param: ParamDef<R>; op: Operator };
  }
  const fields = new Map<string, Field>();
  const add = (key: string, schema: z.ZodType, route?: Field['route']) =>
    fields.set(key, { rank: fields.size, schema, route });
  add('page', pagingShape.page);
  add('limit', pagingShape.limit);
  for (const param of def.params) {
    for (const { key, op } of keysOf(param)) add(key, valueSchema(param, key), { param, op });
  }
  const orderingNames = Object.keys(def.orderings);
  // A resource without orderings does not take the parameter (it is then ignored, as unknown).
  if (orderingNames.length > 0) add(
    'ordering',
    single(
      'ordering',
      (s) => (Object.hasOwn(def.orderings, s) ? def.orderings[s] : undefined),
      (s) => `Invalid ordering "${s}": use one of ${orderingNames.join(', ')}.`,
    ),
  );

  const queryString = z.custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v));
  return queryString.transform((q, ctx): SearchQuery<R> => {
    const query = { page: 1, limit: DEFAULT_LIMIT, ordering: def.defaultOrdering, filters: [] as Filter<R>[] };
    const found: Array<{ rank: number; filter: Filter<R> }> = [];
    const issues: Array<{ rank: number; message: string }> = [];
    for (const key of Object.keys(q)) {
      const field = fields.get(key);
      if (field === undefined) continue;
      const parsed = field.schema.safeParse(q[key]);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) issues.push({ rank: field.rank, message: issue.message });
        continue;
      }
      const value = parsed.data as string | number | boolean | OrderingDef | undefined;
      if (value === undefined) continue;
      if (field.route) {
        const { param, op } = field.route;
        found.push({ rank: field.rank, filter: { param, op, value: value as Filter<R>['value'], sent: key } });
      }
      else if (key === 'ordering') query.ordering = value as OrderingDef;
      else query[key as 'page' | 'limit'] = value as number;
    }
    if (issues.length > 0) {
      issues.sort((a, b) => a.rank - b.rank);
      for (const { message } of issues) ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    if (found.length > 1) found.sort((a, b) => a.rank - b.rank);
    query.filters = found.map((f) => f.filter);
    return query;
  });
}
