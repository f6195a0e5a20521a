/**
 * Table indexes under changes, against a brute-force sort: whatever mix of
 * inserts, replacements and deletes lands between two flushes (placed
 * by binary search, or very many rebuilt from scratch), every index
 * lists exactly the live records in (keys…, id) order and each row's
 * position in it, knows where each run of one leading value ends, and its
 * binary searches on the first two keys find what a scan finds. A table
 * grown ahead of need between changes holds what one grown at once holds,
 * and saves each column by place, in 32-bit integers when they hold its
 * values; a server's background work grows a nearly full table before a
 * row needs the room. A table publishing in the background keeps its
 * indexes as of its last publication, all alike, until the next is taken
 * whole; the server's background work publishes each change soon after it
 * lands, at most once a gap that grows with the table's rows, and makes
 * the memory a big table's next orders are made in before its first change.
 */
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { put } from '../projections/projection.js';
import type { ShiftRecord } from '../projections/records.js';
import { workInBackground } from '../src/readmodel/background.js';
import { ReadModel } from '../src/readmodel/model.js';
import { capacityFor, ColumnRanks, denseRanks, SortedIndex, ZONE_ALL, ZONE_NONE, ZONE_SOME } from '../src/readmodel/sorted-index.js';
import { Table } from '../src/readmodel/table.js';
import { tableDefs } from '../src/resources/index.js';
import { until } from './helpers.js';

// Every binary search narrows down on the fences at once (the server waits for an index to stay unchanged first).
SortedIndex.fenceAfter = 0;

interface Row {
  id: string;
  a: number;
  b: number;
}

const schema = {
  columns: { a: (r: Row) => r.a, b: (r: Row) => r.b },
  // ('ab' ends with 'b''s keys: rebuilt from scratch, its order starts from 'b''s; 'ba' is sorted on its own.)
  indexes: [
    { name: 'b', keys: ['b'] },
    { name: 'ab', keys: ['a', 'b'] },
    { name: 'ba', keys: ['b', 'a'] },
  ],
};

const expected = (live: Map<string, Row>, keys: Array<'a' | 'b'>) =>
  [...live.values()]
    .sort((x, y) => {
      for (const k of keys) if (x[k] !== y[k]) return x[k] - y[k];
      return x.id < y.id ? -1 : x.id > y.id ? 1 : 0;
    })
    .map((r) => r.id);

// Few distinct values, so that rows tie on every key and the id decides.
const change = fc.record({
  id: fc.integer({ min: 0, max: 3000 }).map((n) => `id-${n.toString(36).padStart(3, '0')}`),
  a: fc.integer({ min: -3, max: 3 }),
  b: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.double({ min: -1e15, max: 1e15, noNaN: true })),
  remove: fc.boolean(),
});

type PublicationSettings = Partial<Pick<typeof Table, 'publishFrom' | 'publicationGapPerRowMs' | 'publicationGapMaxMs'>>;

/** Table's publication settings for the test's length (publishFrom 64 unless given), restored after. */
function withPublication(t: Test, settings: PublicationSettings): void {
  const defaults = { publishFrom: Table.publishFrom, publicationGapPerRowMs: Table.publicationGapPerRowMs, publicationGapMaxMs: Table.publicationGapMaxMs };
  Object.assign(Table, { publishFrom: 64, ...settings });
  t.teardown(() => Object.assign(Table, defaults));
}

/** Set a record in the table, or delete it with `remove`, and the same in the map of live records it is checked against. */
function setLive<R extends { id: string }>(table: Table<R>, live: Map<string, R>, { remove, ...record }: R & { remove: boolean }): void {
  const value = record as unknown as R;
  table.set(value.id, remove ? null : value);
  if (remove) live.delete(value.id);
  else live.set(value.id, value);
}

/**
 * Binary searches (which first narrow down on every 64th position's values)
 * against a scan: on the leading key over the whole index, and on the
 * second key within each run of one leading value.
 */
