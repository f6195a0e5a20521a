/**
 * The read model stores the times of its big kinds packed (two small
 * integers each): every record it hands out — as made by projections, or
 * loaded from a snapshot written by it — is the record as made, value for
 * value and field for field, in the same order; what it stores holds each
 * time that is a safe integer as small integers only.
 */
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import t from 'tap';
import { put } from '../projections/projection.js';
import type { Records } from '../projections/records.js';
import { ReadModel } from '../src/readmodel/model.js';
import { MICROS_PER_MINUTE, microsOf, minutesOf, pack, PACKED, unpack } from '../src/readmodel/packed-times.js';
import { ReadModelStore } from '../src/readmodel/persistence.js';
import { encodeChunksInPieces, NESTED_CHUNK_SIZE } from '../src/readmodel/snapshot-codec.js';
import { tableDefs } from '../src/resources/index.js';
import { isSmi, tempDir } from './helpers.js';

/** Times as records hold them: any safe integer (microseconds), and the odd values a number field can hold. */
const time = fc.oneof(
  { weight: 8, arbitrary: fc.maxSafeInteger() },
  { weight: 4, arbitrary: fc.integer({ min: 1_700_000_000, max: 1_900_000_000 }).map((s) => s * 1_000_000 + (s % 1_000_000)) },
  { weight: 1, arbitrary: fc.constantFrom(0, -0, -1, 1, MICROS_PER_MINUTE - 1, MICROS_PER_MINUTE, -MICROS_PER_MINUTE, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER) },
  { weight: 1, arbitrary: fc.constantFrom(2 ** 60, -(2 ** 60), 1.5, -0.25, NaN, Infinity, -Infinity) },
);
// (Not -0: among nulls it is a column of mixed values, which msgpack writes as 0, as snapshot-codec.ts says.)
const nullable = fc.option(
  time.filter((value) => !Object.is(value, -0)),
  { nil: null },
);

const shift = fc.record({
  id: fc.uuid(),
  institution_id: fc.constant('inst'),
  opportunity_id: fc.constant('opp'),
  title: fc.string(),
  description: fc.option(fc.string(), { nil: null }),
  shift_start_at: time,
  shift_end_at: time,
  spots: fc.integer({ min: 0, max: 99 }),
  location: fc.string(),
  spots_reserved: fc.integer({ min: 0, max: 99 }),
  removed: fc.boolean(),
  created_at: time,
  updated_at: time,
}, { noNullPrototype: true }) satisfies fc.Arbitrary<Records['shift']>;

const reservation = fc.record({
  id: fc.uuid(),
  institution_id: fc.constant('inst'),
  shift_id: fc.uuid(),
  opportunity_id: fc.constant('opp'),
  shift_start_at: time,
  user_id: fc.uuid(),
  status: fc.constantFrom(1 as const, 6 as const),
  logged_hours: fc.oneof(fc.integer({ min: 0, max: 12 }), fc.constant(2.5)),
  arrival_time: nullable,
  departure_time: nullable,
  hours_approved_by: fc.option(fc.record({ first_name: fc.string(), last_name: fc.string(), email: fc.string() }, { noNullPrototype: true }), { nil: null }),
  created_at: time,
  updated_at: time,
}, { noNullPrototype: true }) satisfies fc.Arbitrary<Records['reservation']>;

const site = fc.record({
  id: fc.uuid(),
  institution_id: fc.constant('inst'),
  title: fc.string(),
  address: fc.string(),
  user_ids: fc.array(fc.uuid(), { maxLength: 3 }),
  created_at: time,
  updated_at: time,
}, { noNullPrototype: true }) satisfies fc.Arbitrary<Records['site']>;

/** The kinds whose times are packed, each with its records. */
const packedKinds = [
  ['shift', shift],
  ['reservation', reservation],
  ['site', site],
] as const;

/** The same values (-0 and NaN included) under the same keys in the same order. */
const same = (a: object, b: object) => Object.keys(a).join() === Object.keys(b).join() && isDeepStrictEqual(a, b);

t.test('a packed record unpacks to the record, value for value and in field order; safe integers are held as small integers', async (t) => {
  let packedTimes = 0;
  for (const [kind, records] of packedKinds) {
    fc.assert(
      fc.property(records, (record) => {
        const stored = pack(kind, record as never) as Record<string, unknown>;
        if (!same(unpack(kind, stored as never), record)) return false;
        for (const field of PACKED[kind].times) {
          if (field in stored) return false;
          const value = (record as Record<string, unknown>)[field];
          const [min, us] = [stored[`${field}$min`], stored[`${field}$us`]];
          const split = Number.isSafeInteger(value) && !Object.is(value, -0);
          // Any other value: no minutes, and the value in an array of one (-1 for null), never a number that is not a
          // small integer (a field that held one would box every value of every record of its shape).
          const other = value === null ? us === -1 : Array.isArray(us) && us.length === 1 && Object.is(us[0], value);
          if (split ? !isSmi(min) || !isSmi(us) : min !== null || !other) return false;
          if (split) packedTimes++;
        }
        return true;
      }),
      { numRuns: 400 },
    );
  }
  t.ok(packedTimes > 2000, `${packedTimes} times held as two small integers`);
  t.equal(minutesOf(-1), -1, 'a microsecond before the epoch: in the minute before it');
  t.equal(microsOf(-1), MICROS_PER_MINUTE - 1);
  t.equal(minutesOf(Number.MAX_SAFE_INTEGER)! * MICROS_PER_MINUTE + (microsOf(Number.MAX_SAFE_INTEGER) as number), Number.MAX_SAFE_INTEGER);
});

