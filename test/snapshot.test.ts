/**
 * The read model's snapshot: the columnar chunk codec gives back every
 * record as it was (values, field order, chunk boundaries at a change of
 * fields or at the chunk size), and the store loads the snapshot with the
 * journal over it; a long journal found at start-up is folded into a new
 * snapshot.
 */
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { open } from 'lmdb';
import { Packr } from 'msgpackr';
import t, { type Test } from 'tap';
import { put, remove } from '../projections/projection.js';
import { kinds, type ShiftRecord } from '../projections/records.js';
import { EmbeddedEventStore } from '../src/eventstore/embedded.js';
import { MAP_SIZE } from '../src/lmdb-file.js';
import { ReadModel, type SavedTableOf } from '../src/readmodel/model.js';
import { encodeSnapshot, ReadModelStore } from '../src/readmodel/persistence.js';
import { Projector } from '../src/readmodel/projector.js';
import { CHUNK_SIZE, NESTED_CHUNK_SIZE, decodeChunk, decodeTable, encodeChunks, encodedTableBound, encodeTable, encodeTableInPieces, COPIED_A_PIECE, PartsMemory } from '../src/readmodel/snapshot-codec.js';
import { SymbolCodes } from '../src/readmodel/symbol-codes.js';
import { type SavedColumn, type SavedTable, savedTableOf, savedTableToSave } from '../src/readmodel/table.js';
import { tableDefs } from '../src/resources/index.js';
import { isSmi, tempDir } from './helpers.js';

/**
 * A value as msgpack gives it back (see snapshot-codec.ts): -0 among other
 * types is 0, and an own "__proto__" key is dropped. Number columns keep
 * -0 (tested below).
 */
function msgpackable(value: unknown): unknown {
  if (typeof value === 'number') return Object.is(value, -0) ? 0 : value;
  if (Array.isArray(value)) return value.map(msgpackable);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => key !== '__proto__').map(([key, v]) => [key, msgpackable(v)]));
}

const roundTrip = (records: object[]) => [...encodeChunks(records)].flatMap((chunk) => decodeChunk(chunk.buffer));

t.test('chunks give back every record, field for field and in order', async (t) => {
  // Fields of every kind a column can hold, some present in only some records.
  const value = fc
    .oneof(
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.string(),
      fc.constantFrom('a', 'b', 'é', ''),
      fc.array(fc.oneof(fc.string(), fc.integer(), fc.object()), { maxLength: 3 }),
      fc.object({ maxDepth: 2 }),
    )
    .map(msgpackable);
  const field = fc.constantFrom('id', 'title', 'spots', 'created_at', 'removed', 'tags', 'answers');
  const record = fc.dictionary(field, value, { maxKeys: 7 });
  // Runs of one shape, so that columns are mostly of one type, with other shapes between.
  const shapes = fc.array(fc.tuple(record, fc.integer({ min: 1, max: 40 }), fc.array(value, { maxLength: 7 })), { maxLength: 12 });
  let checked = 0;
  fc.assert(
    fc.property(shapes, (runs) => {
      const records: object[] = [];
      for (const [template, n, values] of runs) {
        const keys = Object.keys(template);
        for (let i = 0; i < n; i++) {
          const r: Record<string, unknown> = {};
          keys.forEach((k, j) => (r[k] = i % 2 === 0 ? template[k] : (values[j] ?? template[k])));
          records.push(r);
        }
      }
      const back = roundTrip(records);
      checked += records.length;
      if (back.length !== records.length) return false;
      for (let i = 0; i < records.length; i++) {
        if (Object.keys(back[i]!).join() !== Object.keys(records[i]!).join()) return false;
        if (!isDeepStrictEqual(back[i], records[i])) return false;
      }
      return true;
    }),
    { numRuns: 150 },
  );
  t.ok(checked > 1000, `${checked} records round-tripped`);
});

t.test('a chunk holds at most CHUNK_SIZE records of one shape (NESTED_CHUNK_SIZE with objects or arrays); -0, NaN and large numbers survive', async (t) => {
  const records = Array.from({ length: CHUNK_SIZE * 2 + 5 }, (_, i) => ({ id: `r${i}`, at: 1_800_000_000_000_000 + i, zero: -0, nan: NaN }));
  records.splice(100, 0, { id: 'odd', x: true } as never);
  const chunks = [...encodeChunks(records)];
  t.equal(chunks.length, 4, 'split at the odd record and at the chunk size: 100 | odd | 16,384 | 16,289');
  t.same(chunks.map((c) => c.records), [100, 1, 16_384, 16_289]);
  const back = chunks.flatMap((c) => decodeChunk(c.buffer)) as typeof records;
  t.strictSame(back, records);
  t.ok(Object.is(back[0]!.zero, -0) && Number.isNaN(back[0]!.nan));

  // Records holding objects or arrays: NESTED_CHUNK_SIZE at most, from the first such record of a chunk on.
  const nested = Array.from({ length: 7_000 }, (_, i) => ({ id: `n${i}`, tags: i < 3_000 ? null : i % 2 ? [i] : { i } }));
  const nestedChunks = [...encodeChunks(nested)];
  t.same(
    nestedChunks.map((c) => c.records),
    [3_001, NESTED_CHUNK_SIZE, 7_000 - 3_001 - NESTED_CHUNK_SIZE],
    'null values only: up to CHUNK_SIZE; cut after the first object, then NESTED_CHUNK_SIZE at most',
  );
  t.strictSame(
    nestedChunks.flatMap((c) => decodeChunk(c.buffer)),
    nested,
  );
});

