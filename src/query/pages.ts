/**
 * Ways to the page of a search, given its candidate rows (see
 * candidates.ts) and the order asked for: a slice of blocks that follow one
 * another in the order; a selection across blocks each in the order; a
 * rank matrix's k-th positions in the order; a sort of rows by their
 * positions in the order; a walk of the order testing each row.
 */
import { SortedIndex, ZONE_ALL, ZONE_NONE, ZONE_SOME, type ZoneTest } from '../readmodel/sorted-index.js';
import { PositionTest } from './along.js';
import type { Candidate, Check } from './candidates.js';
import type { SearchResult } from './engine.js';
import { scratch } from './scratch.js';

/** The rows of a candidate's blocks (in a scratch array). */
export function rowsOf({ index, blocks, size }: Candidate): Uint32Array {
  const out = scratch('matches', size);
  let n = 0;
  for (let b = 0; b < blocks.length; b += 2) {
    out.set(index.order.subarray(blocks[b]!, blocks[b + 1]!), n);
    n += blocks[b + 1]! - blocks[b]!;
  }
  return out;
}

/** The page of blocks that follow one another in the order (reversed: from the end). */
export function slice(index: SortedIndex, blocks: readonly number[], size: number, descending: boolean, offset: number, limit: number): SearchResult {
  const rows = index.order;
  const page: number[] = [];
  const nBlocks = blocks.length / 2;
  let skipped = 0;
  for (let j = 0; j < nBlocks && page.length < limit; j++) {
    const b = 2 * (descending ? nBlocks - 1 - j : j);
    const from = blocks[b]!;
    const to = blocks[b + 1]!;
    const total = to - from;
    if (skipped + total <= offset) {
      skipped += total;
      continue;
    }
    for (let k = Math.max(offset - skipped, 0); k < total && page.length < limit; k++) page.push(rows[descending ? to - 1 - k : from + k]!);
    skipped += total;
  }
  return { count: size, rows: page };
}

/**
 * The page of `matches` (all `count` of them) by their positions in the
 * order, in time linear in
 * their number: the positions are counted in buckets of the order's
 * positions, and only the buckets the page falls in are sorted.
 */
export function sortedPage(order: SortedIndex, matches: ArrayLike<number>, count: number, descending: boolean, offset: number, limit: number): number[] {
  const m = matches.length;
  const take = Math.min(limit, count - offset);
  if (take <= 0) return [];
  const first = descending ? count - offset - take : offset;
  const positions = scratch('positions', m);
  order.positionsOf(matches, m, positions);
  const wanted = m <= SORT_ALL ? positions.sort().subarray(first, first + take) : selectRange(positions, order.size, first, take);
  const page = Array.from(wanted, (p) => order.order[p]!);
  return descending ? page.reverse() : page;
}

/** Below this many positions a page's are found by sorting them all. */
const SORT_ALL = 2048;
const BUCKET_BITS = 11;

/** The positions ranked [first, first + take) among distinct `positions` (each below `size`), ascending. */
function selectRange(positions: Uint32Array, size: number, first: number, take: number): Uint32Array {
  const shift = Math.max(0, Math.ceil(Math.log2(size + 1)) - BUCKET_BITS);
  const counts = new Uint32Array((size >>> shift) + 2);
  for (let i = 0; i < positions.length; i++) counts[positions[i]! >>> shift]!++;
  // The buckets holding ranks first and first + take - 1, and how many positions are in the buckets before them.
  let bucket = 0;
  let before = 0;
  while (before + counts[bucket]! <= first) before += counts[bucket++]!;
  let last = bucket;
  let through = before + counts[bucket]!;
  while (through < first + take) through += counts[++last]!;
  const lo = bucket << shift;
  const hi = (last + 1) << shift;
  const inside = scratch('inside', through - before);
  let n = 0;
  for (let i = 0; i < positions.length; i++) {
    const p = positions[i]!;
    if (p >= lo && p < hi) inside[n++] = p;
  }
  return inside.sort().subarray(first - before, first - before + take);
}

/**
 * The page of the rows of a candidate in order (or reversed) that pass the
 * check, walking until it is full; undefined once it has read more than
 * `budget` rows (the matches were not where their count promised: another
 * way is cheaper now). `zones` (see SortedIndex.zoneTester) passes over
 * whole zones of positions none of whose rows can pass, and counts those
 * all of whose rows pass without reading them while the page lies beyond.
 */
