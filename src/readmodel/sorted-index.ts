/**
 * A sorted index over records: an array ordered by a tuple of numeric keys
 * with the record id as the last tie-breaker, so every order is total and
 * pages never overlap. Binary search gives the bounds of a range on the
 * leading key, and positions in the array are ranks: a page is a slice and
 * a count is the difference of two bounds.
 */

export interface Identified {
  readonly id: string;
}

export type NumericKey<R> = (record: R) => number;

export interface IndexDef<R> {
  readonly name: string;
  /** Sort keys, most significant first; the id breaks the remaining ties. */
  readonly keys: readonly NumericKey<R>[];
}

export type Comparator<R> = (a: R, b: R) => number;

/** Up to this many changes are spliced into an index one by one; more are merged. */
const SPLICE_LIMIT = 32;

export function comparatorOf<R extends Identified>(keys: readonly NumericKey<R>[]): Comparator<R> {
  return (a, b) => {
    for (const key of keys) {
      const d = key(a) - key(b);
      if (d !== 0) return d;
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  };
}

export class SortedIndex<R extends Identified> {
  readonly compare: Comparator<R>;
  readonly leading: NumericKey<R>;
  private items: R[] = [];

  constructor(readonly def: IndexDef<R>) {
    if (def.keys.length === 0) throw new Error(`index ${def.name} needs at least one key`);
    this.compare = comparatorOf(def.keys);
    this.leading = def.keys[0]!;
  }

  get size(): number {
    return this.items.length;
  }

  /** The records in index order. Read-only: the index owns the array. */
  get all(): readonly R[] {
    return this.items;
  }

  /**
   * Remove the records of `removed` (the very objects the index holds) and
   * add `added`. A few changes are spliced in place; more are sorted on
   * their own and merged with the rest in one pass.
   */
  update(removed: ReadonlySet<R>, added: R[]): void {
    if (removed.size + added.length <= SPLICE_LIMIT) {
      for (const record of removed) this.delete(record);
      for (const record of added) this.insert(record);
      return;
    }
    added = this.sorted(added);
    const old = this.items;
    const merged: R[] = new Array(old.length - removed.size + added.length);
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < old.length || j < added.length) {
      if (i < old.length && removed.has(old[i]!)) {
        i++;
        continue;
      }
      if (j >= added.length || (i < old.length && this.compare(old[i]!, added[j]!) < 0)) merged[k++] = old[i++]!;
      else merged[k++] = added[j++]!;
    }
    merged.length = k;
    this.items = merged;
  }

  /**
   * The records in index order. Sorting many records compares their keys
   * from typed arrays filled once, so the key functions run n times per key
   * instead of on every comparison.
   */
  private sorted(records: R[]): R[] {
    const n = records.length;
    if (n < 64) return records.sort(this.compare);
    const columns = this.def.keys.map((key) => {
      const column = new Float64Array(n);
      for (let i = 0; i < n; i++) column[i] = key(records[i]!);
      return column;
    });
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((a, b) => {
      for (let c = 0; c < columns.length; c++) {
        const d = columns[c]![a]! - columns[c]![b]!;
        if (d !== 0) return d;
      }
      const x = records[a]!.id;
      const y = records[b]!.id;
      return x < y ? -1 : x > y ? 1 : 0;
    });
    const out = new Array<R>(n);
    for (let i = 0; i < n; i++) out[i] = records[order[i]!]!;
    return out;
  }

  private insert(record: R): void {
    this.items.splice(this.position(record), 0, record);
  }

  private delete(record: R): void {
    const at = this.position(record);
    if (this.items[at] === record) this.items.splice(at, 1);
  }

  /** First position whose record is not before `record`. */
  private position(record: R): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(this.items[mid]!, record) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First position whose leading key is ≥ `value`. */
  lowerBound(value: number): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.leading(this.items[mid]!) < value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
