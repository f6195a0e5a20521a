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

/** How a page is written: JSON (the envelope), or CSV (its records as rows). */
export type Format = 'json' | 'csv';

export interface SearchQuery<R> extends Paging {
  readonly ordering: OrderingDef;
  readonly filters: readonly Filter<R>[];
  /** Asked for with `format=` (else the Accept header decides). */
  readonly format?: Format;
}

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;

/** A UUID as query strings and paths take it (any case). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INTEGER = /^[+-]?\d{1,15}$/;

/**
 * How one query-string parameter is read: `parse` takes the text of a key
 * sent once (undefined: not a valid value), and `schema` is the same over
 * whatever Fastify gives (a string, an array of strings for a repeated key)
 * with the error to report.
 */
interface ValueReader<T> {
  readonly parse: (text: string) => T | undefined;
  readonly schema: z.ZodType<T | undefined>;
}

/** One query-string value: a string, or an error when the key was repeated. `''` means absent. */
export function single<T>(sent: string, parse: (text: string) => T | undefined, message: (text: string) => string): ValueReader<T> {
  // Fastify gives a string, or an array of strings for a repeated key.
  const schema = z
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
  return { parse, schema };
}

const BOOLEANS = new Map([
  ['true', true],
  ['false', false],
  ['1', true],
  ['0', false],
]);

const DECIMAL = /^[+-]?\d{1,15}(\.\d{1,15})?$/;
const parseDecimal = (s: string) => (DECIMAL.test(s) ? Number(s) : undefined);
const parseInteger = (s: string) => (INTEGER.test(s) ? Number(s) : undefined);

function valueReader<R>(param: ParamDef<R>, sent: string): ValueReader<string | number | boolean> {
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
    case 'number':
      return single(sent, parseDecimal, () => `Invalid number value for ${sent}.`);
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
        (s) => BOOLEANS.get(s.toLowerCase()),
        () => `Invalid boolean value for ${sent}.`,
      );
  }
}

const paging = {
  page: single(
    'page',
    (s) => {
      const n = parseInteger(s);
      return n !== undefined && n >= 1 ? n : undefined;
    },
    () => 'Invalid page: must be an integer of at least 1.',
  ),
  limit: limitReader(MAX_LIMIT),
};

/** `limit`: an integer from 1 to `max`. */
export function limitReader(max: number): ValueReader<number> {
  return single(
    'limit',
    (s) => {
      const n = parseInteger(s);
      return n !== undefined && n >= 1 && n <= max ? n : undefined;
    },
    () => `Invalid limit: must be an integer from 1 to ${max}.`,
  );
}

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
 * The search query-string schema of a resource: page, limit, ordering and
 * every parameter under its keys. Only the keys a request sends are parsed
 * (a resource answers to a hundred keys or more, a query sends a few);
 * unknown keys are ignored. Errors are reported in declaration order
 * whatever the order of the query string.
 */
export function searchSchema<K extends Kind, R extends { id: string }>(def: ResourceDef<K, R>) {
  return queryStringSchema(def, () => true, () => true);
}

/** The query-string schema of a resource's list: page and limit, and what `filteredList` says it takes besides. */
export function listSchema<K extends Kind, R extends { id: string }>(def: ResourceDef<K, R>) {
  const taken = def.endpoints.filteredList;
  if (taken === true) return searchSchema(def);
  if (taken === false) return queryStringSchema(def, () => false, () => false);
  return queryStringSchema(def, (param) => taken.params.includes(param.name), (ordering) => taken.orderings.includes(ordering));
}

function queryStringSchema<K extends Kind, R extends { id: string }>(
  def: ResourceDef<K, R>,
  takesParam: (param: ParamDef<R>) => boolean,
  takesOrdering: (name: string) => boolean,
) {
  interface Field {
    readonly rank: number;
    readonly reader: ValueReader<string | number | boolean | OrderingDef | Format>;
    readonly route?: { param: ParamDef<R>; op: Operator };
  }
  const fields = new Map<string, Field>();
  const add = (key: string, reader: Field['reader'], route?: Field['route']) => fields.set(key, { rank: fields.size, reader, route });
  add('page', paging.page);
  add('limit', paging.limit);
  add(
    'format',
    single('format', (s): Format | undefined => (s === 'json' || s === 'csv' ? s : undefined), (s) => `Invalid format "${s}": use json or csv.`),
  );
  const orderingNames = Object.keys(def.orderings).filter(takesOrdering);
  for (const param of def.params.filter(takesParam)) {
    for (const { key, op } of keysOf(param)) add(key, valueReader(param, key), { param, op });
  }
  // A resource without orderings does not take the parameter (it is then ignored, as unknown).
  if (orderingNames.length > 0) {
    add(
      'ordering',
      single(
        'ordering',
        (s) => (orderingNames.includes(s) ? def.orderings[s] : undefined),
        (s) => `Invalid ordering "${s}": use one of ${orderingNames.join(', ')}.`,
      ),
    );
  }

  const queryString = z.custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v));
  // What the OpenAPI document shows for this query string: every key it reads (the parsing below is by hand, for speed).
  const documented = { type: 'object', properties: Object.fromEntries([...fields].map(([key, field]) => [key, documentationOf(key, field.route, def, orderingNames)])) };
  return queryString.meta(documented).transform((q, ctx): SearchQuery<R> => {
    const query: { -readonly [P in keyof SearchQuery<R>]: SearchQuery<R>[P] } = { page: 1, limit: DEFAULT_LIMIT, ordering: def.defaultOrdering, filters: [] };
    let found: Array<{ rank: number; filter: Filter<R> }> | undefined;
    let issues: Array<{ rank: number; message: string }> | undefined;
    for (const key of Object.keys(q)) {
      const field = fields.get(key);
      if (field === undefined) continue;
      const sent = q[key];
      if (sent === '') continue;
      // A text sent once is read directly; anything else (or a text that is
      // no valid value) through the schema, which says what is wrong.
      let value = typeof sent === 'string' ? field.reader.parse(sent) : undefined;
      if (value === undefined) {
        const parsed = field.reader.schema.safeParse(sent);
        if (!parsed.success) {
          issues ??= [];
          for (const issue of parsed.error.issues) issues.push({ rank: field.rank, message: issue.message });
          continue;
        }
        if (parsed.data === undefined) continue;
        value = parsed.data;
      }
      if (field.route) {
        const { param, op } = field.route;
        (found ??= []).push({ rank: field.rank, filter: { param, op, value: value as Filter<R>['value'], sent: key } });
      } else if (key === 'ordering') query.ordering = value as OrderingDef;
      else if (key === 'format') query.format = value as Format;
      else query[key as 'page' | 'limit'] = value as number;
    }
    if (issues !== undefined) {
      issues.sort((a, b) => a.rank - b.rank);
      for (const { message } of issues) ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    if (found !== undefined) {
      if (found.length > 1) found.sort((a, b) => a.rank - b.rank);
      query.filters = found.map((f) => f.filter);
    }
    return query;
  });
}