t.test('a number column of 32-bit integers decodes as small integers held in the record, not as boxed numbers', async (t) => {
  t.ok(isSmi(7) && !isSmi(7.5) && !isSmi(1_800_000_000_000_000), 'the test tells a small integer from a heap number');
  // Field names of their own: a shape's fields are boxed for every record once one of them holds a boxed number.
  const records = Array.from({ length: 3_000 }, (_, i) => ({ smiSpots: i % 50, smiStatus: i % 3 === 0 ? 6 : 1, smiHours: i % 7 === 0 ? 2.5 : 1, smiAt: 1_800_000_000_000_000 + i }));
  const back = roundTrip(records) as typeof records;
  t.strictSame(back, records);
  t.ok(back.every((r) => isSmi(r.smiSpots) && isSmi(r.smiStatus)), 'columns of 32-bit integers: every value a small integer');
  t.ok(back.every((r) => !isSmi(r.smiAt)), 'timestamps in microseconds are not 32-bit integers');
  // Values a 32-bit integer cannot hold exactly keep their column a Float64Array, values unchanged.
  for (const odd of [-0, 2 ** 31, -(2 ** 31) - 1, 0.5, NaN, Infinity]) {
    const column = [{ smiOdd: 1 }, { smiOdd: odd }, { smiOdd: -(2 ** 31) }, { smiOdd: 2 ** 31 - 1 }];
    const decoded = roundTrip(column) as typeof column;
    t.ok(decoded.every((r, i) => Object.is(r.smiOdd, column[i]!.smiOdd)), `a column holding ${Object.is(odd, -0) ? '-0' : odd} is given back exactly`);
  }
  const bounds = roundTrip([{ smiEdge: -(2 ** 31) }, { smiEdge: 2 ** 31 - 1 }]) as { smiEdge: number }[];
  t.ok(bounds.every((r) => isSmi(r.smiEdge)), 'the 32-bit bounds are small integers');
});

t.test("a table's indexes, columns and symbols: given back as saved, packed as msgpackr packs them, in one buffer of its bound's size", async (t) => {
  const text = fc.string({ unit: 'binary', maxLength: 40 });
  const table: fc.Arbitrary<SavedTable> = fc.record({
    // (msgpack drops an own "__proto__" key: no column is called that)
    symbols: fc.dictionary(fc.string({ maxLength: 12 }).filter((name) => name !== '__proto__'), fc.array(text, { maxLength: 200 })),
    indexes: fc.array(fc.record({ name: text, signature: text, order: fc.uint32Array({ maxLength: 3000 }) }), { maxLength: 20 }),
    columns: fc.array(
      fc.record({ name: text, signature: text, values: fc.oneof(fc.float64Array({ maxLength: 3000 }), fc.int32Array({ maxLength: 3000 })) }),
      { maxLength: 6 },
    ),
  });
  // The packer snapshot-codec packs with.
  const packr = new Packr({ useRecords: false, moreTypes: true });
  fc.assert(
    fc.property(table, (saved) => {
      const encoded = encodeTable(saved);
      // Never grown: still in the buffer made for it (msgpackr's own would be 8 KB, or a grown one of another size).
      if (encoded.buffer.byteLength !== encodedTableBound(savedTableToSave(saved))) return false;
      if (!encoded.equals(packr.pack(saved))) return false;
      // (fast-check's objects have no prototype, the decoded ones do)
      return isDeepStrictEqual(decodeTable(encoded), structuredClone(saved));
    }),
    { numRuns: 300 },
  );
  // The largest of the benchmark's tables are tens of MB; symbol lists of more values than a piece packs.
  const large: SavedTable = {
    symbols: {
      title: Array.from({ length: 50_000 }, (_, i) => `Shift ${i} — ночная смена ✓`),
      few: Array.from({ length: 70_000 }, (_, i) => String(i % 5)),
      none: [],
    },
    indexes: [{ name: 'start', signature: 'start=…', order: new Uint32Array(2_000_000).map((_, i) => i) }],
    columns: [
      { name: 'start', signature: 'start', values: new Float64Array(2_000_000).map((_, i) => i / 3) },
      { name: 'code', signature: 'code', values: new Int32Array(70_000).map((_, i) => -i) },
    ],
  };
  const encoded = encodeTable(large);
  t.equal(encoded.buffer.byteLength, encodedTableBound(savedTableToSave(large)), 'a 24 MB table is packed without growing');
  t.ok(encoded.equals(packr.pack(large)), 'as msgpackr packs it');
  t.ok(isDeepStrictEqual(decodeTable(encoded), large), 'and given back as saved');
  const pieces = encodeTableInPieces(savedTableToSave(large));
  let yields = 0;
  while (pieces.next().done !== true) yields++;
  // 2 widths, the symbols in pieces of 16,384 (4 + 5) measured then packed, then each index and column, copied in
  // pieces of COPIED_A_PIECE bytes.
  const copies = [8_000_000, 16_000_000, 280_000].reduce((n, bytes) => n + Math.ceil(bytes / COPIED_A_PIECE), 0);
  t.equal(copies, 16 + 31 + 1);
  t.equal(yields, 2 + 9 + 9 + copies, 'in pieces: after each width, symbol piece measured and packed, and every piece of each index and column copied');
});

