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
 *
 * Ranges on the first two keys of an index (or on its second key alone)
 * are a skip scan: for each value of the first key, the rows in the second
 * range are one block of the index, found by binary search. A day ordered
 * by spots is then a block per spots value, in order, counted from bounds;
 * a start-time window within a date window, one block per start time.
 */
import type { ReadView } from '../../projections/projection.js';
import type { Identified, RowSource, SortedIndex } from '../readmodel/sorted-index.js';
import type { Table } from '../readmodel/table.js';
import { MICROS_PER_DAY } from '../time.js';
import type { Kind } from '../../projections/records.js';
import type { RangeParam, ResourceDef } from './resource.js';
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

/**
 * Rows of an index the query can be answered from: disjoint [from, to)
 * blocks of index positions, in index order, whose rows all satisfy the
 * ranges they cover. One range on the leading column is one block; a skip
 * scan gives a block per value of the leading column.
 */
interface Span {
  readonly index: SortedIndex;
  /** from, to, from, to, … ascending. */
  readonly blocks: readonly number[];
  readonly size: number;
  readonly covers: readonly Range[];
}

const spanOf = (index: SortedIndex, from: number, to: number, covers: readonly Range[]): Span => ({
  index,
  blocks: [from, to],
  size: to - from,
  covers,
});

/** A comparison in a sort (of integers, natively) costs about this many filter checks of a walk. */
const SORT_COST_PER_COMPARISON = 0.5;
/** A skip scan is only tried when the best span found without one has more rows than this. */
const SKIP_SCAN_FROM = 64;
/** Values of the leading column a skip scan visits, at most. */
const SKIP_SCAN_MAX_GROUPS = 1024;

