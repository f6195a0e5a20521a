/**
 * A sorted index over the rows of a table: a typed array of row numbers
 * ordered by a tuple of numeric columns, with the record id as the last
 * tie-breaker, so every order is total and pages never overlap. Binary
 * search on the leading column gives the bounds of a range, and positions
 * are ranks: a page is a slice and a count is the difference of two bounds.
 * Comparisons read the table's column arrays, never the records, except
 * for ids on full ties.
 */

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

/** Up to this many changes are spliced into an index one by one; more are merged. */
const SPLICE_LIMIT = 32;

export class SortedIndex {
  private rows = new Uint32Array(16);
  private length = 0;
  /** Row → position, built when first asked for after a change. */
  private positions: Uint32Array | undefined;

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
    const positions = new Uint32Array(maxRow + 1);
    for (let k = 0; k < this.length; k++) positions[this.rows[k]!] = k;
    this.positions = positions;
    return positions;
  }

  /** The column the index is sorted by first. */
  get leading(): string {
    return this.def.keys[0]!;
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

  /** First position whose leading column is ≥ `value`. */
  lowerBound(value: number): number {
    const lead = this.source.column(this.leading);
    const rows = this.rows;
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (lead[rows[mid]!]! < value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Remove the rows of `removed` and add the rows of `added`. A few changes
   * are spliced in place; more are sorted on their own and merged with the
   * rest in one pass.
   */
  update(removed: ReadonlySet<number>, added: readonly number[]): void {
    this.positions = undefined;
    const compare = this.comparator();
    if (removed.size + added.length <= SPLICE_LIMIT) {
      for (const row of removed) this.remove(row, compare);
      for (const row of added) this.insert(row, compare);
      return;
    }
    const fresh = Uint32Array.from(added).sort(compare);
    const old = this.rows;
    const oldLength = this.length;
    const merged = new Uint32Array(capacityFor(oldLength - removed.size + fresh.length));
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < oldLength || j < fresh.length) {
      if (i < oldLength && removed.has(old[i]!)) {
        i++;
        continue;
      }
      if (j >= fresh.length || (i < oldLength && compare(old[i]!, fresh[j]!) < 0)) merged[k++] = old[i++]!;
      else merged[k++] = fresh[j++]!;
    }
    this.rows = merged;
    this.length = k;
  }

  /** First position whose row is not before `row`. */
  private position(row: number, compare: RowComparator): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compare(this.rows[mid]!, row) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private insert(row: number, compare: RowComparator): void {
    if (this.length === this.rows.length) {
      const grown = new Uint32Array(capacityFor(this.length + 1));
      grown.set(this.rows);
      this.rows = grown;
    }
    const at = this.position(row, compare);
    this.rows.copyWithin(at + 1, at, this.length);
    this.rows[at] = row;
    this.length++;
  }

  private remove(row: number, compare: RowComparator): void {
    const at = this.position(row, compare);
    if (at < this.length && this.rows[at] === row) {
      this.rows.copyWithin(at, at + 1, this.length);
      this.length--;
    }
  }
}

/** Room for `n` and some growth. */
export function capacityFor(n: number): number {
  return Math.max(16, Math.ceil(n * 1.25));
}
