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
    const hit = record !== undefined && passes([...ranges.map(inRange), ...predicates], record);
    return { count: hit ? 1 : 0, items: hit && offset === 0 ? [record] : [] };
  }

  // Bound every indexed range by binary search. A range that spans its
  // whole index filters nothing and is dropped.
  interface Bounded {
    readonly index: SortedIndex<R>;
    readonly from: number;
    readonly to: number;
    readonly range?: Range<R>;
  }
  const bounded: Bounded[] = [];
  const unindexed: Range<R>[] = [];
  for (const range of ranges) {
    if (range.index === undefined || !table.hasIndex(range.index)) {
      unindexed.push(range);
      continue;
    }
    const index = table.index(range.index);
    const from = index.lowerBound(range.lo);
    const to = index.lowerBound(range.hi);
    if (from === 0 && to === index.size) continue;
    bounded.push({ index, from, to, range });
  }
  const whole: Bounded = { index: order, from: 0, to: order.size };
  // The order index's own range, if any: a walk in order stays inside it.
  const inOrder = bounded.find((b) => b.index === order) ?? whole;
  // The narrowest range to scan (the order index wins ties: no sort needed).
  let chosen = inOrder;
  for (const b of bounded) if (b.to - b.from < chosen.to - chosen.from) chosen = b;

  const checksBesides = (skip: Bounded) => [
    ...bounded.filter((b) => b !== skip).map((b) => inRange(b.range!)),
    ...unindexed.map(inRange),
    ...predicates,
  ];
  if (chosen === inOrder) return scanInOrder(order, inOrder.from, inOrder.to, ordering, checksBesides(inOrder), offset, limit);

  // Scan the narrowest range for the matches (this is the count)...
  const checks = checksBesides(chosen);
  const matches: R[] = [];
  const all = chosen.index.all;
  for (let i = chosen.from; i < chosen.to; i++) {
    const r = all[i]!;
    if (passes(checks, r)) matches.push(r);
  }
  const count = matches.length;
  const wanted = Math.min(offset + limit, count);
  if (offset >= count) return { count, items: [] };
  // ...then take the page either by sorting the matches, or, when they are
  // many and the page is near the front, by walking the order index until
  // the page is full: whichever touches fewer records.
  const sortCost = count * Math.log2(count + 1) * SORT_COST_PER_COMPARISON;
  const walkCost = (wanted * (inOrder.to - inOrder.from)) / count;
  if (walkCost < sortCost) {
    return { count, items: walkInOrder(order, inOrder.from, inOrder.to, ordering, checksBesides(inOrder), offset, limit) };
  }
  matches.sort(compareIn(order, ordering.descending));
  return { count, items: matches.slice(offset, offset + limit) };
}

/** A comparison in a sort costs about this many filter checks of a walk. */
const SORT_COST_PER_COMPARISON = 3;

function passes<R>(checks: readonly Predicate<R>[], record: R): boolean {
  for (let i = 0; i < checks.length; i++) if (!checks[i]!(record)) return false;
  return true;
}

/** The page of the matches of [from, to) of the order index, stopping as soon as it is full. */
function walkInOrder<R extends Identified>(
  index: SortedIndex<R>,
  from: number,
  to: number,
  ordering: OrderingDef,
  checks: readonly Predicate<R>[],
  offset: number,
  limit: number,
): R[] {
  const all = index.all;
  const items: R[] = [];
  let seen = 0;
  for (let k = 0; k < to - from && items.length < limit; k++) {
    const r = all[ordering.descending ? to - 1 - k : from + k]!;
    if (!passes(checks, r)) continue;
    if (seen >= offset) items.push(r);
    seen++;
  }
  return items;
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
    if (!passes(checks, r)) continue;
    if (count >= offset && count < offset + limit) items.push(r);
    count++;
  }
  return { count, items };
}