function shift(i: number, institution = '00000000-0000-4000-8000-000000000001'): ShiftRecord {
  return {
    id: `5${String(i).padStart(7, '0')}-0000-4000-8000-000000000000`,
    institution_id: institution,
    opportunity_id: `10000000-0000-4000-8000-00000000000${(i * 7) % 3}`,
    title: `Shift ${i % 3}`,
    description: i % 2 ? null : 'Bring water',
    shift_start_at: 1_780_000_000_000_000 + i * 60_000_000,
    shift_end_at: 1_780_000_000_000_000 + (i + 60) * 60_000_000,
    spots: 1 + (i % 5),
    location: 'Main hall',
    spots_reserved: 0,
    removed: i % 11 === 0,
    created_at: 1_770_000_000_000_000 + i,
    updated_at: 1_770_000_000_000_000 + i,
  };
}

const at = (n: number) => ({ commit: BigInt(n), prepare: BigInt(n) });

/** A read model store and an (empty) embedded log in a temporary DATA_DIR, closed and removed after the test. */
function stores(t: Test): { disk: ReadModelStore; store: EmbeddedEventStore } {
  const tmp = tempDir();
  const disk = ReadModelStore.open(join(tmp.dir, 'readmodel'));
  const store = EmbeddedEventStore.open(join(tmp.dir, 'log'));
  t.teardown(async () => {
    await disk.close();
    await store.close();
    tmp.remove();
  });
  return { disk, store };
}

t.test('the store loads the snapshot with the journal over it', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const disk = ReadModelStore.open(join(tmp.dir, 'readmodel'));
  t.teardown(() => disk.close());
  const shifts = Array.from({ length: 50 }, (_, i) => shift(i));
  await disk.writeSnapshot([['shift', shifts]], [], at(10));
  t.same(disk.sizes(), { snapshot: 50, journal: 0 });
  // Changed, deleted and new records after the snapshot.
  await disk.write([put('shift', { ...shifts[3]!, title: 'Changed' }), remove('shift', shifts[4]!.id), put('shift', shift(99))], [], at(12));
  t.same(disk.sizes(), { snapshot: 50, journal: 3 });
  t.same(disk.checkpoint(), at(12));

  const model = new ReadModel(tableDefs);
  model.loadPersisted(disk.persisted());
  t.equal(model.get('shift', shifts[3]!.id)?.title, 'Changed');
  t.equal(model.get('shift', shifts[4]!.id), undefined, 'deleted by the journal');
  t.same(model.get('shift', shift(99).id), shift(99));
  t.same(model.get('shift', shifts[7]!.id), shifts[7]);

  // A new snapshot replaces both.
  await disk.writeSnapshot(model.byKind(), model.tablesToSave(), at(12));
  t.same(disk.sizes(), { snapshot: 50, journal: 0 });
  const reloaded = [...disk.snapshotChunks()].flatMap((chunk) => ('stored' in chunk ? chunk.stored : chunk.records));
  t.same(reloaded.map((r) => r.id).sort(), [...model.byKind()].flatMap(([, list]) => [...list].map((r) => r.id)).sort());
});

