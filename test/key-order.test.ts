/**
 * Stream entries in the order of their keys: the radix sort an import's stream entries are put in gives the order a
 * comparison of names gives, and says when it is exact.
 */
import fc from 'fast-check';
import t from 'tap';
import { compareKeys, inKeyOrder, type Keyed } from '../src/eventstore/key-order.js';

/** Names as the log's streams are (a kind, '-', an id), and others: no dash, alike in their first characters, non-ASCII, control characters, empty. */
const name = fc.oneof(
  fc.tuple(fc.constantFrom('shift', 'reservation', 'site', 'a', 'shift2', ''), fc.uuid()).map(([kind, id]) => `${kind}-${id}`),
  fc.tuple(fc.constantFrom('shift-000000', 'shift-00000', 'x-'), fc.string({ maxLength: 4 })).map(([start, end]) => start + end),
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constantFrom('x-\u{1F600}', 'x-\uE000', 'x-\u0001', 'shift', 'shift-', ''),
);
const entries = (minLength: number) => fc.array(fc.record({ stream: name, revision: fc.nat(3) }), { minLength, maxLength: minLength + 700 });

const distinct = (list: Keyed[]) => [...new Map(list.map((e) => [JSON.stringify([e.stream, e.revision]), e])).values()];

t.test('exact: the order of a comparison of names, each key after the one before; else near it, and every entry once', async (t) => {
  for (const minLength of [0, 600]) {
    fc.assert(
      fc.property(entries(minLength), fc.boolean(), (generated, unique) => {
        const list = unique ? distinct(generated) : generated;
        const { ordered, exact } = inKeyOrder(list);
        const sorted = [...list].sort(compareKeys);
        if (ordered.length !== list.length || !list.every((e) => ordered.includes(e))) return false;
        // Distinct keys, and no run of 4,096 alike: always exact.
        if (unique && !exact) return false;
        return !exact || ordered.every((e, i) => compareKeys(e, sorted[i]!) === 0 && (i === 0 || compareKeys(ordered[i - 1]!, e) < 0));
      }),
      { numRuns: minLength === 0 ? 300 : 60, endOnFailure: true },
    );
  }
  t.pass('checked against a comparison sort');
});

t.test('a key twice, or thousands of names alike in their first characters: only near the order, said so', async (t) => {
  const many = Array.from({ length: 1_000 }, (_, i) => ({ stream: `shift-${i.toString(16).padStart(8, '0')}`, revision: 0 }));
  t.equal(inKeyOrder([...many, many[500]!]).exact, false, 'a key twice');
  const alike = Array.from({ length: 5_000 }, (_, i) => ({ stream: `shift-abcdef${String(4_999 - i).padStart(5, '0')}`, revision: 0 }));
  const { ordered, exact } = inKeyOrder(alike);
  t.equal(exact, false, '5,000 names alike in their first six characters after the kind');
  t.equal(new Set(ordered).size, alike.length, 'each entry once');
  t.equal(inKeyOrder(alike.slice(0, 4_000)).exact, true, '4,000 alike: sorted by whole names');
});
