/**
 * The change feed's LMDB keys and values (src/readmodel/feed-codec.ts):
 * keys in byte order are blocks by institution, then in log order (across
 * 2^32 and up to 2^53); a block gives back what was put in; and the feed on
 * disk, written in blocks however its batches fall, reads as a brute force
 * over its entries does.
 */
import fc from 'fast-check';
import t from 'tap';
import { eventSchemas, type EventType } from '../src/events/catalog.js';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { FeedEntry } from '../src/readmodel/change-feed.js';
import { BLOCK_ENTRIES, decodeFeedBlock, feedBlock, feedEnd, feedKey, feedStart } from '../src/readmodel/feed-codec.js';
import { ReadModelStore } from '../src/readmodel/persistence.js';
import { tempDir } from './helpers.js';

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
      // Every key of an institution is after its start and before its end.
      if (Buffer.compare(ka, feedEnd(a.code)) >= 0 || Buffer.compare(ka, feedStart(a.code)) <= 0) throw new Error(`bounds of ${a.code}`);
    }),
    { numRuns: 2000 },
  );
});

t.test('a block gives back its entries: positions, ids, times and types', async (t) => {
  const types = Object.keys(eventSchemas) as EventType[];
  const item = fc.record({ commit: position, prepare: position, id: fc.uuid(), occurredAt: fc.integer({ min: 0, max: 4_000_000_000_000_000 }), type: fc.constantFrom(...types) });
  fc.assert(
    fc.property(fc.array(item, { minLength: 1, maxLength: 40 }), (entries) => {
      t.same(decodeFeedBlock(feedBlock(entries)), entries);
    }),
    { numRuns: 300 },
  );
});

t.test('the feed on disk reads as its entries do, wherever its blocks begin and end', async (t) => {
  const seed = Number(process.env.SEED ?? Date.now() % 1e9);
  let s = seed;
  const rnd = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const temp = tempDir('vm-feed-');
  t.teardown(temp.remove);
  const disk = ReadModelStore.open(join(temp.dir, 'readmodel'));
  t.teardown(() => disk.close());
  const institutions = [randomUUID(), randomUUID(), randomUUID()];
  const all: FeedEntry[] = [];
  // Batches of every size (some over a block), institutions interleaved, through both ways the feed is written.
  let commit = 0;
  for (let batch = 0; batch < 40; batch++) {
    const size = batch % 7 === 0 ? BLOCK_ENTRIES * 2 + 3 : Math.floor(rnd() * 60);
    const entries: FeedEntry[] = [];
    for (let i = 0; i < size; i++) {
      commit += 1 + Math.floor(rnd() * 3);
      entries.push({ institution: institutions[Math.floor(rnd() * (batch < 5 ? 1 : 3))]!, commit, prepare: commit, type: 'ShiftCreated', id: randomUUID(), occurredAt: commit * 1000 });
    }
    if (batch % 2 === 0) await disk.appendFeed(entries);
    else await disk.write([], entries, { commit: BigInt(commit), prepare: BigInt(commit) });
    all.push(...entries);
  }
  let wrong = 0;
  let asked = 0;
  for (const institution of institutions) {
    const own = all.filter((e) => e.institution === institution);
    const afters = [undefined, ...own.map((e) => ({ commit: e.commit, prepare: e.prepare })), { commit: 0, prepare: 0 }, { commit: commit + 5, prepare: 0 }];
    for (const after of afters) {
      // Also a position between two entries (not itself an entry).
      for (const shifted of after === undefined ? [after] : [after, { commit: after.commit + 0.5, prepare: 0 }]) {
        const limit = 1 + Math.floor(rnd() * 300);
        const expected = own.filter((e) => shifted === undefined || e.commit > shifted.commit || (e.commit === shifted.commit && e.prepare > shifted.prepare)).slice(0, limit);
        asked++;
        if (!isDeepStrictEqual(disk.feedAfter(institution, shifted, limit), expected)) wrong++;
      }
    }
  }
  t.equal(wrong, 0, `${asked} pages, each as a brute force gives it (seed ${seed})`);
  t.same(disk.feedAfter(randomUUID(), undefined, 10), [], 'an institution with no entries has none');
});
