import { ShardedMap } from './sharded-map.js';

/**
 * A symbol column's codes (table.ts): value → code, a new value getting the
 * next code, never reused. Seeded from a snapshot (its values in code
 * order), the map is made from them a piece at a time (`make`, the
 * server's background work after its start-up): making the maps took
 * 0.47 s of every start-up at a million shifts (a profile), most of them
 * the 772,266 codes of reservations' shift ids. Until it is made, a search's
 * value not in it is looked for among the seeded values not yet in it (one
 * pass, a few ms at most), so that no request waits for the whole map. A
 * change (`encode`) makes the whole map first instead: its values are
 * mostly new ones, each a whole pass (a restart applying a journal of
 * 106,987 changes after a snapshot of a million shifts spent 14 s in those
 * passes, in a profile).
 */
export class SymbolCodes {
  private readonly codes = new ShardedMap<number>();
  /** A snapshot's values in code order; those from `made` on are not in `codes` yet. */
  private seed: readonly string[] = [];
  private made = 0;
  /** Values coded after the seeded ones, in code order. */
  private readonly added: string[] = [];

  /** Before any value is coded: the values of a snapshot, in code order. */
  seedWith(values: readonly string[]): void {
    this.codes.clear();
    this.added.length = 0;
    this.seed = values;
    this.made = 0;
  }

  /** The code of a value; undefined when none was ever given it. */
  code(value: string): number | undefined {
    const code = this.codes.get(value);
    if (code !== undefined || this.made === this.seed.length) return code;
    const at = this.seed.indexOf(value, this.made);
    return at === -1 ? undefined : at;
  }

  /** The code of a value, given it if it has none (-1 for null). */
  encode(value: string | null): number {
    if (value === null) return -1;
    if (this.made < this.seed.length && !this.codes.has(value)) this.make(Infinity);
    let code = this.codes.get(value);
    if (code === undefined) {
      code = this.seed.length + this.added.length;
      this.added.push(value);
      this.codes.set(value, code);
    }
    return code;
  }

  /** Every value coded, in code order. */
  values(): readonly string[] {
    return this.added.length === 0 ? this.seed : [...this.seed, ...this.added];
  }

  /** Put seeded values in the map until `deadline` (performance.now(), ms): whether some are left. */
  make(deadline: number): boolean {
    const seed = this.seed;
    while (this.made < seed.length) {
      const end = Math.min(seed.length, this.made + 4096);
      for (let c = this.made; c < end; c++) this.codes.set(seed[c]!, c);
      this.made = end;
      if (performance.now() >= deadline) break;
    }
    return this.made < seed.length;
  }
}