t.test("a snapshot's symbol codes: made a piece at a time, or at once when first needed, always those a map made at once gives", async (t) => {
  const value = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h');
  const step = fc.oneof(
    fc.record({ op: fc.constant('make' as const) }),
    fc.record({ op: fc.constant('code' as const), value }),
    fc.record({ op: fc.constant('encode' as const), value: fc.option(value) }),
    fc.record({ op: fc.constant('values' as const) }),
  );
  fc.assert(
    fc.property(fc.uniqueArray(fc.string({ maxLength: 3 }), { maxLength: 9000 }), fc.array(step, { maxLength: 12 }), (seed, steps) => {
      const codes = new SymbolCodes();
      codes.seedWith(seed);
      const model = new Map(seed.map((v, c) => [v, c]));
      for (const s of steps) {
        if (s.op === 'make') codes.make(-Infinity); // one piece (its deadline long passed)
        if (s.op === 'code' && codes.code(s.value) !== model.get(s.value)) return false;
        if (s.op === 'encode') {
          if (s.value !== null && !model.has(s.value)) model.set(s.value, model.size);
          if (codes.encode(s.value) !== (s.value === null ? -1 : model.get(s.value))) return false;
        }
        if (s.op === 'values' && !isDeepStrictEqual([...codes.values()], [...model.keys()])) return false;
      }
      return isDeepStrictEqual([...codes.values()], [...model.keys()]);
    }),
    { numRuns: 200 },
  );
  const codes = new SymbolCodes();
  codes.seedWith(Array.from({ length: 10_000 }, (_, i) => `v${i}`));
  t.equal(codes.make(-Infinity), true, 'a piece made, more left');
  t.equal(codes.make(Infinity), false, 'the rest made');
  t.equal(codes.code('v9999'), 9999);
  // A change's value not in the map yet makes the whole map first, rather than a pass over the seeded values per value.
  const changed = new SymbolCodes();
  changed.seedWith(Array.from({ length: 10_000 }, (_, i) => `v${i}`));
  t.equal(changed.encode('v5000'), 5000, 'a seeded value keeps its code');
  t.equal(changed.make(-Infinity), false, 'the map was made by the change');
  t.equal(changed.encode('new'), 10_000, 'a new value takes the next code');
});

t.test('a new snapshot is written beside the current one a piece at a time, and made current in one transaction', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const path = join(tmp.dir, 'readmodel');
  let disk = ReadModelStore.open(path);
  t.teardown(() => disk.close());
  const pieceBytes = ReadModelStore.snapshotPieceBytes;
  ReadModelStore.snapshotPieceBytes = 1;
  t.teardown(() => (ReadModelStore.snapshotPieceBytes = pieceBytes));
  // The file as another reader sees it: both places a snapshot can be in.
  const reader = open({ path, mapSize: MAP_SIZE, compression: false });
  t.teardown(() => reader.close());
  const places = ['snapshot', 'snapshot-1'].map((name) => reader.openDB({ name, encoding: 'binary' }));
  const chunksOnDisk = () => places.reduce((n, place) => n + place.getCount(), 0);
  const loaded = (from: ReadModelStore) => {
    const model = new ReadModel(tableDefs);
    model.loadPersisted(from.persisted());
    return [...model.byKind()].flatMap(([, list]) => [...list].map((r) => r.id)).sort();
  };

  const first = Array.from({ length: 40 }, (_, i) => shift(i));
  await disk.writeSnapshot([['shift', first]], [], at(10));
  await disk.write([put('shift', shift(500)), remove('shift', first[0]!.id)], [], at(11));
  const before = loaded(disk);
  t.equal(before.length, 40);

  // Chunks of ten records; the fourth fails (a full disk, a bug), after three were committed beside the current snapshot.
  let besideAtFailure = -1;
  function* failing(): Iterable<{ kind: 'shift'; buffer: Buffer; records: number }> {
    for (let k = 0; k < 5; k++) {
      if (k === 3) {
        besideAtFailure = chunksOnDisk() - 1;
        throw new Error('disk full');
      }
      for (const chunk of encodeChunks(Array.from({ length: 10 }, (_, i) => shift(1000 + k * 10 + i)))) yield { kind: 'shift', ...chunk };
    }
  }
  await t.rejects(disk.replaceSnapshot({ tables: [], chunks: failing() }, at(12)), /disk full/);
  t.equal(besideAtFailure, 3, 'each piece committed before the next was encoded (one chunk a piece here)');
  t.same(disk.sizes(), { snapshot: 40, journal: 2 }, 'snapshot and journal as they were');
  t.same(disk.checkpoint(), at(11));
  t.same(loaded(disk), before);
  await disk.close();
  disk = ReadModelStore.open(path);
  t.same(loaded(disk), before, 'and so after a restart');

  // Three snapshots in a row: each replaces the last, whichever place it went to, and leaves nothing of it.
  const model = new ReadModel(tableDefs);
  model.loadPersisted(disk.persisted());
  for (let n = 0; n < 3; n++) {
    model.apply(put('shift', shift(2000 + n)));
    model.flush();
    let parts = 0;
    await disk.replaceSnapshot(encodeSnapshot(model.byKind(), model.tablesToSave()), at(12 + n), () => void parts++);
    t.same(disk.sizes(), { snapshot: 41 + n, journal: 0 }, `snapshot ${n + 1}: the records, no journal`);
    t.ok(parts >= 2, 'the parts were let go of one by one');
    t.equal(chunksOnDisk(), [...disk.snapshotChunks()].length, 'the snapshot it replaced is gone');
    await disk.close();
    disk = ReadModelStore.open(path);
    t.same(disk.checkpoint(), at(12 + n));
    t.same(loaded(disk), [...before, shift(2000).id, shift(2001).id, shift(2002).id].slice(0, 41 + n).sort(), 'read back after a restart');
  }
});

