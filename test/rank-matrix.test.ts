/**
 * The wavelet matrix against a sort: random sequences (many repeats, or
 * every value once as positions are), random blocks of positions, every k:
 * the k-th smallest value in the blocks is the k-th of their values sorted,
 * sequences long enough for many of a level's blocks included,
 * and the count of values below any value is that of the sort, whether a
 * level is built in one step or in many. And when a
 * table makes its matrices (OrderRanks).
 */
import fc from 'fast-check';
import t from 'tap';
import type { Test } from 'tap';
import { DEFAULT_RANK_MATRIX_BUDGET, OrderRanks, RankMatrixBudget, rankMatrices } from '../src/readmodel/order-ranks.js';
import { bitsFor, RankMatrix, RankMatrixBuilder } from '../src/readmodel/rank-matrix.js';
import { SortedIndex } from '../src/readmodel/sorted-index.js';

for (const stepValues of [RankMatrixBuilder.stepValues, 7]) t.test(`the k-th smallest value of any blocks is that of a sort of their values (built ${stepValues} values a step)`, async (t) => {
  const saved = RankMatrixBuilder.stepValues;
  RankMatrixBuilder.stepValues = stepValues;
  t.teardown(() => void (RankMatrixBuilder.stepValues = saved));
  let compared = 0;
  fc.assert(
    fc.property(
      fc.oneof(
        fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 1, max: 300 }).chain((n) => fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n })),
        // Past a level's blocks of 224 positions: the counts kept per block, and the bits in the words after each.
        fc.integer({ min: 470, max: 2_000 }).chain((n) => fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n })),
      ),
      fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 6 }),
      (values, cuts) => {
        const n = values.length;
        const max = Math.max(...values);
        const matrix = RankMatrix.of(Uint32Array.from(values), bitsFor(max));
        // Disjoint, ascending blocks.
        const edges = [...new Set(cuts.flatMap(([a, b]) => [a % (n + 1), b % (n + 1)]))].sort((a, b) => a - b);
        const blocks: number[] = [];
        for (let i = 0; i + 1 < edges.length; i += 2) blocks.push(edges[i]!, edges[i + 1]!);
        const inBlocks = blocks.length === 0 ? [] : blocks.flatMap((_, i) => (i % 2 === 0 ? values.slice(blocks[i], blocks[i + 1]) : [])).sort((a, b) => a - b);
        for (let v = -1; v <= max + 1; v++) {
          const below = matrix.countBelow(blocks, v);
          const expected = inBlocks.filter((x) => x < v).length;
          if (below !== expected) throw new Error(`blocks ${blocks.join(',')}: ${below} values below ${v}, expected ${expected}`);
        }
        for (let k = 0; k < inBlocks.length; k++) {
          const got = matrix.kth(blocks, k);
          if (got !== inBlocks[k]) throw new Error(`blocks ${blocks.join(',')} k ${k}: ${got}, expected ${inBlocks[k]}`);
          compared++;
        }
      },
    ),
    { numRuns: 500 },
  );
  t.ok(compared > 5000, `${compared} k-th values compared`);
});

/** Rows 0…n-1 with a = row and b = row × step mod n: an index by a (`from`) and one by b (`order`), (re)filled by `reorder`. */
function twoIndexes(n: number, step: number) {
  const values = { a: Float64Array.from({ length: n }, (_, i) => i), b: Float64Array.from({ length: n }, (_, i) => (i * step) % n) };
  const source = { column: (name: string) => values[name as 'a' | 'b'], idOf: (row: number) => String(row).padStart(3, '0') };
  const from = new SortedIndex({ name: 'a', keys: ['a'] }, source);
  const order = new SortedIndex({ name: 'b', keys: ['b'] }, source);
  const rows = Uint32Array.from({ length: n }, (_, i) => i);
  const reorder = () => {
    from.restore(rows);
    order.restore(Uint32Array.from(rows).sort((x, y) => values.b[x]! - values.b[y]!));
  };
  return { from, order, reorder };
}

/** OrderRanks.quietMs at `ms` for the test's length. */
function quietFor(t: Test, ms: number): void {
  const saved = OrderRanks.quietMs;
  OrderRanks.quietMs = ms;
  t.teardown(() => void (OrderRanks.quietMs = saved));
}

