/**
 * One string object per distinct value for the strings records repeat
 * (institution and other ids they refer to, titles, descriptions,
 * locations): records decoded from LMDB or made from events each carry
 * their own copies otherwise. Fewer, shared strings are less memory and
 * less for the garbage collector to trace. Records' own ids are unique and
 * are left alone.
 *
 * What it keeps are copies of their own (`copies`, see own-strings.ts): a
 * value as decoded from the log is a slice of its whole event's text.
 */
import { ownCopy } from '../own-strings.js';

/** Past this many distinct values a shard starts over (sharing is only an optimization). */
const LIMIT = 1 << 21;
/**
 * The values are kept in this many maps, by their last character and length: a JS Map grows by rehashing every
 * entry at once, and one map of about two million strings stalled a server folding a live import for 260 ms.
 */
const SHARDS = 16;

export class Interner {
  private readonly shards = Array.from({ length: SHARDS }, () => new Map<string, string>());

  /**
   * `copies`: keep a copy of each new value, and replace the strings of the records' nested objects too (what a
   * process reading events from the log wants; a replay's worker is sent its events as copies already).
   */
  constructor(private readonly copies = true) {}

  string(value: string): string {
    const shard = (value.charCodeAt(value.length - 1) + value.length) & (SHARDS - 1);
    const strings = this.shards[shard]!;
    const known = strings.get(value);
    if (known !== undefined) return known;
    const kept = this.copies ? ownCopy(value) : value;
    if (strings.size >= LIMIT / SHARDS) this.shards[shard] = new Map([[kept, kept]]);
    else strings.set(kept, kept);
    return kept;
  }

  /**
   * Replace the record's string fields (but its id) by their shared
   * copies, in place: called on a record just made, before anyone else
   * holds it; the values do not change. The strings of nested objects and
   * arrays are replaced only where copies are kept (they are a record's
   * own, or shared with the event it was made from).
   */
  record<R extends object>(record: R): R {
    const fields = record as Record<string, unknown>;
    for (const key in fields) {
      const value = fields[key];
      if (typeof value === 'string') {
        if (key !== 'id') fields[key] = this.string(value);
      } else if (this.copies && typeof value === 'object' && value !== null) this.nested(value);
    }
    return record;
  }

  private nested(value: object): void {
    if (Object.isFrozen(value)) return;
    const fields = value as Record<string, unknown>;
    for (const key in fields) {
      const field = fields[key];
      if (typeof field === 'string') fields[key] = this.string(field);
      else if (typeof field === 'object' && field !== null) this.nested(field);
    }
  }
}