t.test('a load lets go of the pages it read as it goes, and loads the same', async (t) => {
  const { disk } = stores(t);
  const live = new ReadModel(tableDefs);
  for (let i = 0; i < 3000; i++) live.apply(put('shift', shift(i, i % 2 ? '00000000-0000-4000-8000-00000000000a' : '00000000-0000-4000-8000-00000000000b')));
  live.flush();
  await disk.writeSnapshot(live.byKind(), live.tablesToSave(), at(5));
  // More than 10,000 changes: the journal is read in pages of 1,000 and the load yields every 1,000, so the
  // environment is opened again while the journal is half read.
  await disk.write(Array.from({ length: 12_000 }, (_, i) => (i % 5 ? put('shift', { ...shift(i), spots: 7 }) : remove('shift', shift(i).id))), [], at(6));
  const release = ReadModelStore.loadReleaseBytes;
  ReadModelStore.loadReleaseBytes = 1;
  t.teardown(() => (ReadModelStore.loadReleaseBytes = release));
  const persisted = disk.persisted();
  let released = 0;
  const model = new ReadModel(tableDefs);
  // A slice per step: the environment is opened again after each (tables, chunks, every 1,000 changes).
  await model.loadPersistedInSlices({ ...persisted, between: async () => void (released += (await persisted.between!()) ? 1 : 0) }, undefined, 0);
  t.ok(released >= 4, `the environment opened again ${released} times during the load`);
  const reference = new ReadModel(tableDefs);
  ReadModelStore.loadReleaseBytes = release;
  reference.loadPersisted(disk.persisted());
  const all = (m: ReadModel) => [...m.byKind()].flatMap(([kind, list]) => [...list].map((r) => JSON.stringify([kind, r]))).sort();
  t.same(all(model), all(reference), 'the same records as a load in one go');
  t.equal(all(model).length, 9600, '12,000 shifts (3,000 in the snapshot), 2,400 of them deleted by the journal');
  t.same(disk.checkpoint(), at(6), 'and the store reads on');
  t.equal([...disk.journalChanges()].length, 12_000, 'read a page at a time, each change once');
});

t.test('a long journal found at start-up is folded into a new snapshot', async (t) => {
  const { disk, store } = stores(t);
  await disk.writeSnapshot([['shift', Array.from({ length: 100 }, (_, i) => shift(i))]], [], at(1));
  // As a server writes batches of changes: 12,000 of them.
  for (let b = 0; b < 12; b++) {
    await disk.write(Array.from({ length: 1000 }, (_, i) => put('shift', shift(1000 + b * 1000 + i))), [], at(2 + b));
  }
  t.same(disk.sizes(), { snapshot: 100, journal: 12_000 });

  const model = new ReadModel(tableDefs);
  const projector = new Projector(store, model, disk);
  await projector.load();
  t.same(disk.sizes(), { snapshot: 100, journal: 12_000 }, 'not while loading (once caught up: test/journal-fold.test.ts)');
  await projector.foldJournal();
  t.same(disk.sizes(), { snapshot: 12_100, journal: 0 }, 'compacted');
  t.same(disk.checkpoint(), at(13), 'at the same checkpoint');
  t.same(model.get('shift', shift(12_999).id), shift(12_999));
  const ids = [...Array(100).keys(), ...Array.from({ length: 12_000 }, (_, i) => 1000 + i)];
  t.equal(model.table('shift', shift(0).institution_id)?.size, ids.filter((i) => i % 11 !== 0).length, 'removed shifts are not listed');

  const again = new ReadModel(tableDefs);
  await new Projector(store, again, disk).load();
  t.same([...again.byKind()].map(([k, l]) => [k, [...l].length]), [...model.byKind()].map(([k, l]) => [k, [...l].length]), 'the new snapshot loads the same records');
});

t.test('parts memory: parts one after the other in a block, word-aligned; given again only once recycled; a part larger than a block in memory of its own', async (t) => {
  const { blockBytes, packFrom } = PartsMemory;
  t.teardown(() => Object.assign(PartsMemory, { blockBytes, packFrom }));
  Object.assign(PartsMemory, { blockBytes: 16_384, packFrom: 4096 });
  const memory = new PartsMemory();
  const a = memory.take(100);
  const b = memory.take(100);
  t.equal(b.buffer, a.buffer, 'two parts in one block');
  t.equal(b.byteOffset, a.byteOffset + 104, 'the second after the first, word-aligned');
  const large = memory.take(20_000);
  t.equal(large.length, 20_000);
  t.not(large.buffer, a.buffer, 'a part larger than a block in a block of its own');
  const value = { name: 'x'.repeat(40), values: [1, 2, 3] };
  const packed = memory.pack(value);
  t.same(decodeTable(packed), value, 'a value packed into the memory');
  const next = memory.take(8);
  t.ok(packed.buffer !== large.buffer && packed.buffer !== a.buffer, 'in a new block (the one being filled had no room left)');
  t.equal(next.buffer, packed.buffer, 'taken: the next part after it');
  t.ok(next.byteOffset >= packed.byteOffset + packed.length);
  const outgrown = memory.pack('y'.repeat(30_000));
  t.equal(decodeTable(outgrown), 'y'.repeat(30_000), 'a value that outgrows its block is packed whole');
  t.not(outgrown.buffer, large.buffer, 'in memory of its own');
  t.not(outgrown.buffer, a.buffer);
  memory.recycle();
  const again = memory.take(100);
  t.equal(again.buffer, a.buffer, 'recycled: the first block given again');
  t.equal(again.byteOffset, a.byteOffset, 'from its start');
  t.same(decodeTable(memory.pack(value)), value);
});