t.test("a snapshot's chunks of records as the model stores them are those of the records as made, byte for byte, their boundaries included", async (t) => {
  const chunksOf = (records: object[], kind?: 'shift' | 'reservation' | 'site') =>
    [...encodeChunksInPieces(records, undefined, undefined, kind)].filter((chunk) => chunk !== undefined);
  let chunks = 0;
  for (const [kind, records] of packedKinds) {
    fc.assert(
      fc.property(fc.array(records as fc.Arbitrary<object>, { minLength: 1, maxLength: 20 }), fc.boolean(), (sample, long) => {
        // Long runs: past NESTED_CHUNK_SIZE, where a time that is not a safe integer must not end a chunk early.
        const made = long ? Array.from({ length: NESTED_CHUNK_SIZE + 100 }, (_, i) => sample[i % sample.length]!) : sample;
        const stored = made.map((record) => pack(kind, record as never) as object);
        const expected = chunksOf(made);
        const actual = chunksOf(stored, kind);
        chunks += actual.length;
        return actual.length === expected.length && actual.every((chunk, i) => chunk.records === expected[i]!.records && chunk.buffer.equals(expected[i]!.buffer));
      }),
      { numRuns: 60 },
    );
  }
  t.ok(chunks > 200, `${chunks} chunks compared`);
});

t.test('the model hands out records as made, from its projections and from a snapshot it wrote, whatever the columns hold', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const disk = ReadModelStore.open(join(tmp.dir, 'readmodel'));
  t.teardown(() => disk.close());
  const at = (n: number) => ({ commit: BigInt(n), prepare: BigInt(n) });
  // Chunks of one shape: reservations with no arrival at all (a column of nulls), some, and every one.
  const made = {
    shift: fc.sample(shift, 300),
    reservation: [
      ...fc.sample(reservation, 200).map((r) => ({ ...r, arrival_time: null, departure_time: null })),
      ...fc.sample(reservation, 200),
      ...fc.sample(reservation, 200).map((r, i) => ({ ...r, arrival_time: 1_780_000_000_000_000 + i, departure_time: 1_780_000_000_000_000 + i * 7 })),
    ],
    site: fc.sample(site, 100),
  };
  const model = new ReadModel(tableDefs);
  for (const [kind, records] of Object.entries(made)) for (const record of records) model.apply(put(kind as 'shift', record as Records['shift']));
  const check = (from: ReadModel, what: string) => {
    let mismatches = 0;
    let count = 0;
    for (const [kind, records] of Object.entries(made) as ['shift', Records['shift'][]][]) {
      // (Ids may repeat in a sample: the last record made with one is the one held.)
      const last = new Map(records.map((r) => [r.id, r]));
      for (const [id, record] of last) {
        count++;
        if (!same(from.get(kind, id)!, record)) mismatches++;
      }
      const listed = [...from.records(kind)];
      if (listed.length !== last.size || listed.some((r) => !same(r, last.get(r.id)!))) mismatches++;
    }
    t.equal(mismatches, 0, `${what}: ${count} records as made, by id and listed`);
  };
  check(model, 'made by projections');
  const first = made.shift[0]!;
  t.not(model.get('shift', first.id), model.get('shift', first.id), 'a packed kind: a new object each time');

  await disk.writeSnapshot(model.byKind(), model.tablesToSave(), at(10));
  const loaded = new ReadModel(tableDefs);
  loaded.loadPersisted(disk.persisted());
  check(loaded, 'loaded from the snapshot');

  // What searches read of them: the tables' columns, computed from the records as made — as they are applied, and
  // from the stored records when a replay makes its tables at its end.
  const replayed = new ReadModel(tableDefs);
  replayed.deferTables();
  for (const [kind, records] of Object.entries(made)) for (const record of records) replayed.apply(put(kind as 'shift', record as Records['shift']));
  replayed.buildTables();
  const listed = [...new Map(made.shift.map((r) => [r.id, r])).values()].filter((r) => !r.removed);
  for (const [what, from] of [['applied', model], ['replayed', replayed]] as const) {
    const table = from.table('shift', 'inst')!;
    const wrong = listed.filter((r) => !Object.is(table.column('start')[table.rowOf(r.id)!], r.shift_start_at) || !Object.is(table.column('created')[table.rowOf(r.id)!], r.created_at));
    t.same(wrong, [], `${what}: each of ${listed.length} listed shifts' start and created columns hold its times`);
  }
});