function boundsMatchScans(table: Table<Row>): boolean {
  const index = table.index('ab');
  const [a, b] = [table.column('a'), table.column('b')];
  const rows = index.order;
  const scan = (column: Float64Array, value: number, from: number, to: number, past: boolean) => {
    let i = from;
    while (i < to && (column[rows[i]!]! < value || (past && column[rows[i]!]! === value))) i++;
    return i;
  };
  const probes = [-Infinity, -1e16, -1, 0, 1, 2.5, 3, 5, 1e16, Infinity];
  for (const past of [false, true]) {
    for (const value of [-4, -3, -1, 0, 0.5, 3, 4]) {
      if (index.boundOn(0, value, 0, index.size, past) !== scan(a, value, 0, index.size, past)) return false;
    }
    for (let start = 0; start < index.size; ) {
      const end = index.runEnd(a[rows[start]!]!);
      for (const value of [...probes, b[rows[start]!]!, b[rows[(start + end) >> 1]!]!]) {
        if (index.boundOn(1, value, start, end, past) !== scan(b, value, start, end, past)) return false;
      }
      start = end;
    }
  }
  return true;
}

t.test('every index matches a brute-force sort after each flush', async (t) => {
  let rounds = 0;
  fc.assert(
    fc.property(
      // A large first batch, then batches small enough to be placed into it, or large enough to rebuild it.
      fc.array(change, { minLength: 800, maxLength: 1500 }),
      fc.array(
        fc.integer({ min: 1, max: 250 }).chain((n) => fc.array(change, { minLength: n, maxLength: n })),
        { minLength: 1, maxLength: 6 },
      ),
      (first, rest) => {
      const batches = [first, ...rest];
      const table = new Table<Row>(schema);
      const live = new Map<string, Row>();
      for (const batch of batches) {
        for (const change of batch) setLive(table, live, change);
        for (const [name, keys] of [['ab', ['a', 'b']], ['b', ['b']], ['ba', ['b', 'a']]] as const) {
          const index = table.index(name);
          const ids = Array.from(index.order.subarray(0, index.size), (row) => table.idOf(row));
          if (JSON.stringify(ids) !== JSON.stringify(expected(live, [...keys]))) return false;
          // Each row's position (made again in the memory of the last, when it fits), 0 for rows not in the index.
          const ranks = index.ranks();
          const positionOf = new Map(Array.from(index.order.subarray(0, index.size), (row, k) => [row, k]));
          for (let row = 0; row < ranks.length; row++) if (ranks[row] !== (positionOf.get(row) ?? 0)) return false;
          // The end of each leading value's run (asked every round, so a
          // stale answer from before the flush would show).
          const lead = table.column(keys[0]);
          for (const a of [-3, 0, 3]) {
            const present = [...live.values()].some((r) => r[keys[0]] === a);
            if (!present) continue;
            let end = 0;
            while (end < index.size && lead[index.order[end]!]! <= a) end++;
            if (index.runEnd(a) !== end) return false;
          }
        }
        if (!boundsMatchScans(table)) return false;
        rounds++;
      }
      return true;
    }),
    { numRuns: 100 },
  );
  t.ok(rounds > 100, `${rounds} flushes checked`); 
});

t.test('a table publishing in the background: its indexes stay as of the last publication, all alike, until the next is taken a step at a time; changes made meanwhile wait for the one after; then every index matches a brute-force sort', async (t) => {
  withPublication(t, { publishFrom: 0 });
  const names = [['ab', ['a', 'b']], ['b', ['b']], ['ba', ['b', 'a']]] as const;
  const orders = (table: Table<Row>) => names.map(([name]) => {
    const index = table.index(name);
    return JSON.stringify(Array.from(index.order.subarray(0, index.size), (row) => table.idOf(row)));
  });
  const sorted = (live: Map<string, Row>) => names.map(([, keys]) => JSON.stringify(expected(live, [...keys])));
  let publications = 0;
  let stepsSeenStale = 0;
  fc.assert(
    fc.property(
      fc.array(change, { minLength: 300, maxLength: 600 }),
      // Batches, each followed by the steps of a publication with a few changes between steps.
      fc.array(fc.tuple(fc.array(change, { minLength: 1, maxLength: 60 }), fc.array(fc.array(change, { maxLength: 3 }), { maxLength: 12 })), { minLength: 1, maxLength: 5 }),
      (first, batches) => {
        const table = new Table<Row>(schema);
        const live = new Map<string, Row>();
        for (const c of first) setLive(table, live, c);
        table.flush();
        table.publishInBackground(true);
        let shown = sorted(live);
        if (JSON.stringify(orders(table)) !== JSON.stringify(shown)) return false;
        for (const [batch, between] of batches) {
          for (const c of batch) setLive(table, live, c);
          // Read at once, the indexes are as they were: nothing is flushed when read.
          if (JSON.stringify(orders(table)) !== JSON.stringify(shown)) return false;
          // The changes a publication takes are those made before its first step; what it shows once taken, those.
          let target = shown;
          for (let step = 0, more = true; more; step++) {
            if (!table.publishing) target = sorted(live);
            more = table.publishStep(-Infinity);
            const now = JSON.stringify(orders(table));
            if (!table.publishing) {
              if (now !== JSON.stringify(target)) return false;
              shown = target;
              publications++;
            } else if (now !== JSON.stringify(shown)) return false; // part of one, part of the other
            else stepsSeenStale++;
            if (!boundsMatchScans(table)) return false;
            for (const c of between[step] ?? []) setLive(table, live, c);
            more ||= table.unpublished;
          }
          // Nothing left to publish: every change so far is in.
          shown = sorted(live);
          if (JSON.stringify(orders(table)) !== JSON.stringify(shown)) return false;
          if (!boundsMatchScans(table)) return false;
        }
        // A flush finishes what a publication began.
        for (const c of batches[0]![0]) setLive(table, live, { ...c, a: c.a + 1 });
        table.publishStep(-Infinity);
        table.flush();
        return JSON.stringify(orders(table)) === JSON.stringify(sorted(live));
      },
    ),
    { numRuns: 60 },
  );
  t.ok(publications > 60, `${publications} publications taken while changes went on`);
  t.ok(stepsSeenStale > 100, `${stepsSeenStale} steps read the indexes as of the publication before`);
});