const PAGE_DOCUMENTED = { type: 'integer', minimum: 1, default: 1, description: 'Page number, from 1.' };
const LIMIT_DOCUMENTED = { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Records per page.' };

/** The query string of a list with no filters (page and limit; other keys ignored), documented as the resources' lists are. */
export const pagingSchema = z
  .custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v))
  .meta({ type: 'object', properties: { page: PAGE_DOCUMENTED, limit: LIMIT_DOCUMENTED } })
  .transform((q, ctx): Paging => {
    const page = paging.page.schema.safeParse(q.page);
    const limit = paging.limit.schema.safeParse(q.limit);
    for (const parsed of [page, limit]) {
      if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message });
    }
    if (!page.success || !limit.success) return z.NEVER;
    return { page: page.data ?? 1, limit: limit.data ?? DEFAULT_LIMIT };
  });

const MAX_INTEGER = 10 ** 15 - 1;
const SUFFIX_WORDS: Record<Operator, string> = { eq: 'equal to', gt: 'after (greater than)', gte: 'from (greater than or equal to)', lt: 'before (less than)', lte: 'up to (less than or equal to)' };

/** The JSON Schema of one query-string key, for the OpenAPI document: type, format, bounds and what it matches. */
function documentationOf<K extends Kind, R extends { id: string }>(
  key: string,
  route: { param: ParamDef<R>; op: Operator } | undefined,
  def: ResourceDef<K, R>,
  orderingNames: readonly string[],
): Record<string, unknown> {
  if (key === 'page') return PAGE_DOCUMENTED;
  if (key === 'format') return { type: 'string', enum: ['json', 'csv'], default: 'json', description: 'csv: the page\'s records as CSV rows (nested fields as dotted columns, arrays as JSON; paging in the Link header). Accept: text/csv does the same.' };
  if (key === 'limit') return LIMIT_DOCUMENTED;
  if (key === 'ordering') {
    const names = [...orderingNames];
    const standard = names.find((n) => def.orderings[n] === def.defaultOrdering);
    return { type: 'string', enum: names, ...(standard ? { default: standard } : {}), description: 'Sort order; a leading - is descending.' };
  }
  const { param, op } = route!;
  const alias = key.split('.').slice(0, op === 'eq' ? undefined : -1).join('.') !== param.name ? ` (alias of ${param.name})` : '';
  const compared = op === 'eq' ? '' : ` — ${SUFFIX_WORDS[op]} the value`;
  switch (param.type) {
    case 'text':
      return { type: 'string', description: `Exact match, case-insensitive${alias}.` };
    case 'uuid':
      return { type: 'string', format: 'uuid', description: `Exact match${alias}.` };
    case 'timestamp':
      return {
        type: 'string',
        format: 'date-time',
        description: `RFC 3339 date-time; a date alone means its midnight UTC, no zone means UTC${compared}${alias}.`,
      };
    case 'date':
      return { type: 'string', format: 'date', description: `A day (UTC)${compared}${alias}.` };
    case 'time':
      return { type: 'string', format: 'time', description: `Time of day, HH:MM[:SS[.ffffff]] UTC${compared}${alias}.` };
    case 'integer':
      return { type: 'integer', minimum: -MAX_INTEGER, maximum: MAX_INTEGER, description: `A whole number${compared}${alias}.` };
    case 'number':
      return { type: 'number', minimum: -MAX_INTEGER, maximum: MAX_INTEGER, description: `A number, decimals after a point${compared}${alias}.` };
    case 'choice':
      return { type: 'integer', enum: [...param.choices], description: `One of the values${alias}.` };
    case 'boolean':
      return { type: 'boolean', description: `true or false (1 or 0)${alias}.` };
  }
}
