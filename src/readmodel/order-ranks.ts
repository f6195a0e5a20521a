/**
 * A table's rank matrices: for a pair of its sorted indexes, the positions
 * of one (what a query's constraints select blocks of) holding their rows'
 * positions in the other (the order asked for), so that the k-th row of a
 * selection in that order is found in O(log n) (RankMatrix).
 *
 * Made only when a search wanted one, in the background (`work`, a level at
 * a time between requests), once the table has gone unchanged for
 * `quietMs`: under a stream of changes each would be stale before it was
 * used. A matrix is valid for the versions of the two indexes it was made
 * from; a search finding it stale searches without it and wants it again.
 */
import { bitsFor, type RankMatrix, RankMatrixBuilder } from './rank-matrix.js';
import type { SortedIndex } from './sorted-index.js';

interface Made {
  readonly matrix: RankMatrix;
  readonly fromVersion: number;
  readonly orderVersion: number;
}

interface Building {
  readonly key: string;
  readonly from: SortedIndex;
  readonly order: SortedIndex;
  readonly fromVersion: number;
  readonly orderVersion: number;
  readonly builder: RankMatrixBuilder;
}

const keyOf = (from: SortedIndex, order: SortedIndex) => `${from.def.name}>${order.def.name}`;

export class OrderRanks {
  /** How long the table must go unchanged before a matrix is made (tests set 0). */
  static quietMs = 250;

  private readonly made = new Map<string, Made>();
  private readonly wanted = new Map<string, readonly [SortedIndex, SortedIndex]>();
  private building: Building | undefined;
  private lastChange = -Infinity;

  /** The table's indexes changed. */
  changed(): void {
    this.lastChange = performance.now();
  }

  /** The matrix of `from` by positions in `order`, if it is up to date with both; else it is wanted, and undefined. */
  get(from: SortedIndex, order: SortedIndex): RankMatrix | undefined {
    const key = keyOf(from, order);
    const made = this.made.get(key);
    if (made && made.fromVersion === from.version && made.orderVersion === order.version) return made.matrix;
    if (made) this.made.delete(key);
    this.wanted.set(key, [from, order]);
    return undefined;
  }

  /** Bytes the matrices hold. */
  get bytes(): number {
    let bytes = 0;
    for (const { matrix } of this.made.values()) bytes += matrix.bytes;
    return bytes;
  }

  /**
   * Make wanted matrices until `deadline` (performance.now(), ms), a level
   * at a time. Whether there is more to do now (false while nothing is
   * wanted or the table has changed too lately).
   */
  work(deadline: number): boolean {
    if (this.wanted.size === 0 && this.building === undefined) return false;
    if (performance.now() - this.lastChange < OrderRanks.quietMs) return false;
    while (performance.now() < deadline) {
      const building = this.building ?? this.start();
      if (building === undefined) return false;
      if (building.from.version !== building.fromVersion || building.order.version !== building.orderVersion) {
        // Changed meanwhile: start again once quiet.
        this.building = undefined;
        this.wanted.set(building.key, [building.from, building.order]);
        return false;
      }
      if (building.builder.step()) {
        const { key, fromVersion, orderVersion } = building;
        this.made.set(key, { matrix: building.builder.result(), fromVersion, orderVersion });
        this.building = undefined;
      }
    }
    return this.wanted.size > 0 || this.building !== undefined;
  }

  private start(): Building | undefined {
    const next = this.wanted.entries().next();
    if (next.done) return undefined;
    const [key, [from, order]] = next.value;
    this.wanted.delete(key);
    const ranks = order.ranks();
    const rows = from.order;
    const values = new Uint32Array(from.size);
    for (let p = 0; p < values.length; p++) values[p] = ranks[rows[p]!]!;
    this.building = {
      key,
      from,
      order,
      fromVersion: from.version,
      orderVersion: order.version,
      builder: new RankMatrixBuilder(values, bitsFor(order.size)),
    };
    return this.building;
  }
}
