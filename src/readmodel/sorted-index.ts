/**
 * A sorted index over the rows of a table: a typed array of row numbers
 * ordered by a tuple of numeric columns, with the record id as the last
 * tie-breaker, so every order is total and pages never overlap. Binary
 * search on the leading column gives the bounds of a range, and positions
 * are ranks: a page is a slice and a count is the difference of two bounds.
 * Comparisons read the table's column arrays, never the records, except
 * for ids on full ties.
 */
import { runThrough } from './pieces.js';
import { float64s, uint32s } from '../big-arrays.js';

export interface Identified {
  readonly id: string;
}

export type NumericKey<R> = (record: R) => number;

/** What an index reads: the table's columns (arrays indexed by row) and record ids. */
export interface RowSource {
  column(name: string): Float64Array;
  idOf(row: number): string;
}

export interface IndexDef {
  readonly name: string;
  /** Column names, most significant first; the id breaks the remaining ties. */
  readonly keys: readonly string[];
}

export type RowComparator = (a: number, b: number) => number;

/** An order made beside an index's (`nextOrder`): its rows at [0, length). */
export interface NextOrder {
  readonly rows: Uint32Array;
  readonly length: number;
}

/** Positions of the order `nextOrder` copies a step, at most (about a millisecond), and rows it places a step. */
const NEXT_ORDER_STEP = 1 << 18;
const PLACE_STEP = 2048;

/** A step of a binary search for a row's position (two rows' columns read at random) against a row of a `ranks()` build (one write at random). */
const SEARCH_STEP_COST = 4;

/** Run ends remembered per index, at most (then forgotten all at once). */
const MAX_RUN_ENDS = 4096;

/**
 * Every FENCE_STRIDE-th position's values of the first two keys are kept in
 * order in a small array (an index of a million rows: 16k values a key), so
 * a binary search first narrows to one stride there, reading memory that
 * stays in the cache, and only then reads rows and columns (scattered over
 * the heap: two cache misses a probe) for the last few probes. Made only
 * once an index has gone unchanged for a while (`SortedIndex.fenceAfter`
 * searches): under a stream of changes, each would cost more to make (a
 * read in 64) than the searches until the next change save.
 */
const FENCE_STRIDE = 64;
const FENCED_KEYS = 2;

/**
 * A zone map of a column over an index: for each zone of `SortedIndex.zoneRows` consecutive positions, the least and
 * greatest value of the column among its rows. A walk or scan of the index skips every zone whose values cannot meet
 * a range it tests, and counts without testing a zone whose values all do (see `zoneTester`): where the order and the
 * tested column go together (a shift's start and end, its creation and last update), a walk for a range of one in the
 * order of the other skips the zones before the matches instead of reading and testing every row there.
 */
export interface ZoneMap {
  readonly min: Float64Array;
  readonly max: Float64Array;
}

/** A range on a column, half-open (what a walk or scan tests). */
export interface ZoneRange {
  readonly column: string;
  readonly lo: number;
  readonly hi: number;
}

/** How a zone stands against the ranges a walk or scan tests: no row of it can be in them all, every row is, or some may be. */
export const ZONE_NONE = 0;
export const ZONE_ALL = 1;
export const ZONE_SOME = 2;
export type ZoneTest = (position: number) => typeof ZONE_NONE | typeof ZONE_ALL | typeof ZONE_SOME;

