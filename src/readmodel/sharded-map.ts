/**
 * A map from strings, split into up to 64 maps by a hash of a few of the
 * key's characters, for the read model's maps that hold a million entries.
 *
 * A JavaScript Map grows by moving every entry into a table twice the size,
 * all at once, on the `set` that fills it (and shrinks the same way on a
 * `delete`): at a million entries that one call takes 45 ms on a quiet
 * machine and took 344 ms in a server folding a live import (a profile: the
 * shift map passing 2^20 entries, every request waiting). Split 64 ways, a
 * growth moves a 64th of the entries: 0.6-1.3 ms at 16,384 (a quiet machine).
 * The price: a look-up or set takes about 1.6 times a Map's at a million
 * entries (1.5M look-ups of random keys: 0.90 against 0.56 s; 200,000
 * changes to a loaded model, bench/growth-stalls.js: 1.19 against 0.93 s),
 * most likely a cache miss reading the key's characters, and a server's
 * start-up about 0.1 s more (see the README). More shards cost more of both.
 * A process that keeps no request waiting makes its maps whole (`splitting`).
 *
 * Shards are made when a key first falls in them. Iteration goes shard by
 * shard, each in its insertion order, and sees the map as it is (entries
 * set or deleted meanwhile, as a Map's iterators do, within each shard).
 */
const SHARD_BITS = 6;
/** How many maps a ShardedMap is split into, at most. */
export const SHARDS = 1 << SHARD_BITS;

/** The shard of a key: a hash of its length and its first and last three characters (ids differ at the end: a UUID's last hex digits, a counter's). */
function shardOf(key: string): number {
  const n = key.length;
  // (charCodeAt past either end is NaN, which the bit operations take as 0.)
  const h = n ^ (key.charCodeAt(0) << 21) ^ (key.charCodeAt(n - 3) << 14) ^ (key.charCodeAt(n - 2) << 7) ^ key.charCodeAt(n - 1);
  return Math.imul(h, 0x9e3779b1) >>> (32 - SHARD_BITS);
}

/** The indexes of `n` keys sorted by shard (a stable counting sort), and where each shard's run of them starts (shard s: starts[s] to starts[s + 1]). */
function byShard(keys: Iterable<string>, n: number): { order: Uint32Array; starts: Int32Array } {
  const shardOfKey = new Uint8Array(n);
  const starts = new Int32Array(SHARDS + 1);
  let i = 0;
  for (const key of keys) {
    const at = shardOf(key);
    shardOfKey[i++] = at;
    starts[at + 1]!++;
  }
  for (let s = 0; s < SHARDS; s++) starts[s + 1]! += starts[s]!;
  const order = new Uint32Array(n);
  const next = starts.slice(0, SHARDS);
  for (i = 0; i < n; i++) order[next[shardOfKey[i]!]!++] = i;
  return { order, starts };
}

export class ShardedMap<V> implements Iterable<[string, V]> {
  /**
   * Whether maps made from now on are split. A process with no requests to keep waiting (a replay worker) makes
   * them whole: finding a key's shard reads its characters, mostly a cache miss, which a Map's look-up of a key it
   * holds does not (a rebuild of 1.77M events on two threads took 15.4-15.6 s with split maps, 13.8-14.1 s without).
   */
  static splitting = true;

  /** The map, when not split. */
  private readonly whole: Map<string, V> | undefined = ShardedMap.splitting ? undefined : new Map();
  private readonly shards: Array<Map<string, V> | undefined> = new Array(this.whole === undefined ? SHARDS : 0).fill(undefined);
  private count = 0;

  get size(): number {
    return this.whole?.size ?? this.count;
  }

  get(key: string): V | undefined {
    const whole = this.whole;
    if (whole !== undefined) return whole.get(key);
    return this.shards[shardOf(key)]?.get(key);
  }

  has(key: string): boolean {
    const whole = this.whole;
    if (whole !== undefined) return whole.has(key);
    return this.shards[shardOf(key)]?.has(key) ?? false;
  }

  set(key: string, value: V): this {
    const whole = this.whole;
    if (whole !== undefined) {
      whole.set(key, value);
      return this;
    }
    const at = shardOf(key);
    let shard = this.shards[at];
    if (shard === undefined) this.shards[at] = shard = new Map();
    const before = shard.size;
    shard.set(key, value);
    this.count += shard.size - before;
    return this;
  }

