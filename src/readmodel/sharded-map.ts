/**
 * A map from strings, split into up to 256 maps by a hash of a few of the
 * key's characters, for the read model's maps that hold a million entries.
 *
 * A JavaScript Map grows by moving every entry into a table twice the size,
 * all at once, on the `set` that fills it (and shrinks the same way on a
 * `delete`): at a million entries that one call takes 45 ms on a quiet
 * machine and took 344 ms in a server folding a live import (a profile: the
 * shift map passing 2^20 entries, every request waiting). Split 256 ways, a
 * growth moves a 256th of the entries.
 *
 * Shards are made when a key first falls in them. Iteration goes shard by
 * shard, each in its insertion order, and sees the map as it is (entries
 * set or deleted meanwhile, as a Map's iterators do, within each shard).
 */
const SHARD_BITS = 8;
const SHARDS = 1 << SHARD_BITS;

/** The shard of a key: a hash of its length, its first two and its last four characters (ids differ there). */
function shardOf(key: string): number {
  const n = key.length;
  // (charCodeAt past either end is NaN, which the bit operations take as 0.)
  const h =
    n ^
    (key.charCodeAt(0) << 5) ^
    (key.charCodeAt(1) << 10) ^
    (key.charCodeAt(n - 4) << 15) ^
    (key.charCodeAt(n - 3) << 20) ^
    key.charCodeAt(n - 2) ^
    (key.charCodeAt(n - 1) << 25);
  return Math.imul(h, 0x9e3779b1) >>> (32 - SHARD_BITS);
}

export class ShardedMap<V> implements Iterable<[string, V]> {
  private readonly shards: Array<Map<string, V> | undefined> = new Array(SHARDS).fill(undefined);
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(key: string): V | undefined {
    return this.shards[shardOf(key)]?.get(key);
  }

  has(key: string): boolean {
    return this.shards[shardOf(key)]?.has(key) ?? false;
  }

  set(key: string, value: V): this {
    const at = shardOf(key);
    let shard = this.shards[at];
    if (shard === undefined) this.shards[at] = shard = new Map();
    const before = shard.size;
    shard.set(key, value);
    this.count += shard.size - before;
    return this;
  }

  delete(key: string): boolean {
    const gone = this.shards[shardOf(key)]?.delete(key) ?? false;
    if (gone) this.count--;
    return gone;
  }

  clear(): void {
    // (Each shard cleared, not dropped: an iteration under way then ends, as a Map's does.)
    for (const shard of this.shards) shard?.clear();
    this.count = 0;
  }

  /** Entries in the fullest shard (how evenly keys spread: the most a growth moves). */
  largestShard(): number {
    return this.shards.reduce((most, shard) => Math.max(most, shard?.size ?? 0), 0);
  }

  *entries(): Generator<[string, V], void, undefined> {
    for (const shard of this.shards) if (shard !== undefined) yield* shard;
  }

  *keys(): Generator<string, void, undefined> {
    for (const shard of this.shards) if (shard !== undefined) yield* shard.keys();
  }

  *values(): Generator<V, void, undefined> {
    for (const shard of this.shards) if (shard !== undefined) yield* shard.values();
  }

  [Symbol.iterator](): Generator<[string, V], void, undefined> {
    return this.entries();
  }
}