export class SortedIndex {
  private rows: Uint32Array = new Uint32Array(16);
  private length = 0;
  /** The order before the last `adopt`: the next `nextOrder` is made in it (when it fits). */
  private spare: Uint32Array | undefined;
  /** Row → position, built when first asked for after a change. */
  private positions: Uint32Array | undefined;
  /**
   * The positions of before the last change: the next `ranks()` is made in its memory when it fits. Under a live
   * import an index of a million rows changes every second or so, and a new array for each of its `ranks()` (4 MB
   * at 1M rows), kept until a full garbage collection, was most of the memory the server allocated outside the
   * JavaScript heap; every 64 MB of that starts a collection of the whole heap (V8's external memory pressure):
   * about one every 5 s, each using both cores for half a second, with reads queued behind it.
   */
  private sparePositions: Uint32Array | undefined;
  /** What the positions found by search since the last change cost (positionsOf), in rows of a `ranks()` build. */
  private searchedCost = 0;
  /** Leading value → the position after its run (runEnd), until the next change. */
  private readonly runEnds = new Map<number, number>();
  /** Per key (the first two): its values at positions 0, FENCE_STRIDE, 2 FENCE_STRIDE, … until the next change. */
  private readonly fences: (Float64Array | undefined)[] = [];
  /** Binary searches since the last change. */
  private searches = 0;
  /** Per column: its zone map, until the next change. */
  private readonly zoneMaps = new Map<string, ZoneMap>();
  /** Walks that asked for zone maps since the last change. */
  private zoneAsks = 0;
  /** Columns walks asked zone maps of and found none: made by makeZoneMaps (the background), until the next change. */
  private readonly zonesWanted = new Set<string>();
  /** The zone map makeZoneMaps is making, up to zone `next`. */
  private zoneMaking: { column: string; map: ZoneMap; next: number } | undefined;
  /** The zone size the maps were made with. */
  private zoneMapRows = 0;
  /** The last two lowerBound values and their bounds (value, bound, value, bound; NaN: none), until the next change. */
  private readonly lastBounds = new Float64Array([NaN, 0, NaN, 0]);
  /** Moves on every change of the order (what is derived from it checks it). */
  version = 0;

  /** Binary searches an index answers unchanged before it makes its fences (tests lower it). */
  static fenceAfter = 4096;
  /** Walks an index serves unchanged before it makes zone maps for them (tests lower it). */
  static zoneAfter = 64;
  /** Positions per zone of a zone map: a power of two (tests lower it). */
  static zoneRows = 256;

  constructor(
    readonly def: IndexDef,
    private readonly source: RowSource,
  ) {
    if (def.keys.length === 0) throw new Error(`index ${def.name} needs at least one key`);
  }

  get size(): number {
    return this.length;
  }

  /** The row numbers in index order, valid until the next update; read only [0, size). */
  get order(): Uint32Array {
    return this.rows;
  }

  /**
   * The position of every row in the index (by row number; rows not in the
   * index read 0). Sorting rows by their positions is sorting integers.
   */
  ranks(): Uint32Array {
    if (this.positions) return this.positions;
    let maxRow = 0;
    for (let k = 0; k < this.length; k++) if (this.rows[k]! > maxRow) maxRow = this.rows[k]!;
    const spare = this.sparePositions;
    this.sparePositions = undefined;
    let positions: Uint32Array;
    if (spare !== undefined && spare.length > maxRow) {
      // (Rows not in the index read 0, as in a new array.)
      positions = spare;
      positions.fill(0);
    } else positions = uint32s(maxRow + 1 + (maxRow >>> 4));
    for (let k = 0; k < this.length; k++) positions[this.rows[k]!] = k;
    this.positions = positions;
    return positions;
  }

  /** Whether `ranks()` is made (until the next change). */
  get hasRanks(): boolean {
    return this.positions !== undefined;
  }

  /**
   * The positions of `count` rows of the index, into `out`: read from
   * `ranks()`, or found by binary search while that is not made and the
   * searches since the last change have cost less than making it (rent or
   * buy: at most about twice the cheaper). A table taking changes (a live
   * import) makes its indexes anew many times a second, and each remade
   * `ranks()` at the first page sorted after it: 10-13 ms at 1.5M rows, for
   * a page of a few hundred matches.
   */
  positionsOf(rows: ArrayLike<number>, count: number, out: Uint32Array): void {
    if (this.positions === undefined) {
      const cost = count * Math.log2(this.length + 1) * SEARCH_STEP_COST;
      if (this.searchedCost + cost < this.length) {
        this.searchedCost += cost;
        const compare = this.comparator();
        for (let i = 0; i < count; i++) out[i] = this.position(rows[i]!, compare);
        return;
      }
    }
    const ranks = this.ranks();
    for (let i = 0; i < count; i++) out[i] = ranks[rows[i]!]!;
  }