t.test("a table's matrices: made once it is quiet, and after each thrown away unused it must be quiet twice as long", async (t) => {
  quietFor(t, 200);
  const { from, order, reorder } = twoIndexes(64, 37);
  const ranks = new OrderRanks();
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** Whether the matrix is made by work done `afterMs` after a change. */
  const madeAfter = async (afterMs: number) => {
    reorder();
    ranks.changed(64);
    t.equal(ranks.get(from, order), undefined, 'stale after the change: wanted again');
    await sleep(afterMs);
    ranks.work(Infinity);
    return ranks.get(from, order) !== undefined;
  };
  t.equal(ranks.get(from, order), undefined, 'wanted by a search');
  t.ok(await madeAfter(300), 'made once the table was quiet for 200 ms');
  // Stale before it served: the next must wait 400 ms, then 800 ms.
  t.notOk(await madeAfter(300), 'thrown away unused: 300 ms of quiet is no longer enough');
  await sleep(200);
  ranks.work(Infinity);
  t.ok(ranks.get(from, order), 'made after 400 ms');
  t.notOk(await madeAfter(600), 'thrown away unused again: 600 ms is not enough either');
  await sleep(300);
  ranks.work(Infinity);
  t.ok(ranks.get(from, order), 'made after 800 ms');
  for (let i = 0; i < 16; i++) ranks.get(from, order);
  t.ok(await madeAfter(300), 'one that served searches puts the quiet back to 200 ms');
});

t.test("a table's matrices: peek neither makes nor wants one; want has it made once the table is quiet", async (t) => {
  quietFor(t, 0);
  const n = 32;
  const { from, order, reorder } = twoIndexes(n, 7);
  reorder();
  const ranks = new OrderRanks();
  t.equal(ranks.peek(from, order), undefined, 'not made');
  t.equal(ranks.work(Infinity), false, 'and a peek wanted nothing');
  ranks.want(from, order);
  ranks.work(Infinity);
  const matrix = ranks.peek(from, order);
  t.ok(matrix, 'wanted, then made');
  t.equal(matrix?.kth([0, n], 0), 0, 'the first row of the selection is at position 0 of the order');
  ranks.want(order, from);
  ranks.work(Infinity);
  t.ok(ranks.peek(order, from) && ranks.bytes > 0, 'a second matrix, of the pair the other way round');
  ranks.changed(n);
  t.equal(ranks.bytes, 0, 'a change lets go of every matrix at once, asked for again or not');
});

t.test("a table's positions of one index in another, and codes of a column in an index's order: wanted by asking, made a piece at a time once quiet, stale after a change", async (t) => {
  quietFor(t, 0);
  const stepValues = RankMatrixBuilder.stepValues;
  RankMatrixBuilder.stepValues = 5;
  t.teardown(() => void (RankMatrixBuilder.stepValues = stepValues));
  const n = 50;
  const { from, order, reorder } = twoIndexes(n, 7);
  reorder();
  const ranks = new OrderRanks();
  t.equal(ranks.positions(from, order), undefined, 'not made: wanted');
  t.equal(ranks.work(performance.now() - 1), true, 'a deadline already past makes nothing, and there is more to do');
  ranks.work(Infinity);
  const positions = ranks.positions(from, order);
  const ranksOfOrder = order.ranks();
  t.same(
    Array.from(positions ?? []),
    Array.from(from.order.subarray(0, n), (row) => ranksOfOrder[row]),
    "made: each of from's rows, in from's order, at its position in the order",
  );
  t.equal(ranks.bytes, 4 * n, 'counted in the bytes the table holds (4 a row)');
  t.equal(ranks.peek(from, order), undefined, 'a rank matrix of the same pair is another thing, not made');
  // A column's codes in from's order: the column is asked for when they are made.
  let column = Float64Array.from({ length: n }, (_, row) => row % 5);
  t.equal(ranks.values(from, 'c', () => column), undefined, "a column's codes: not made, wanted");
  column = Float64Array.from({ length: n }, (_, row) => (row * 3) % 7);
  ranks.work(Infinity);
  t.same(
    Array.from(ranks.values(from, 'c', () => column) ?? []),
    Array.from(from.order.subarray(0, n), (row) => column[row]),
    "made from the column as it was when the making started: each of from's rows' code, in from's order",
  );
  t.equal(ranks.bytes, 8 * n, 'counted too');
  reorder();
  ranks.changed(n);
  t.equal(ranks.bytes, 0, 'a change lets go of them');
  t.equal(ranks.positions(from, order), undefined, 'and they are wanted again');
  t.equal(ranks.values(from, 'c', () => column), undefined, 'the codes too');
});

/** The k-th smallest position in `order` of the rows at positions lo to hi of `from`, for every k, as a sort has them. */
function checkMatrix(t: Test, from: SortedIndex, order: SortedIndex, matrix: RankMatrix, what: string): void {
  const positionIn = new Map([...order.order.subarray(0, order.size)].map((row, p) => [row, p]));
  const n = from.size;
  for (const [lo, hi] of [[0, n], [1, n - 1], [n >> 2, (3 * n) >> 2]] as const) {
    const expected = [...from.order.subarray(lo, hi)].map((row) => positionIn.get(row)!).sort((a, b) => a - b);
    const got = expected.map((_, k) => matrix.kth([lo, hi], k));
    t.same(got, expected, `${what}: positions ${lo} to ${hi}`);
  }
}