t.test("rows' positions in an index: by binary search after a change until searching has cost about what making ranks() does, then from ranks()", async (t) => {
  const table = new Table<Row>(schema);
  for (let i = 0; i < 5000; i++) table.set(`id-${i}`, { id: `id-${i}`, a: i % 7, b: (i * 7919) % 1000 });
  const index = table.index('ab');
  const all = Array.from(index.order.subarray(0, index.size));
  const truth = new Map(all.map((row, position) => [row, position]));
  const out = new Uint32Array(all.length);
  let searched = 0;
  // Ten rows at a time: about 10 · 13 · 4 = 520 rows of a build each, so the tenth batch or so makes ranks().
  for (let batch = 0; batch < 20; batch++) {
    const rows = Array.from({ length: 10 }, (_, i) => all[(batch * 2477 + i * 131) % all.length]!);
    const searching = !index.hasRanks;
    index.positionsOf(rows, rows.length, out);
    if (searching && !index.hasRanks) searched++;
    t.same(Array.from(out.subarray(0, rows.length)), rows.map((row) => truth.get(row)), `batch ${batch}: each row's position`);
  }
  t.ok(searched >= 5 && searched < 20, `${searched} batches found by search before ranks() was made`);
  t.ok(index.hasRanks);
  // A change forgets ranks(): searched again.
  table.set('id-0', { id: 'id-0', a: 9, b: 0 });
  const again = table.index('ab');
  t.notOk(again.hasRanks);
  const moved = table.rowOf('id-0')!;
  again.positionsOf([moved], 1, out);
  t.equal(out[0], again.size - 1, 'the row moved to the end, found by search');
  t.notOk(again.hasRanks);
});

t.test("a column's dense ranks over some of its rows: 0 for the smallest value, one more for each next distinct one (-0 as 0), as a brute-force sort gives them", async (t) => {
  const value = fc.oneof(
    fc.integer({ min: -5, max: 5 }),
    fc.constantFrom(0, -0, Number.MIN_VALUE, -Number.MIN_VALUE, Number.MAX_VALUE, -Number.MAX_VALUE, 2 ** 32, 2 ** 32 + 1, -(2 ** 32)),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    // Times: values that share their high digits and differ in the low ones.
    fc.integer({ min: 0, max: 5000 }).map((k) => 1.7e12 + k),
  );
  fc.assert(
    fc.property(fc.array(fc.tuple(value, fc.boolean()), { maxLength: 300 }), (cells) => {
      const column = Float64Array.from(cells, ([v]) => v);
      const rows = Uint32Array.from(cells.flatMap(([, taken], row) => (taken ? [row] : [])));
      const { rank, distinct } = denseRanks(column, rows, cells.length);
      const sorted = [...new Set(Array.from(rows, (row) => column[row]! + 0))].sort((a, b) => a - b);
      if (distinct !== sorted.length) return false;
      for (const row of rows) if (rank[row] !== sorted.indexOf(column[row]! + 0)) return false;
      return true;
    }),
    { numRuns: 300 },
  );
});

