/**
 * One string object per distinct value for the strings records repeat
 * (institution and other ids they refer to, titles, descriptions,
 * locations): records decoded from LMDB or made from events each carry
 * their own copies otherwise. Fewer, shared strings are less memory and
 * less for the garbage collector to trace. Records' own ids are unique and
 * are left alone.
 */

/** Past this many distinct values a shard starts over (sharing is only an optimization). */
const LIMIT = 1 << 21;
/**
 * The values are kept in this many maps, by their last character and length: a JS Map grows by rehashing every
 * entry at once, and one map of about two million strings stalled a server folding a live import for 260 ms.
 */
const SHARDS = 16;

export class Interner {
  private readonly shards = Array.from({ length: SHARDS }, () => new Map<string, string>());

  string(value: string): string {
    const shard = (value.charCodeAt(value.length - 1) + value.length) & (SHARDS - 1);
    const strings = this.shards[shard]!;
    const known = strings.get(value);
    if (known !== undefined) return known;
    if (strings.size >= LIMIT / SHARDS) {
      this.shards[shard] = new Map([[value, value]]);
      return value;
    }
    strings.set(value, value);
    return value;
  }

  /**
   * Replace the record's top-level string fields (but its id) by their
   * shared copies, in place: called on a record just made, before anyone
   * else holds it; the values do not change.
   */
  record<R extends object>(record: R): R {
    const fields = record as Record<string, unknown>;
    for (const key in fields) {
      const value = fields[key];
      if (typeof value === 'string' && key !== 'id') fields[key] = this.string(value);
    }
    return record;
  }
}
