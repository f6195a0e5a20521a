/**
 * Each way to a page against a brute-force sort, on its own (the engine
 * picks one by cost, so small data would meet some of them seldom): random
 * shifts with many ties, a random set of opportunities and a date range as
 * constraints, every ordering of shifts, ascending and descending, any page.
 * The selection across blocks each in the order, the rank matrix's k-th
 * positions in the order, the sort of rows by their positions in it and the
 * walk of the order testing each row must all give the rows a sort of the
 * matches gives.
 */
import fc from 'fast-check';
import t from 'tap';
import { put } from '../projections/projection.js';
import type { ShiftRecord } from '../projections/records.js';
import { type Candidate, candidatesOf, inOrder } from '../src/query/candidates.js';
import { checkOf, type Constraint } from '../src/query/constraints.js';
import { rankPage, rowsOf, selectAcross, sortedPage, walkNearer, walkPage } from '../src/query/pages.js';
import { inBlock, inCodes, PositionTest } from '../src/query/along.js';
import { rowTest } from '../src/query/row-bits.js';
import { bitsFor, RankMatrix } from '../src/readmodel/rank-matrix.js';
import { ReadModel } from '../src/readmodel/model.js';
import { OrderRanks } from '../src/readmodel/order-ranks.js';
import { SortedIndex, ZONE_ALL, ZONE_NONE } from '../src/readmodel/sorted-index.js';
import { searchSchema } from '../src/query/schema.js';
import { search } from '../src/query/engine.js';
import { tableDefs } from '../src/resources/index.js';
import { shifts } from '../src/resources/shifts.js';
import { MICROS_PER_DAY } from '../src/time.js';

