/**
 * A table's rank matrices: for a pair of its sorted indexes, the positions
 * of one (what a query's constraints select blocks of) holding their rows'
 * positions in the other (the order asked for), so that the k-th row of a
 * selection in that order is found in O(log n) (RankMatrix).
 *
 * Made only when a search wanted one, in the background (`work`, a piece of
 * a level at a time between requests), once the table has gone unchanged for
 * `quietMs`: under a stream of changes each would be stale before it was
 * used. A matrix is valid for the versions of the two indexes it was made
 * from; a search finding it stale searches without it and wants it again.
 *
 * Each matrix thrown away unused (changed while made, or stale before it
 * served USEFUL searches) doubles the quiet the table must keep before the
 * next is made, up to MAX_QUIET_MS: a live import changes a table every
 * second or so, and a matrix made between its batches is stale before it
 * serves (each costs a pass over the index per bit of its positions). A
 * matrix that serves resets it.
 *
 * The same goes for the plain positions in one index of another's rows, in
 * the other's order (`positions`), and for a symbol column's codes in an
 * index's order (`values`): what a walk of that order reads to test a
 * constraint the first answers as a block, or a set of codes (see
 * query/along.ts).
 *
 * Every table's matrices share one budget (`rankMatrices`, RANK_MATRIX_MB):
 * a mix of searches in many orders wants many of them (a table's indexes,
 * pair by pair), so the least recently used go when a new one would pass it.
 */
import { bitsFor, type RankMatrix, RankMatrixBuilder } from './rank-matrix.js';
import type { SortedIndex } from './sorted-index.js';
import { uint32s } from '../big-arrays.js';

/**
 * What is made: the rank matrix of `from` by positions in `order`; the plain
 * positions in `order` of `from`'s rows, in `from`'s order (a walk of `from`
 * tests a constraint `order` answers as a block by reading them one after
 * another, where it would read the constraint's column at each row, at
 * random); or a symbol column's codes in `from`'s order (the same for a set
 * of codes).
 */
type Value = RankMatrix | Uint32Array;

interface Made {
  readonly value: Value;
  readonly fromVersion: number;
  readonly orderVersion: number;
  /** Searches it served. */
  uses: number;
}

/**
 * 1 GB unless RANK_MATRIX_MB says otherwise: about 790 matrices of 500,000 rows. A bound on what a mix of searches
 * can make a process hold, not a size to fill: a budget below what the searches of the day want has matrices let go
 * of and made again (at 256 MB, under the benchmark's random mix at 200 searches a second, the matrices held stayed
 * at 253–256 MB and the reads' p99 was 331 ms against 17–26 ms at 1 GB, the code otherwise the same; the makes
 * were not counted).
 */
export const DEFAULT_RANK_MATRIX_BUDGET = 1024 * 2 ** 20;

/**
 * The bytes the rank matrices of every table hold, within one budget: when
 * a new matrix passes it, the least recently used matrices are let go of
 * (the newest stays, whatever its size). A search that then wants one
 * finds it missing and wants it made again.
 */
export class RankMatrixBudget {
  private held = 0;
  /** Matrices let go of to stay within the budget (a working set above it shows as a count that keeps growing). */
  letGoForBudget = 0;
  /** Matrices held, least recently used first (a use moves one to the end), each with its size and how to let it go. */
  private readonly matrices = new Map<object, { readonly bytes: number; readonly letGo: () => void }>();

  constructor(private budget = DEFAULT_RANK_MATRIX_BUDGET) {}

  /** A new budget, in bytes (applied as matrices are next made). */
  setBudget(bytes: number): void {
    this.budget = bytes;
  }

  /** Bytes held by every table's matrices. */
  get bytes(): number {
    return this.held;
  }

  /** A matrix made: counted, and the least recently used let go of (`letGo`) while the budget is passed. */
  add(matrix: object, bytes: number, letGo: () => void): void {
    this.matrices.set(matrix, { bytes, letGo });
    this.held += bytes;
    for (const [oldest, entry] of this.matrices) {
      if (this.held <= this.budget || oldest === matrix) break;
      this.remove(oldest);
      this.letGoForBudget++;
      entry.letGo();
    }
  }

  /** A matrix served a search: the last to go. */
  used(matrix: object): void {
    const entry = this.matrices.get(matrix);
    if (entry === undefined) return;
    this.matrices.delete(matrix);
    this.matrices.set(matrix, entry);
  }

