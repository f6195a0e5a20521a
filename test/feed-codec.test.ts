/**
 * The change feed's LMDB keys and values (src/readmodel/feed-codec.ts):
 * keys in byte order are entries by institution, then in log order (across
 * 2^32 and up to 2^53); values give back what was put in.
 */
import fc from 'fast-check';
import t from 'tap';
import { eventSchemas, type EventType } from '../src/events/catalog.js';
import { decodeFeedValue, feedEnd, feedKey, feedPositionOf, feedValue } from '../src/readmodel/feed-codec.js';

const position = fc.oneof(
  fc.integer({ min: 0, max: 2 ** 20 }),
  fc.constantFrom(2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, Number.MAX_SAFE_INTEGER),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
);
const entry = fc.record({ code: fc.integer({ min: 1, max: 2 ** 32 - 2 }), commit: position, prepare: position });
type Entry = { code: number; commit: number; prepare: number };
const tuple = (a: Entry, b: Entry) => a.code - b.code || a.commit - b.commit || a.prepare - b.prepare;

t.test('keys sort by institution, then commit, then prepare, and give their position back', async (t) => {
  fc.assert(
    fc.property(entry, entry, (a, b) => {
      const ka = feedKey(a.code, a);
      const kb = feedKey(b.code, b);
      const sign = (n: number) => Math.sign(n);
      if (sign(Buffer.compare(ka, kb)) !== sign(tuple(a, b))) throw new Error(`${JSON.stringify(a)} ${JSON.stringify(b)}`);
      t.same(feedPositionOf(ka), { commit: a.commit, prepare: a.prepare });
      // Every key of an institution is before its end, and after the previous institution's end.
      if (Buffer.compare(ka, feedEnd(a.code)) >= 0 || Buffer.compare(ka, feedEnd(a.code - 1)) < 0) throw new Error(`end of ${a.code}`);
    }),
    { numRuns: 2000 },
  );
});

t.test('values give back the id, the time and the type', async (t) => {
  const types = Object.keys(eventSchemas) as EventType[];
  fc.assert(
    fc.property(fc.uuid(), fc.integer({ min: 0, max: 4_000_000_000_000_000 }), fc.constantFrom(...types), (id, occurredAt, type) => {
      t.same(decodeFeedValue(feedValue({ id, occurredAt, type })), { id, occurredAt, type });
    }),
    { numRuns: 500 },
  );
});