t.test('a removed row that a search cannot find (its column changed under the index) is still dropped, by comparing every row', async (t) => {
  // A bare index over columns of our own, so that a removed row's value can be changed before the update.
  const n = 200;
  const values = new Float64Array(n + 64);
  const ids = Array.from({ length: n + 64 }, (_, row) => `id-${String(row).padStart(4, '0')}`);
  for (let row = 0; row < n + 64; row++) values[row] = (row * 37) % 11;
  const source = { column: () => values, idOf: (row: number) => ids[row]! };
  const index = new SortedIndex({ name: 'v', keys: ['v'] }, source);
  const all = Uint32Array.from({ length: n }, (_, row) => row);
  index.rebuild(all, new ColumnRanks(source, all, n));
  const removed = [3, 50, 51, 120];
  values[50] = 1000; // no longer where the index holds it
  const added = Array.from({ length: 40 }, (_, k) => n + k);
  const gone = new Set(removed);
  index.update((row) => gone.has(row), removed, added);
  const live = [...Array.from({ length: n }, (_, row) => row).filter((row) => !gone.has(row)), ...added];
  const expectedOrder = live.sort((a, b) => values[a]! - values[b]! || (ids[a]! < ids[b]! ? -1 : 1));
  t.same(Array.from(index.order.subarray(0, index.size)), expectedOrder);
});

t.test('postings: the rows holding each value are those of the live records that hold it, whatever was replaced or deleted', async (t) => {
  interface Tagged {
    id: string;
    tags: string[];
  }
  const tagged = { columns: {}, indexes: [], params: [{ name: 'tag', value: (r: Tagged) => r.tags }, { name: 'other' }] };
  const TAGS = ['a', 'B', 'b', 'c', ''];
  let checked = 0;
  fc.assert(
    fc.property(
      fc.array(fc.record({ id: fc.integer({ min: 0, max: 40 }).map(String), tags: fc.subarray(TAGS), remove: fc.boolean() }), { maxLength: 200 }),
      (changes) => {
        const table = new Table<Tagged>(tagged);
        const live = new Map<string, Tagged>();
        for (const change of changes) {
          setLive(table, live, change);
          for (const value of ['a', 'b', 'c', '', 'zzz']) {
            const expected = [...live.values()].filter((r) => r.tags.some((x) => x.toLowerCase() === value)).map((r) => r.id).sort();
            const held = [...table.holding('tag', value)!].map((row) => table.idOf(row)).sort();
            if (JSON.stringify(held) !== JSON.stringify(expected)) return false;
            checked++;
          }
        }
        return table.holding('other', 'a') === undefined;
      },
    ),
    { numRuns: 200 },
  );
  t.ok(checked > 1000, `${checked} postings checked`);
});

