/**
 * The test of a walk or scan of one index by positions. A constraint that
 * another index answers as one block of its positions (a range on its
 * leading column, one code) passes exactly the rows whose positions there
 * are in the block. With those positions of the walked index's rows, in the
 * walked order (`OrderRanks.positions`, 4 bytes a row), a walk reads them one
 * after another, where reading the constraint's column at each row is a read
 * at random: mostly a cache miss at 500,000 rows (see row-bits.ts, which
 * marks such a constraint's rows in a bitset first, at a cost per row marked
 * that this does not pay).
 */
import type { Identified } from '../readmodel/sorted-index.js';
import type { Table } from '../readmodel/table.js';
import type { Candidate } from './candidates.js';
import type { Constraint } from './constraints.js';

/**
 * What a row read by positions costs against a row a walk tests by its columns (a read at random each, or a bit
 * after marking): two sequential reads of 4 bytes a constraint.
 */
export const POSITION_READ = 1 / 4;

interface Block {
  readonly positions: Uint32Array;
  readonly from: number;
  readonly width: number;
}

/** A block every position passes (positions are below 2^30 - 1, a small integer). */
const ALL = (positions: Uint32Array): Block => ({ positions, from: 0, width: 2 ** 30 - 1 });

/**
 * A test by positions: each constraint's positions and block. Walks and
 * scans read it in loops of their own (`walk`, `scan`), the blocks' arrays
 * held in constants, for two at most, each position's test a product of
 * bits with no branch: a loop calling a test a row cannot have it inlined
 * (walks are given many), and its call and branches cost more than the
 * reads (a search walking 200,000 rows of the largest shift table, two
 * ranges tested: 3.2 ms marking them in bits, 2.9 ms by positions with a
 * call a row, 1.2 ms here). A third block, always there, made the loops
 * half as slow again; past two, walks test by columns.
 */
export class PositionTest {
  /** Exactly two blocks, the second one every position passes if there is one only. */
  private readonly two: readonly [Block, Block];

  constructor(blocks: readonly Block[]) {
    this.two = [blocks[0]!, blocks[1] ?? ALL(blocks[0]!.positions)];
  }

  /**
   * Read positions from `first` toward `end` (exclusive; down when `end` is below), passing over `skip` that pass, then
   * putting the rows of those that pass into `page` (`rows`: the walked index's order) until it holds `take`. Stops
   * after `budget` reads. How many passed, and how many were read.
   */
  walk(rows: Uint32Array, first: number, end: number, skip: number, take: number, page: number[], budget: number): { passed: number; read: number } {
    const [{ positions: pa, from: fa, width: wa }, { positions: pb, from: fb, width: wb }] = this.two;
    const step = end < first ? -1 : 1;
    const stop = first + step * Math.min(Math.abs(end - first), Math.floor(budget));
    let passed = 0;
    let p = first;
    for (; p !== stop && passed < skip; p += step) {
      passed += +((pa[p]! - fa) >>> 0 < wa) & +((pb[p]! - fb) >>> 0 < wb);
    }
    for (; p !== stop && page.length < take; p += step) {
      if ((pa[p]! - fa) >>> 0 < wa && (pb[p]! - fb) >>> 0 < wb) {
        passed++;
        page.push(rows[p]!);
      }
    }
    return { passed, read: Math.abs(p - first) };
  }

  /**
   * How many of the positions [from, to) pass; the rows of those that pass go to `out` from `at` while they are below
   * `max` (each row is written, and the next slot taken only when it passes: `out` has a slot past `max`).
   */
  scan(rows: Uint32Array, from: number, to: number, out: Uint32Array, at: number, max: number): number {
    const [{ positions: pa, from: fa, width: wa }, { positions: pb, from: fb, width: wb }] = this.two;
    let k = at;
    let p = from;
    for (; p < to && k < max; p++) {
      out[k] = rows[p]!;
      k += +((pa[p]! - fa) >>> 0 < wa) & +((pb[p]! - fb) >>> 0 < wb);
    }
    let more = 0;
    for (; p < to; p++) more += +((pa[p]! - fa) >>> 0 < wa) & +((pb[p]! - fb) >>> 0 < wb);
    return k - at + more;
  }
}

/**
 * The test of `constraints` for a walk or scan of `along`'s index, whose
 * rows satisfy `known` already, by positions: each constraint answered by a
 * candidate of one block, of another index, that covers nothing besides
 * these and the known (candidates are complete for what they cover: the
 * block holds exactly the rows that satisfy it). Undefined when a
 * constraint has no such candidate, or when the positions of one are not
 * made yet (they are then wanted: made in the background for the next
 * search).
 */
export function positionTest(
  table: Pick<Table<Identified>, 'ranks'>,
  along: Candidate,
  constraints: readonly Constraint[],
  candidates: readonly Candidate[],
  known: ReadonlySet<Constraint>,
): PositionTest | undefined {
  if (constraints.length === 0) return undefined;
  const chosen: Candidate[] = [];
  const covered = new Set<Constraint>();
  for (const c of constraints) {
    if (covered.has(c)) continue;
    const own = candidates
      .filter((k) => k.index !== along.index && k.blocks.length === 2 && k.covers.has(c) && [...k.covers].every((x) => known.has(x) || constraints.includes(x)))
      .sort((a, b) => a.size - b.size)[0];
    if (own === undefined) return undefined;
    chosen.push(own);
    for (const x of own.covers) covered.add(x);
  }
  if (chosen.length > 2) return undefined;
  const blocks: Block[] = [];
  for (const own of chosen) {
    const positions = table.ranks.positions(along.index, own.index);
    if (positions !== undefined) blocks.push({ positions, from: own.blocks[0]!, width: own.blocks[1]! - own.blocks[0]! });
  }
  return blocks.length === chosen.length ? new PositionTest(blocks) : undefined;
}
