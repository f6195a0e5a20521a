/**
 * The search engine, generic over resource declarations.
 *
 * A query becomes constraints on the table's numeric columns (see
 * constraints.ts): ranges (microseconds, days, spots, times of day), sets
 * of codes of symbol columns (an id, a text in lower case, the ids a
 * relation filter found), the rows holding a value a record holds several
 * of (postings), and row tests only for what none of those holds.
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
 * constraint, whichever reads fewer rows (a walk gives up for the next way
 * when its matches turn out to lie further than their count promised). A
 * candidate that leaves constraints uncovered is scanned, testing them, for
 * the count. A posting smaller than every candidate is read instead, its
 * rows tested and put in order. Matches are put in order in linear time
 * (counted in buckets of positions; only the page's bucket is sorted).
 */
import type { Kind, Records } from '../../projections/records.js';
import type { ReadView } from '../../projections/projection.js';
import { type Identified, SortedIndex, ZONE_ALL, ZONE_SOME, type ZoneTest } from '../readmodel/sorted-index.js';
import type { Table } from '../readmodel/table.js';
import { type Candidate, type Check, candidatesOf, inOrder } from './candidates.js';
import { POSITION_READ, PositionTest, positionTest } from './along.js';
import { rowTest } from './row-bits.js';
import { rankPage, rankPageCost, rowsOf, selectAcross, selectAcrossCost, slice, sortedPage, walkNearer } from './pages.js';
import { scratch } from './scratch.js';
import type { RankMatrix } from '../readmodel/rank-matrix.js';
import { checkOf, type Constraint, constraintsOf, type Groups, rangesOf, type RowsConstraint } from './constraints.js';
import type { SearchQuery } from './schema.js';

export { intervalOf } from './constraints.js';

/** How many records match, and the rows of the page asked for, in order. */
export interface SearchResult {
  readonly count: number;
  readonly rows: readonly number[];
  /** How it was answered (for the bench's slowest queries): the way, and the ways tried before it that gave up. */
  readonly plan?: string;
  /** The way's estimated cost, in rows read. */
  readonly cost?: number;
}

/** What a search reads besides its table: records, and the institution's other tables (relation filters). */
export interface SearchView extends ReadView {
  table<K extends Kind>(kind: K, institutionId: string): Table<Records[K]> | undefined;
}

/** Putting a match in order (its position looked up, then a bucket selection over all of them) costs about this many row checks of a walk. */
const SELECT_COST_PER_MATCH = 1;
/** Rows a walk may read past its and the next way's estimates before it gives up for that way. */
const WALK_SLACK = 1_000;
/** A walk reading more than this many times its estimate (and the slack) wants a rank matrix to fall back on next time. */
const WALK_OVERRUN = 4;
/** Rank counts a pair of candidates may take to be counted (block pairs × levels). */
const MAX_PAIR_COST = 20_000;

/**
 * Where the engine changes strategy: matches collected for sorting, at most
 * (`maxSorted`); the rows below which blocks each in the order are paged by
 * sorting them rather than by a selection across them (`small`); the cost
 * (rows read) from which a page out of order wants a rank matrix
 * (`rankFrom`); the rows a walk or scan reads from which its row test
 * marks constraints in a bitset first (`markFrom`, see row-bits.ts); the
 * rows from which it reads by positions when they are made, and wants them
 * made when they are not (`alongFrom`, see along.ts).
 * Tests lower them, so that small data meets every strategy.
 */