t.test('zone maps: made in the background once the index has served enough walks unchanged, a walk is told exactly which zones miss one of its ranges with a map (no row of them matches) and which lie within them all (every row does)', async (t) => {
  const saved = { after: SortedIndex.zoneAfter, rows: SortedIndex.zoneRows };
  t.teardown(() => {
    SortedIndex.zoneAfter = saved.after;
    SortedIndex.zoneRows = saved.rows;
  });
  let zonesChecked = 0;
  const seen = { none: 0, all: 0, some: 0 };
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 300 }).chain((n) => fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 40 })), { minLength: n, maxLength: n })),
      fc.constantFrom(1, 2, 4, 16),
      // Ranges as the engine asks for them: never empty.
      fc.array(fc.tuple(fc.constantFrom('a' as const, 'b' as const), fc.integer({ min: -2, max: 42 }), fc.integer({ min: 1, max: 30 })), { minLength: 1, maxLength: 3 }),
      fc.boolean(),
      // Which ranges' maps are made before the walk (all of them in half the runs).
      fc.oneof(fc.constant([true, true, true]), fc.array(fc.boolean(), { minLength: 3, maxLength: 3 })),
      (values, zoneRows, ranges, complete, madeFirst) => {
        SortedIndex.zoneRows = zoneRows;
        SortedIndex.zoneAfter = 2;
        const columns = { a: Float64Array.from(values, ([a]) => a), b: Float64Array.from(values, ([, b]) => b) };
        const index = new SortedIndex({ name: 'ab', keys: ['a', 'b'] }, { column: (name) => columns[name as 'a' | 'b'], idOf: (row) => String(row).padStart(4, '0') });
        const rows = Uint32Array.from(values.keys()).sort((x, y) => columns.a[x]! - columns.a[y]! || columns.b[x]! - columns.b[y]! || x - y);
        index.restore(rows);
        const asked = ranges.map(([column, lo, width]) => ({ column, lo, hi: lo + width }));
        // Not before it has served zoneAfter walks unchanged.
        if (index.zoneTester(asked, complete) !== undefined || index.zoneTester(asked, complete) !== undefined) throw new Error('zone maps made at once');
        // Then the walk that asks gets none: it wants them made in the background, a piece at a time, not in its request.
        const early = asked.filter((_, i) => madeFirst[i]);
        if (index.zoneTester(early, complete) !== undefined) throw new Error('zone maps made in the asking walk');
        if (index.wantsZoneMaps !== early.length > 0) throw new Error('zone maps not wanted');
        while (index.makeZoneMaps(-Infinity));
        if (index.wantsZoneMaps) throw new Error('zone maps still wanted once made');
        // Only the ranges whose columns have a map count; the others' are wanted.
        const made = new Set(early.map((r) => r.column));
        const zones = index.zoneTester(asked, complete);
        if ((zones === undefined) !== (made.size === 0)) throw new Error(`zone maps of ${[...made].join()}: tester ${zones === undefined ? 'missing' : 'given'}`);
        if (index.wantsZoneMaps !== asked.some((r) => !made.has(r.column))) throw new Error('the missing zone maps not wanted');
        if (zones === undefined) return;
        const inRange = (row: number, { column, lo, hi }: (typeof asked)[number]) => columns[column][row]! >= lo && columns[column][row]! < hi;
        for (let p = 0; p < index.size; p++) {
          const zone = Math.floor(p / zoneRows);
          const inZone = Array.from(rows.subarray(zone * zoneRows, (zone + 1) * zoneRows));
          const bounds = (column: 'a' | 'b') => [Math.min(...inZone.map((row) => columns[column][row]!)), Math.max(...inZone.map((row) => columns[column][row]!))];
          // NONE when some range with a map lies wholly below or above the zone's values of its column, ALL when (the
          // ranges being all the walk tests, each with a map) every range holds them all, else SOME …
          const none = asked.some(({ column, lo, hi }) => made.has(column) && (bounds(column)[1]! < lo || bounds(column)[0]! >= hi));
          const all = complete && asked.every(({ column, lo, hi }) => made.has(column) && bounds(column)[0]! >= lo && bounds(column)[1]! < hi);
          const expected = none ? ZONE_NONE : all ? ZONE_ALL : ZONE_SOME;
          if (zones(p) !== expected) throw new Error(`position ${p}: ${zones(p)}, expected ${expected}`);
          // … so never a zone holding a match skipped, nor one holding a row out of the ranges counted whole.
          if (expected === ZONE_NONE && inZone.some((row) => asked.every((r) => inRange(row, r)))) throw new Error(`position ${p}: a match skipped`);
          if (expected === ZONE_ALL && !inZone.every((row) => asked.every((r) => inRange(row, r)))) throw new Error(`position ${p}: a row out of range counted`);
          seen[expected === ZONE_NONE ? 'none' : expected === ZONE_ALL ? 'all' : 'some']++;
          zonesChecked++;
        }
        // A change of the order forgets them, those wanted and one half made: zoneAfter walks again first.
        index.makeZoneMaps(-Infinity);
        index.restore(rows);
        if (index.wantsZoneMaps) throw new Error('zone maps wanted across a change');
        if (index.zoneTester(asked, complete) !== undefined) throw new Error('zone maps kept across a change');
      },
    ),
    { numRuns: 300 },
  );
  t.ok(zonesChecked > 5000, `${zonesChecked} positions checked`);
  t.ok(seen.none > 500 && seen.all > 500 && seen.some > 500, `zones of each kind met: ${JSON.stringify(seen)}`);
});