t.test('a snapshot packed into memory used again once each piece is written reads back as the model it was made from', async (t) => {
  const { disk } = stores(t);
  const pieceBytes = ReadModelStore.snapshotPieceBytes;
  const { blockBytes, packFrom } = PartsMemory;
  t.teardown(() => {
    ReadModelStore.snapshotPieceBytes = pieceBytes;
    Object.assign(PartsMemory, { blockBytes, packFrom });
  });
  // Several parts a transaction: the memory is given again only once they are all written.
  ReadModelStore.snapshotPieceBytes = 2 * 2 ** 20;
  Object.assign(PartsMemory, { blockBytes: 8 * 2 ** 20, packFrom: 4 * 2 ** 20 });
  const institutions = Array.from({ length: 5 }, (_, i) => `00000000-0000-4000-8000-00000000000${i}`);
  const model = new ReadModel(tableDefs);
  for (let i = 0; i < CHUNK_SIZE * 3; i++) model.apply(put('shift', { ...shift(i, institutions[i % 5]), spots: i % 17, title: `Shift ${i % 300}` }));
  for (let i = 0; i < 2000; i++) model.apply(remove('shift', shift(i * 7).id));
  model.flush();
  const encoded = encodeSnapshot(model.byKind(), model.tablesToSave(), true);
  let written = 0;
  await disk.replaceSnapshot({ ...encoded, written: () => (written++, encoded.written!()) }, at(3));
  t.ok(written >= 2, `the memory given again after each piece (${written} times)`);
  const loaded = new ReadModel(tableDefs);
  t.equal(loaded.loadPersisted(disk.persisted()), 5, "every table's saved indexes taken");
  const records = (m: ReadModel) => [...m.byKind()].map(([kind, list]) => [kind, [...list]]);
  t.ok(isDeepStrictEqual(records(loaded), records(model)), 'every record read back, in order');
  const byKey = (tables: Iterable<SavedTableOf>) => new Map([...tables].map(({ kind, institution, table }) => [`${kind} ${institution}`, table]));
  t.ok(isDeepStrictEqual(byKey(disk.savedTables()), byKey(model.savedTables())), 'every table read back');
});

t.test("a replay thread's tables, made a kind at a time and let go of once saved: those made at once, taken at start-up", async (t) => {
  const { disk } = stores(t);
  const X = '00000000-0000-4000-8000-00000000000a';
  const Y = '00000000-0000-4000-8000-00000000000b';
  // Replaced, removed and re-added records: rows out of the order the records were first made in.
  const changes = [
    ...Array.from({ length: 300 }, (_, i) => put('shift', shift(i, i % 3 ? X : Y))),
    ...Array.from({ length: 40 }, (_, i) => put('shift', { ...shift(i * 7, (i * 7) % 3 ? X : Y), spots: 9, opportunity_id: shift(2).opportunity_id })),
    ...Array.from({ length: 30 }, (_, i) => remove('shift', shift(i * 5 + 2).id)),
    ...Array.from({ length: 60 }, (_, i) => put('shift', shift(1000 + i, i % 2 ? X : Y))),
  ];
  const replayed = () => {
    const model = new ReadModel(tableDefs);
    model.deferTables();
    for (const change of changes) model.apply(change);
    return model;
  };
  const byName = (tables: Iterable<SavedTableOf>) =>
    [...tables].sort((a, b) => `${a.kind} ${a.institution}`.localeCompare(`${b.kind} ${b.institution}`));
  const atOnce = replayed();
  atOnce.buildTables();
  const once = replayed();
  const told: number[] = [];
  // Each table made as it is listed, as a writer makes them.
  const saved: SavedTableOf[] = [];
  for (const listed of once.tablesToSaveOnce((rows) => told.push(rows))) {
    if (listed) saved.push({ kind: listed.kind, institution: listed.institution, table: savedTableOf(listed.table) });
  }
  byName(saved);
  t.same(saved, byName(atOnce.savedTables()), 'the same indexes, columns and symbols');
  t.equal(told.length, 2 * kinds.length, 'told after each kind is made and after it is let go of');
  const shiftRows = saved.filter(({ kind }) => kind === 'shift').reduce((n, { table }) => n + table.indexes[0]!.order.length, 0);
  const shifts = 2 * kinds.indexOf('shift');
  t.ok(shiftRows > 200, `the shifts listed (${shiftRows})`);
  t.same(told.slice(shifts, shifts + 2), [shiftRows, shiftRows], "with the shifts' rows");
  const toSave = saved.map(({ kind, institution, table }) => ({ kind, institution, table: savedTableToSave(table) }));
  await disk.writeSnapshot(once.byKind(), toSave, at(5));
  const restored = new ReadModel(tableDefs);
  t.equal(restored.loadPersisted(disk.persisted()), 2, "a start-up takes both tables' saved indexes");
});