export function search<R extends Identified>(
  table: Table<R> | undefined,
  query: Pick<SearchQuery<R>, 'filters' | 'ordering'>,
  offset: number,
  limit: number,
  view: ReadView,
  groups?: Groups<R>,
): SearchResult {
  if (!table) return { count: 0, rows: [] };
  const { ordering } = query;
  // A plain list: a slice of the order index.
  if (query.filters.length === 0) {
    const order = table.index(ordering.index);
    return scanInOrder(spanOf(order, 0, order.size, []), ordering.descending, [], offset, limit);
  }
  const { ranges, predicates, id } = plan(query.filters, table, view, groups);
  if (ranges.some((r) => r.lo >= r.hi)) return { count: 0, rows: [] };
  const order = table.index(ordering.index);

  if (id !== undefined) {
    const row = table.rowOf(id);
    const hit = row !== undefined && passes([...ranges.map((r) => inRange(table, r)), ...predicates], row);
    return { count: hit ? 1 : 0, rows: hit && offset === 0 ? [row] : [] };
  }

  // Bound every range on a column that leads an index. A range that spans
  // its whole index filters nothing and is dropped.
  const spans: Span[] = [];
  const active: Range[] = [];
  for (const range of ranges) {
    const index = table.indexLedBy(range.column, order);
    if (!index) {
      active.push(range);
      continue;
    }
    const from = index.lowerBound(range.lo);
    const to = index.lowerBound(range.hi);
    if (from === 0 && to === index.size) continue;
    active.push(range);
    spans.push(spanOf(index, from, to, [range]));
  }
  const checksBesides = (span: Span) => [
    ...active.filter((r) => !span.covers.includes(r)).map((r) => inRange(table, r)),
    ...predicates,
  ];
  /** Whether every row of the span matches: nothing else to check. */
  const exactly = (span: Span) => predicates.length === 0 && active.every((r) => span.covers.includes(r));
  const whole = spanOf(order, 0, order.size, []);
  // The spans whose rows are in the requested order, the narrowest first.
  const inOrder = [whole, ...spans.filter((s) => isInOrder(table, s, order))].sort((a, b) => a.size - b.size);
  // Answered from bounds: a span in order that leaves nothing to check.
  let exact = inOrder.find(exactly);
  // Else two ranges on the first two keys of one index (or a range on its
  // second key alone) may be blocks of it, one per value of its first key:
  // `date=…&ordering=spots` walks the spots index a spots value at a time.
  const narrowest = spans.reduce((a, s) => (s.size < a.size ? s : a), whole);
  if (!exact && narrowest.size > SKIP_SCAN_FROM) {
    for (const index of table.allIndexes()) {
      const second = active.find((r) => r.column === index.def.keys[1]);
      const first = active.find((r) => r.column === index.leading);
      // With no range on the first key, the blocks hold the rows of the
      // second range alone: only worth it in order.
      if (!second || (!first && index !== order)) continue;
      const span = skipScan(table, index, first, second, narrowest.size);
      if (!span) continue;
      spans.push(span);
      if (!isInOrder(table, span, order)) continue;
      inOrder.push(span);
      if (exactly(span)) exact ??= span;
    }
    inOrder.sort((a, b) => a.size - b.size);
  }
  if (exact) return scanInOrder(exact, ordering.descending, [], offset, limit);
  // The narrowest span to scan (one in order wins ties: no sort needed).
  const chosen = spans.reduce((a, s) => (s.size < a.size ? s : a), inOrder[0]!);
  if (inOrder.includes(chosen)) return scanInOrder(chosen, ordering.descending, checksBesides(chosen), offset, limit);

  // Scan the narrowest span: the count, and the matches while they are few
  // enough that sorting them might be the cheaper way to the page (with
  // nothing else to check, every row of the span matches: no scan)...
  const checks = checksBesides(chosen);
  const rows = chosen.index.order;
  const { blocks } = chosen;
  let count = 0;
  let matches: ArrayLike<number>;
  if (checks.length === 0) {
    count = chosen.size;
    matches = blocks.length === 2 ? rows.subarray(blocks[0]!, Math.min(blocks[1]!, blocks[0]! + MAX_SORTED)) : rowsOf(chosen, MAX_SORTED);
  } else {
    const found: number[] = [];
    for (let b = 0; b < blocks.length; b += 2) {
      for (let i = blocks[b]!, to = blocks[b + 1]!; i < to; i++) {
        const row = rows[i]!;
        if (!passes(checks, row)) continue;
        if (count < MAX_SORTED) found.push(row);
        count++;
      }
    }
    matches = found;
  }
  if (offset >= count) return { count, rows: [] };
  // ...then take the page by sorting the matches or by walking the order
  // index until the page is full, whichever touches fewer rows.
  const wanted = Math.min(offset + limit, count);
  const sortCost = count <= MAX_SORTED ? count * Math.log2(count + 1) * SORT_COST_PER_COMPARISON : Infinity;
  const walk = inOrder[0]!;
  const walkCost = (wanted * walk.size) / count;
  if (walkCost < sortCost) {
    return { count, rows: scanInOrder(walk, ordering.descending, checksBesides(walk), offset, limit, true).rows };
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

/** The first `max` rows of a span (in an array no longer than that, nor than the span). */
function rowsOf({ index, blocks, size }: Span, max: number): Uint32Array {
  const out = new Uint32Array(Math.min(max, size));
  let n = 0;
  for (let b = 0; b < blocks.length && n < max; b += 2) {
    const slice = index.order.subarray(blocks[b]!, Math.min(blocks[b + 1]!, blocks[b]! + max - n));
    out.set(slice, n);
    n += slice.length;
  }
  return out.subarray(0, n);
}

/**
 * The rows of `index` in `first` (all, if undefined) and `second`, the
 * ranges on its first two keys, as one block per value of the first key
 * (in which rows are sorted by the second): three binary searches a value.
 * Undefined when that is not worth it against scanning `rivalSize` rows.
 */
function skipScan(
  table: Pick<RowSource, 'column'>,
  index: SortedIndex,
  first: Range | undefined,
  second: Range,
  rivalSize: number,
): Span | undefined {
  const probes = 3 * Math.log2(index.size + 1);
  const budget = Math.min(SKIP_SCAN_MAX_GROUPS, (rivalSize * Math.log2(rivalSize + 1) * SORT_COST_PER_COMPARISON) / probes);
  let at = first ? index.lowerBound(first.lo) : 0;
  const end = first ? index.lowerBound(first.hi) : index.size;
  const rows = index.order;
  const lead = table.column(index.leading);
  const blocks: number[] = [];
  let size = 0;
  for (let groups = 1; at < end; groups++) {
    if (groups > budget) return undefined;
    const next = index.runEnd(lead[rows[at]!]!);
    const from = index.boundOn(1, second.lo, at, next);
    const to = index.boundNear(1, second.hi, from, next);
    if (from < to) {
      blocks.push(from, to);
      size += to - from;
    }
    at = next;
  }
  return { index, blocks, size, covers: first ? [first, second] : [second] };
}

/**
 * Whether the rows of a span are in the order of `order`: it is a span of
 * that index, or of one block whose rows all have one value of their
 * index's leading column, the index continuing with the keys of `order`
 * (spots=4 in start order: the `spots` index is sorted by spots, then by
 * start).
 */
function isInOrder(table: Pick<RowSource, 'column'>, span: Span, order: SortedIndex): boolean {
  if (span.index === order) return true;
  if (span.blocks.length !== 2 || span.size === 0) return span.size === 0;
  const keys = span.index.def.keys;
  const orderKeys = order.def.keys;
  if (keys.length !== orderKeys.length + 1 || !orderKeys.every((k, i) => keys[i + 1] === k)) return false;
  const lead = table.column(span.index.leading);
  const rows = span.index.order;
  return lead[rows[span.blocks[0]!]!] === lead[rows[span.blocks[1]! - 1]!];
}

/**
 * The page of the rows of a span (in order) that pass the checks, in order
 * or reversed. Without checks the page is a slice and the count the span's
 * size; with checks every row is checked for the count, unless `pageOnly`
 * (the count is known) stops the walk once the page is full.
 */
function scanInOrder(
  { index, blocks, size }: Span,
  descending: boolean,
  checks: readonly Check[],
  offset: number,
  limit: number,
  pageOnly = false,
): SearchResult {
  const rows = index.order;
  const page: number[] = [];
  const nBlocks = blocks.length / 2;
  let count = 0;
  for (let j = 0; j < nBlocks; j++) {
    const b = 2 * (descending ? nBlocks - 1 - j : j);
    const from = blocks[b]!;
    const to = blocks[b + 1]!;
    const total = to - from;
    const at = (k: number) => rows[descending ? to - 1 - k : from + k]!;
    if (checks.length === 0) {
      // Skip whole blocks before the page, take a slice of the others.
      if (page.length === limit) break;
      for (let k = Math.max(offset - count, 0); k < total && page.length < limit; k++) page.push(at(k));
      count += total;
      continue;
    }
    for (let k = 0; k < total; k++) {
      const row = at(k);
      if (!passes(checks, row)) continue;
      if (count >= offset && count < offset + limit) page.push(row);
      count++;
      if (pageOnly && page.length === limit) return { count, rows: page };
    }
  }
  return { count: checks.length === 0 ? size : count, rows: page };
}