t.test('a table grown ahead of need, a step between changes, holds what one grown at once holds: columns, indexes and the JSON made before', async (t) => {
  // Small enough that every run grows several times, its rows copied in steps of a few.
  const defaults = { growAheadFrom: Table.growAheadFrom, growStepRows: Table.growStepRows };
  Object.assign(Table, { growAheadFrom: 64, growStepRows: 16 });
  t.teardown(() => Object.assign(Table, defaults));
  const json = (row: Row) => JSON.stringify(row);
  let inBackground = 0;
  fc.assert(
    fc.property(
      fc.array(fc.oneof({ weight: 6, arbitrary: change }, { weight: 1, arbitrary: fc.record({ page: fc.nat(), stamp: fc.integer({ min: 0, max: 2 }) }) }), {
        minLength: 200,
        maxLength: 1200,
      }),
      (ops) => {
        const ahead = new Table<Row>(schema);
        const atOnce = new Table<Row>(schema);
        // JSON made per table: made again (not copied with the row's entry) it would count more.
        const made = { ahead: 0, atOnce: 0 };
        for (const op of ops) {
          if ('page' in op) {
            // A page of the rows there are, at a stamp: JSON made now must be the JSON read after a growth.
            const rows = [...atOnce.liveRows()].slice(op.page % 97, (op.page % 97) + 20);
            const a = Buffer.concat(ahead.fragmentRuns(rows, op.stamp, (r) => (made.ahead++, json(r)))).toString();
            const b = Buffer.concat(atOnce.fragmentRuns(rows, op.stamp, (r) => (made.atOnce++, json(r)))).toString();
            if (a !== b) return false;
          } else {
            const { remove, ...row } = op;
            for (const table of [ahead, atOnce]) table.set(row.id, remove ? null : row);
          }
          const room = ahead.room;
          ahead.growAhead(0);
          if (ahead.room > room) inBackground++;
        }
        for (const id of [...atOnce.liveRows()].map((row) => atOnce.idOf(row))) {
          const row = ahead.rowOf(id)!;
          if (row !== atOnce.rowOf(id) || ahead.column('a')[row] !== atOnce.column('a')[row] || ahead.column('b')[row] !== atOnce.column('b')[row]) return false;
        }
        for (const name of ['ab', 'b', 'ba']) {
          const [x, y] = [ahead.index(name), atOnce.index(name)];
          if (x.size !== y.size || x.order.subarray(0, x.size).some((row, p) => row !== y.order[p])) return false;
        }
        const rows = [...atOnce.liveRows()];
        const a = Buffer.concat(ahead.fragmentRuns(rows, 2, (r) => (made.ahead++, json(r))));
        return a.equals(Buffer.concat(atOnce.fragmentRuns(rows, 2, (r) => (made.atOnce++, json(r))))) && made.ahead === made.atOnce;
      },
    ),
    { numRuns: 100 },
  );
  t.ok(inBackground > 30, `${inBackground} growths taken in the background`);
});

t.test("a table's saved columns: each value at its row's place, in 32-bit integers when every live value is one (-0 is not), else in 64-bit floats", async (t) => {
  const value = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(-0, 0.5, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, 2 ** 31 - 1));
  const widths = { narrow: 0, wide: 0 };
  fc.assert(
    fc.property(fc.array(fc.record({ id: fc.integer({ min: 0, max: 40 }).map(String), a: value, b: value, remove: fc.boolean() }), { minLength: 1, maxLength: 80 }), (changes) => {
      const table = new Table<Row>(schema);
      const live = new Map<string, Row>();
      for (const change of changes) setLive(table, live, change);
      // Places in reverse order of rows, as a snapshot lists records in an order of its own.
      const rows = [...table.liveRows()].sort((x, y) => y - x);
      const placeOf = new Uint32Array(table.rowCount);
      rows.forEach((row, place) => (placeOf[row] = place));
      const saved = table.save(placeOf).columns!;
      for (const name of ['a', 'b'] as const) {
        const { values } = saved.find((column) => column.name === name)!;
        const narrow = [...live.values()].every((r) => (r[name] | 0) === r[name] && !Object.is(r[name], -0));
        if ((values instanceof Int32Array) !== narrow || values.length !== live.size) return false;
        widths[narrow ? 'narrow' : 'wide']++;
        if (rows.some((row) => !Object.is(values[placeOf[row]!], table.record(row)[name]))) return false;
      }
      return true;
    }),
    { numRuns: 300 },
  );
  t.ok(widths.narrow > 50 && widths.wide > 50, `both widths met: ${JSON.stringify(widths)}`);
});