t.test('saved indexes are taken at start-up, and give the order a sort gives', async (t) => {
  const { disk, store } = stores(t);
  const X = '00000000-0000-4000-8000-00000000000a';
  const Y = '00000000-0000-4000-8000-00000000000b';
  const live = new ReadModel(tableDefs);
  const apply = (changes: ReturnType<typeof put>[]) => {
    for (const change of changes) live.apply(change);
    live.flush();
  };
  // Rows that are not in the order the records were first made: replaced
  // records get rows freed by others, deleted ones leave theirs.
  apply(Array.from({ length: 300 }, (_, i) => put('shift', shift(i, i % 3 ? X : Y))));
  // (Moved to another opportunity: in the snapshot's order, opportunities come first in another order than they did live.)
  apply([
    ...Array.from({ length: 40 }, (_, i) =>
      put('shift', { ...shift(i * 7, (i * 7) % 3 ? X : Y), spots: 9, shift_start_at: shift(299 - i).shift_start_at, opportunity_id: shift(2).opportunity_id }),
    ),
    // Y's first listed shift: its first opportunity live was another one.
    put('shift', { ...shift(3, Y), opportunity_id: shift(1).opportunity_id }),
  ]);
  apply(Array.from({ length: 30 }, (_, i) => remove('shift', shift(i * 5 + 2).id)));
  apply(Array.from({ length: 60 }, (_, i) => put('shift', shift(1000 + i, i % 2 ? X : Y))));
  await disk.writeSnapshot(live.byKind(), live.tablesToSave(), at(5));
  // Changes after the snapshot, in the journal.
  const later = [
    ...Array.from({ length: 25 }, (_, i) => put('shift', { ...shift(i * 11 + 1, (i * 11 + 1) % 3 ? X : Y), spots: 2 })),
    ...Array.from({ length: 10 }, (_, i) => remove('shift', shift(i * 13 + 3).id)),
    put('shift', shift(5000, X)),
    // (An opportunity no shift had: a new symbol code.)
    put('shift', { ...shift(5001, Y), opportunity_id: '00000000-0000-4000-8000-0000000000c1' }),
  ];
  await disk.write(later, [], at(6));
  apply(later);

  const byColumns = ['start', 'created', 'end', 'spots', 'start_time', 'end_time'];
  const orders = (model: ReadModel, names = [...byColumns, 'opportunity']) =>
    [X, Y].flatMap((institution) => {
      const table = model.table('shift', institution)!;
      return names.map((name) => {
        const index = table.index(name);
        // In order by the table's own columns (symbol codes included), not only the same ids.
        const compare = index.comparator();
        const sorted = index.order.subarray(0, index.size).every((row, k, rows) => k === 0 || compare(rows[k - 1]!, row) < 0);
        return `${name}${sorted ? '' : ' (out of order)'}: ${Array.from(index.order.subarray(0, index.size), (row) => table.idOf(row)).join(',')}`;
      });
    });
  const expected = orders(live);

  const restored = new ReadModel(tableDefs);
  t.equal(restored.loadPersisted(disk.persisted()), 2, 'both tables take their saved indexes');
  t.same(orders(restored), expected, 'restored, then the journal over them');

  const started = new ReadModel(tableDefs);
  await new Projector(store, started, disk).load();
  t.same(orders(started), expected, 'as a start-up loads them');

  // A step per slice: the symbol codes of a table the journal changes made a piece at a time before its first
  // change, each table's indexes restored alone, the journal's changes published a step at a time.
  const sliced = new ReadModel(tableDefs);
  await sliced.loadPersistedInSlices(disk.persisted(), undefined, 0);
  t.same(orders(sliced), expected, 'loaded in slices');

  // Symbol codes not seeded from the snapshot: the opportunity index is sorted by codes, so the table sorts again.
  const tables = [...disk.savedTables()];
  const unseeded = new ReadModel(tableDefs);
  const withoutCodes = tables.map((s) => ({ ...s, table: { ...s.table, symbols: {} } }));
  t.equal(unseeded.loadPersisted({ ...disk.persisted(), tables: withoutCodes }), 0, 'no table takes indexes on symbol codes it did not seed');
  t.same(orders(unseeded, byColumns), orders(live, byColumns));
  t.notMatch(orders(unseeded, ['opportunity']).join('\n'), /out of order/, 'sorted by its own codes (in another order of opportunities)');

  // Saved from another definition of the indexes: sorted again instead.
  const other = new ReadModel(tableDefs);
  const changed = tables.map((s) => ({ ...s, table: { ...s.table, indexes: s.table.indexes.map((i) => ({ ...i, signature: `${i.signature} (older)` })) } }));
  t.equal(other.loadPersisted({ ...disk.persisted(), tables: changed }), 0, 'no table takes indexes saved from another definition');
  t.same(orders(other), expected);

  // Columns: taken whole from the snapshot, unless saved by another function or not saved at all (earlier versions).
  const columnsOf = (model: ReadModel) =>
    [X, Y].flatMap((institution) => {
      const table = model.table('shift', institution)!;
      return [...byColumns, 'opportunity', 'title'].map((name) => `${name}: ${Array.from(table.liveRows(), (row) => `${table.idOf(row)}=${table.column(name)[row]}`).sort().join(',')}`);
    });
  t.same(columnsOf(restored), columnsOf(live), 'columns taken from the snapshot hold what the records give');
  const withSpots = (spots: (column: SavedColumn) => SavedColumn) =>
    tables.map((s) => ({ ...s, table: { ...s.table, columns: s.table.columns!.map((c) => (c.name === 'spots' ? spots(c) : c)) } }));
  const marked = new ReadModel(tableDefs);
  marked.loadPersisted({ ...disk.persisted(), tables: withSpots((c) => ({ ...c, values: c.values.map(() => 999) })) });
  const spotsOf = (model: ReadModel) => [X, Y].flatMap((i) => Array.from(model.table('shift', i)!.liveRows(), (row) => model.table('shift', i)!.column('spots')[row]));
  t.ok(spotsOf(marked).includes(999), 'the saved values are what a load takes (a marked column shows its mark)');
  const recomputed = new ReadModel(tableDefs);
  recomputed.loadPersisted({ ...disk.persisted(), tables: withSpots((c) => ({ ...c, signature: `${c.signature} (older)`, values: c.values.map(() => 999) })) });
  t.same(columnsOf(recomputed), columnsOf(live), 'columns saved by another function are computed instead');
  const older = new ReadModel(tableDefs);
  older.loadPersisted({ ...disk.persisted(), tables: tables.map((s) => ({ ...s, table: { symbols: s.table.symbols, indexes: s.table.indexes } })) });
  t.same(columnsOf(older), columnsOf(live), 'a snapshot without columns has them computed');
  t.same(orders(older), expected);
});