export function walkPage(
  walk: Candidate,
  check: Check | PositionTest,
  descending: boolean,
  offset: number,
  limit: number,
  budget = Infinity,
  zones?: ZoneTest,
): number[] | undefined {
  if (check instanceof PositionTest) return walkByPositions(walk, check, descending, offset, limit, budget, zones);
  const rows = walk.index.order;
  const { blocks } = walk;
  const nBlocks = blocks.length / 2;
  const mask = SortedIndex.zoneRows - 1;
  // A zone's first position in the direction of the walk.
  const zoneStart = descending ? mask : 0;
  const page: number[] = [];
  let count = 0;
  let read = 0;
  for (let j = 0; j < nBlocks; j++) {
    const [first, end] = blockEnds(blocks, j, descending);
    for (let p = first; p !== end; ) {
      if (zones !== undefined && (p === first || (p & mask) === zoneStart)) {
        const zone = zones(p);
        if (zone !== ZONE_SOME) {
          const next = zoneEnd(p, end, descending);
          const passing = zone === ZONE_ALL ? Math.abs(next - p) : 0;
          // Passed over: a zone none of whose rows pass (wherever the page is), or all of whose rows lie before it.
          if (zone === ZONE_NONE || count + passing <= offset) {
            count += passing;
            p = next;
            continue;
          }
        }
      }
      if (++read > budget) return undefined;
      const row = rows[p]!;
      p += descending ? -1 : 1;
      if (!check(row)) continue;
      if (count++ >= offset) {
        page.push(row);
        if (page.length === limit) return page;
      }
    }
  }
  return page;
}

/** The j-th block a walk reads (from the last, descending): its first position and the one past its last, in the walk's direction. */
function blockEnds(blocks: readonly number[], j: number, descending: boolean): [number, number] {
  const b = 2 * (descending ? blocks.length / 2 - 1 - j : j);
  return descending ? [blocks[b + 1]! - 1, blocks[b]! - 1] : [blocks[b]!, blocks[b + 1]!];
}

/** Where a walk at `p` leaves its zone (the next zone's first position in its direction), or the block's `end`. */
function zoneEnd(p: number, end: number, descending: boolean): number {
  const mask = SortedIndex.zoneRows - 1;
  return descending ? Math.max((p & ~mask) - 1, end) : Math.min((p | mask) + 1, end);
}

/** walkPage by a test of positions, a zone at a time when there are zones (else a block at a time). */
function walkByPositions(
  walk: Candidate,
  test: PositionTest,
  descending: boolean,
  offset: number,
  limit: number,
  budget: number,
  zones: ZoneTest | undefined,
): number[] | undefined {
  const rows = walk.index.order;
  const { blocks } = walk;
  const page: number[] = [];
  let count = 0;
  let read = 0;
  for (let j = 0; j < blocks.length / 2; j++) {
    const [first, end] = blockEnds(blocks, j, descending);
    for (let p = first; p !== end; ) {
      const next = zones === undefined ? end : zoneEnd(p, end, descending);
      const zone = zones === undefined ? ZONE_SOME : zones(p);
      const passing = zone === ZONE_ALL ? Math.abs(next - p) : 0;
      if (zone === ZONE_NONE || (zone === ZONE_ALL && count + passing <= offset)) {
        count += passing;
        p = next;
        continue;
      }
      const walked = test.walk(rows, p, next, offset - count, limit, page, budget - read);
      count += walked.passed;
      read += walked.read;
      if (page.length === limit) return page;
      // Stopped short of the zone's end with the page not full: the budget is spent.
      if (walked.read < Math.abs(next - p)) return undefined;
      p = next;
    }
  }
  return page;
}

/**
 * The page of an exact candidate whose blocks are each in the order (a
 * block of one opportunity, in start order), without reading its rows:
 * near either end (a first page, ascending or descending), by merging the
 * blocks from that end; elsewhere, the first row of the page is the one
 * whose position in the order has exactly `skip` rows of the blocks before
 * it, found by a binary search over positions that counts, in each block,
 * the rows before a position by binary search; then the blocks are merged
 * from there. `way` forces one or the other (tests).
 */
export function selectAcross(
  candidate: Candidate,
  order: SortedIndex,
  descending: boolean,
  offset: number,
  limit: number,
  way: 'best' | 'search' | 'merge' = 'best',
): number[] {
  const ranks = order.ranks();
  const rows = candidate.index.order;
  const { blocks, size } = candidate;
  const n = blocks.length / 2;
  const take = Math.min(limit, size - offset);
  const skip = descending ? size - offset - take : offset;
  const { merge, search } = selectAcrossCosts(n, size, order.size, skip, take);
  const fromEnd = size - skip - take < skip;
  const passed = fromEnd ? size - skip - take : skip;
  if (way === 'merge' || (way === 'best' && merge <= search)) {
    const page = fromEnd ? mergeBack(ranks, rows, blocks, passed, take) : mergeFrom(ranks, rows, blocks, blocks.filter((_, i) => i % 2 === 0), passed, take);
    return fromEnd === descending ? page : page.reverse();
  }
  /** In block j, the first position whose row is at `rank` or after in the order. */
  const boundIn = (j: number, rank: number) => {
    let lo = blocks[2 * j]!;
    let hi = blocks[2 * j + 1]!;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ranks[rows[mid]!]! < rank) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  // The smallest rank with more than `skip` rows of the blocks at or before it.
  let lo = 0;
  let hi = order.size;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    let before = 0;
    for (let j = 0; j < n; j++) before += boundIn(j, mid + 1) - blocks[2 * j]!;
    if (before > skip) hi = mid;
    else lo = mid + 1;
  }
  // Ranks are distinct: exactly `skip` rows of the blocks are before that rank; merge from there.
  const page = mergeFrom(ranks, rows, blocks, Array.from({ length: n }, (_, j) => boundIn(j, lo)), 0, take);
  // A descending page is the ascending one before it, read from its end.
  return descending ? page.reverse() : page;
}