export const thresholds = { maxSorted: 4_000_000, small: 512, rankFrom: 2_000, markFrom: 20_000, alongFrom: 2_000 };

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
  const { descending } = ordering;
  const order = table.index(ordering.index);
  const all = (): SearchResult => slice(order, [0, order.size], order.size, descending, offset, limit);
  // A plain list: a slice of the order index.
  if (query.filters.length === 0) return all();

  const plan = constraintsOf(query.filters, table, view, groups);
  if (plan === undefined) return { count: 0, rows: [] };
  if (plan.id !== undefined) {
    const row = table.rowOf(plan.id);
    const hit = row !== undefined && checkOf(table, plan.constraints)(row);
    return { count: hit ? 1 : 0, rows: hit && offset === 0 ? [row] : [] };
  }
  // A range every row of its index is in filters nothing.
  const constraints = plan.constraints.filter((c) => !filtersNothing(table, c));
  if (constraints.length === 0) return all();

  const candidates = candidatesOf(table, constraints, order);
  // Values a record holds several of (a site's users, a profile's tags): the rows of the smallest posting, when no index
  // narrows the query more, tested for the rest and put in order.
  const posting = constraints.reduce<RowsConstraint | undefined>((a, c) => (c.kind === 'rows' && (a === undefined || c.rows.size < a.rows.size) ? c : a), undefined);
  if (posting && candidates.every((c) => posting.rows.size <= c.size)) {
    const check = checkOf(table, constraints.filter((c) => c !== posting));
    const matches = scratch('matches', posting.rows.size);
    let count = 0;
    for (const row of posting.rows) if (check(row)) matches[count++] = row;
    const rows = offset >= count ? [] : sortedPage(order, matches.subarray(0, count), count, descending, offset, limit);
    return { count, rows, plan: 'postings', cost: posting.rows.size };
  }
  /** How the zones of a candidate's index stand against the ranges it leaves (see SortedIndex.zoneTester). */
  const zonesFor = (candidate: Candidate): ZoneTest | undefined => {
    const left = constraints.filter((c) => !candidate.covers.has(c));
    const ranges = rangesOf(left);
    return candidate.index.zoneTester(ranges, ranges.length === left.length);
  };
  /** The test of what a candidate leaves by positions (see along.ts), when it has them made; else they are wanted. Once a candidate. */
  let alongOf: Map<Candidate, PositionTest | undefined> | undefined;
  const along = (candidate: Candidate) => {
    alongOf ??= new Map();
    if (!alongOf.has(candidate)) alongOf.set(candidate, positionTest(table, candidate, constraints.filter((c) => !candidate.covers.has(c)), candidates, candidate.covers));
    return alongOf.get(candidate);
  };
  /** The test of what a candidate leaves, for a walk or scan of it expected to read `reads` rows. */
  const checkBesides = (candidate: Candidate, reads: number): Check | PositionTest => {
    const test = reads >= thresholds.alongFrom ? along(candidate) : undefined;
    if (test) return test;
    const left = constraints.filter((c) => !candidate.covers.has(c));
    return reads >= thresholds.markFrom ? rowTest(table, left, candidates, reads, candidate.covers) : checkOf(table, left);
  };
  const exact = candidates.filter((c) => c.covers.size === constraints.length);
  // Best of all: the blocks follow one another in the order; the page is a slice.
  const sliced = exact.filter((c) => inOrder(c, order) === 'concatenated').sort(bySize)[0];
  if (sliced) return slice(sliced.index, sliced.blocks, sliced.size, descending, offset, limit);

  // The walk: the order index (or its block the query narrows it to), testing what it does not cover, from whichever end is nearer.
  const walk = candidates.filter((c) => c.index === order && c.fixed === 0).sort(bySize)[0] ?? whole(order);
  /** The rows a walk reads, and what it costs (less than a row test a row when it reads by positions). */
  const walkReads = (count: number) => {
    if (count === 0) return 0;
    const take = Math.min(limit, count - offset);
    return ((Math.min(offset, count - offset - take) + take) * walk.size) / count;
  };
  /** Whether a walk of `count` matches reads by positions (as checkBesides decides). */
  const walksAlong = (count: number) => walkReads(count) >= thresholds.alongFrom && along(walk) !== undefined;
  const walkCost = (count: number) => walkReads(count) * (walksAlong(count) ? POSITION_READ : 1);
  /** A budget of cost as the rows a walk of `count` matches may read. */
  const walkRows = (budget: number, count: number) => (walksAlong(count) ? budget / POSITION_READ : budget);
  /** The page by the walk, or undefined when it has read `budget` rows (it found fewer matches on its way than their count promised). */
  const walked = (count: number, budget: number): SearchResult | undefined => {
    const rows = walkNearer(walk, checkBesides(walk, Math.min(walkReads(count), budget)), descending, offset, limit, count, budget, zonesFor(walk));
    return rows && { count, rows };
  };
  const sortCost = (count: number) => (count <= thresholds.maxSorted ? count * SELECT_COST_PER_MATCH : Infinity);
  const bits = Math.log2(order.size + 1);
  const checkAll = () => checkOf(table, constraints);

  // Exact candidates count from their bounds: the page decides. Ways are tried cheapest first; a walk gives up when it has
  // read more rows than it and the next way were expected to (its matches were bunched away from the end it started from).
  const ways: Array<{ plan: string; cost: number; answer: (budget: number) => SearchResult | undefined }> = [];
  const consider = (plan: string, cost: number, answer: (budget: number) => SearchResult | undefined) => {
    if (Number.isFinite(cost)) ways.push({ plan, cost, answer });
  };
  const cheapest = () => ways.reduce((a, w) => Math.min(a, w.cost), Infinity);
  const answerBest = (): SearchResult => {
    ways.sort((a, b) => a.cost - b.cost);
    for (let i = 0; ; i++) {
      const { plan, cost, answer } = ways[i]!;
      const next = ways[i + 1];
      const result = answer(next === undefined ? Infinity : cost + next.cost + WALK_SLACK);
      if (result) return { ...result, plan: i === 0 ? plan : `${plan} (after ${ways.slice(0, i).map((w) => w.plan).join(', ')})`, cost };
    }
  };
  // Exact candidates out of the order whose rank matrix is not made: wanted once a walk reads far more rows than expected
  // (its matches were bunched away from the end it started from), so that the same query again has the matrix to fall
  // back on when its walk gives up.
  const unranked: Candidate[] = [];
  const walkOrWant = (count: number, budget: number): SearchResult | undefined => {
    const expected = WALK_OVERRUN * walkReads(count) + WALK_SLACK;
    if (unranked.length > 0 && expected < budget) {
      const quick = walked(count, expected);
      if (quick) return quick;
      for (const candidate of unranked) table.ranks.want(candidate.index, order);
    }
    return walked(count, budget);
  };
  for (const candidate of exact) {
    const count = candidate.size;
    if (offset >= count) return { count, rows: [] };
    const blocks = candidate.blocks.length / 2;
    const placed = inOrder(candidate, order);
    if (placed === 'each' && count > thresholds.small) {
      consider('select across', selectAcrossCost(blocks, count, order.size, offset, limit), () => ({ count, rows: selectAcross(candidate, order, descending, offset, limit) }));
    }
    consider('sort', sortCost(count), () => ({ count, rows: sortedPage(order, rowsOf(candidate), count, descending, offset, limit) }));
    consider('walk', walkCost(count), (budget) => walkOrWant(count, walkRows(budget, count)));
    // Out of order: the rank matrix of its index by positions in the order, wanted (made in the background) when the page
    // is dear either way; else, when it is made already, a way to fall back on.
    const rankCost = rankPageCost(blocks * 2 * bits, Math.min(limit, count - offset), count, order.size);
    if (placed === false) {
      const dear = cheapest() > Math.max(rankCost, thresholds.rankFrom);
      const matrix = dear ? table.ranks.get(candidate.index, order) : table.ranks.peek(candidate.index, order);
      if (matrix) {
        const kth = (k: number) => matrix.kth(candidate.blocks, k);
        consider('rank', rankCost, () => ({ count, rows: rankPage(kth, count, order, checkAll(), descending, offset, limit) }));
      } else unranked.push(candidate);
    }
  }
  if (ways.length > 0) return answerBest();

  // Else the smallest candidate scanned, testing what it leaves: in the order, the page on the way; else the matches, sorted.
  const driver = candidates.sort(bySize)[0] ?? walk;
  const driverInOrder = inOrder(driver, order) === 'concatenated';
  const scanned = (): SearchResult => {
    // The order (or its block the query narrows it to) read by positions, when that costs less than testing the driver's
    // rows: the count, and the page on the way.
    if (!driverInOrder && walk.size >= thresholds.alongFrom && walk.size * POSITION_READ < driver.size) {
      const check = along(walk);
      if (check) return { ...scanInOrder(walk, check, descending, offset, limit, zonesFor(walk)), plan: 'ordered scan', cost: walk.size * POSITION_READ };
    }
    // Made when it is used: another way tried first may have marked rows in the same scratch bits.
    const check = checkBesides(driver, driver.size);
    const zones = zonesFor(driver);
    if (driverInOrder) return scanInOrder(driver, check, descending, offset, limit, zones);
    const { count, matches } = scanMatches(driver, check, thresholds.maxSorted, zones);
    if (offset >= count) return { count, rows: [] };
    const sorted = sortCost(count);
    const walkedFirst = walkCost(count) < sorted ? walked(count, walkRows(walkCost(count) + sorted + WALK_SLACK, count)) : undefined;
    return walkedFirst ?? { count, rows: sortedPage(order, matches, count, descending, offset, limit) };
  };

  // Two candidates, each exact for its constraints, together for all of them, are counted without a scan by the rank
  // matrix of one's index by positions in the other's; the page then by whichever way reads fewest rows.
  const paired = pairCount(table, candidates, constraints, order, bits);
  if (paired === undefined) return { plan: 'scan', cost: driver.size, ...scanned() };
  const { count, first, second, matrix } = paired;
  if (offset >= count) return { count, rows: [] };
  // The k-th row of both, by its position in the second's index.
  const kth = kthWithin(matrix, first.blocks, second.blocks);
  const kthCost = bits * first.blocks.length;
  // The second's rows follow one another in the order (a range of the order, or a block of one title in start order):
  // the page is the first's rows at those positions of the second's index.
  if (inOrder(second, order) === 'concatenated') {
    const cost = rankPageCost(kthCost, Math.min(limit, count - offset), count, second.index === order ? order.size : second.size);
    consider('pair rank', cost, () => ({ count, rows: rankPage(kth, count, second.index, checkAll(), descending, offset, limit) }));
  }
  consider('walk', walkCost(count), (budget) => walked(count, walkRows(budget, count)));
  consider('scan', driver.size + (driverInOrder ? 0 : sortCost(count)), scanned);
  // Few: each found by its k-th, then sorted by position in the order.
  consider('pair kth', count * kthCost + sortCost(count), () => {
    const rows = Array.from({ length: count }, (_, k) => second.index.order[kth(k)]!);
    return { count, rows: sortedPage(order, rows, count, descending, offset, limit) };
  });
  return answerBest();
}