t.test("a big table's arrays are saved a piece at a time, and load as they were", async (t) => {
  const { disk } = stores(t);
  const live = new ReadModel(tableDefs);
  // Rows out of the snapshot's order (records deleted, their rows given to later ones): more than twice 65,536 (the
  // values a piece makes), so each array's fill yields at least twice before it ends.
  const n = 200_000;
  for (let i = 0; i < n; i++) live.apply(put('shift', { ...shift(i), shift_start_at: shift(n - i).shift_start_at, spots: i % 97 }));
  for (let i = 0; i < n; i += 3) live.apply(remove('shift', shift(i).id));
  for (let i = n; i < n + 20_000; i++) live.apply(put('shift', shift(i)));
  live.flush();

  let arrays = 0;
  let yields = 0;
  for (const toSave of live.tablesToSave()) {
    if (toSave === undefined) continue;
    arrays += toSave.table.indexes.length + toSave.table.columns.length;
    const pieces = encodeTableInPieces(toSave.table);
    while (pieces.next().done !== true) yields++;
  }
  // Made whole, an index yields once and a column twice (after its width, after its values): 36 yields here. Made in
  // pieces, each array's values yield at least twice more.
  t.ok(yields >= 3 * arrays, `each array made in pieces (${yields} yields for ${arrays} arrays of ${live.table('shift', shift(0).institution_id)!.size} rows)`);

  await disk.writeSnapshot(live.byKind(), live.tablesToSave(), at(1));
  const restored = new ReadModel(tableDefs);
  t.equal(restored.loadPersisted(disk.persisted()), 1, 'the table takes its saved indexes');
  const table = (model: ReadModel) => model.table('shift', shift(0).institution_id)!;
  const names = ['start', 'created', 'end', 'spots', 'start_time', 'end_time', 'opportunity'];
  for (const name of names) {
    const ids = (model: ReadModel) => Array.from(table(model).index(name).order.subarray(0, table(model).index(name).size), (row) => table(model).idOf(row));
    t.ok(isDeepStrictEqual(ids(restored), ids(live)), `index ${name}: the same records in the same order`);
  }
  const columns = (model: ReadModel) =>
    names.map((name) => Array.from(table(model).liveRows(), (row) => `${table(model).idOf(row)}=${table(model).column(name)[row]}`).sort().join(','));
  t.ok(isDeepStrictEqual(columns(restored), columns(live)), 'every column holds what it held');
});