const INSTITUTION = '00000000-0000-4000-8000-000000000001';
const opportunity = (n: number) => `10000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

const shiftArb = fc.record({
  opportunity: fc.integer({ min: 0, max: 5 }),
  day: fc.integer({ min: 0, max: 6 }),
  hour: fc.integer({ min: 0, max: 3 }),
  created: fc.integer({ min: 0, max: 3 }),
  spots: fc.integer({ min: 1, max: 4 }),
  length: fc.integer({ min: 1, max: 3 }),
});

const shiftOf = (s: typeof shiftArb extends fc.Arbitrary<infer T> ? T : never, i: number): ShiftRecord => {
  const start = (20_500 + s.day) * MICROS_PER_DAY + s.hour * 3_600_000_000;
  return {
    id: `5${String(i).padStart(7, '0')}-0000-4000-8000-000000000000`,
    institution_id: INSTITUTION,
    opportunity_id: opportunity(s.opportunity),
    title: 'Shift',
    description: null,
    shift_start_at: start,
    shift_end_at: start + s.length * 3_600_000_000,
    spots: s.spots,
    location: '',
    spots_reserved: 0,
    removed: false,
    created_at: s.created * 60_000_000,
    updated_at: s.created * 60_000_000,
  };
};

t.test('every way to a page gives the rows of a sort of the matches', async (t) => {
  let each = 0;
  let compared = 0;
  fc.assert(
    fc.property(
      fc.array(shiftArb, { minLength: 1, maxLength: 300 }),
      fc.subarray([0, 1, 2, 3, 4, 5], { minLength: 1 }),
      fc.tuple(fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: 7 })),
      fc.constantFrom(...Object.keys(shifts.orderings)),
      fc.integer({ min: 1, max: 12 }),
      fc.nat(),
      (seeds, opportunities, [d0, d1], ordering, limit, at) => {
        const model = new ReadModel(tableDefs);
        seeds.forEach((seed, i) => model.apply(put('shift', shiftOf(seed, i))));
        model.flush();
        const table = model.table('shift', INSTITUTION)!;
        const { index, descending } = shifts.orderings[ordering]!;
        const order = table.index(index);
        const codes = opportunities.flatMap((n) => table.code('opportunity', opportunity(n)) ?? []).sort((a, b) => a - b);
        const days: Constraint = { kind: 'range', column: 'start', lo: (20_500 + Math.min(d0, d1)) * MICROS_PER_DAY, hi: (20_500 + Math.max(d0, d1)) * MICROS_PER_DAY };
        const constraints: Constraint[] = [{ kind: 'codes', column: 'opportunity', codes }, days];
        const check = checkOf(table, constraints);
        const ranks = order.ranks();
        // The model reads the columns itself, not through the check under test.
        const inDays = (row: number) => table.column('start')[row]! >= days.lo && table.column('start')[row]! < days.hi;
        const matches = [...table.liveRows()]
          .filter((row) => codes.includes(table.column('opportunity')[row]!) && inDays(row))
          .sort((a, b) => ranks[a]! - ranks[b]!);
        if (descending) matches.reverse();
        const offset = matches.length === 0 ? 0 : at % matches.length;
        const expected = matches.slice(offset, offset + limit);

        const candidates = candidatesOf(table, constraints, order);
        // The row test with its constraints marked in bitsets (as for a walk of very many rows) passes exactly the matches.
        const marked = rowTest(table, constraints, candidates, Infinity);
        const passing = [...table.liveRows()].filter((row) => marked(row)).sort((a, b) => ranks[a]! - ranks[b]!);
        if (descending) passing.reverse();
        if (passing.join() !== matches.join()) throw new Error(`marked rows: ${passing.join()} expected ${matches.join()}`);
        // The same for a walk of the days whose rows are known to be in them: the test of the codes alone may mark a
        // candidate that covers both.
        const [codesOnly] = constraints;
        const ofDays = rowTest(table, [codesOnly!], candidates, Infinity, new Set([days]));
        const walked = [...table.liveRows()].filter((row) => inDays(row) && ofDays(row)).sort((a, b) => ranks[a]! - ranks[b]!);
        if (descending) walked.reverse();
        if (walked.join() !== matches.join()) throw new Error(`marked rows within the days: ${walked.join()} expected ${matches.join()}`);
        // Without the days known, only what covers the codes alone may be marked: every row of those opportunities passes.
        const ofCodes = rowTest(table, [codesOnly!], candidates, Infinity);
        const withCodes = [...table.liveRows()].filter((row) => codes.includes(table.column('opportunity')[row]!));
        if (withCodes.some((row) => !ofCodes(row)) || [...table.liveRows()].filter((row) => ofCodes(row)).length !== withCodes.length) {
          throw new Error('the codes alone, marked, do not pass exactly the rows of those opportunities');
        }
        const exact = candidates.filter((c) => c.covers.size === constraints.length);
        const byOpportunity = exact.find((c) => c.index.def.name === 'opportunity') as Candidate;
        if (byOpportunity.size !== matches.length) throw new Error(`candidate of ${byOpportunity.size} rows, ${matches.length} match`);
        const whole: Candidate = { index: order, blocks: [0, order.size], size: order.size, covers: new Set(), fixed: 0 };
        const positions = Uint32Array.from(byOpportunity.index.order.subarray(0, byOpportunity.index.size), (row) => ranks[row]!);
        const matrix = RankMatrix.of(positions, bitsFor(order.size));
        // A walk reads the order up to the page's last row (all of it when the page is not full), and gives up past its budget.
        const last = expected.at(-1);
        const read = expected.length === limit && last !== undefined ? (descending ? order.size - ranks[last]! : ranks[last]! + 1) : order.size;
        if (walkPage(whole, check, descending, offset, limit, read - 1) !== undefined) throw new Error(`a walk of ${read} rows kept to ${read - 1}`);
        const pages: Array<[string, number[] | undefined]> = [
          ['sort', sortedPage(order, rowsOf(byOpportunity), matches.length, descending, offset, limit)],
          ['walk', walkPage(whole, check, descending, offset, limit)],
          ['walk within its budget', walkPage(whole, check, descending, offset, limit, read)],
          ['walk from the nearer end', walkNearer(whole, check, descending, offset, limit, matches.length)],
          ['rank matrix', rankPage((k) => matrix.kth(byOpportunity.blocks, k), matches.length, order, check, descending, offset, limit)],
        ];
        if (matches.length > 0 && inOrder(byOpportunity, order) !== false) {
          each++;
          pages.push(['selection across blocks', selectAcross(byOpportunity, order, descending, offset, limit)]);
          pages.push(['selection across blocks by search', selectAcross(byOpportunity, order, descending, offset, limit, 'search')]);
          pages.push(['selection across blocks by merging from the nearer end', selectAcross(byOpportunity, order, descending, offset, limit, 'merge')]);
        }
        for (const [name, page] of pages) {
          if (page?.join() !== expected.join()) throw new Error(`${name} (${ordering}, offset ${offset}): ${page?.join()} expected ${expected.join()}`);
          compared++;
        }
      },
    ),
    { numRuns: 400, seed: 11 },
  );
  t.ok(each > 30, `${each} selections across blocks each in start order`);
  t.ok(compared > 1000, `${compared} pages compared`);
});

t.test('a walk whose matches lie far from where it starts: zone maps skip to them; without, it gives up and has a rank matrix made for next time', async (t) => {
  const saved = { quiet: OrderRanks.quietMs, after: SortedIndex.zoneAfter };
  t.teardown(() => {
    OrderRanks.quietMs = saved.quiet;
    SortedIndex.zoneAfter = saved.after;
  });
  OrderRanks.quietMs = 0;
  // Shifts an hour long, one starting every hour: start order and end order agree, and the last quarter starts latest.
  const n = 4000;
  const hour = 3_600_000_000;
  const first = 20_500 * MICROS_PER_DAY;
  const model = new ReadModel(tableDefs);
  for (let i = 0; i < n; i++) {
    const id = `6${String(i).padStart(7, '0')}-0000-4000-8000-000000000000`;
    const start = first + i * hour;
    model.apply(put('shift', { ...shiftOf({ opportunity: 0, day: 0, hour: 0, created: 0, spots: 1, length: 1 }, i), id, shift_start_at: start, shift_end_at: start + hour }));
  }
  model.flush();
  const table = model.table('shift', INSTITUTION)!;
  const from = new Date((first + 3000 * hour) / 1000).toISOString();
  const query = searchSchema(shifts).parse({ 'shift_start_at.gte': from, ordering: 'shift_end_at', page: '2', limit: '10' });
  const expected = Array.from({ length: 10 }, (_, k) => `6${String(3010 + k).padStart(7, '0')}-0000-4000-8000-000000000000`);
  const ask = () => {
    const result = search(table, query, 10, 10, model);
    t.same(result.rows.map((row) => table.idOf(row)), expected, 'the page');
    t.equal(result.count, 1000, 'the count');
    return result.plan;
  };
  // A walk of end order expects the matches spread over it (80 rows to read), reads past four times that, wants the
  // matrix of start order by end order, and gives up for a sort of the matches.
  SortedIndex.zoneAfter = Infinity;
  t.equal(ask(), 'sort (after walk)', 'the walk gave up');
  table.ranks.work(Infinity);
  t.ok(table.ranks.peek(table.index('start'), table.index('end')), 'and wanted the rank matrix, now made');
  t.equal(ask(), 'rank (after walk)', 'the same search again falls back on the matrix');
  // With zone maps the walk passes over the zones before the matches and answers itself: once they are made, in the
  // background, after the walk that asked for them.
  SortedIndex.zoneAfter = 0;
  t.equal(ask(), 'rank (after walk)', 'the walk that wants zone maps has none yet');
  t.ok(table.index('end').wantsZoneMaps, 'and wants them made');
  model.makeZoneMaps(Infinity);
  t.notOk(table.index('end').wantsZoneMaps, 'made');
  t.equal(ask(), 'walk', 'zones skipped');
});

t.test('a test by stored values (a walk, a scan) passes over and takes exactly the positions whose values are in their blocks or sets of codes', async (t) => {
  let compared = 0;
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 300 }).chain((n) =>
        fc.record({
          n: fc.constant(n),
          values: fc.array(fc.array(fc.nat({ max: n - 1 }), { minLength: n, maxLength: n }), { minLength: 1, maxLength: 2 }),
          // Each slot a block of values [a, b), or a set of codes.
          blocks: fc.array(
            fc.oneof(
              fc.tuple(fc.nat({ max: n }), fc.nat({ max: n })).map((block) => ({ block })),
              fc.uniqueArray(fc.nat({ max: n + 2 }), { minLength: 1, maxLength: 6 }).map((codes) => ({ codes })),
            ),
            { minLength: 2, maxLength: 2 },
          ),
          ends: fc.tuple(fc.nat({ max: n }), fc.nat({ max: n })),
          descending: fc.boolean(),
          skip: fc.integer({ min: -3, max: n }),
          take: fc.integer({ min: 1, max: n }),
          budget: fc.oneof(fc.constant(Infinity), fc.double({ min: 0, max: n, noNaN: true })),
        }),
      ),
      ({ n, values, blocks, ends, descending, skip, take, budget }) => {
        const rows = Uint32Array.from({ length: n }, (_, p) => (p * 7919) % 100_003);
        const spec = values.map((v, i) => {
          const slot = blocks[i]!;
          const stored = Uint32Array.from(v);
          if ('block' in slot) {
            const [from, to] = [Math.min(...slot.block), Math.max(...slot.block)];
            return { slot: inBlock(stored, from, to), stored, test: (value: number) => value >= from && value < to };
          }
          const codes = [...slot.codes].sort((a, b) => a - b);
          return { slot: inCodes(stored, codes), stored, test: (value: number) => codes.includes(value) };
        });
        const test = new PositionTest(spec.map((s) => s.slot));
        const passes = (p: number) => spec.every((s) => s.test(s.stored[p]!));
        // A walk of [lo, hi) up, or down from hi - 1 (as walks read a block), within the budget.
        const [lo, hi] = [Math.min(...ends), Math.max(...ends)];
        const [from, to] = descending ? [hi - 1, lo - 1] : [lo, hi];
        const step = descending ? -1 : 1;
        const reach = Math.min(Math.abs(to - from), Math.floor(budget));
        const expected: number[] = [];
        let passed = 0;
        let read = 0;
        for (let p = from; read < reach && expected.length < take; p += step, read++) {
          if (passes(p) && passed++ >= skip) expected.push(rows[p]!);
        }
        const page: number[] = [];
        const walked = test.walk(rows, from, to, skip, take, page, budget);
        if (page.join() !== expected.join() || walked.passed !== passed || walked.read !== read) {
          throw new Error(`walk: ${JSON.stringify({ page, walked })}, expected ${JSON.stringify({ expected, passed, read })}`);
        }
        // A scan of [lo, hi): the count, and the rows of the first `max` into `out` after `at`.
        const max = Math.min(take, n);
        const at = Math.min(2, max);
        const out = new Uint32Array(max + 1).fill(1);
        const count = test.scan(rows, lo, hi, out, at, max);
        const all: number[] = [];
        for (let p = lo; p < hi; p++) if (passes(p)) all.push(rows[p]!);
        const kept = Array.from(out.subarray(at, Math.min(at + count, max)));
        if (count !== all.length || kept.join() !== all.slice(0, max - at).join()) {
          throw new Error(`scan: ${count} ${kept.join()}, expected ${all.length} ${all.slice(0, max - at).join()}`);
        }
        compared++;
      },
    ),
    { numRuns: 1000 },
  );
  t.equal(compared, 1000, 'walks and scans compared with a brute force');
});

t.test('a walk passes over a zone none of whose rows pass, before its page or within it, by either test', async (t) => {
  const saved = SortedIndex.zoneRows;
  t.teardown(() => {
    SortedIndex.zoneRows = saved;
  });
  SortedIndex.zoneRows = 4;
  // 32 positions in 8 zones of 4: the rows of the first and last zones pass, none of the six between.
  const n = 32;
  const passing = (p: number) => p < 4 || p >= 28;
  const walk = { index: { order: Uint32Array.from({ length: n }, (_, p) => p) }, blocks: [0, n] } as unknown as Candidate;
  const zones = (p: number) => (passing(p) ? ZONE_ALL : ZONE_NONE);
  const byRows = (row: number) => passing(row);
  const byPositions = new PositionTest([inCodes(Uint32Array.from({ length: n }, (_, p) => (passing(p) ? 1 : 0)), [1])]);
  for (const [name, check] of [['rows tested', byRows], ['positions tested', byPositions]] as const) {
    // The page starts in the first zone and ends in the last: six rows read (the first zone's four, then two), not 30.
    t.same(walkPage(walk, check, false, 2, 4, 6, zones), [2, 3, 28, 29], `${name}: ascending, within a budget of 6 rows`);
    t.same(walkPage(walk, check, true, 2, 4, 6, zones), [29, 28, 3, 2], `${name}: descending`);
    t.equal(walkPage(walk, check, false, 2, 4, 5, zones), undefined, `${name}: a budget of 5 is too short`);
  }
});
