/**
 * The test of a walk or scan of one index by what is stored in its order.
 * A constraint that another index answers as one block of its positions (a
 * range on its leading column, one code) passes exactly the rows whose
 * positions there are in the block; a set of codes (the opportunities of a
 * category), the rows whose code is one of them. With those positions, or
 * codes, of the walked index's rows in the walked order
 * (`OrderRanks.positions` and `values`, 4 bytes a row), a walk reads them
 * one after another, where reading the constraint's column at each row is
 * a read at random: mostly a cache miss at 500,000 rows (see row-bits.ts,
 * which marks such a constraint's rows in a bitset first, at a cost per row
 * marked that this does not pay).
 */
import type { Identified } from '../readmodel/sorted-index.js';
import type { Table } from '../readmodel/table.js';
import type { Candidate } from './candidates.js';
import type { CodesConstraint, Constraint } from './constraints.js';

/**
 * What a row read by positions costs against a row a walk tests by its columns (a read at random each, or a bit
 * after marking): two sequential reads of 4 bytes a constraint.
 */
export const POSITION_READ = 1 / 4;

/**
 * One constraint, as what it reads in the walked order (`values`) and the
 * test of a value: in [from, from + width), and `member[value & mask]` set.
 * A block of positions takes every member (a table of one, mask 0); a set
 * of codes, every value (from 0, the widest width).
 */
interface Slot {
  readonly values: Uint32Array;
  readonly from: number;
  readonly width: number;
  readonly member: Uint8Array;
  readonly mask: number;
}

/** Values stored are below 2^30 - 1 (positions, codes): a small integer. */
const WIDEST = 2 ** 30 - 1;
const EVERY = Uint8Array.of(1);

/** The slot of a block of positions [from, to). */
export const inBlock = (values: Uint32Array, from: number, to: number): Slot => ({ values, from, width: to - from, member: EVERY, mask: 0 });

/** The slot of a set of codes (ascending): a table of them, as long as the next power of two past the largest (values are masked into it). */
export function inCodes(values: Uint32Array, codes: readonly number[]): Slot {
  const mask = 2 ** Math.ceil(Math.log2(codes[codes.length - 1]! + 1)) - 1;
  const member = new Uint8Array(mask + 1);
  for (const code of codes) member[code] = 1;
  // (A code past the mask would wrap onto another: the width keeps it out.)
  return { values, from: 0, width: mask + 1, member, mask };
}

/**
 * A test of a walked order's stored values: each constraint's slot. Walks
 * and scans read it in loops of their own (`walk`, `scan`), the slots held
 * in constants, for two at most, each position's test a product of bits
 * with no branch: a loop calling a test a row cannot have it inlined (walks
 * are given many), and its call and branches cost more than the reads (a
 * search walking 200,000 rows of the largest shift table, two ranges
 * tested: 3.2 ms marking them in bits, 2.9 ms by positions with a call a
 * row, 1.2 ms here). A third slot, always there, made the loops half as
 * slow again; past two, walks test by columns.
 */
export class PositionTest {
  /** Exactly two slots, the second one every position passes if there is one only. */
  private readonly two: readonly [Slot, Slot];

  constructor(slots: readonly Slot[]) {
    this.two = [slots[0]!, slots[1] ?? { values: slots[0]!.values, from: 0, width: WIDEST, member: EVERY, mask: 0 }];
  }

  /**
   * Read positions from `first` toward `end` (exclusive; down when `end` is below), passing over `skip` that pass, then
   * putting the rows of those that pass into `page` (`rows`: the walked index's order) until it holds `take`. Stops
   * after `budget` reads. How many passed, and how many were read.
   */
  walk(rows: Uint32Array, first: number, end: number, skip: number, take: number, page: number[], budget: number): { passed: number; read: number } {
    const [{ values: va, from: fa, width: wa, member: ma, mask: ka }, { values: vb, from: fb, width: wb, member: mb, mask: kb }] = this.two;
    const step = end < first ? -1 : 1;
    const stop = first + step * Math.min(Math.abs(end - first), Math.floor(budget));
    let passed = 0;
    let p = first;
    for (; p !== stop && passed < skip; p += step) {
      const a = va[p]!;
      const b = vb[p]!;
      passed += +((a - fa) >>> 0 < wa) & ma[a & ka]! & +((b - fb) >>> 0 < wb) & mb[b & kb]!;
    }
    for (; p !== stop && page.length < take; p += step) {
      const a = va[p]!;
      const b = vb[p]!;
      if ((a - fa) >>> 0 < wa && ma[a & ka] === 1 && (b - fb) >>> 0 < wb && mb[b & kb] === 1) {
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
    const [{ values: va, from: fa, width: wa, member: ma, mask: ka }, { values: vb, from: fb, width: wb, member: mb, mask: kb }] = this.two;
    let k = at;
    let p = from;
    for (; p < to && k < max; p++) {
      const a = va[p]!;
      const b = vb[p]!;
      out[k] = rows[p]!;
      k += +((a - fa) >>> 0 < wa) & ma[a & ka]! & +((b - fb) >>> 0 < wb) & mb[b & kb]!;
    }
    let more = 0;
    for (; p < to; p++) {
      const a = va[p]!;
      const b = vb[p]!;
      more += +((a - fa) >>> 0 < wa) & ma[a & ka]! & +((b - fb) >>> 0 < wb) & mb[b & kb]!;
    }
    return k - at + more;
  }
}

/**
 * The test of `constraints` for a walk or scan of `along`'s index, whose
 * rows satisfy `known` already, by what is stored in its order: each
 * constraint answered by a candidate of one block, of another index, that
 * covers nothing besides these and the known (candidates are complete for
 * what they cover: the block holds exactly the rows that satisfy it), by
 * positions in that index; else a set of codes by the codes. Undefined when
 * a constraint is neither, when there are more than two, or when what one
 * reads is not made yet (it is then wanted: made in the background for the
 * next search).
 */
export function positionTest(
  table: Pick<Table<Identified>, 'ranks' | 'column'>,
  along: Candidate,
  constraints: readonly Constraint[],
  candidates: readonly Candidate[],
  known: ReadonlySet<Constraint>,
): PositionTest | undefined {
  if (constraints.length === 0) return undefined;
  const chosen: Array<Candidate | CodesConstraint> = [];
  const covered = new Set<Constraint>();
  for (const c of constraints) {
    if (covered.has(c)) continue;
    const own = candidates
      .filter((k) => k.index !== along.index && k.blocks.length === 2 && k.covers.has(c) && [...k.covers].every((x) => known.has(x) || constraints.includes(x)))
      .sort((a, b) => a.size - b.size)[0];
    if (own !== undefined) {
      chosen.push(own);
      for (const x of own.covers) covered.add(x);
    } else if (c.kind === 'codes') chosen.push(c);
    else return undefined;
  }
  if (chosen.length > 2) return undefined;
  const slots: Slot[] = [];
  for (const one of chosen) {
    if ('kind' in one) {
      const codes = table.ranks.values(along.index, one.column, () => table.column(one.column));
      if (codes !== undefined) slots.push(inCodes(codes, one.codes));
    } else {
      const positions = table.ranks.positions(along.index, one.index);
      if (positions !== undefined) slots.push(inBlock(positions, one.blocks[0]!, one.blocks[1]!));
    }
  }
  return slots.length === chosen.length ? new PositionTest(slots) : undefined;
}