/**
 * What selectAcross costs, in rows read, by merging `n` blocks of `size` rows in all from the page's nearer end
 * (a row of each block per row passed over or taken) and by searching for the page's first row (about
 * log2(order) × log2(block) probes per block, two rows read a probe, then the merge of the page).
 */
function selectAcrossCosts(n: number, size: number, orderSize: number, skip: number, take: number): { merge: number; search: number } {
  const passed = Math.min(skip, size - skip - take);
  return { merge: (passed + take) * n, search: 2 * Math.log2(orderSize + 1) * Math.log2(size / n + 1) * n + take * n };
}

/** selectAcross's cost for a page of a candidate of `n` blocks and `size` rows (see selectAcrossCosts). */
export function selectAcrossCost(n: number, size: number, orderSize: number, offset: number, limit: number): number {
  const { merge, search } = selectAcrossCosts(n, size, orderSize, offset, Math.min(limit, size - offset));
  return Math.min(merge, search);
}

/** Merging blocks each in the order from `heads` (a position in each): `take` rows after passing over `skip`, ascending. */
function mergeFrom(ranks: Uint32Array, rows: Uint32Array, blocks: readonly number[], heads: number[], skip: number, take: number): number[] {
  const n = heads.length;
  const page: number[] = [];
  for (let got = -skip; got < take; got++) {
    let next = -1;
    let best = 0;
    for (let j = 0; j < n; j++) {
      if (heads[j]! >= blocks[2 * j + 1]!) continue;
      const rank = ranks[rows[heads[j]!]!]!;
      if (next < 0 || rank < best) [next, best] = [j, rank];
    }
    if (got >= 0) page.push(rows[heads[next]!]!);
    heads[next]!++;
  }
  return page;
}

/** The same from the blocks' ends: `take` rows after passing over `skip`, descending. */
function mergeBack(ranks: Uint32Array, rows: Uint32Array, blocks: readonly number[], skip: number, take: number): number[] {
  const n = blocks.length / 2;
  const tails = Array.from({ length: n }, (_, j) => blocks[2 * j + 1]!);
  const page: number[] = [];
  for (let got = -skip; got < take; got++) {
    let next = -1;
    let best = 0;
    for (let j = 0; j < n; j++) {
      if (tails[j]! <= blocks[2 * j]!) continue;
      const rank = ranks[rows[tails[j]! - 1]!]!;
      if (next < 0 || rank > best) [next, best] = [j, rank];
    }
    tails[next]!--;
    if (got >= 0) page.push(rows[tails[next]!]!);
  }
  return page;
}

/**
 * The page of a selection of `count` rows (those passing `checks`) in an
 * order they are not found in by any index, given the k-th smallest
 * position in the order of a row of the selection (a rank matrix finds it
 * in O(log n)): the first and last rows of the page are two such k-th, the
 * rows between are the order's between them that pass the checks (or, when
 * those are sparse, each k-th again).
 */
export function rankPage(
  kth: (k: number) => number,
  count: number,
  order: SortedIndex,
  check: Check,
  descending: boolean,
  offset: number,
  limit: number,
): number[] {
  const take = Math.min(limit, count - offset);
  if (take <= 0) return [];
  const first = descending ? count - offset - take : offset;
  const from = kth(first);
  const to = take === 1 ? from : kth(first + take - 1);
  const rows = order.order;
  const page: number[] = [];
  if (to - from < take * SPARSE) {
    for (let p = from; p <= to; p++) {
      const row = rows[p]!;
      if (check(row)) page.push(row);
    }
  } else {
    for (let k = first; k < first + take; k++) page.push(rows[k === first ? from : k === first + take - 1 ? to : kth(k)]!);
  }
  return descending ? page.reverse() : page;
}

/**
 * `walkPage` for a selection of `count` rows, from whichever end of the
 * walk its page is nearer to.
 */
export function walkNearer(
  walk: Candidate,
  check: Check | PositionTest,
  descending: boolean,
  offset: number,
  limit: number,
  count: number,
  budget = Infinity,
  zones?: ZoneTest,
): number[] | undefined {
  const take = Math.min(limit, count - offset);
  if (take <= 0) return [];
  const fromOtherEnd = count - offset - take;
  if (fromOtherEnd >= offset) return walkPage(walk, check, descending, offset, take, budget, zones);
  return walkPage(walk, check, !descending, fromOtherEnd, take, budget, zones)?.reverse();
}

/** Rows of the order between the page's first and last, per row of the page, past which each is found by its own k-th. */
const SPARSE = 16;

/** What rankPage costs (in rows read) for a page of `take` of `count` rows spread over an order of `size`, each k-th costing `kthCost`. */
export function rankPageCost(kthCost: number, take: number, count: number, size: number): number {
  const between = (take * size) / count;
  return between < take * SPARSE ? 2 * kthCost + between : take * kthCost;
}