  /**
   * Take (a copy of) these rows as the index's order, as saved by an
   * earlier process (the caller vouches that they are every row, in order).
   */
  restore(rows: Uint32Array): void {
    this.changed();
    this.rows = uint32s(capacityFor(rows.length));
    this.rows.set(rows);
    this.length = rows.length;
  }

  /** The column the index is sorted by first. */
  get leading(): string {
    return this.def.keys[0]!;
  }

  /** That column's values by row. */
  leadingColumn(): Float64Array {
    return this.source.column(this.leading);
  }

  /** Index order as a comparison of rows. */
  comparator(): RowComparator {
    const columns = this.def.keys.map((key) => this.source.column(key));
    const source = this.source;
    return (a, b) => {
      for (let c = 0; c < columns.length; c++) {
        const d = columns[c]![a]! - columns[c]![b]!;
        if (d !== 0) return d;
      }
      const x = source.idOf(a);
      const y = source.idOf(b);
      return x < y ? -1 : x > y ? 1 : 0;
    };
  }

  /**
   * First position whose leading column is ≥ `value`. The last two are
   * remembered until the next change: a search asks for the bounds of its
   * ranges more than once (whether a range filters anything, the
   * candidates, the order of its row tests), each a binary search over
   * memory that is mostly not in the cache.
   */
  lowerBound(value: number): number {
    const known = this.lastBounds;
    if (known[0] === value) return known[1]!;
    if (known[2] === value) return known[3]!;
    const bound = this.boundOn(0, value, 0, this.length);
    known[2] = known[0]!;
    known[3] = known[1]!;
    known[0] = value;
    known[1] = bound;
    return bound;
  }