t.test("a table's matrices, each built in the memory of the last: every one that of its indexes", async (t) => {
  quietFor(t, 0);
  const ranks = new OrderRanks();
  // Smaller and larger than the memory the first was built in.
  for (const [n, step] of [[64, 37], [30, 7], [100, 13], [17, 5]] as const) {
    const { from, order, reorder } = twoIndexes(n, step);
    reorder();
    // (The same index names each time: a table whose indexes changed.)
    ranks.changed(n);
    ranks.want(from, order);
    ranks.want(order, from);
    ranks.work(Infinity);
    // (Both are built by that one work, a by b first: it is checked after b by a was built in the same scratch.)
    checkMatrix(t, from, order, ranks.peek(from, order)!, `${n} rows, a by b`);
    checkMatrix(t, order, from, ranks.peek(order, from)!, `${n} rows, b by a`);
  }
});

t.test("what a change made stale is made again in its memory, and right: positions and matrices; that memory let go of once nothing is wanted", async (t) => {
  quietFor(t, 0);
  const ranks = new OrderRanks();
  /** Positions of from's rows in the order and the matrix of from by the order, made from scratch, checked, and their arrays. */
  const made = (step: number, n = 70) => {
    const { from, order, reorder } = twoIndexes(n, step);
    reorder();
    ranks.changed(n);
    ranks.positions(from, order);
    ranks.want(from, order);
    ranks.work(Infinity);
    const positions = ranks.positions(from, order)!;
    const ranksOfOrder = order.ranks();
    t.same(Array.from(positions), Array.from(from.order.subarray(0, n), (row) => ranksOfOrder[row]), `step ${step}: the positions`);
    const matrix = ranks.peek(from, order)!;
    checkMatrix(t, from, order, matrix, `step ${step}: the matrix`);
    return [positions, ...matrix.arrays()];
  };
  const first = made(37);
  // Other orders of the same indexes (a change): what is made again takes the arrays the change let go of, whatever
  // they held (a matrix's bits from the last one among them).
  const second = made(11);
  t.ok(second.every((array) => first.includes(array)), 'made again in the arrays the change let go of');
  const third = made(13);
  t.ok(third.every((array) => second.includes(array)), 'and again');
  // Nothing wanted: the arrays a change lets go of are let go of for good at the next work.
  ranks.changed(70);
  t.equal(ranks.work(Infinity), false, 'nothing wanted');
  const fourth = made(37);
  t.ok(fourth.every((array) => !third.includes(array)), 'what is made after is made in new memory');
  // Only the last change's arrays are kept, and only if made for as many rows: a change to 1,000 rows keeps none of
  // those made for 70, and the change back none of those made for 1,000.
  made(11, 1_000);
  const sixth = made(13);
  t.ok(sixth.every((array) => !fourth.includes(array)), 'a change lets go of the spares an earlier change left');
  // A change to another number of rows lets go of them at once (a live import's first batch adds rows: kept, they were
  // held through the import beside what was made after it), even if what is made next has their length.
  const seventh = made(37);
  ranks.changed(71);
  const eighth = made(11);
  t.ok(eighth.every((array) => !seventh.includes(array)), 'a change to another number of rows keeps nothing for what is made next');
});

t.test('one budget for every matrix: the least recently used go first, the newest stays', async (t) => {
  const budget = new RankMatrixBudget(100);
  const gone: string[] = [];
  const matrix = (name: string, bytes: number) => {
    const m = { name };
    budget.add(m, bytes, () => gone.push(name));
    return m;
  };
  const a = matrix('a', 40);
  matrix('b', 40);
  t.equal(budget.bytes, 80);
  budget.used(a);
  matrix('c', 40);
  t.same(gone, ['b'], 'b, used less lately than a, went');
  t.equal(budget.bytes, 80);
  matrix('d', 150);
  t.same(gone, ['b', 'a', 'c'], 'the oldest first; the newest stays though larger than the budget');
  t.equal(budget.bytes, 150);
  budget.remove(a);
  t.equal(budget.bytes, 150, 'removing one already gone changes nothing');
});

t.test("a table's matrices within the process's budget: one let go of is made again when wanted", async (t) => {
  quietFor(t, 0);
  t.teardown(() => rankMatrices.setBudget(DEFAULT_RANK_MATRIX_BUDGET));
  const { from, order, reorder } = twoIndexes(4096, 11);
  reorder();
  const ranks = new OrderRanks();
  ranks.want(from, order);
  ranks.work(Infinity);
  const one = ranks.peek(from, order)!;
  t.ok(one);
  // Room for one matrix of this size only.
  rankMatrices.setBudget(one.bytes + 1);
  ranks.want(order, from);
  ranks.work(Infinity);
  t.ok(ranks.peek(order, from), 'the second matrix made');
  t.equal(ranks.peek(from, order), undefined, 'the first, least recently used, let go of');
  t.equal(ranks.bytes, one.bytes, 'the table holds one');
  t.equal(ranks.get(from, order), undefined, 'wanted again by a search');
  ranks.work(Infinity);
  t.ok(ranks.peek(from, order), 'and made again');
  t.equal(ranks.peek(order, from), undefined, 'which let go of the other');
});