/**
 * The count and page of a candidate in the order, testing its rows: the page is among the first matches (a
 * descending page by a walk back from the nearer end, once the count is known).
 */
function scanInOrder(driver: Candidate, check: Check | PositionTest, descending: boolean, offset: number, limit: number, zones: ZoneTest | undefined): SearchResult {
  // (By positions, counted with no branch and the page walked to after: collecting on the way would branch.)
  const collect = descending || check instanceof PositionTest ? 0 : offset + limit;
  const { count, matches } = scanMatches(driver, check, collect, zones);
  if (offset >= count) return { count, rows: [] };
  if (collect > 0) return { count, rows: Array.from(matches.subarray(offset)) };
  return { count, rows: walkNearer(driver, check, descending, offset, limit, count, Infinity, zones)! }; // (with no budget, a walk always ends)
}

/**
 * How many rows of a candidate pass the check, and the first `max` of them (in a scratch array): by `zones`, whole
 * zones none of whose rows pass are skipped and those all of whose rows pass taken untested.
 */
function scanMatches(driver: Candidate, check: Check | PositionTest, max: number, zones: ZoneTest | undefined): { count: number; matches: Uint32Array } {
  const rows = driver.index.order;
  const { blocks } = driver;
  const mask = SortedIndex.zoneRows - 1;
  let count = 0;
  if (check instanceof PositionTest) {
    // (A slot past the last: PositionTest.scan writes each row it reads there.)
    const room = Math.min(max, driver.size);
    const found = scratch('matches', room + 1);
    for (let b = 0; b < blocks.length; b += 2) {
      const to = blocks[b + 1]!;
      for (let i = blocks[b]!; i < to; ) {
        // A zone at a time when there are zones (else the block): none of its rows pass, all do, or some.
        const next = zones === undefined ? to : Math.min((i | mask) + 1, to);
        const zone = zones === undefined ? ZONE_SOME : zones(i);
        if (zone === ZONE_SOME) count += check.scan(rows, i, next, found, count, room);
        else if (zone === ZONE_ALL) for (; i < next; i++) if (count++ < room) found[count - 1] = rows[i]!;
        i = next;
      }
    }
    return { count, matches: found.subarray(0, Math.min(count, room)) };
  }
  const found = scratch('matches', Math.min(max, driver.size));
  for (let b = 0; b < blocks.length; b += 2) {
    const from = blocks[b]!;
    const to = blocks[b + 1]!;
    for (let i = from; i < to; ) {
      if (zones !== undefined && (i === from || (i & mask) === 0)) {
        const zone = zones(i);
        if (zone !== ZONE_SOME) {
          const next = Math.min((i | mask) + 1, to);
          for (; zone === ZONE_ALL && i < next; i++) {
            if (count < max) found[count] = rows[i]!;
            count++;
          }
          i = next;
          continue;
        }
      }
      const row = rows[i++]!;
      if (!check(row)) continue;
      if (count < max) found[count] = row;
      count++;
    }
  }
  return { count, matches: found.subarray(0, Math.min(count, max)) };
}

