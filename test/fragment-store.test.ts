/**
 * The JSON fragments of a table's rows (src/readmodel/fragment-store.ts),
 * against a plain map of row → text: whatever rows are asked for, forgotten
 * or made again at a new stamp, a page's runs read back as its rows' JSON,
 * each followed by a comma; a fragment is made only when its row has none
 * at the stamp asked (or its chunk has left the arena); rows made together
 * come back as one run; the arena keeps to its budget, its oldest chunks
 * going first; a page's runs read back as they were made until fragments
 * are next asked for, and the chunks that left the arena are then written
 * again, not new memory.
 */
import fc from 'fast-check';
import t from 'tap';
import { FragmentArena, FragmentStore } from '../src/readmodel/fragment-store.js';

const small = { minChunk: 64, maxChunk: 512, budget: 1 << 30 };
/** A budget of 1 KB: the oldest chunks leave the arena whenever its chunks would hold more. */
const tight = { ...small, budget: 1024 };
const text = (row: number, version: number) => `{"row":${row},"v":${version},"pad":"${'é'.repeat(row % 7)}"}`;
const joined = (runs: readonly Buffer[]) => Buffer.concat(runs).toString('utf8');

t.test('rows made together are one run; each fragment is followed by a comma', async (t) => {
  const store = new FragmentStore(16);
  const runs = store.runs([3, 1, 2], 0, (row) => text(row, 0));
  t.equal(runs.length, 1, 'one run');
  t.equal(joined(runs), `${text(3, 0)},${text(1, 0)},${text(2, 0)},`);
  t.equal(store.runs([1, 2], 0, () => t.fail('made again') as never).length, 1, 'a later page of the same rows in the same order is one run');
  t.equal(store.runs([2, 3], 0, () => t.fail('made again') as never).length, 2, 'rows out of their stored order: a run each');
  t.equal(store.one(1, 0, () => 'unused').toString(), text(1, 0), 'one fragment, without its comma');
  t.same(store.runs([], 0, () => ''), [], 'no rows: no runs');
});

t.test('a new stamp or a forgotten row makes the JSON again; bytes handed out stay as they were', async (t) => {
  const store = new FragmentStore(4, new FragmentArena(small));
  const before = store.runs([0, 1], 1, (row) => text(row, 1));
  let made = 0;
  const after = store.runs([0, 1], 2, (row) => (made++, text(row, 2)));
  t.equal(made, 2, 'both made again at the new stamp');
  t.equal(joined(after), `${text(0, 2)},${text(1, 2)},`);
  t.equal(joined(before), `${text(0, 1)},${text(1, 1)},`, 'the earlier views still read the earlier JSON');
  store.forget(1);
  store.grow(8);
  t.equal(joined(store.runs([1, 5], 2, (row) => text(row, 3))), `${text(1, 3)},${text(5, 3)},`, 'a forgotten row and a row past the old capacity are made');
});

for (const [name, sizes] of [['a budget never reached', small], ['a budget of 1 KB', tight]] as const) t.test(`against a map of row → text, with ${name}`, async (t) => {
  const op = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        page: fc.uniqueArray(fc.integer({ min: 0, max: 15 }), { maxLength: 12 }),
        stamp: fc.integer({ min: 0, max: 3 }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ forget: fc.integer({ min: 0, max: 15 }) }) },
  );
  let evicted = 0;
  fc.assert(
    fc.property(fc.array(op, { minLength: 30, maxLength: 150 }), fc.integer({ min: 1, max: 3 }), (ops, tables) => {
      // Several tables' stores share one arena, as a process's tables do.
      const arena = new FragmentArena(sizes);
      const stores = Array.from({ length: tables }, () => new FragmentStore(64, arena));
      /** What each store should hold: per row, the stamp and text it was last made at. */
      const models = stores.map(() => new Map<number, { stamp: number; text: string }>());
      let version = 0;
      for (const [i, o] of ops.entries()) {
        const store = stores[i % tables]!;
        const model = models[i % tables]!;
        if ('forget' in o) {
          store.forget(o.forget);
          model.delete(o.forget);
          continue;
        }
        const due = o.page.filter((row) => model.get(row)?.stamp !== o.stamp);
        const oldest = arena.oldest;
        const made: number[] = [];
        const runs = store.runs(o.page, o.stamp, (row) => {
          made.push(row);
          const made_ = text(row, ++version);
          model.set(row, { stamp: o.stamp, text: made_ });
          return made_;
        });
        evicted += arena.oldest - oldest;
        // What is due is made, once, in page order; what is not due is made only when the arena has let its chunk go.
        if (!due.every((row) => made.includes(row)) || made.some((row, k) => !o.page.includes(row) || made.indexOf(row) !== k)) return false;
        if (sizes.budget === small.budget && made.join() !== due.join()) return false;
        if (made.join() !== o.page.filter((row) => made.includes(row)).join()) return false;
        // (Read back at once: the views are valid until fragments are next asked for.)
        if (joined(runs) !== o.page.map((row) => `${model.get(row)!.text},`).join('')) return false;
        if (arena.bytes > sizes.budget) return false;
      }
      return true;
    }),
    { numRuns: 300 },
  );
  if (sizes === tight) t.ok(evicted > 0, `${evicted} chunks left the arena along the way`);
  else t.equal(evicted, 0, 'no chunk left the arena');
});

t.test('chunks that leave the arena are written again from the next page on, and a page reads back whole meanwhile', async (t) => {
  const arena = new FragmentArena(tight);
  const store = new FragmentStore(64, arena);
  const memory = new Set<ArrayBufferLike>();
  const broken: number[] = [];
  let evicted = 0;
  for (let stamp = 0; stamp < 200; stamp++) {
    // Pages of 8 to 40 rows, made afresh: a page of 40 is more than the budget, so its own first chunks leave the
    // arena while it is made.
    const page = Array.from({ length: 8 + (stamp % 5) * 8 }, (_, k) => (stamp * 7 + k) % 64);
    const oldest = arena.oldest;
    const runs = store.runs(page, stamp, (row) => text(row, stamp));
    evicted += arena.oldest - oldest;
    if (joined(runs) !== page.map((row) => `${text(row, stamp)},`).join('')) broken.push(stamp);
    for (const run of runs) memory.add(run.buffer);
  }
  t.same(broken, [], 'every page reads back whole');
  t.ok(evicted > 100, `${evicted} chunks left the arena`);
  t.ok([...memory].every((buffer) => buffer instanceof ArrayBuffer), 'plain memory');
  // At the budget, two chunks of 512 bytes are held; a page of 40 rows lets go of four or five while it is made, and
  // those are written again from the next page on.
  const largest = [...memory].filter((buffer) => buffer.byteLength === tight.maxChunk);
  t.ok(largest.length <= 12, `the pages were written in ${largest.length} chunks of the largest size, not one per chunk added`);
});
