/**
 * Query strings read once. Clients repeat their queries (a dashboard
 * polling the same search, pages of one listing), and reading a query
 * string — splitting it, then running the route's zod schema over it —
 * costs about as much as the search it asks for. So:
 *
 * - the parser remembers the object each recent query string parsed to
 *   (frozen: every request with that string shares it), and
 * - each route's validator remembers what its schema made of each such
 *   object (also frozen), keyed by the object itself: a query string
 *   parsed anew is validated anew, and a string that failed validation is
 *   checked again each time (only successes are kept).
 *
 * Both depend on the text alone (the schemas read no state), so a
 * remembered answer is the answer. Bounded: past `capacity` strings the
 * oldest is forgotten; strings longer than `MAX_LENGTH` are not kept.
 */
import { parse } from 'fast-querystring';
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';

/** Query strings longer than this are parsed every time (nobody repeats them much; they would crowd the cache). */
const MAX_LENGTH = 2048;

/** Query strings remembered by default. */
export const QUERY_STRINGS_REMEMBERED = 4096;

export class QueryStringCache {
  private readonly parsed = new Map<string, Readonly<Record<string, unknown>>>();

  constructor(private readonly capacity = QUERY_STRINGS_REMEMBERED) {}

  /** What Fastify's default parser makes of `text` (find-my-way's: fast-querystring); shared and frozen unless too long to keep. */
  parse = (text: string): Record<string, unknown> => {
    let query = this.parsed.get(text);
    if (query !== undefined) return query;
    query = text.length === 0 ? {} : (parse(text) as Record<string, unknown>);
    // Not kept, not frozen: nor is its validation remembered.
    if (text.length > MAX_LENGTH) return query;
    freezeShallow(query);
    if (this.parsed.size >= this.capacity) this.parsed.delete(this.parsed.keys().next().value!);
    this.parsed.set(text, query);
    return query;
  };
}

type ValidationResult = { value: unknown } | { error: Error | FastifySchemaValidationError[] };

/**
 * A validator compiler that compiles with `compile` and, for query
 * strings, remembers each successful result by the (shared, frozen) object
 * it was made from. The result's value is frozen (with its arrays): the
 * handlers of every request with that query string share it.
 */
export function rememberingQueryValidators<S>(compile: FastifySchemaCompiler<S>): FastifySchemaCompiler<S> {
  return (route) => {
    const validate = compile(route) as (data: unknown) => ValidationResult;
    if (route.httpPart !== 'querystring') return validate;
    const results = new WeakMap<object, ValidationResult>();
    return (data: unknown) => {
      const frozen = typeof data === 'object' && data !== null && Object.isFrozen(data);
      const known = frozen ? results.get(data) : undefined;
      if (known !== undefined) return known;
      const result = validate(data);
      if (frozen && typeof result === 'object' && result !== null && 'value' in result) {
        freezeShallow(result.value);
        results.set(data, Object.freeze(result));
      }
      return result;
    };
  };
}

/** Freeze an object and the arrays among its own values (what a parsed query or a validated one holds). */
function freezeShallow(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  for (const field of Object.values(value)) if (Array.isArray(field)) Object.freeze(field);
  Object.freeze(value);
}