  /** A matrix let go of by its table (stale). */
  remove(matrix: object): void {
    const entry = this.matrices.get(matrix);
    if (entry === undefined) return;
    this.matrices.delete(matrix);
    this.held -= entry.bytes;
  }
}

/** The process's one budget for rank matrices (openRuntime sets it from RANK_MATRIX_MB). */
export const rankMatrices = new RankMatrixBudget();

/** Searches a matrix must serve to count as worth its making. */
const USEFUL = 16;
/** The longest quiet a table is asked to keep before a matrix is made. */
const MAX_QUIET_MS = 60_000;

/** Made a piece at a time: `step` makes the next piece, true once all are made. */
interface Builder {
  step(): boolean;
  result(): Value;
}

/**
 * What is wanted made: a matrix or positions (of `from` in `order`), or the values of a column (`source()`, by row) in
 * `from`'s order (`order` is then `from`: they are valid as long as it is). The column is asked for when the making
 * starts, not when it is wanted: a table that grows swaps its columns for longer ones (the rows then added change the
 * index, and what was being made is thrown away).
 */
interface Wanted {
  readonly from: SortedIndex;
  readonly order: SortedIndex;
  readonly what: 'matrix' | 'positions' | 'values';
  readonly column?: { readonly name: string; readonly source: () => Float64Array };
}

interface Building {
  readonly key: string;
  readonly wanted: Wanted;
  readonly fromVersion: number;
  readonly orderVersion: number;
  readonly builder: Builder;
}

const keyOf = ({ from, order, what, column }: Wanted) =>
  what === 'values' ? `${from.def.name}#${column!.name}` : `${from.def.name}${what === 'matrix' ? '>' : '@'}${order.def.name}`;

const bytesOf = (value: Value) => (value instanceof Uint32Array ? value.byteLength : value.bytes);

/**
 * What `source` holds (by row) for another index's rows (`rows`, in its order): positions in an index (its `ranks()`),
 * or a column's codes. Made `RankMatrixBuilder.stepValues` at a time.
 */
class AlongBuilder implements Builder {
  private at = 0;

  constructor(
    private readonly source: Uint32Array | Float64Array,
    private readonly rows: Uint32Array,
    /** As long as `rows` (every value of it is written). */
    private readonly out: Uint32Array,
  ) {}

  step(): boolean {
    const { source, rows, out } = this;
    const end = Math.min(rows.length, this.at + RankMatrixBuilder.stepValues);
    for (let p = this.at; p < end; p++) out[p] = source[rows[p]!]!;
    this.at = end;
    return end === rows.length;
  }

  result(): Uint32Array {
    return this.out;
  }
}

/**
 * A matrix of `from`'s rows by their positions in another index (`ranks`, by row): the positions gathered in `from`'s
 * order (an AlongBuilder), then the matrix built over them, each a piece at a time. Gathered in one go, the positions of
 * a table of 500,000 rows were read at random from 2 MB in one slice of the background's work.
 */
class MatrixBuilder implements Builder {
  private gathering: AlongBuilder | undefined;
  private building: RankMatrixBuilder | undefined;

  constructor(
    ranks: Uint32Array,
    rows: Uint32Array,
    /** Where the positions are gathered, and split to: each as long as `rows` (see RankMatrixBuilder). */
    private readonly values: Uint32Array,
    private readonly next: Uint32Array,
    private readonly bits: number,
    private readonly room: (length: number) => Uint32Array,
  ) {
    this.gathering = new AlongBuilder(ranks, rows, values);
  }

  step(): boolean {
    if (this.building !== undefined) return this.building.step();
    if (this.gathering!.step()) {
      this.gathering = undefined;
      this.building = new RankMatrixBuilder(this.values, this.bits, this.next, this.room);
    }
    return false;
  }

  result(): RankMatrix {
    return this.building!.result();
  }
}

export class OrderRanks {
  /** How long the table must go unchanged before a matrix is made (tests set 0). */
  static quietMs = 250;

