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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INTEGER = /^[+-]?\d{1,15}$/;

/** One query-string value: a string, or an error when the key was repeated. `''` means absent. */
function single<T>(sent: string, parse: (text: string) => T | undefined, message: (text: string) => string) {
  return z
    .union([z.string(), z.array(z.string())])
    .optional()
    .transform((value, ctx): T | undefined => {
      if (Array.isArray(value)) {
        ctx.addIssue({ code: 'custom', message: `Parameter ${sent} was sent more than once.` });
        return z.NEVER;
      }
      if (value === undefined || value === '') return undefined;
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

/** The search query-string schema of a resource. */
export function searchSchema<K extends Kind, R extends { id: string }>(def: ResourceDef<K, R>) {
  const routes = new Map<string, { param: ParamDef<R>; op: Operator }>();
  const shape: Record<string, z.ZodType> = { ...pagingShape };
  for (const param of def.params) {
    for (const { key, op } of keysOf(param)) {
      routes.set(key, { param, op });
      shape[key] = valueSchema(param, key);
    }
  }
  const orderingNames = Object.keys(def.orderings);
  shape.ordering = single(
    'ordering',
    (s) => (Object.hasOwn(def.orderings, s) ? def.orderings[s] : undefined),
    (s) => `Invalid ordering "${s}": use one of ${orderingNames.join(', ')}.`,
  );
  return z
    .object(shape)
    .transform((q): SearchQuery<R> => {
      const filters: Filter<R>[] = [];
      for (const [key, route] of routes) {
        const value = q[key] as string | number | boolean | undefined;
        if (value !== undefined) filters.push({ ...route, value, sent: key });
      }
      return {
        page: q.page as number,
        limit: q.limit as number,
        ordering: (q.ordering as OrderingDef | undefined) ?? def.defaultOrdering,
        filters,
      };
    });
}