t.test('a table loaded with room for its rows (reserve) is not grown ahead until rows are added to it', async (t) => {
  const defaults = { growAheadFrom: Table.growAheadFrom };
  Object.assign(Table, { growAheadFrom: 64 });
  t.teardown(() => Object.assign(Table, defaults));
  for (const rows of [64, 100, 1000, 5000]) {
    const table = new Table<{ id: string; n: number }>({ columns: { n: (r) => r.n }, indexes: [{ name: 'n', keys: ['n'] }] });
    table.reserve(rows);
    for (let i = 0; i < rows; i++) table.set(`r${i}`, { id: `r${i}`, n: i });
    const room = table.room;
    // As the background does: a call after another (a step that allocates ends one).
    const growAhead = () => {
      for (let calls = 0; calls < 1000 && table.room === room; calls++) table.growAhead(Infinity);
    };
    growAhead();
    t.equal(table.room, room, `${rows} rows loaded: room for ${room} kept`);
    let added = rows;
    while (table.rowCount < room * Table.growAheadAt) table.set(`r${added}`, { id: `r${added}`, n: added++ });
    growAhead();
    t.ok(table.room > room, `${rows} rows loaded, ${added - rows} added: grown ahead to room for ${table.room}`);
  }
});

/** The shifts of one institution the background tests apply to a model: the i-th starts at hour `hour` (i by default). */
const institution = '00000000-0000-4000-8000-000000000001';
const shift = (i: number, hour = i): ShiftRecord => ({
  id: `5${String(i).padStart(7, '0')}-0000-4000-8000-000000000000`,
  institution_id: institution,
  opportunity_id: '10000000-0000-4000-8000-000000000000',
  title: `Shift ${i % 7}`,
  description: null,
  shift_start_at: hour * 3_600_000_000,
  shift_end_at: (hour + 1) * 3_600_000_000,
  spots: 1 + (i % 5),
  location: '',
  spots_reserved: 0,
  removed: false,
  created_at: i,
  updated_at: i,
});

t.test("a server's background work grows a nearly full table ahead of need, before any row needs the room", async (t) => {
  const defaults = { growAheadFrom: Table.growAheadFrom, growStepRows: Table.growStepRows };
  Object.assign(Table, { growAheadFrom: 64, growStepRows: 16 });
  t.teardown(() => Object.assign(Table, defaults));
  const model = new ReadModel(tableDefs);
  let added = 0;
  const table = () => model.table('shift', institution)!;
  do model.apply(put('shift', shift(added++)));
  while (table().room < Table.growAheadFrom || table().rowCount < table().room * Table.growAheadAt);
  const room = table().room;
  const background = workInBackground(model, () => true, 4, 5);
  t.teardown(() => background.stop());
  for (const until = Date.now() + 5000; table().room === room && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 10));
  t.ok(table().room > room, `room for ${room} rows, then ${table().room}, with no row added meanwhile`);
  t.equal(table().rowCount, added, 'no row added');
  const index = table().index('start');
  t.same(Array.from(index.order.subarray(0, index.size), (row) => table().idOf(row)), Array.from({ length: added }, (_, i) => shift(i).id), 'every shift, in start order');
});

/**
 * A model of 200 shifts, its table publishing in the background (Table's settings as given, restored after), under
 * a server's background work that is idle for 10 s at a time: only a change, or a publication's gap ending, wakes it
 * sooner.
 */
async function publishingModel(t: Test, settings: PublicationSettings): Promise<ReadModel> {
  withPublication(t, settings);
  const model = new ReadModel(tableDefs);
  for (let i = 0; i < 200; i++) model.apply(put('shift', shift(i)));
  model.flush();
  const background = workInBackground(model, () => true, 4, 10_000);
  t.teardown(() => background.stop());
  await until(() => model.publishesInBackground || undefined);
  return model;
}

t.test("a server's background work publishes a big table's changes soon after they land; until then its searches see it as it was", async (t) => {
  const model = await publishingModel(t, {});
  const starts = () => {
    const table = model.table('shift', institution)!;
    const index = table.index('start');
    return Array.from(index.order.subarray(0, index.size), (row) => table.idOf(row));
  };
  const before = starts();
  // The last shift moves first; two new ones.
  model.apply(put('shift', shift(199, -1)));
  model.apply(put('shift', shift(200)));
  model.apply(put('shift', shift(201)));
  t.ok(model.stale(institution), 'stale until published');
  t.same(starts(), before, 'searches see the table as it was');
  await until(() => (model.stale(institution) ? undefined : true), 2000);
  t.same(starts(), [shift(199).id, ...before.slice(0, 199), shift(200).id, shift(201).id], 'every change, in start order');
});

