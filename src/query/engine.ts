/**
 * The search engine, generic over resource declarations.
 *
 * A query becomes ranges over numeric columns (half-open, in integers:
 * microseconds, days scaled to microseconds, spots) and predicates for the
 * rest. The planner bounds every range that has an index by binary search,
 * scans the narrowest, applies the other filters and pages. A query that is
 * one range (or none) on the index of the requested order is answered from
 * the bounds alone: its count is their difference and its page a slice, so
 * it touches no record outside the page.
 */
import type { ReadView } from '../../projections/projection.js';
import type { Table } from '../readmodel/table.js';
import type { Identified, NumericKey, SortedIndex } from '../readmodel/sorted-index.js';
import { MICROS_PER_DAY } from '../time.js';
import type { OrderingDef, ParamDef, RangeParam } from './resource.js';
import type { Filter, Operator, SearchQuery } from './schema.js';

export interface SearchResult<R> {
  readonly count: number;
  readonly items: readonly R[];
}

interface Range<R> {
  readonly column: NumericKey<R>;
  readonly index: string | undefined;
  lo: number;
  hi: number;
}

type Predicate<R> = (record: R) => boolean;

interface Plan<R> {
  ranges: Range<R>[];
  predicates: Predicate<R>[];
  /** Set when the query names the record's id. */
  id: string | undefined;
}

/** The half-open integer interval [lo, hi) of column values an operator admits. */
export function intervalOf(type: RangeParam<unknown>['type'] | 'choice', op: Operator, value: number): [number, number] {
  const [first, next] = type === 'date' ? [value * MICROS_PER_DAY, (value + 1) * MICROS_PER_DAY] : [value, value + 1];
  switch (op) {
    case 'eq':
      return [first, next];
    case 'gt':
      return [next, Infinity];
    case 'gte':
      return [first, Infinity];
    case 'lt':
      return [-Infinity, first];
    case 'lte':
      return [-Infinity, next];
  }
}

function plan<R extends Identified>(filters: readonly Filter<R>[], view: ReadView): Plan<R> {
  const p: Plan<R> = { ranges: [], predicates: [], id: undefined };
  const byColumn = new Map<string, Range<R>>();
  for (const { param, op, value } of filters) {
    switch (param.type) {
      case 'text':
      case 'uuid': {
        const wanted = String(value).toLowerCase();
        if (param.primaryKey) {
          if (p.id !== undefined && p.id !== wanted) p.predicates.push(() => false);
          p.id = wanted;
        } else {
          const get = param.value;
          p.predicates.push((r) => get(r, view)?.toLowerCase() === wanted);
        }
        break;
      }
      case 'boolean': {
        const get = param.value;
        p.predicates.push((r) => get(r, view) === value);
        break;
      }
      default: {
        const [lo, hi] = intervalOf(param.type, op, value as number);
        const index = 'index' in param ? param.index : undefined;
        const key = index ?? `param:${param.name}`;
        const range = byColumn.get(key);
        if (range) {
          range.lo = Math.max(range.lo, lo);
          range.hi = Math.min(range.hi, hi);
        } else {
          const fresh: Range<R> = { column: param.column, index, lo, hi };
          byColumn.set(key, fresh);
          p.ranges.push(fresh);
        }
      }
    }
  }
  return p;
}

const inRange =
  <R>({ column, lo, hi }: Range<R>): Predicate<R> =>
  (r) => {
    const v = column(r);
    return v >= lo && v < hi;
  };

function compareIn<R>(index: SortedIndex<R & Identified>, descending: boolean) {
  return descending ? (a: R & Identified, b: R & Identified) => index.compare(b, a) : index.compare;
}

export function search<R extends Identified>(
  table: Table<R> | undefined,
  query: Pick<SearchQuery<R>, 'filters' | 'ordering'>,
  offset: number,
  limit: number,
  view: ReadView,
): SearchResult<R> {
  if (!table) return { count: 0, items: [] };
  const { ranges, predicates, id } = plan(query.filters, view);
  if (ranges.some((r) => r.lo >= r.hi)) return { count: 0, items: [] };
  const ordering = query.ordering;
  const order = table.index(ordering.index);

  if (id !== undefined) {
    const record = table.get(id);
    const checks = [...ranges.map(inRange), ...predicates];
    const hit = record !== undefined && checks.every((check) => check(record));
    return { count: hit ? 1 : 0, items: hit && offset === 0 ? [record] : [] };
  }

  // The narrowest indexed range; without one, the whole order index.
  let chosen: { index: SortedIndex<R>; from: number; to: number; range?: Range<R> } = {
    index: order,
    from: 0,
    to: order.size,
  };
  let bestSize = Infinity;
  for (const range of ranges) {
    if (range.index === undefined || !table.hasIndex(range.index)) continue;
    const index = table.index(range.index);
    const from = index.lowerBound(range.lo);
    const to = index.lowerBound(range.hi);
    if (to - from < bestSize || (to - from === bestSize && index === order)) {
      bestSize = to - from;
      chosen = { index, from, to, range };
    }
  }
  const checks = [...ranges.filter((r) => r !== chosen.range).map(inRange), ...predicates];
  const { index, from, to } = chosen;

  if (index === order) return scanInOrder(index, from, to, ordering, checks, offset, limit);

  const matches: R[] = [];
  const all = index.all;
  for (let i = from; i < to; i++) {
    const r = all[i]!;
    if (checks.every((check) => check(r))) matches.push(r);
  }
  matches.sort(compareIn(order, ordering.descending));
  return { count: matches.length, items: matches.slice(offset, offset + limit) };
}

/** Scan [from, to) of the order index itself: no sort, and no scan at all without checks. */
function scanInOrder<R extends Identified>(
  index: SortedIndex<R>,
  from: number,
  to: number,
  ordering: OrderingDef,
  checks: readonly Predicate<R>[],
  offset: number,
  limit: number,
): SearchResult<R> {
  const all = index.all;
  const at = (k: number) => all[ordering.descending ? to - 1 - k : from + k]!;
  const total = to - from;
  if (checks.length === 0) {
    const items: R[] = [];
    for (let k = offset; k < Math.min(offset + limit, total); k++) items.push(at(k));
    return { count: total, items };
  }
  const items: R[] = [];
  let count = 0;
  for (let k = 0; k < total; k++) {
    const r = at(k);
    if (!checks.every((check) => check(r))) continue;
    if (count >= offset && count < offset + limit) items.push(r);
    count++;
  }
  return { count, items };
}