  /**
   * First position in [from, to) whose value of the `key`-th key is ≥
   * `value` (> `value` if `past`): the rows there must be in that key's
   * order (the whole index for the leading key; one value of the leading
   * key for the second).
   */
  boundOn(key: number, value: number, from: number, to: number, past = false): number {
    let lo = from;
    let hi = to;
    this.searches++;
    if (key < FENCED_KEYS && hi - lo > 2 * FENCE_STRIDE && this.searches > SortedIndex.fenceAfter) {
      // The first fence position in [from, to) at or past the bound: the
      // bound is after the fence position before it and not after it.
      const fence = this.fence(key);
      const first = Math.ceil(lo / FENCE_STRIDE);
      const end = Math.ceil(hi / FENCE_STRIDE);
      let a = first;
      let b = end;
      while (a < b) {
        const mid = (a + b) >>> 1;
        const v = fence[mid]!;
        if (v < value || (past && v === value)) a = mid + 1;
        else b = mid;
      }
      if (a > first) lo = (a - 1) * FENCE_STRIDE + 1;
      if (a < end) hi = a * FENCE_STRIDE;
    }
    const column = this.source.column(this.def.keys[key]!);
    const rows = this.rows;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const v = column[rows[mid]!]!;
      if (v < value || (past && v === value)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * `boundOn` for a bound expected near `from`: probes from + 1, 3, 7, …
   * first, so a short answer reads only rows close to `from`.
   */
  boundNear(key: number, value: number, from: number, to: number): number {
    const column = this.source.column(this.def.keys[key]!);
    const rows = this.rows;
    let step = 1;
    let lo = from;
    while (lo + step < to && column[rows[lo + step]!]! < value) {
      lo += step;
      step *= 2;
    }
    return this.boundOn(key, value, lo, Math.min(lo + step, to));
  }

  /**
   * The position after the run of rows whose leading column is `value`
   * (a value some row has): remembered until the index changes, so skip
   * scans over the same values (a few spots, start times or ids) find the
   * runs without searching again.
   */
  runEnd(value: number): number {
    let end = this.runEnds.get(value);
    if (end === undefined) {
      end = this.boundOn(0, value, 0, this.length, true);
      if (this.runEnds.size >= MAX_RUN_ENDS) this.runEnds.clear();
      this.runEnds.set(value, end);
    }
    return end;
  }

  /**
   * Remove the rows `removed` (for which `isRemoved` holds) and add the rows
   * of `added`, however many, now: `nextOrder` run through, then taken.
   */
  update(isRemoved: (row: number) => boolean, removed: readonly number[], added: readonly number[]): void {
    this.adopt(runThrough(this.nextOrder(isRemoved, removed, added)));
  }

  /**
   * The positions of these rows, ascending and each once (undefined if one is not where a search puts it), yielding
   * every PLACE_STEP searches (the comparator taken again after each: a table may grow meanwhile).
   */
  private *placesOf(rows: readonly number[]): Generator<undefined, Uint32Array | undefined> {
    const places = new Uint32Array(rows.length);
    for (let i = 0; i < rows.length; ) {
      const compare = this.comparator();
      for (const end = Math.min(i + PLACE_STEP, rows.length); i < end; i++) {
        const at = this.position(rows[i]!, compare);
        if (at >= this.length || this.rows[at] !== rows[i]) return undefined;
        places[i] = at;
      }
      if (i < rows.length) yield;
    }
    places.sort();
    let n = 0;
    for (let i = 0; i < places.length; i++) if (i === 0 || places[i] !== places[i - 1]) places[n++] = places[i]!;
    return places.subarray(0, n);
  }

  /**
   * The order with the rows `removed` (for which `isRemoved` holds) taken out and those of `added` in, made beside
   * the current one a step at a time (a generator: it yields between steps), for `adopt` to take once made:
   * searches go on reading the current order meanwhile. The rows it places, and those of the index, must keep their
   * columns until then (a table changes a record by giving it a new row). Its steps:
   * - each removed row found by binary search (its columns and id still hold what it was indexed by), and each
   *   added one placed by galloping from the last place (about log(n/m) comparisons each, rather than log(n): a
   *   live import's thousands of rows into an index of a million; on the leading column's values first), PLACE_STEP
   *   rows a step;
   * - the order's blocks between those places copied, NEXT_ORDER_STEP positions a step.
   * The cost is a comparison per change and step of a search, plus copying memory, not a comparison per row of the
   * index (each of which reads two rows' columns at random: 6 s of the server's 11 s while 10,000 events were
   * appended to a million shifts, when batches were merged that way; that is left for a removed row no search
   * finds).
   */
  *nextOrder(isRemoved: (row: number) => boolean, removed: readonly number[], added: readonly number[]): Generator<undefined, NextOrder> {
    // (The comparator is taken again after each yield: a table that grew meanwhile reads other column arrays.)
    const gone = yield* this.placesOf(removed);
    if (gone === undefined) return this.merged(isRemoved, removed, added, this.comparator());
    yield;
    const fresh = Uint32Array.from(added).sort(this.comparator());
    const places = new Uint32Array(fresh.length);
    let from = 0;
    for (let j = 0; j < fresh.length; ) {
      yield;
      const compare = this.comparator();
      const lead = this.leadingColumn();
      for (const end = Math.min(j + PLACE_STEP, fresh.length); j < end; j++) from = places[j] = this.placeAfter(fresh[j]!, compare, from, lead);
    }
    yield;
    const length = this.length - gone.length + fresh.length;
    const spare = this.spare;
    this.spare = undefined;
    const next = spare !== undefined && spare.length >= length && spare.length <= 2 * capacityFor(length) ? spare : uint32s(capacityFor(length));
    const old = this.rows;
    // Through the old order: before position p, the added rows placed at p, then old[p] unless it is gone.
    let out = 0;
    let g = 0;
    let j = 0;
    let copiedSinceYield = 0;
    for (let p = 0; p <= this.length; ) {
      while (j < fresh.length && places[j] === p) next[out++] = fresh[j++]!;
      if (p === this.length) break;
      // The block [p, end) of old rows with nothing placed or gone inside it.
      let end = this.length;
      if (j < fresh.length) end = Math.min(end, places[j]!);
      while (g < gone.length && gone[g]! < p) g++;
      if (g < gone.length) end = Math.min(end, gone[g]!);
      if (end > p) {
        next.set(old.subarray(p, end), out);
        out += end - p;
        copiedSinceYield += end - p;
        p = end;
      } else {
        // old[p] is gone (added rows before it were placed above).
        p++;
      }
      if (copiedSinceYield >= NEXT_ORDER_STEP) {
        copiedSinceYield = 0;
        yield;
      }
    }
    return { rows: next, length: out };
  }

  /**
   * Allocate the memory the next `nextOrder` is made in, if there is none yet (whether it did). An index has it from
   * its first change on (the order `adopt` replaces); made ahead, the first changes of a live import into a server
   * just started allocate nothing: every big index allocating its next order at the import's first batch was
   * 40 MB outside the JavaScript heap at once, at a million shifts (in the GC traces, a collection of the whole heap
   * started with the import's first append). Its pages take no memory until the order is made in them.
   */
  makeSpare(): boolean {
    if (this.hasSpare) return false;
    this.spare = uint32s(this.rows.length);
    return true;
  }

  /** Whether the memory the next `nextOrder` is made in is there, as large as the order (see makeSpare). */
  get hasSpare(): boolean {
    return this.spare !== undefined && this.spare.length >= this.rows.length;
  }

  /**
   * Take an order `nextOrder` made (the index unchanged since it began). The order it replaces is kept to make the
   * next one in: the caller guarantees that no one reads it any more (searches read an order within one request).
   */
  adopt(order: NextOrder): void {
    this.changed();
    this.spare = this.rows;
    this.rows = order.rows;
    this.length = order.length;
  }

  /** The order with `added` merged in and `removed` dropped, comparing every row (when a removed row could not be found by search), in a new array. */
  private merged(isRemoved: (row: number) => boolean, removed: readonly number[], added: readonly number[], compare: RowComparator): NextOrder {
    const fresh = Uint32Array.from(added).sort(compare);
    const old = this.rows;
    const oldLength = this.length;
    const merged = uint32s(capacityFor(oldLength - removed.length + fresh.length));
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < oldLength || j < fresh.length) {
      if (i < oldLength && isRemoved(old[i]!)) {
        i++;
        continue;
      }
      if (j >= fresh.length || (i < oldLength && compare(old[i]!, fresh[j]!) < 0)) merged[k++] = old[i++]!;
      else merged[k++] = fresh[j++]!;
    }
    return { rows: merged, length: k };
  }

  /**
   * Order these rows (every row of the index, in any order) from scratch:
   * a stable counting sort by each key's dense rank, least significant key
   * first, then the ids of rows equal on every key. Linear in the rows per
   * key, with no comparator calls but for those ties.
   *
   * An index among `sorted` (ordered from the same rows just before) whose
   * keys are the last of this one's is this order's start: what is left is
   * a pass per key before them, and no ties to order (its order has them by
   * id). Most indexes end with a table's default order (a shift's `end`:
   * end, start, created), which is then sorted once, not once per index.
   */
  rebuild(rows: Uint32Array, ranks: ColumnRanks, sorted: readonly SortedIndex[] = []): void {
    this.changed();
    const n = rows.length;
    const keys = this.def.keys;
    const base = SortedIndex.longestSuffix(keys, sorted, n);
    let order = uint32s(capacityFor(n));
    order.set(base === undefined ? rows : base.rows.subarray(0, n));
    let next = uint32s(order.length);
    for (let c = keys.length - 1 - (base?.def.keys.length ?? 0); c >= 0; c--) {
      const { rank, distinct } = ranks.of(keys[c]!);
      const starts = new Uint32Array(distinct + 1);
      for (let i = 0; i < n; i++) starts[rank[order[i]!]! + 1]!++;
      for (let r = 1; r <= distinct; r++) starts[r]! += starts[r - 1]!;
      for (let i = 0; i < n; i++) {
        const row = order[i]!;
        next[starts[rank[row]!]!++] = row;
      }
      [order, next] = [next, order];
    }
    this.rows = order;
    this.length = n;
    if (base !== undefined) return;
    // Runs of rows equal on every key: by id.
    const columns = keys.map((key) => this.source.column(key));
    const sameKeys = (a: number, b: number) => {
      for (let c = 0; c < columns.length; c++) if (columns[c]![a] !== columns[c]![b]) return false;
      return true;
    };
    const compare = this.comparator();
    let start = 0;
    for (let i = 1; i <= n; i++) {
      if (i < n && sameKeys(order[i - 1]!, order[i]!)) continue;
      if (i - start > 1) order.subarray(start, i).sort(compare);
      start = i;
    }
  }

  /** Of `sorted` (each holding `n` rows), the index whose keys are the most of the last of `keys` (fewer than all). */
  private static longestSuffix(keys: readonly string[], sorted: readonly SortedIndex[], n: number): SortedIndex | undefined {
    let best: SortedIndex | undefined;
    for (const index of sorted) {
      const tail = index.def.keys;
      if (index.length !== n || tail.length >= keys.length || tail.length <= (best?.def.keys.length ?? 0)) continue;
      if (tail.every((key, i) => key === keys[keys.length - tail.length + i])) best = index;
    }
    return best;
  }

  /** What is derived from the order is made again when next asked for. */
  private changed(): void {
    this.version++;
    if (this.positions !== undefined) this.sparePositions = this.positions;
    this.positions = undefined;
    this.searchedCost = 0;
    this.runEnds.clear();
    this.fences.length = 0;
    this.searches = 0;
    this.forgetZoneMaps();
    this.zoneAsks = 0;
    this.lastBounds[0] = this.lastBounds[2] = NaN;
  }

  /**
   * For a walk or scan of this index testing these ranges: a function of
   * a position telling how its zone (the zones are `SortedIndex.zoneRows`
   * positions from 0) stands against them — ZONE_NONE when some range
   * misses its values, ZONE_ALL when every range holds them all and the
   * ranges are `complete` (all the walk tests), else ZONE_SOME. Only the
   * ranges whose columns have a zone map made count; the others' maps are
   * wanted, and made by `makeZoneMaps` (the server's background work): a
   * map reads every row of the index (0.9–6.7 ms a column at 515,420
   * rows), which made the request that first asked for it up to 13 ms
   * slower than the same request the next time. Undefined when there is
   * nothing to go by: no map made, or the index has not served `zoneAfter`
   * walks unchanged (under a stream of changes a zone map would cost more
   * than the walks until the next change save).
   */
  zoneTester(ranges: readonly ZoneRange[], complete: boolean): ZoneTest | undefined {
    if (ranges.length === 0 || ++this.zoneAsks <= SortedIndex.zoneAfter) return undefined;
    // (Maps made with zones of another size, before a test changed it, are made again.)
    if (this.zoneMapRows !== SortedIndex.zoneRows) this.forgetZoneMaps();
    const maps: Array<ZoneMap & ZoneRange> = [];
    let all = complete;
    for (const range of ranges) {
      const map = this.zoneMaps.get(range.column);
      if (map) maps.push({ ...map, ...range });
      else {
        this.zonesWanted.add(range.column);
        all = false; // what a range without a map holds is not known
      }
    }
    if (maps.length === 0) return undefined;
    const shift = Math.log2(SortedIndex.zoneRows);
    return (position) => {
      const z = position >>> shift;
      let every = all;
      for (let i = 0; i < maps.length; i++) {
        const m = maps[i]!;
        const least = m.min[z]!;
        const greatest = m.max[z]!;
        if (greatest < m.lo || least >= m.hi) return ZONE_NONE;
        if (least < m.lo || greatest >= m.hi) every = false;
      }
      return every ? ZONE_ALL : ZONE_SOME;
    };
  }

  /** Whether walks want zone maps not made yet (makeZoneMaps). */
  get wantsZoneMaps(): boolean {
    return this.zoneMaking !== undefined || this.zonesWanted.size > 0;
  }

  /**
   * Make the zone maps walks wanted, a piece of 64 zones at a time, until
   * `deadline` (performance.now(), ms). Whether some are left.
   */
  makeZoneMaps(deadline: number): boolean {
    if (this.zoneMapRows !== SortedIndex.zoneRows) this.forgetZoneMaps();
    const per = SortedIndex.zoneRows;
    const zones = Math.ceil(this.length / per);
    const rows = this.rows;
    for (;;) {
      if (this.zoneMaking === undefined) {
        const column = this.zonesWanted.values().next().value;
        if (column === undefined) return false;
        this.zonesWanted.delete(column);
        if (this.zoneMaps.has(column)) continue;
        this.zoneMaking = { column, map: { min: float64s(zones), max: float64s(zones) }, next: 0 };
      }
      const making = this.zoneMaking;
      const values = this.source.column(making.column);
      const { min, max } = making.map;
      const until = Math.min(zones, making.next + 64);
      for (let z = making.next; z < until; z++) {
        let lo = Infinity;
        let hi = -Infinity;
        for (let p = z * per, end = Math.min(p + per, this.length); p < end; p++) {
          const v = values[rows[p]!]!;
          if (v < lo) lo = v;
          if (v > hi) hi = v;
        }
        min[z] = lo;
        max[z] = hi;
      }
      making.next = until;
      if (until === zones) {
        this.zoneMaps.set(making.column, making.map);
        this.zoneMaking = undefined;
      }
      if (performance.now() >= deadline) return this.wantsZoneMaps;
    }
  }

  private forgetZoneMaps(): void {
    this.zoneMaps.clear();
    this.zonesWanted.clear();
    this.zoneMaking = undefined;
    this.zoneMapRows = SortedIndex.zoneRows;
  }

  private fence(key: number): Float64Array {
    let fence = this.fences[key];
    if (fence === undefined) {
      const column = this.source.column(this.def.keys[key]!);
      fence = float64s(Math.ceil(this.length / FENCE_STRIDE));
      for (let j = 0; j < fence.length; j++) fence[j] = column[this.rows[j * FENCE_STRIDE]!]!;
      this.fences[key] = fence;
    }
    return fence;
  }

  /**
   * `positionAfter`, comparing the leading column's values (`lead`) until they are equal: a typed array read
   * where the comparator reads every key of both rows (placing 2,000 rows into 500,000: 1.68 → 1.03 ms a flush,
   * sorting them included). Not `boundNear`: its searches count toward making fences, which an insert would then
   * leave stale.
   */
  private placeAfter(row: number, compare: RowComparator, from: number, lead: Float64Array): number {
    const value = lead[row]!;
    const rows = this.rows;
    const n = this.length;
    let step = 1;
    let lo = from;
    while (lo + step <= n && lead[rows[lo + step - 1]!]! < value) {
      lo += step;
      step *= 2;
    }
    let hi = Math.min(lo + step, n);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (lead[rows[mid]!]! < value) lo = mid + 1;
      else hi = mid;
    }
    return lo < n && lead[rows[lo]!]! === value ? this.positionAfter(row, compare, lo) : lo;
  }