  /**
   * Set `value` under `key` (delete the key when it is undefined), finding its shard once: the value it had before.
   * (A change the model applies reads the record it replaces, then sets or deletes it.)
   */
  swap(key: string, value: V | undefined): V | undefined {
    const whole = this.whole;
    if (whole !== undefined) {
      const before = whole.get(key);
      if (value === undefined) whole.delete(key);
      else whole.set(key, value);
      return before;
    }
    const at = shardOf(key);
    let shard = this.shards[at];
    if (shard === undefined) {
      if (value === undefined) return undefined;
      this.shards[at] = shard = new Map();
    }
    const size = shard.size;
    const before = shard.get(key);
    if (value === undefined) shard.delete(key);
    else shard.set(key, value);
    this.count += shard.size - size;
    return before;
  }

  /**
   * Set each value under the key at its index, a shard at a time: a batch's keys spread over every shard, and one
   * shard's table at a time stays in the cache (a snapshot's chunk of records as it loads: at a million shifts, the
   * start-up was 0.2-0.3 s slower than with whole maps with a set a key, about 0.1 s with this; noisy runs).
   */
  setEach(keys: readonly string[], values: readonly V[]): void {
    const n = keys.length;
    const whole = this.whole;
    if (whole !== undefined) {
      for (let i = 0; i < n; i++) whole.set(keys[i]!, values[i]!);
      return;
    }
    const { order, starts } = byShard(keys, n);
    for (let s = 0; s < SHARDS; s++) {
      if (starts[s] === starts[s + 1]) continue;
      let shard = this.shards[s];
      if (shard === undefined) this.shards[s] = shard = new Map();
      const before = shard.size;
      for (let k = starts[s]!; k < starts[s + 1]!; k++) shard.set(keys[order[k]!]!, values[order[k]!]!);
      this.count += shard.size - before;
    }
  }

  delete(key: string): boolean {
    const whole = this.whole;
    if (whole !== undefined) return whole.delete(key);
    const gone = this.shards[shardOf(key)]?.delete(key) ?? false;
    if (gone) this.count--;
    return gone;
  }

  clear(): void {
    // (Each shard cleared, not dropped: an iteration under way then ends, as a Map's does.)
    this.whole?.clear();
    for (const shard of this.shards) shard?.clear();
    this.count = 0;
  }

  /** Entries in the fullest shard (how evenly keys spread: the most a growth moves). */
  largestShard(): number {
    return this.shards.reduce((most, shard) => Math.max(most, shard?.size ?? 0), this.whole?.size ?? 0);
  }

  /**
   * The order of the entries shard by shard, each shard's in the order its keys were first set: at each place, the
   * index of the entry there in this map's own iteration order; undefined for a split map, which iterates so already.
   * A whole map's entries are sorted so by shard. What a snapshot stores records in, so that loading one sets a map's
   * shards one after another (see ReadModel.storedInSnapshotOrder).
   */
  shardOrder(): Uint32Array | undefined {
    const whole = this.whole;
    return whole && byShard(whole.keys(), whole.size).order;
  }

  /** The values in `shardOrder`. */
  valuesByShard(): Iterable<V> {
    const order = this.shardOrder();
    if (order === undefined) return this.values();
    const values = Array.from(this.values());
    return Array.from(order, (i) => values[i]!);
  }

  entries(): IterableIterator<[string, V]> {
    if (this.whole !== undefined) return this.whole.entries();
    return new Across(this.shards, (shard) => shard.entries());
  }

  keys(): IterableIterator<string> {
    if (this.whole !== undefined) return this.whole.keys();
    return new Across(this.shards, (shard) => shard.keys());
  }

  values(): IterableIterator<V> {
    if (this.whole !== undefined) return this.whole.values();
    return new Across(this.shards, (shard) => shard.values());
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries();
  }
}

/**
 * The shards' iterators one after the other, each shard's taken when the one before is done (so a shard made
 * meanwhile is seen if it comes later). A class, not a generator: a generator's `yield*` cost 125 ns an entry, ten
 * times a Map's own iterator (1.5M values: 190 against 18 ms).
 */
class Across<V, T> implements IterableIterator<T> {
  private at = 0;
  private inner: Iterator<T> | undefined;

  constructor(
    private readonly shards: ReadonlyArray<Map<string, V> | undefined>,
    private readonly of: (shard: Map<string, V>) => Iterator<T>,
  ) {}

  next(): IteratorResult<T, undefined> {
    for (;;) {
      if (this.inner !== undefined) {
        const step = this.inner.next();
        if (step.done !== true) return step;
        this.inner = undefined;
      }
      if (this.at >= this.shards.length) return { done: true, value: undefined };
      const shard = this.shards[this.at++];
      if (shard !== undefined) this.inner = this.of(shard);
    }
  }

  [Symbol.iterator](): IterableIterator<T> {
    return this;
  }
}