/** Whether a constraint is a range every row of an index led by its column is in. */
function filtersNothing(table: Pick<Table<Identified>, 'indexLedBy'>, c: Constraint): boolean {
  if (c.kind !== 'range') return false;
  const index = table.indexLedBy(c.column);
  return index !== undefined && index.lowerBound(c.lo) === 0 && index.lowerBound(c.hi) === index.size;
}

/**
 * The count of rows in both of two candidates that are each exact for
 * their constraints and together cover them all (no row tests): by the
 * rank matrix of the first's index by positions in the second's, the
 * first's rows whose positions there are in the second's blocks, in
 * O(log n) per pair of blocks. The second is the order's index when one is
 * (its rows' positions are then the page's). Undefined when there is no
 * such pair, or its matrix is not made yet (it is then wanted).
 */
function pairCount(table: Pick<Table<Identified>, 'ranks'>, candidates: readonly Candidate[], constraints: readonly Constraint[], order: SortedIndex, bits: number) {
  if (constraints.some((c) => c.kind === 'test' || c.kind === 'rows')) return undefined;
  let chosen: { first: Candidate; second: Candidate; cost: number } | undefined;
  for (const first of candidates) {
    for (const second of candidates) {
      if (first.index === second.index || [...constraints].some((c) => !first.covers.has(c) && !second.covers.has(c))) continue;
      const cost = (first.blocks.length * second.blocks.length * bits) / (inOrder(second, order) === 'concatenated' ? 4 : 1);
      if (chosen === undefined || cost < chosen.cost) chosen = { first, second, cost };
    }
  }
  if (chosen === undefined || chosen.cost > MAX_PAIR_COST) return undefined;
  const { first, second } = chosen;
  const matrix = table.ranks.get(first.index, second.index);
  if (!matrix) return undefined;
  let count = 0;
  for (let b = 0; b < second.blocks.length; b += 2) {
    count += matrix.countBelow(first.blocks, second.blocks[b + 1]!) - matrix.countBelow(first.blocks, second.blocks[b]!);
  }
  return { count, first, second, matrix };
}

/** The k-th smallest value at the positions of `blocks` among those within the ranges `within` (ascending [from, to) pairs), as a function of k. */
function kthWithin(matrix: RankMatrix, blocks: readonly number[], within: readonly number[]): (k: number) => number {
  const before: number[] = [];
  const inside: number[] = [];
  for (let j = 0; j < within.length; j += 2) {
    const below = matrix.countBelow(blocks, within[j]!);
    before.push(below);
    inside.push(matrix.countBelow(blocks, within[j + 1]!) - below);
  }
  return (k) => {
    for (let j = 0; j < inside.length; j++) {
      if (k < inside[j]!) return matrix.kth(blocks, before[j]! + k);
      k -= inside[j]!;
    }
    throw new Error('kthWithin: k is past the values within');
  };
}

const bySize = (a: Candidate, b: Candidate) => a.size - b.size;

const whole = (index: SortedIndex): Candidate => ({ index, blocks: [0, index.size], size: index.size, covers: new Set(), fixed: 0 });
