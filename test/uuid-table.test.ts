/**
 * The import's UuidTable against a Map: the same answers for every key, canonical UUIDs (kept as 16 bytes) and any
 * other string (kept beside them) alike, through the table's growth.
 */
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { StreamRevisions } from '../src/importer/stream-revisions.js';
import { UuidTable } from '../src/importer/uuid-table.js';

/** A random generator with a seed, so a failure can be run again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = Math.imul(s ^ (s >>> 15), s | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32;
  };
}

const throwsRange = (f: () => unknown) => {
  try {
    f();
    return false;
  } catch (error) {
    return error instanceof RangeError;
  }
};

t.test('answers as a Map does, for keys of every shape, through growth and room reserved, set, or and increment alike', async (t) => {
  const seed = Number(process.env.SEED ?? Date.now() % 1e9);
  const rnd = random(seed);
  const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
  const sequential = (i: number) => `00000000-0000-0000-0000-${hex(i, 12)}`;
  const keyShapes = [
    () => randomUUID(),
    () => sequential(Math.floor(rnd() * 5000)), // low entropy: all but the last word equal
    () => `${hex(Math.floor(rnd() * 3000), 8)}-0000-0000-0000-000000000000`,
    () => randomUUID().toUpperCase(), // not canonical: kept as a string, distinct from its lower-case form
    () => `not-a-uuid-${Math.floor(rnd() * 100)}`,
    () => randomUUID().slice(0, 35) + 'g',
    () => '00000000-0000-0000-0000-000000000000',
    () => '',
  ];
  const table = new UuidTable();
  const model = new Map<string, number>();
  const keys: string[] = [];
  let orWrong = 0;
  for (let i = 0; i < 60_000; i++) {
    // Room for more keys now and then (reserve moves every key at once, as growth does).
    if (rnd() < 0.0005) table.reserve(table.size + Math.floor(rnd() * 40_000));
    const reuse = keys.length > 0 && rnd() < 0.3;
    const key = reuse ? keys[Math.floor(rnd() * keys.length)]! : keyShapes[Math.floor(rnd() * keyShapes.length)]!();
    if (!reuse) keys.push(key);
    if (rnd() < 0.3) {
      // or: the value before (0 for a key not kept), and the bits or'ed in, in one look-up.
      const bits = Math.floor(rnd() * 8);
      const before = model.get(key) ?? 0;
      const after = (before | bits) >>> 0;
      if (after > 0xfffffffe) {
        // Past the greatest value: refused, and the value stays.
        if (!throwsRange(() => table.or(key, bits))) orWrong++;
        continue;
      }
      if (table.or(key, bits) !== before) orWrong++;
      model.set(key, after);
      continue;
    }
    if (rnd() < 0.2) {
      // increment: the value before (undefined for a key not kept), and one more (0 for a new key).
      const before = model.get(key);
      if (before === 0xfffffffe) {
        if (!throwsRange(() => table.increment(key))) orWrong++;
        continue;
      }
      if (table.increment(key) !== before) orWrong++;
      model.set(key, before === undefined ? 0 : before + 1);
      continue;
    }
    const value = rnd() < 0.01 ? 0xfffffffe : Math.floor(rnd() * 1000);
    table.set(key, value);
    model.set(key, value);
  }
  t.equal(orWrong, 0, `every or and increment gave the value before (seed ${seed})`);
  let wrong = 0;
  for (const key of keys) if (table.get(key) !== model.get(key)) wrong++;
  for (let i = 0; i < 10_000; i++) {
    const key = keyShapes[Math.floor(rnd() * keyShapes.length)]!();
    if (table.get(key) !== model.get(key)) wrong++;
  }
  t.equal(wrong, 0, `every answer as the Map's (seed ${seed})`);
  t.equal(table.size, model.size, 'as many keys');
  t.equal(table.get(randomUUID()), undefined, 'an unknown key has no value');
  t.throws(() => table.set(randomUUID(), -1), RangeError, 'a value must be a 32-bit count');
  t.throws(() => table.set(randomUUID(), 2 ** 32 - 1), RangeError);

  // As a summary of the log saves it (its slots written as they are) and loads it.
  const saved = table.saved();
  const copy = UuidTable.restored({ ...saved, slots: saved.slots.slice(), others: saved.others.map(([k, v]) => [k, v] as const) });
  for (const key of keys) if (copy.get(key) !== model.get(key)) wrong++;
  t.equal(wrong, 0, `restored from its saved form, every answer as the Map's (seed ${seed})`);
  t.equal(copy.size, model.size);
  copy.setAll(1);
  for (const key of keys) if (copy.get(key) !== 1 || table.get(key) !== model.get(key)) wrong++;
  t.equal(wrong, 0, 'setAll gives every key that value (and the table it was copied from keeps its own)');
  t.throws(() => UuidTable.restored({ ...saved, slots: saved.slots.subarray(5) }), RangeError, 'slots that do not fit the capacity are no table');
  t.throws(() => UuidTable.restored({ ...saved, capacity: saved.capacity + 1, slots: new Uint32Array((saved.capacity + 1) * 5) }), RangeError, 'nor is a capacity not a power of two');
  t.throws(() => UuidTable.restored({ ...saved, slots: saved.slots.slice().fill(1) }), RangeError, 'nor slots all taken (a damaged file): look-ups would never end');
});

t.test("an import's stream revisions answer as a Map does, for streams of every kind and name", async (t) => {
  const seed = Number(process.env.SEED ?? Date.now() % 1e9);
  const rnd = random(seed);
  const id = randomUUID();
  const names = [
    () => `shift-${randomUUID()}`,
    () => `reservation-${randomUUID()}`,
    () => `category-${id}`, // the same id in streams of two kinds: two streams
    () => `shift-${id}`,
    () => `sites-registry-${Math.floor(rnd() * 50)}`, // a dash in the rest of the name
    () => `nodash${Math.floor(rnd() * 50)}`,
    () => '-leading',
    () => `Shift-${randomUUID()}`,
  ];
  const revisions = new StreamRevisions();
  const model = new Map<string, number>();
  const streams: string[] = [];
  let wrong = 0;
  for (let i = 0; i < 20_000; i++) {
    const stream = streams.length > 0 && rnd() < 0.5 ? streams[Math.floor(rnd() * streams.length)]! : names[Math.floor(rnd() * names.length)]!();
    if (!model.has(stream)) streams.push(stream);
    const revision = (model.get(stream) ?? -1) + 1;
    // An append as the import makes it (next: the revision before, and one more), or as the log's read sets it.
    if (rnd() < 0.5) {
      if (revisions.next(stream) !== revision - 1) wrong++;
    } else {
      if (revisions.of(stream) !== revision - 1) wrong++;
      revisions.set(stream, revision);
    }
    model.set(stream, revision);
  }
  t.equal(wrong, 0, `each stream's revision as the Map's before each append (seed ${seed})`);
  for (const stream of streams) if (revisions.of(stream) !== model.get(stream)) wrong++;
  t.equal(wrong, 0, `and after them all (seed ${seed})`);
  t.equal(revisions.of(`shift-${randomUUID()}`), -1, 'a stream never set has no event');
  const restored = StreamRevisions.restored(revisions.saved());
  for (const stream of streams) if (restored.of(stream) !== model.get(stream)) wrong++;
  t.equal(wrong, 0, 'restored from its saved form, every stream as before');
});
