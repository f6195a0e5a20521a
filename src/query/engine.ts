/**
 * The search engine, generic over resource declarations.
 *
 * A query becomes ranges over numeric columns (half-open, in integers:
 * microseconds, days scaled to microseconds, spots) and predicates for the
 * rest. Every range on a column that leads an index is bounded by binary
 * search; the narrowest is scanned, the other filters are applied to its
 * rows, and the page is taken in the requested order.
 *
 * A query that is one range (or none) on the index of the requested order
 * is answered from the bounds alone: its count is their difference and its
 * page a slice, so it touches no row outside the page. So is a range whose
 * rows all share one value of an index that continues in the requested
 * order (spots=4 in start order: the `spots` index is sorted by spots, then
 * by start).
 */
import type { ReadView } from '../../projections/projection.js';
import type { Identified, RowSource, SortedIndex } from '../readmodel/sorted-index.js';
import type { Table } from '../readmodel/table.js';
import { MICROS_PER_DAY } from '../time.js';
import type { Kind } from '../../projections/records.js';
import type { OrderingDef, RangeParam, ResourceDef } from './resource.js';
import type { Filter, Operator, SearchQuery } from './schema.js';

/** How many records match, and the rows of the page asked for, in order. */
export interface SearchResult {
  readonly count: number;
  readonly rows: readonly number[];
}

interface Range {
  readonly column: string;
  lo: number;
  hi: number;
}

type Check = (row: number) => boolean;