  private readonly made = new Map<string, Made>();
  private readonly wanted = new Map<string, Wanted>();
  private building: Building | undefined;
  /**
   * The memory a matrix is built in (its values, and where they are split to: RankMatrixBuilder), used again by the
   * next: new for each, it came to 10-15 MB a second at a million shifts while a server made matrices again after a
   * live import, a full collection of the heap every few seconds (V8 starts one for each 64 MB of memory outside its
   * heap). Not counted in the matrices' budget.
   */
  private scratch: [Uint32Array, Uint32Array] | undefined;
  private lastChange = -Infinity;
  /**
   * The arrays of what a change made stale, by length, for what is made next to be made in: the table's matrices and
   * positions are made again after each quiet spell of a live import, and this memory (shared, which V8 does not count:
   * big-arrays.ts) is freed only by a full collection, which the import may not start for a minute. New each time, it
   * came to up to 260 MB in 10 s at a million shifts, as a server warmed up and as an import ended (the server's peak:
   * 3.47-3.63 GB in two runs, 3.38 GB with these). Only the last change's: those of a change before are let go of
   * at the next (a table that grew meanwhile makes arrays of other lengths, which they would never fit), so they hold
   * at most what the matrices held then, outside the matrices' budget. Emptied once nothing is wanted.
   */
  private readonly spares = new Map<number, Uint32Array[]>();
  /** Matrices of this table thrown away unused since one last served: its quiet is quietMs doubled that often. */
  private wastedInARow = 0;

  /**
   * The table's indexes changed, and now hold `rows` rows: every matrix is
   * stale (each index holds every row of the table), and let go of now.
   * Kept until asked for again, a matrix of a shape never asked for again
   * held its memory (n × bits 32-bit words) for the life of the process. A
   * change that throws away any matrix unused asks for a longer quiet, once.
   *
   * Their arrays are kept for what is made next (`spares`) only if made for
   * as many rows: a table that grew or shrank makes arrays of other lengths,
   * which would never take them. Kept anyway, through a live import (the
   * first batch that added rows made them spares, and the next changes made
   * nothing to replace them), they were held beside the matrices made once
   * it ended: 265 MB of spares beside 290 MB made again, the server's peak.
   */
  changed(rows: number): void {
    this.lastChange = performance.now();
    if (this.made.size === 0) return;
    this.spares.clear();
    let unused = false;
    for (const made of this.made.values()) {
      if (made.uses < USEFUL) unused = true;
      rankMatrices.remove(made);
      if (made.value.length !== rows) continue;
      // (No search is under way that could read them: the builders that take them run between requests, in `work`.)
      for (const array of made.value instanceof Uint32Array ? [made.value] : made.value.arrays()) {
        const same = this.spares.get(array.length);
        if (same) same.push(array);
        else this.spares.set(array.length, [array]);
      }
    }
    this.made.clear();
    if (unused) this.wasted();
  }

  /** Let go of a matrix (stale, or the budget's least recently used): one that served too few searches asks for a longer quiet. */
  private letGo(key: string, made: Made): void {
    if (this.made.get(key) !== made) return;
    this.made.delete(key);
    rankMatrices.remove(made);
    if (made.uses < USEFUL) this.wasted();
  }

  /** The matrix of `from` by positions in `order`, if it is up to date with both; else it is wanted, and undefined. */
  get(from: SortedIndex, order: SortedIndex): RankMatrix | undefined {
    const matrix = this.peek(from, order);
    if (matrix === undefined) this.want(from, order);
    return matrix;
  }

  /** The matrix of `from` by positions in `order`, if it is up to date with both (not wanted when it is not). */
  peek(from: SortedIndex, order: SortedIndex): RankMatrix | undefined {
    return this.current({ from, order, what: 'matrix' }) as RankMatrix | undefined;
  }

  /** Make the matrix of `from` by positions in `order` (in the background, once the table is quiet). */
  want(from: SortedIndex, order: SortedIndex): void {
    this.wantMade({ from, order, what: 'matrix' });
  }

  /**
   * The positions in `order` of `from`'s rows, in `from`'s order (4 bytes a row), if up to date with both; else they
   * are wanted (made in the background, within the same budget as the matrices), and undefined.
   */
  positions(from: SortedIndex, order: SortedIndex): Uint32Array | undefined {
    return this.currentOrWanted({ from, order, what: 'positions' });
  }

