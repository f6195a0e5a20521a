/**
 * The read model's sharded map, split or whole, answers as a Map does (the
 * same entries, size, lookups and deletions, whatever the keys), iterates
 * every entry once, sees changes made while it iterates as a Map does, lists
 * its values shard by shard whether split or whole (a snapshot's order), and spreads ids
 * over its shards evenly, so that no growth moves much more than its share
 * of the entries.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import t from 'tap';
import { ShardedMap, SHARDS } from '../src/readmodel/sharded-map.js';

const key = fc.oneof(fc.uuid(), fc.string({ maxLength: 6 }), fc.constantFrom('', 'a', 'ab', 'abc', '\u{1F600}', 'x'.repeat(40)));
const op = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.constant('set' as const), key, fc.integer()) },
  { weight: 3, arbitrary: fc.tuple(fc.constant('delete' as const), key, fc.constant(0)) },
  { weight: 3, arbitrary: fc.tuple(fc.constant('get' as const), key, fc.constant(0)) },
  { weight: 1, arbitrary: fc.tuple(fc.constant('clear' as const), fc.constant(''), fc.constant(0)) },
  // Set or delete, answering the value before (swap: undefined deletes).
  { weight: 3, arbitrary: fc.tuple(fc.constant('swap' as const), key, fc.option(fc.integer(), { nil: undefined })) },
  // Many at once (setEach), keys repeated included: the last of a key's values stays, as with one set after another.
  { weight: 1, arbitrary: fc.tuple(fc.constant('setEach' as const), fc.array(fc.tuple(key, fc.integer()), { maxLength: 40 }), fc.constant(0)) },
);

/** A map made split (as a server makes them) or whole (as a replay worker does: ShardedMap.splitting). */
function made(split: boolean): ShardedMap<number> {
  ShardedMap.splitting = split;
  try {
    return new ShardedMap<number>();
  } finally {
    ShardedMap.splitting = true;
  }
}

for (const split of [true, false]) t.test(`every operation answers as a Map does, and it holds the same entries (${split ? 'split' : 'whole'})`, async (t) => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
      const sharded = made(split);
      const model = new Map<string, number>();
      for (const [name, k, value] of ops) {
        if (name === 'set') {
          if (sharded.set(k, value) !== sharded) return false;
          model.set(k, value);
        } else if (name === 'delete') {
          if (sharded.delete(k) !== model.delete(k)) return false;
        } else if (name === 'swap') {
          if (sharded.swap(k, value) !== model.get(k)) return false;
          if (value === undefined) model.delete(k);
          else model.set(k, value);
        } else if (name === 'setEach') {
          sharded.setEach(
            k.map(([each]) => each),
            k.map(([, v]) => v),
          );
          for (const [each, v] of k) model.set(each, v);
        } else if (name === 'get') {
          if (sharded.get(k) !== model.get(k) || sharded.has(k) !== model.has(k)) return false;
        } else {
          sharded.clear();
          model.clear();
        }
        if (sharded.size !== model.size) return false;
      }
      const entries = [...sharded];
      const sorted = (xs: Array<[string, number]>) => [...xs].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      return (
        entries.length === model.size &&
        JSON.stringify(sorted(entries)) === JSON.stringify(sorted([...model])) &&
        JSON.stringify([...sharded.keys()]) === JSON.stringify(entries.map(([k]) => k)) &&
        JSON.stringify([...sharded.values()]) === JSON.stringify(entries.map(([, v]) => v))
      );
    }),
    { numRuns: 400 },
  );
  t.pass('400 runs of up to 300 operations');
});

for (const split of [true, false]) t.test(`an iteration under way sees each entry it did not change once, and none deleted before it got there (${split ? 'split' : 'whole'})`, async (t) => {
  fc.assert(
    fc.property(fc.uniqueArray(fc.uuid(), { minLength: 1, maxLength: 400 }), fc.array(fc.tuple(fc.nat(), fc.boolean()), { maxLength: 200 }), (keys, changes) => {
      const map = made(split);
      keys.forEach((k, i) => map.set(k, i));
      const touched = new Set<string>();
      const deleted = new Set<string>();
      const seen: string[] = [];
      const iteration = map.entries();
      let c = 0;
      for (let next = iteration.next(); !next.done; next = iteration.next()) {
        const [k] = next.value;
        if (deleted.has(k)) return false;
        seen.push(k);
        // Between two steps: delete a key, or set one anew.
        const change = changes[c++];
        if (change === undefined) continue;
        const [which, remove] = change;
        const target = keys[which % keys.length]!;
        touched.add(target);
        if (remove) {
          map.delete(target);
          deleted.add(target);
        } else {
          map.set(target, -1);
          deleted.delete(target);
        }
      }
      const counts = new Map<string, number>();
      for (const k of seen) counts.set(k, (counts.get(k) ?? 0) + 1);
      return keys.every((k) => touched.has(k) || counts.get(k) === 1);
    }),
    { numRuns: 300 },
  );
  t.pass('300 runs');
});

t.test('a whole map lists its values in the order a split map with the same history iterates in: shard by shard (what snapshots store)', async (t) => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
      const [split, whole] = [made(true), made(false)];
      for (const map of [split, whole]) {
        for (const [name, k, value] of ops) {
          if (name === 'set') map.set(k, value);
          else if (name === 'delete') map.delete(k);
          else if (name === 'swap') map.swap(k, value);
          else if (name === 'setEach') map.setEach(k.map(([each]) => each), k.map(([, v]) => v));
          else if (name === 'clear') map.clear();
        }
      }
      const splitValues = [...split.values()];
      const wholeValues = [...whole.values()];
      // (A split map lists its values as it iterates: shard by shard, each shard's as a Map's, and no order to sort.)
      const order = whole.shardOrder();
      return (
        split.shardOrder() === undefined &&
        order !== undefined &&
        JSON.stringify([...whole.valuesByShard()]) === JSON.stringify(splitValues) &&
        // Places in the map's own order: they pick its values out in that order.
        JSON.stringify(Array.from(order, (i) => wholeValues[i])) === JSON.stringify(splitValues)
      );
    }),
    { numRuns: 300 },
  );
  t.pass('300 runs of up to 300 operations');
});

t.test('ids spread evenly over the shards: no growth moves much more than its share of the entries', async (t) => {
  const generated = (n: number) => {
    // The benchmark's ids (bench/generate.ts): a random first group, a counter in hex at the end.
    const out: string[] = [];
    for (let i = 1; i <= n; i++) out.push(`${(Math.imul(i, 2654435761) >>> 0).toString(16).padStart(8, '0')}-0003-4171-8560-${i.toString(16).padStart(12, '0')}`);
    return out;
  };
  const sequential = (n: number) => Array.from({ length: n }, (_, i) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`);
  const random = (n: number) => Array.from({ length: n }, () => randomUUID());
  for (const [name, keys] of [
    ['random UUIDs', random(200_000)],
    ['the benchmark\'s ids', generated(200_000)],
    ['UUIDs differing only in a counter at the end', sequential(200_000)],
  ] as const) {
    const map = new ShardedMap<number>();
    for (const k of keys) map.set(k, 0);
    const mean = keys.length / SHARDS;
    t.ok(map.largestShard() < 1.25 * mean, `${name}: the largest shard holds ${map.largestShard()} of a mean ${mean}`);
  }
});