interface Plan {
  ranges: Range[];
  predicates: Check[];
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

type Groups<R extends Identified> = ResourceDef<Kind, R>['groups'];

function plan<R extends Identified>(filters: readonly Filter<R>[], table: Table<R>, view: ReadView, groups: Groups<R>): Plan {
  const p: Plan = { ranges: [], predicates: [], id: undefined };
  const grouped = new Map<string, Map<string, string>>();
  const byColumn = new Map<string, Range>();
  const addRange = (column: string, lo: number, hi: number) => {
    const range = byColumn.get(column);
    if (range) {
      range.lo = Math.max(range.lo, lo);
      range.hi = Math.min(range.hi, hi);
    } else {
      const fresh: Range = { column, lo, hi };
      byColumn.set(column, fresh);
      p.ranges.push(fresh);
    }
  };
  for (const { param, op, value } of filters) {
    switch (param.type) {
      case 'text':
      case 'uuid': {
        const wanted = String(value).toLowerCase();
        if (param.group !== undefined) {
          const values = grouped.get(param.group) ?? new Map<string, string>();
          values.set(param.name, wanted);
          grouped.set(param.group, values);
        } else if (param.primaryKey) {
          if (p.id !== undefined && p.id !== wanted) p.predicates.push(() => false);
          p.id = wanted;
        } else if (param.symbol !== undefined) {
          // A comparison of codes: a range of one value on the symbol's column.
          const code = table.code(param.symbol, wanted);
          addRange(param.symbol, code ?? 0, code === undefined ? 0 : code + 1);
        } else if (param.type === 'uuid') {
          // Ids are kept in lower case (the event catalog normalizes them).
          const get = param.value;
          p.predicates.push((row) => {
            const v = get(table.record(row), view);
            return typeof v === 'string' ? v === wanted : Array.isArray(v) && v.includes(wanted);
          });
        } else {
          const get = param.value;
          p.predicates.push((row) => {
            const v = get(table.record(row), view);
            if (typeof v === 'string') return v.toLowerCase() === wanted;
            return Array.isArray(v) && v.some((x: string) => x.toLowerCase() === wanted);
          });
        }
        break;
      }
      case 'boolean': {
        const get = param.value;
        p.predicates.push((row) => get(table.record(row), view) === value);
        break;
      }
      default: {
        const [lo, hi] = intervalOf(param.type, op, value as number);
        addRange(param.column, lo, hi);
      }
    }
  }
  for (const [group, wanted] of grouped) {
    const matches = groups?.[group];
    if (!matches) throw new Error(`no group ${group}`);
    p.predicates.push((row) => matches(table.record(row), wanted, view));
  }
  return p;
}

function inRange(table: Pick<RowSource, 'column'>, { column, lo, hi }: Range): Check {
  const values = table.column(column);
  return (row) => {
    const v = values[row]!;
    return v >= lo && v < hi;
  };
}

function passes(checks: readonly Check[], row: number): boolean {
  for (let i = 0; i < checks.length; i++) if (!checks[i]!(row)) return false;
  return true;
}

/** [from, to) of an index: the rows a range admits. */
interface Span {
  readonly index: SortedIndex;
  readonly from: number;
  readonly to: number;
  readonly range?: Range;
}

/** A comparison in a sort (of integers, natively) costs about this many filter checks of a walk. */
const SORT_COST_PER_COMPARISON = 0.5;

export function search<R extends Identified>(
  table: Table<R> | undefined,
  query: Pick<SearchQuery<R>, 'filters' | 'ordering'>,
  offset: number,
  limit: number,
  view: ReadView,
  groups?: Groups<R>,
): SearchResult {
  if (!table) return { count: 0, rows: [] };
  const { ranges, predicates, id } = plan(query.filters, table, view, groups);
  if (ranges.some((r) => r.lo >= r.hi)) return { count: 0, rows: [] };
  const { ordering } = query;
  const order = table.index(ordering.index);

  if (id !== undefined) {
    const row = table.rowOf(id);
    const hit = row !== undefined && passes([...ranges.map((r) => inRange(table, r)), ...predicates], row);
    return { count: hit ? 1 : 0, rows: hit && offset === 0 ? [row] : [] };
  }

  // Bound every range on a column that leads an index. A range that spans
  // its whole index filters nothing and is dropped.
  const spans: Span[] = [];
  const unindexed: Range[] = [];
  for (const range of ranges) {
    const index = table.indexLedBy(range.column, order);
    if (!index) {
      unindexed.push(range);
      continue;
    }
    const from = index.lowerBound(range.lo);
    const to = index.lowerBound(range.hi);
    if (from === 0 && to === index.size) continue;
    spans.push({ index, from, to, range });
  }
  // The order index's own range, if any: a walk in order stays inside it.
  const inOrder = spans.find((s) => s.index === order) ?? { index: order, from: 0, to: order.size };
  // The narrowest range to scan (the order index wins ties: no sort needed).
  let chosen = inOrder;
  for (const s of spans) if (s.to - s.from < chosen.to - chosen.from) chosen = s;

  const checksBesides = (skip: Span) => [
    ...spans.filter((s) => s !== skip).map((s) => inRange(table, s.range!)),
    ...unindexed.map((r) => inRange(table, r)),
    ...predicates,
  ];
  if (chosen === inOrder || continuesInOrder(table, chosen, order)) {
    return scanInOrder(chosen, ordering.descending, checksBesides(chosen), offset, limit);
  }

  // Scan the narrowest range: the count, and the matches while they are few
  // enough that sorting them might be the cheaper way to the page (with
  // nothing else to check, every row of the range matches: no scan)...
  const checks = checksBesides(chosen);
  const rows = chosen.index.order;
  let count = 0;
  let matches: ArrayLike<number>;
  if (checks.length === 0) {
    count = chosen.to - chosen.from;
    matches = rows.subarray(chosen.from, Math.min(chosen.to, chosen.from + MAX_SORTED));
  } else {
    const found: number[] = [];
    for (let i = chosen.from; i < chosen.to; i++) {
      const row = rows[i]!;
      if (!passes(checks, row)) continue;
      if (count < MAX_SORTED) found.push(row);
      count++;
    }
    matches = found;
  }
  if (offset >= count) return { count, rows: [] };
  // ...then take the page by sorting the matches or by walking the order
  // index until the page is full, whichever touches fewer rows.
  const wanted = Math.min(offset + limit, count);
  const sortCost = count <= MAX_SORTED ? count * Math.log2(count + 1) * SORT_COST_PER_COMPARISON : Infinity;
  const walkCost = (wanted * (inOrder.to - inOrder.from)) / count;
  if (walkCost < sortCost) {
    return { count, rows: scanInOrder(inOrder, ordering.descending, checksBesides(inOrder), offset, limit, true).rows };
  }
  // Sorting the matches is sorting their positions in the order index.
  const ranks = order.ranks();
  const positions = new Uint32Array(matches.length);
  for (let i = 0; i < matches.length; i++) positions[i] = ranks[matches[i]!]!;
  positions.sort();
  const page: number[] = [];
  for (let k = offset; k < wanted; k++) page.push(order.order[positions[ordering.descending ? count - 1 - k : k]!]!);
  return { count, rows: page };
}

/** Matches collected for sorting, at most. */
const MAX_SORTED = 50_000;

/**
 * Whether the rows of a span are already in the order of `order`: they all
 * have one value of their index's leading column, and the index continues
 * with the keys of `order`.
 */
function continuesInOrder(table: Pick<RowSource, 'column'>, span: Span, order: SortedIndex): boolean {
  if (span.to - span.from === 0) return true;
  const keys = span.index.def.keys;
  const orderKeys = order.def.keys;
  if (keys.length !== orderKeys.length + 1 || !orderKeys.every((k, i) => keys[i + 1] === k)) return false;
  const lead = table.column(span.index.leading);
  const rows = span.index.order;
  return lead[rows[span.from]!] === lead[rows[span.to - 1]!];
}

/**
 * The page of the rows of a span that pass the checks, in index order (or
 * reversed). Without checks the page is a slice and the count the span's
 * size; with checks every row is checked for the count, unless `pageOnly`
 * (the count is known) stops the walk once the page is full.
 */
function scanInOrder(
  { index, from, to }: Span,
  descending: boolean,
  checks: readonly Check[],
  offset: number,
  limit: number,
  pageOnly = false,
): SearchResult {
  const rows = index.order;
  const total = to - from;
  const at = (k: number) => rows[descending ? to - 1 - k : from + k]!;
  const page: number[] = [];
  if (checks.length === 0) {
    for (let k = offset; k < Math.min(offset + limit, total); k++) page.push(at(k));
    return { count: total, rows: page };
  }
  let count = 0;
  for (let k = 0; k < total; k++) {
    const row = at(k);
    if (!passes(checks, row)) continue;
    if (count >= offset && count < offset + limit) page.push(row);
    count++;
    if (pageOnly && page.length === limit) break;
  }
  return { count, rows: page };
}

