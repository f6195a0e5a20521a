/**
 * The search engine, generic over resource declarations.
 *
 * A query becomes constraints on the table's numeric columns (see
 * constraints.ts): ranges (microseconds, days, spots, times of day), sets
 * of codes of symbol columns (an id, a text in lower case, the ids a
 * relation filter found), and row tests only for what no column holds.
 *
 * Each sorted index answers the constraints on its first keys as blocks of
 * its positions (candidates.ts): a range on its first key is one block; a
 * set of codes, a block per code; a range on its second key narrows each
 * block of one first-key value (a skip scan when a range holds few such
 * values). Block sizes are counts, found by binary search.
 *
 * The plan: the candidate with the fewest rows to read for the count and
 * the page. A candidate that covers every constraint counts from its bounds;
 * its page is a slice when its blocks follow one another in the requested
 * order, a selection by position in that order when each block is in it
 * (a block of one opportunity, in start order), and otherwise a sort of its
 * rows' positions in the order, or a walk of the order testing every
 * constraint, whichever reads fewer rows. A candidate that leaves
 * constraints uncovered is scanned, testing them, for the count.
 */
import type { Kind, Records } from '../../projections/records.js';
import type { ReadView } from '../../projections/projection.js';
import type { Identified, SortedIndex } from '../readmodel/sorted-index.js';
import type { Table } from '../readmodel/table.js';
import { type Candidate, candidatesOf, checkOf, inOrder, passes } from './candidates.js';
import { rankPage, rowsOf, selectAcross, slice, sortedPage, walkPage } from './pages.js';
import { constraintsOf, type Groups } from './constraints.js';
import type { SearchQuery } from './schema.js';

export { intervalOf } from './constraints.js';

/** How many records match, and the rows of the page asked for, in order. */
export interface SearchResult {
  readonly count: number;
  readonly rows: readonly number[];
}

/** What a search reads besides its table: records, and the institution's other tables (relation filters). */
export interface SearchView extends ReadView {
  table<K extends Kind>(kind: K, institutionId: string): Table<Records[K]> | undefined;
}

/** A comparison in a sort (of integers, natively) costs about this many row checks of a walk. */
const SORT_COST_PER_COMPARISON = 0.5;

/**
 * Where the engine changes strategy: matches collected for sorting, at most
 * (`maxSorted`); the rows below which blocks each in the order are paged by
 * sorting them rather than by a selection across them (`small`); the cost
 * (rows read) from which a page out of order wants a rank matrix
 * (`rankFrom`).
 * Tests lower them, so that small data meets every strategy.
 */
export const thresholds = { maxSorted: 50_000, small: 512, rankFrom: 2_000 };