  /**
   * The codes of a symbol column (`source()`, by row; `name` tells columns apart) of `from`'s rows, in `from`'s order (4
   * bytes a row), if up to date with it; else they are wanted, and undefined.
   */
  values(from: SortedIndex, name: string, source: () => Float64Array): Uint32Array | undefined {
    return this.currentOrWanted({ from, order: from, what: 'values', column: { name, source } });
  }

  private currentOrWanted(wanted: Wanted): Uint32Array | undefined {
    const made = this.current(wanted) as Uint32Array | undefined;
    if (made === undefined) this.wantMade(wanted);
    return made;
  }

  private current(wanted: Wanted): Value | undefined {
    const key = keyOf(wanted);
    const made = this.made.get(key);
    if (made && made.fromVersion === wanted.from.version && made.orderVersion === wanted.order.version) {
      if (++made.uses === USEFUL) this.wastedInARow = 0;
      rankMatrices.used(made);
      return made.value;
    }
    if (made) this.letGo(key, made);
    return undefined;
  }

  private wantMade(wanted: Wanted): void {
    const key = keyOf(wanted);
    if (!this.made.has(key) && this.building?.key !== key) this.wanted.set(key, wanted);
  }

  /** Bytes the matrices (and positions and codes) hold. */
  get bytes(): number {
    let bytes = 0;
    for (const { value } of this.made.values()) bytes += bytesOf(value);
    return bytes;
  }

  /**
   * Make wanted matrices until `deadline` (performance.now(), ms), a piece
   * at a time (RankMatrixBuilder.step; starting one reads both indexes'
   * rows at once). Whether there is more to do now (false while nothing is
   * wanted or the table has changed too lately).
   */
  work(deadline: number): boolean {
    if (this.wanted.size === 0 && this.building === undefined) {
      this.spares.clear();
      return false;
    }
    if (performance.now() - this.lastChange < Math.min(MAX_QUIET_MS, OrderRanks.quietMs * 2 ** this.wastedInARow)) return false;
    while (performance.now() < deadline) {
      const building = this.building ?? this.start();
      if (building === undefined) return false;
      const { from, order } = building.wanted;
      if (from.version !== building.fromVersion || order.version !== building.orderVersion) {
        // Changed meanwhile: start again once quiet (for longer).
        this.building = undefined;
        this.wasted();
        this.wanted.set(building.key, building.wanted);
        return false;
      }
      if (building.builder.step()) {
        const { key, fromVersion, orderVersion } = building;
        const made: Made = { value: building.builder.result(), fromVersion, orderVersion, uses: 0 };
        this.made.set(key, made);
        this.building = undefined;
        rankMatrices.add(made, bytesOf(made.value), () => this.letGo(key, made));
      }
    }
    return this.wanted.size > 0 || this.building !== undefined;
  }

  /** An array of `length` values for what is being made: a spare one (whatever it holds) if there is one, else new. */
  private readonly room = (length: number): Uint32Array => this.spares.get(length)?.pop() ?? uint32s(length);

  /** A matrix made (in part) for nothing: ask for a longer quiet before the next. */
  private wasted(): void {
    this.wastedInARow = Math.min(this.wastedInARow + 1, 16);
  }

  private start(): Building | undefined {
    const next = this.wanted.entries().next();
    if (next.done) return undefined;
    const [key, wanted] = next.value;
    this.wanted.delete(key);
    const { from, order, what, column } = wanted;
    const rows = from.order;
    const versions = { key, wanted, fromVersion: from.version, orderVersion: order.version };
    if (what === 'values') {
      this.building = { ...versions, builder: new AlongBuilder(column!.source(), rows.subarray(0, from.size), this.room(from.size)) };
      return this.building;
    }
    const ranks = order.ranks();
    if (what === 'positions') {
      this.building = { ...versions, builder: new AlongBuilder(ranks, rows.subarray(0, from.size), this.room(from.size)) };
      return this.building;
    }
    const n = from.size;
    // (One matrix is built at a time: the last one's memory is free. A 16th more, for a table that grows a little.)
    if (this.scratch === undefined || this.scratch[0].length < n) this.scratch = [uint32s(n + (n >>> 4)), uint32s(n + (n >>> 4))];
    const [values, splitTo] = this.scratch;
    const builder = new MatrixBuilder(ranks, rows.subarray(0, n), values.subarray(0, n), splitTo.subarray(0, n), bitsFor(order.size), this.room);
    this.building = { ...versions, builder };
    return this.building;
  }
}