t.test("a big table publishes at most once a gap that grows with its rows: changes soon after a publication wait for the gap's end, then are published without another change", async (t) => {
  // 200 rows: a gap of 1,000 ms (5 ms a row, at most 1,000).
  const model = await publishingModel(t, { publicationGapPerRowMs: 5, publicationGapMaxMs: 1000 });
  const applied = performance.now();
  model.apply(put('shift', shift(200)));
  await until(() => (model.stale(institution) ? undefined : true), 2000);
  const published = performance.now();
  t.ok(published - applied < 500, `the first change (no publication before it) published after ${Math.round(published - applied)} ms, not a gap later`);
  model.apply(put('shift', shift(201)));
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.ok(model.stale(institution), 'a change right after waits (still stale 300 ms into a gap of 1,000)');
  await until(() => (model.stale(institution) ? undefined : true), 3000);
  const waited = performance.now() - published;
  t.ok(waited >= 300 && waited < 3000, `published ${Math.round(waited)} ms after the one before, with no other change (gap 1,000 ms, idle 10 s)`);
  const table = model.table('shift', institution)!;
  t.equal(table.index('start').size, 202, 'both new shifts are in');
  t.equal(table.publicationDue, Infinity, 'nothing waits');
  // 202 rows would make 1,010 ms: the gap stops at publicationGapMaxMs.
  model.apply(put('shift', shift(202)));
  const left = table.publicationDue - performance.now();
  t.ok(left > 800 && left <= 1000, `the next may come ${Math.round(left)} ms from now, at most 1,000`);
});

t.test('a publication that sorts a big table from scratch (many changes at once) starts the gap too', (t) => {
  withPublication(t, { publicationGapPerRowMs: 5, publicationGapMaxMs: 1000 });
  const model = new ReadModel(tableDefs);
  for (let i = 0; i < 200; i++) model.apply(put('shift', shift(i)));
  model.flush();
  model.publishInBackground(true);
  const table = model.table('shift', institution)!;
  // 100 new rows beside 200: many changes, sorted from scratch.
  for (let i = 200; i < 300; i++) model.apply(put('shift', shift(i)));
  t.equal(table.publishStep(Infinity), false, 'published in one step (a flush)');
  t.equal(table.index('start').size, 300, 'the 100 new shifts are in');
  model.apply(put('shift', shift(300)));
  t.equal(table.publishStep(Infinity), false, 'the next change is not published');
  t.ok(model.stale(institution), 'it waits for the gap: searches see 300 shifts');
  t.ok(table.publicationDue - performance.now() > 900, 'a gap of 1,000 ms from that flush');
  t.end();
});

t.test("a server's background work allocates the memory a big table's indexes make their next orders in before their first change, and the first publication makes them there", async (t) => {
  withPublication(t, {});
  const model = new ReadModel(tableDefs);
  for (let i = 0; i < 200; i++) model.apply(put('shift', shift(i)));
  model.flush();
  const small = new ReadModel(tableDefs);
  for (let i = 0; i < 10; i++) small.apply(put('shift', shift(i)));
  small.flush();
  const table = model.table('shift', institution)!;
  const indexes = ['start', 'end', 'created', 'updated', 'spots'].map((name) => table.index(name));
  t.ok(indexes.every((index) => !index.hasSpare), 'none before the server serves');
  const background = workInBackground(model, () => true, 4, 5);
  const smallBackground = workInBackground(small, () => true, 4, 5);
  t.teardown(() => (background.stop(), smallBackground.stop()));
  await until(() => (indexes.every((index) => index.hasSpare) ? true : undefined), 2000);
  t.pass('every index of the big table has its memory, with no change made');
  t.ok(['start', 'end'].every((name) => !small.table('shift', institution)!.index(name).hasSpare), 'a small table (changed when read) gets none');
  const replaced = indexes.map((index) => index.order);
  model.apply(put('shift', shift(200)));
  await until(() => (model.stale(institution) ? undefined : true), 2000);
  t.ok(indexes.every((index, i) => index.order !== replaced[i] && index.hasSpare), 'published: each index in its new order, the one replaced kept for the next');
  t.equal(indexes[0]!.size, 201, 'the new shift is in');
  // The memory made ahead is as long as the order it was made beside; one allocated at the publication would be as
  // long as a new order of 201 rows (capacityFor), which differs.
  t.ok(replaced.every((order) => order.length !== capacityFor(201)), 'the two lengths differ (so the next check tells them apart)');
  t.same(indexes.map((index) => index.order.length), replaced.map((order) => order.length), 'each new order made in the memory made ahead, none allocated at the publication');
});