  /** `position(row, compare, from)`, probing from + 1, 3, 7, … first: cheap when the answer is near `from`. */
  private positionAfter(row: number, compare: RowComparator, from: number): number {
    let step = 1;
    let lo = from;
    while (lo + step <= this.length && compare(this.rows[lo + step - 1]!, row) < 0) {
      lo += step;
      step *= 2;
    }
    return this.position(row, compare, lo, Math.min(lo + step, this.length));
  }

  /** First position in [from, to) whose row is not before `row` (the whole index by default). */
  private position(row: number, compare: RowComparator, from = 0, to = this.length): number {
    let lo = from;
    let hi = to;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compare(this.rows[mid]!, row) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** Room for `n` and some growth. */
export function capacityFor(n: number): number {
  return Math.max(16, Math.ceil(n * 1.25));
}

/** A radix sort's digits: 11 bits, the last of each 32-bit word 10 (six passes over a 64-bit key). */
const DIGIT_SHIFTS = [0, 11, 22] as const;
const DIGIT_MASKS = [0x7ff, 0x7ff, 0x3ff] as const;
const DIGIT_BUCKETS = 1 << 11;

/**
 * Dense ranks of `column`'s values at `rows` (0 for the smallest, +1 for each next distinct one), by row number in an
 * array of `rowCount`. The values' bits are made two words that compare as the numbers do (finite numbers, -0 taken
 * as 0), sorted with their rows by a least-significant-digit radix sort (a digit all the values share is skipped),
 * then ranked in one walk. Ranking 500,000 rows of distinct times took 107 ms with a sort of the values and a hash
 * of their places, 55.9 ms with 20,000 distinct values and 31.6 ms with 14 (ColumnRanks before this).
 */
export function denseRanks(column: Float64Array, rows: Uint32Array, rowCount: number): { rank: Uint32Array; distinct: number } {
  const n = rows.length;
  let hi = new Uint32Array(n);
  let lo = new Uint32Array(n);
  let at = new Uint32Array(n);
  const counts = new Int32Array(6 * DIGIT_BUCKETS);
  const value = new Float64Array(1);
  const words = new Uint32Array(value.buffer);
  for (let i = 0; i < n; i++) {
    const row = rows[i]!;
    value[0] = column[row]! + 0;
    let h = words[1]!;
    let l = words[0]!;
    // Negative numbers: every bit flipped (larger magnitudes first); others: the sign bit set (above every negative).
    if (h >>> 31 === 1) {
      h = ~h >>> 0;
      l = ~l >>> 0;
    } else h = (h | 0x80000000) >>> 0;
    hi[i] = h;
    lo[i] = l;
    at[i] = row;
    counts[l & 0x7ff]!++;
    counts[DIGIT_BUCKETS + ((l >>> 11) & 0x7ff)]!++;
    counts[2 * DIGIT_BUCKETS + (l >>> 22)]!++;
    counts[3 * DIGIT_BUCKETS + (h & 0x7ff)]!++;
    counts[4 * DIGIT_BUCKETS + ((h >>> 11) & 0x7ff)]!++;
    counts[5 * DIGIT_BUCKETS + (h >>> 22)]!++;
  }
  let hiTo = new Uint32Array(n);
  let loTo = new Uint32Array(n);
  let atTo = new Uint32Array(n);
  const next = new Int32Array(DIGIT_BUCKETS);
  for (let pass = 0; pass < 6; pass++) {
    const base = pass * DIGIT_BUCKETS;
    let shared = false;
    let sum = 0;
    for (let b = 0; b < DIGIT_BUCKETS; b++) {
      const count = counts[base + b]!;
      if (count === n) shared = true;
      next[b] = sum;
      sum += count;
    }
    if (shared) continue;
    const keys = pass < 3 ? lo : hi;
    const shift = DIGIT_SHIFTS[pass % 3]!;
    const mask = DIGIT_MASKS[pass % 3]!;
    for (let i = 0; i < n; i++) {
      const to = next[(keys[i]! >>> shift) & mask]!++;
      hiTo[to] = hi[i]!;
      loTo[to] = lo[i]!;
      atTo[to] = at[i]!;
    }
    [hi, hiTo] = [hiTo, hi];
    [lo, loTo] = [loTo, lo];
    [at, atTo] = [atTo, at];
  }
  const rank = uint32s(rowCount);
  let distinct = 0;
  for (let i = 0; i < n; i++) {
    if (i > 0 && (hi[i] !== hi[i - 1] || lo[i] !== lo[i - 1])) distinct++;
    rank[at[i]!] = distinct;
  }
  return { rank, distinct: n === 0 ? 0 : distinct + 1 };
}

/**
 * Dense ranks of column values over a set of rows (0 for the smallest
 * value, +1 for each next distinct one), by row number: computed once per
 * column and shared by every index of a table rebuilt together.
 * Index columns hold finite numbers.
 */
export class ColumnRanks {
  private readonly cache = new Map<string, { rank: Uint32Array; distinct: number }>();

  /** `rowCount`: every row number is below it. */
  constructor(
    private readonly source: RowSource,
    private readonly rows: Uint32Array,
    private readonly rowCount: number,
  ) {}

  of(name: string): { rank: Uint32Array; distinct: number } {
    const cached = this.cache.get(name);
    if (cached) return cached;
    const ranks = denseRanks(this.source.column(name), this.rows, this.rowCount);
    this.cache.set(name, ranks);
    return ranks;
  }
}