export function search<R extends Identified>(
  table: Table<R> | undefined,
  query: Pick<SearchQuery<R>, 'filters' | 'ordering'>,
  offset: number,
  limit: number,
  view: SearchView,
  groups?: Groups<R>,
): SearchResult {
  if (!table) return { count: 0, rows: [] };
  const { ordering } = query;
  const order = table.index(ordering.index);
  // A plain list: a slice of the order index.
  if (query.filters.length === 0) return slice(order, [0, order.size], order.size, ordering.descending, offset, limit);

  const plan = constraintsOf(query.filters, table, view, groups);
  if (plan === undefined) return { count: 0, rows: [] };
  const { constraints, id } = plan;
  if (id !== undefined) {
    const row = table.rowOf(id);
    const hit = row !== undefined && passes(constraints.map((c) => checkOf(table, c)), row);
    return { count: hit ? 1 : 0, rows: hit && offset === 0 ? [row] : [] };
  }

  const candidates = candidatesOf(table, constraints, order);
  const checksBesides = (candidate: Candidate) => constraints.filter((c) => !candidate.covers.has(c)).map((c) => checkOf(table, c));
  const exact = candidates.filter((c) => c.covers.size === constraints.length);
  // Best of all: the blocks follow one another in the order; the page is a slice.
  const sliced = exact.filter((c) => inOrder(c, order) === 'concatenated').sort(bySize)[0];
  if (sliced) return slice(sliced.index, sliced.blocks, sliced.size, ordering.descending, offset, limit);

  // The walk: the order index (or its block the query narrows it to), testing what it does not cover.
  const walk = candidates.filter((c) => c.index === order && c.fixed === 0).sort(bySize)[0] ?? whole(order);
  const walkChecks = checksBesides(walk);
  const walkCost = (wanted: number, count: number) => (count === 0 ? 0 : (wanted * walk.size) / count);
  const sortCost = (count: number) => (count <= thresholds.maxSorted ? count * Math.log2(count + 1) * SORT_COST_PER_COMPARISON : Infinity);

  // Exact candidates count from their bounds: the page decides.
  let best: { cost: number; answer: () => SearchResult } | undefined;
  const consider = (cost: number, answer: () => SearchResult) => {
    if (best === undefined || cost < best.cost) best = { cost, answer };
  };
  for (const candidate of exact) {
    const count = candidate.size;
    const wanted = Math.min(offset + limit, count);
    if (offset >= count) return { count, rows: [] };
    const blocks = candidate.blocks.length / 2;
    if (inOrder(candidate, order) === 'each' && count > thresholds.small) {
      consider(blocks * 2 * Math.log2(order.size + 1) ** 2, () => ({ count, rows: selectAcross(candidate, order, ordering.descending, offset, limit) }));
    }
    consider(sortCost(count), () => ({ count, rows: sortedPage(order, rowsOf(candidate), count, ordering.descending, offset, limit) }));
    consider(walkCost(wanted, count), () => ({ count, rows: walkPage(walk, walkChecks, ordering.descending, offset, limit) }));
    // Out of order and dear either way: the rank matrix of its index by positions in the order (made in the background once wanted).
    const rankCost = blocks * 4 * Math.log2(order.size + 1) + (Math.min(limit, count) * order.size) / count;
    if (inOrder(candidate, order) === false && best!.cost > Math.max(rankCost, thresholds.rankFrom)) {
      const matrix = table.ranks.get(candidate.index, order);
      if (matrix) {
        const checks = constraints.map((c) => checkOf(table, c));
        consider(rankCost, () => ({ count, rows: rankPage(matrix, candidate, order, checks, ordering.descending, offset, limit) }));
      }
    }
  }
  if (best) return best.answer();

  // Else scan the smallest candidate, testing what it leaves, for the count...
  const driver = candidates.sort(bySize)[0] ?? walk;
  const checks = checksBesides(driver);
  const rows = driver.index.order;
  const { blocks } = driver;
  let count = 0;
  if (inOrder(driver, order) === 'concatenated') {
    // ...and, in order, the page on the way (a descending one by a walk back from the end).
    const page: number[] = [];
    for (let b = 0; b < blocks.length; b += 2) {
      for (let i = blocks[b]!, to = blocks[b + 1]!; i < to; i++) {
        const row = rows[i]!;
        if (!passes(checks, row)) continue;
        if (count >= offset && page.length < limit) page.push(row);
        count++;
      }
    }
    if (offset >= count || !ordering.descending) return { count, rows: page };
    return { count, rows: walkPage(driver, checks, true, offset, limit) };
  }
  // ...and the matches while few, to sort them by their positions in the order, unless a walk of the order reads fewer rows.
  const matches: number[] = [];
  for (let b = 0; b < blocks.length; b += 2) {
    for (let i = blocks[b]!, to = blocks[b + 1]!; i < to; i++) {
      const row = rows[i]!;
      if (!passes(checks, row)) continue;
      if (count < thresholds.maxSorted) matches.push(row);
      count++;
    }
  }
  if (offset >= count) return { count, rows: [] };
  const wanted = Math.min(offset + limit, count);
  if (walkCost(wanted, count) < sortCost(count)) return { count, rows: walkPage(walk, walkChecks, ordering.descending, offset, limit) };
  return { count, rows: sortedPage(order, matches, count, ordering.descending, offset, limit) };
}

const bySize = (a: Candidate, b: Candidate) => a.size - b.size;

const whole = (index: SortedIndex): Candidate => ({ index, blocks: [0, index.size], size: index.size, covers: new Set(), fixed: 0 });

