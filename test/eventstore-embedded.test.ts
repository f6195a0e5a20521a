/**
 * The embedded LMDB log against the event store contract. "Another
 * process" is a real child process opening the same LMDB environment.
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { open } from 'lmdb';
import t, { type Test } from 'tap';
import { EmbeddedEventStore } from '../src/eventstore/embedded.js';
import { LearningPacker, PackedData } from '../src/eventstore/packed-data.js';
import { startOfLog } from '../src/eventstore/port.js';
import { eventStoreContract } from './eventstore-contract.js';
import { BUILT_EMBEDDED_STORE, logBytes, putOffAndDie, tempDir, until } from './helpers.js';

const run = promisify(execFile);
const CHILD = `
const [path, stream, events] = process.argv.slice(1);
const { EmbeddedEventStore } = await import(${JSON.stringify(BUILT_EMBEDDED_STORE)});
const store = EmbeddedEventStore.open(path);
await store.append(stream, JSON.parse(events));
await store.close();
`;

let temp: ReturnType<typeof tempDir> | undefined;
const path = () => join(temp!.dir, 'log');

eventStoreContract(
  t,
  'embedded',
  {
    async open() {
      temp = tempDir('vm-store-');
      return EmbeddedEventStore.open(path());
    },
    async cleanup() {
      temp?.remove();
      temp = undefined;
    },
    async appendElsewhere(stream, events) {
      await run(process.execPath, ['--input-type=module', '-e', CHILD, path(), stream, JSON.stringify(events)]);
    },
  },
  { atomicAppendMany: true },
);

/** A log in a temporary directory, closed and removed after the test. */
function openTemporary(t: Test, options?: Parameters<typeof EmbeddedEventStore.open>[1]): EmbeddedEventStore {
  const dir = tempDir('vm-store-');
  t.teardown(dir.remove);
  const store = EmbeddedEventStore.open(join(dir.dir, 'log'), options);
  t.teardown(() => store.close());
  return store;
}

/** An event numbered `i`, with an id of its own. */
const event = (i: number) => ({ id: randomUUID(), type: 'CategoryCreated', data: { i } });

/** Holds the log's write lock for LOCK_MS, as a long import chunk of `vm-api import` does; says "locked" inside. */
const LOCK_MS = 1500;
const LOCK_HOLDER = `
const { open } = await import('lmdb');
const root = open({ path: process.argv[1], compression: false });
root.transactionSync(() => {
  process.stdout.write('locked\\n');
  const until = Date.now() + ${LOCK_MS};
  while (Date.now() < until);
});
await root.close();
`;

t.test("an append waits for another process's write lock off the event loop", async (t) => {
  const temp = tempDir('vm-store-');
  t.teardown(temp.remove);
  const store = EmbeddedEventStore.open(join(temp.dir, 'log'));
  await store.append('site-registry-a', [{ id: crypto.randomUUID(), type: 'SiteCreated', data: { n: 0 } }]);
  const holder = spawn(process.execPath, ['--input-type=module', '-e', LOCK_HOLDER, join(temp.dir, 'log')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => holder.on('exit', resolve));
  await new Promise<void>((resolve) => holder.stdout.on('data', (chunk: Buffer) => chunk.includes('locked') && resolve()));

  const began = performance.now();
  const appended = store.append('site-registry-a', [{ id: crypto.randomUUID(), type: 'SiteCreated', data: { n: 1 } }], 0);
  // A request arriving meanwhile is served at once: the event loop is not held by the waiting append.
  await new Promise((resolve) => setImmediate(resolve));
  const loopFree = performance.now() - began;
  const { nextRevision } = await appended;
  const waited = performance.now() - began;
  t.equal(await exited, 0, 'the other process held the lock and let go');
  t.ok(loopFree < LOCK_MS / 3, `the event loop ran ${loopFree.toFixed(0)} ms after the append began`);
  t.ok(waited > LOCK_MS / 3, `the append itself waited for the lock (${waited.toFixed(0)} ms)`);
  t.equal(nextRevision, 1, 'and then appended after the first event');
  t.same((await store.readStream('site-registry-a')).map((e) => (e.data as { n: number }).n), [0, 1]);
  await store.close();
});

t.test('a refused append writes nothing, also when others share its transaction', async (t) => {
  const temp = tempDir('vm-store-');
  t.teardown(temp.remove);
  const store = EmbeddedEventStore.open(join(temp.dir, 'log'));
  // Three appends in one event turn, which lmdb-js commits in one batch: the refused one leaves no trace and does
  // not take the other two down with it.
  const results = await Promise.allSettled([
    store.append('a', [{ id: crypto.randomUUID(), type: 'SiteCreated', data: { n: 1 } }], 'no_stream'),
    store.append('b', [{ id: crypto.randomUUID(), type: 'SiteCreated', data: { n: 2 } }], 5),
    store.append('c', [{ id: crypto.randomUUID(), type: 'SiteCreated', data: { n: 3 } }], 'no_stream'),
  ]);
  t.same(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
  t.same((await store.readAll(startOfLog, 10)).map((e) => [e.stream, e.position.commit]), [['a', 1n], ['c', 2n]]);
  t.same(await store.readStream('b'), []);
  await store.close();
});

t.test('after letting go of the pages it read, the log reads, appends and is followed as before', async (t) => {
  const store = openTemporary(t);
  await store.appendMany(Array.from({ length: 50 }, (_, i) => ({ stream: `s-${i}`, events: [event(i)] })));
  const before = await store.readAll(startOfLog, 100);
  await store.releaseReadPages();
  t.same(await store.readAll(startOfLog, 100), before, 'every event read back');
  t.same((await store.readStream('s-7')).map((e) => e.data), [{ i: 7 }], 'streams too');
  const { position } = await store.append('s-7', [event(99)], 0);
  t.equal(position.commit, 51n, 'an append goes after them, its expected revision checked');
  const seen: number[] = [];
  const subscription = store.subscribe(startOfLog, { onEvents: async (events) => void seen.push(...events.map((e) => Number(e.position.commit))) });
  await until(() => (seen.length === 51 ? true : undefined));
  await subscription.close();
  t.same(seen, Array.from({ length: 51 }, (_, i) => i + 1), 'and a subscription sees every one, in order');
});

t.test('a subscription lets go of the pages it read every releaseEvery events, while appends and reads go on', async (t) => {
  const store = openTemporary(t, { releaseEvery: 25, pollIntervalMs: 5 });
  let released = 0;
  const release = store.releaseReadPages.bind(store);
  store.releaseReadPages = async () => {
    released++;
    return release();
  };
  const seen: number[] = [];
  // A slow reader: its batches leave time for the appends and reads below to meet a release.
  const subscription = store.subscribe(startOfLog, {
    onEvents: async (events) => {
      seen.push(...events.map((e) => Number(e.position.commit)));
      await new Promise((resolve) => setImmediate(resolve));
    },
  });
  // Appends to 20 streams, one event at a time, each checking the stream's revision, with reads between them, and
  // pauses: the subscription lets go of the pages only while no use of the store is under way.
  const streams = Array.from({ length: 20 }, (_, k) => `s-${k}`);
  const writers = streams.map(async (stream, k) => {
    for (let r = 0; r < 15; r++) {
      await store.append(stream, [event(k * 100 + r)], r === 0 ? 'no_stream' : r - 1);
      const events = await store.readStream(stream);
      if (events.length !== r + 1 || events[r]!.revision !== r) throw new Error(`${stream} read back wrong after revision ${r}`);
      await store.head();
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  });
  await Promise.all(writers);
  await until(() => (seen.length === 300 ? true : undefined));
  await subscription.close();
  t.ok(released >= 3, `the pages let go of ${released} times while the log was followed`);
  t.same(seen, Array.from({ length: 300 }, (_, i) => i + 1), 'every event seen once, in order');
  for (const [k, stream] of streams.entries()) {
    t.same((await store.readStream(stream)).map((e) => e.data), Array.from({ length: 15 }, (_, r) => ({ i: k * 100 + r })), `${stream}: every append kept, in order`);
  }
});

t.test('idempotency within a stream holds across a reopen, for first and later events alike', async (t) => {
  const dir = tempDir('vm-store-');
  t.teardown(dir.remove);
  const [first, second, third] = [event(0), event(1), event(2)];
  let store = EmbeddedEventStore.open(join(dir.dir, 'log'));
  await store.appendMany([{ stream: 's', events: [first, second] }, { stream: 'other', events: [event(9)] }]);
  await store.append('s', [third], 1);
  await store.close();
  store = EmbeddedEventStore.open(join(dir.dir, 'log'));
  t.teardown(() => store.close());
  // Positions: first 1, second 2, the other stream's event 3, third 4.
  for (const [label, repeated, revision, at] of [['first', first, 0, 1n], ['second', second, 1, 2n], ['third', third, 2, 4n]] as const) {
    const answer = await store.append('s', [repeated]);
    t.same(answer, { nextRevision: revision, position: { commit: at, prepare: at } }, `the ${label} event again appends nothing and answers where it is`);
  }
  const { nextRevision } = await store.append('s', [first, event(3)], 2);
  t.equal(nextRevision, 3, 'a known id beside a new one: only the new one is appended');
  t.same((await store.readStream('s')).map((e) => e.data), [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3 }]);
});

t.test("a log written before the per-stream index: its events' ids are still known", async (t) => {
  const dir = tempDir('vm-store-');
  t.teardown(dir.remove);
  const path = join(dir.dir, 'log');
  // As earlier versions wrote a stream of two events: each id in `ids`, none in `stream-ids`.
  const ids = [randomUUID(), randomUUID()];
  const old = open({ path, compression: false });
  const events = old.openDB({ name: 'events', sharedStructuresKey: Symbol.for('structures') });
  const streams = old.openDB({ name: 'streams' });
  const legacy = old.openDB({ name: 'ids' });
  const meta = old.openDB({ name: 'meta' });
  old.transactionSync(() => {
    ids.forEach((id, revision) => {
      void events.put(revision + 1, { id, type: 'CategoryCreated', stream: 's', revision, data: { revision } });
      void streams.put(['s', revision], revision + 1);
      void legacy.put(id, revision + 1);
    });
    void meta.put('head', 2);
  });
  await old.close();
  const store = EmbeddedEventStore.open(path);
  t.teardown(() => store.close());
  const again = await store.append('s', [{ id: ids[1]!, type: 'CategoryCreated', data: { revision: 1 } }]);
  t.same(again, { nextRevision: 1, position: { commit: 2n, prepare: 2n } }, 'its second event again appends nothing');
  const elsewhere = await store.append('t', [{ id: ids[1]!, type: 'CategoryCreated', data: {} }]);
  t.equal(elsewhere.position.commit, 3n, 'the same id in another stream is another event');
  t.equal((await store.readStream('s')).length, 2);
});

t.test('appendMany takes the revisions a caller knows while the head is where it saw it, and looks them up once it moved', async (t) => {
  const store = openTemporary(t);
  const { position: seen } = await store.appendMany([{ stream: 'a', events: [event(0)] }]);
  const known = await store.appendMany(
    [
      { stream: 'a', events: [event(1)], knownRevision: 0 },
      { stream: 'b', events: [event(2)], knownRevision: -1 },
      { stream: 'a', events: [event(3)], knownRevision: 1 },
    ],
    { asOf: seen! },
  );
  t.same(known, { position: { commit: 4n, prepare: 4n }, tookKnown: true }, 'taken: the head was where the caller saw it');
  t.same((await store.readStream('a')).map((e) => [e.revision, e.data]), [[0, { i: 0 }], [1, { i: 1 }], [2, { i: 3 }]]);
  t.same((await store.readStream('b')).map((e) => e.revision), [0]);

  // Another writer appends to `a`: the caller's knowledge (a at 2) is stale, and its asOf says so.
  await store.append('a', [event(4)]);
  const repeated = (await store.readStream('a'))[1]!;
  const stale = await store.appendMany(
    [
      { stream: 'a', events: [event(5)], knownRevision: 2 },
      { stream: 'b', events: [{ id: randomUUID(), type: 'CategoryCreated', data: { i: 6 } }], knownRevision: 0 },
      { stream: 'a', events: [{ id: repeated.id, type: repeated.type, data: repeated.data }], knownRevision: 3 },
    ],
    { asOf: known.position! },
  );
  t.equal(stale.tookKnown, false, 'not taken: the head moved');
  t.same(
    (await store.readStream('a')).map((e) => e.revision),
    [0, 1, 2, 3, 4],
    'each stream looked up: the new event after the other writer’s, at revision 4 (not 3), and a repeated id appended nothing',
  );
  t.same((await store.readStream('b')).map((e) => e.revision), [0, 1]);
  t.same(await store.appendMany([{ stream: 'c', events: [event(7)], knownRevision: -1 }]), { position: { commit: 8n, prepare: 8n }, tookKnown: false }, 'without asOf nothing is taken');
});

t.test("appendMany's taken revisions: the stream entries it puts in key order at the end are seen by a look-up in the same batch and kept", async (t) => {
  const store = openTemporary(t);
  const { position: seen } = await store.appendMany([{ stream: 'z', events: [event(0)] }]);
  const [e1, e2, e3, e4, e5] = [1, 2, 3, 4, 5].map(event);
  const result = await store.appendMany(
    [
      { stream: 'z', events: [e1!], knownRevision: 0 },
      { stream: 'b', events: [e2!, e3!], knownRevision: -1 },
      // No revision known: looked up, after the entries above (z's last is 1).
      { stream: 'z', events: [e4!] },
      // An id already in the stream, appended above in this batch: nothing appended.
      { stream: 'z', events: [e1!] },
      { stream: 'a', events: [e5!], knownRevision: -1 },
    ],
    { asOf: seen! },
  );
  t.equal(result.tookKnown, true, 'taken');
  t.same((await store.readStream('z')).map((e) => [e.revision, e.data]), [[0, { i: 0 }], [1, { i: 1 }], [2, { i: 4 }]], 'z: its looked-up event after the known one, the repeated id once');
  t.same((await store.readStream('b')).map((e) => e.revision), [0, 1]);
  t.same((await store.readStream('a')).map((e) => e.revision), [0]);
  t.same(await store.append('b', [e3!]), { nextRevision: 1, position: { commit: 4n, prepare: 4n } }, "b's second event again appends nothing: its id is in the stream's index");
  t.same(await store.append('b', [event(6)], 1), { nextRevision: 2, position: { commit: 7n, prepare: 7n } }, 'and b goes on at revision 2');
});

t.test("an import's put-off stream entries: its streams read, looked up and appended to as if they were written, then written once", async (t) => {
  const store = openTemporary(t);
  const { position: seen } = await store.appendMany([{ stream: 'a', events: [event(0)] }]);
  const first = await store.appendMany(
    [
      { stream: 'a', events: [event(1)], knownRevision: 0 },
      { stream: 'b', events: [event(2), event(3)], knownRevision: -1 },
    ],
    { asOf: seen!, deferStreamEntries: true },
  );
  const second = await store.appendMany([{ stream: 'c', events: [event(4)], knownRevision: -1 }], { asOf: first.position!, deferStreamEntries: true });
  t.equal(second.tookKnown, true, 'taken, and put off');
  t.same((await store.readStream('a')).map((e) => [e.revision, e.data]), [[0, { i: 0 }], [1, { i: 1 }]], 'a: its written event, then its put-off one');
  t.same((await store.readStream('b', 1)).map((e) => e.data), [{ i: 3 }], 'b from revision 1');
  t.same((await store.readStream('c')).map((e) => e.revision), [0]);
  t.same((await store.readStream('a', 0, 1)).map((e) => e.revision), [0], 'a page of a: its written event alone');
  t.same((await store.readStream('a', 1, 1)).map((e) => e.revision), [1], 'the next page: the put-off one');
  t.same((await store.readStream('b', 0, 1)).map((e) => e.revision), [0], 'a page of put-off events: at most maxCount');
  // An append looks b up: the entries are written first, and b goes on at revision 2.
  t.same(await store.append('b', [event(5)], 1), { nextRevision: 2, position: { commit: 6n, prepare: 6n } });
  const b3 = (await store.readStream('b'))[1]!;
  t.same(await store.append('b', [{ id: b3.id, type: b3.type, data: b3.data }]), { nextRevision: 1, position: { commit: 4n, prepare: 4n } }, "b's second event again appends nothing (answered as its append was): its id is in the stream's index");
  // Put off again after that, then written by indexStreams (a transaction per two entries here): each stream as
  // before, and nothing lags.
  const third = await store.appendMany(
    [
      { stream: 'c', events: [event(6)], knownRevision: 0 },
      { stream: 'd', events: [event(9), event(10), event(11)], knownRevision: -1 },
    ],
    { asOf: { commit: 6n, prepare: 6n }, deferStreamEntries: true },
  );
  t.equal(third.tookKnown, true);
  const slice = EmbeddedEventStore.indexSlice;
  EmbeddedEventStore.indexSlice = 2;
  t.teardown(() => void (EmbeddedEventStore.indexSlice = slice));
  await store.indexStreams();
  t.same((await store.readStream('d')).map((e) => [e.revision, e.data]), [[0, { i: 9 }], [1, { i: 10 }], [2, { i: 11 }]]);
  t.same((await store.readStream('c')).map((e) => [e.revision, e.data]), [[0, { i: 4 }], [1, { i: 6 }]]);
  t.same((await store.readStream('b')).map((e) => e.revision), [0, 1, 2]);
  t.same(await store.append('c', [event(8)], 1), { nextRevision: 2, position: { commit: 11n, prepare: 11n } });
});

t.test('a process killed with stream entries put off: another reads its streams, and its next append writes the entries', async (t) => {
  const dir = tempDir('vm-store-');
  t.teardown(dir.remove);
  const logPath = join(dir.dir, 'log');
  // The other process appends 300 events to 100 streams with their entries put off, and dies without writing them.
  await putOffAndDie(logPath, 100, 3);
  const store = EmbeddedEventStore.open(logPath);
  t.teardown(() => store.close());
  t.same((await store.readStream('s-7')).map((e) => [e.revision, e.data]), [0, 1, 2].map((round) => [round, { s: 7, round }]), 'read from the events past the written entries');
  const last = (await store.readStream('s-9'))[2]!;
  t.same(await store.append('s-9', [{ id: last.id, type: last.type, data: last.data }]), { nextRevision: 2, position: last.position }, 'an id put off is still known: nothing appended');
  t.same(await store.append('s-9', [event(1)], 2), { nextRevision: 3, position: { commit: 301n, prepare: 301n } }, 'and the stream goes on at its revision');
  const entries = open({ path: logPath, readOnly: true });
  t.teardown(() => entries.close());
  t.equal(entries.openDB({ name: 'streams' }).getKeysCount(), 301, 'every event has its entry now');
  t.equal(entries.openDB<number, string>({ name: 'meta' }).get('indexed'), undefined, 'and nothing lags');
});

t.test('the log knows when another process has it open (LMDB’s reader table), and forgets one that has died', async (t) => {
  const dir = tempDir('vm-store-');
  t.teardown(dir.remove);
  const logPath = join(dir.dir, 'log');
  const store = EmbeddedEventStore.open(logPath);
  t.teardown(() => store.close());
  await store.append('s', [{ id: randomUUID(), type: 'CategoryCreated', data: {} }]);
  await store.head();
  t.equal(store.openElsewhere(), false, 'only this process: not open elsewhere');
  // A reader in another process: it reads the log's head, says so, and waits to be told to go.
  const reader = spawn(
    process.execPath,
    ['--input-type=module', '-e', `const { EmbeddedEventStore } = await import(${JSON.stringify(BUILT_EMBEDDED_STORE)});
const store = EmbeddedEventStore.open(process.argv[1]);
await store.head();
process.stdout.write('reading\\n');
setInterval(() => {}, 1000);`, logPath],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve) => reader.stdout.once('data', () => resolve()));
  t.equal(store.openElsewhere(), true, 'open elsewhere while the other process reads it');
  // Killed, it leaves its slot in the reader table behind.
  const ended = new Promise((resolve) => reader.once('exit', resolve));
  reader.kill('SIGKILL');
  await ended;
  t.equal(store.openElsewhere(), false, 'not once that process has died');
});

/** Data of random shapes: keys from a small pool in any order, nested objects and arrays, ASCII and other strings. */
const dataOf = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.integer(),
    fc.integer({ min: 0, max: 2 ** 40 }),
    fc.double({ noNaN: true }),
    fc.boolean(),
    fc.constant(null),
    tie('object'),
    fc.array(tie('value'), { maxLength: 3 }),
  ),
  object: fc.dictionary(fc.constantFrom('institution_id', 'title', 'spots', 'site_ids', 'é', 'description'), tie('value'), { maxKeys: 4 }),
})).object;

const packedEvents = fc.array(
  fc.record({
    stream: fc.constantFrom('shift-a', 'shift-b', 'site-ö', `opportunity-${'x'.repeat(300)}`),
    type: fc.constantFrom('ShiftCreated', 'SiteAdded', 'Typé'),
    data: dataOf,
  }),
  { minLength: 1, maxLength: 120 },
);

t.test("data packed ahead of the append (an import's) is stored as the very bytes an append of the data writes", async (t) => {
  await fc.assert(
    fc.asyncProperty(packedEvents, fc.integer({ min: 1, max: 5 }), async (events, perAppend) => {
      const dir = tempDir('vm-store-');
      try {
        const plain = EmbeddedEventStore.open(join(dir.dir, 'plain'));
        const packed = EmbeddedEventStore.open(join(dir.dir, 'packed'));
        const packer = new LearningPacker(await packed.shapes());
        const withIds = events.map((e) => ({ ...e, id: randomUUID() }));
        for (let from = 0; from < withIds.length; from += perAppend) {
          const some = withIds.slice(from, from + perAppend);
          await plain.appendMany(some.map(({ stream, id, type, data }) => ({ stream, events: [{ id, type, data }] })));
          await packed.appendMany(some.map(({ stream, id, type, data }) => ({ stream, events: [{ id, type, data: new PackedData(packer.pack(data), packer.shapes) }] })));
        }
        const read = async (store: EmbeddedEventStore) => (await store.readAll(startOfLog, 1000)).map(({ id, type, stream, revision, data }) => ({ id, type, stream, revision, data }));
        const [fromPlain, fromPacked] = [await read(plain), await read(packed)];
        await plain.close();
        await packed.close();
        t.same(fromPacked, fromPlain);
        t.same(logBytes(join(dir.dir, 'packed')), logBytes(join(dir.dir, 'plain')));
      } finally {
        dir.remove();
      }
    }),
    { numRuns: 60 },
  );
});

t.test('the learning packer unpacks what it packed, past the 32 shared shapes, and learns nothing from it', async (t) => {
  const packer = new LearningPacker([]);
  const values = Array.from({ length: 40 }, (_, i) => ({ [`key${i}`]: i, shared: 'x' }));
  const packed = values.map((v) => packer.pack(v));
  const shapes = packer.shapes.length;
  t.equal(shapes, 32, 'msgpackr shares 32 shapes; the rest are defined within their values');
  t.same(
    packed.map((bytes) => packer.unpack(bytes)),
    values,
  );
  t.equal(packer.shapes.length, shapes, 'its shapes as they were (its own Packr would have added the ones it read)');
});

t.test('packed data: revisions of every width, the same bytes as an append of the data', async (t) => {
  const dir = tempDir('vm-store-');
  t.teardown(dir.remove);
  const [plain, packed] = [EmbeddedEventStore.open(join(dir.dir, 'plain')), EmbeddedEventStore.open(join(dir.dir, 'packed'))];
  const packer = new LearningPacker(await packed.shapes());
  // Revisions of one byte, uint8, uint16 and uint32 (a caller's known revision puts the next event there).
  for (const [i, known] of [-1, 0x3e, 0x3f, 0xfe, 0xff, 0xfffe, 0xffff, 0xfffffffe].entries()) {
    const e = { id: randomUUID(), type: 'ShiftCreated', data: { i } };
    const stream = `shift-${i}`;
    await plain.appendMany([{ stream, events: [e], knownRevision: known }], { asOf: await plain.head() });
    await packed.appendMany([{ stream, events: [{ ...e, data: new PackedData(packer.pack(e.data), packer.shapes) }], knownRevision: known }], { asOf: await packed.head() });
  }
  t.same((await packed.readAll(startOfLog, 100)).map((e) => e.revision), [0, 0x3f, 0x40, 0xff, 0x100, 0xffff, 0x10000, 0xffffffff]);
  await plain.close();
  await packed.close();
  t.same(logBytes(join(dir.dir, 'packed')), logBytes(join(dir.dir, 'plain')), 'the same bytes');
});

t.test('packed data over more shapes than lmdb-js shares: the log keeps 32, and the same bytes', async (t) => {
  const dir = tempDir('vm-store-');
  t.teardown(dir.remove);
  const [plain, packed] = [EmbeddedEventStore.open(join(dir.dir, 'plain')), EmbeddedEventStore.open(join(dir.dir, 'packed'))];
  const packer = new LearningPacker(await packed.shapes());
  const events = Array.from({ length: 40 }, (_, i) => ({ id: randomUUID(), type: 'ShiftCreated', data: { [`key${i}`]: i } }));
  const bytes = events.map((e) => packer.pack(e.data));
  t.equal(packer.shapes.length, 32, 'msgpackr shares 32 shapes; the others are defined within their values');
  // Shapes past those 32 (a packer's Packr once added those it read: see LearningPacker.unpack).
  const shapes = [...packer.shapes, ['not', 'shared']];
  for (const [i, e] of events.entries()) {
    await plain.append(`shift-${i}`, [e]);
    await packed.appendMany([{ stream: `shift-${i}`, events: [{ ...e, data: new PackedData(bytes[i]!, shapes) }] }]);
  }
  const logShapes = await packed.shapes();
  t.equal(logShapes.length, 32, 'the log shares 32 shapes');
  t.same((await packed.readAll(startOfLog, 100)).map((e) => e.data), events.map((e) => e.data), 'every event reads back');
  t.doesNotThrow(() => new LearningPacker(logShapes), "the next import's packer takes them");
  await plain.close();
  await packed.close();
  t.same(logBytes(join(dir.dir, 'packed')), logBytes(join(dir.dir, 'plain')), 'the same bytes as appends of the data');
});

t.test('packed data over shapes another writer shared other ones in place of: written unpacked, read back right', async (t) => {
  const dir = tempDir('vm-store-');
  t.teardown(dir.remove);
  const packed = EmbeddedEventStore.open(join(dir.dir, 'packed'));
  await packed.append('first', [{ id: randomUUID(), type: 'ShiftCreated', data: { i: 0 } }]);
  const packer = new LearningPacker(await packed.shapes());
  // The packer learns a shape; before its event is appended, another writer shares a shape of its own in that place.
  const mine = { id: randomUUID(), type: 'ShiftCreated', data: { mine: 1 } };
  const early = new PackedData(packer.pack(mine.data), packer.shapes);
  await packed.append('other', [{ id: randomUUID(), type: 'SiteAdded', data: { theirs: 'x', too: true } }]);
  await packed.appendMany([{ stream: 'shift-m', events: [{ ...mine, data: early }] }]);
  await packed.append('other', [{ id: randomUUID(), type: 'SiteAdded', data: { mine: 2 } }]);
  t.same(
    (await packed.readAll(startOfLog, 100)).slice(-3).map((e) => e.data),
    [{ theirs: 'x', too: true }, { mine: 1 }, { mine: 2 }],
    'the packed event is written unpacked: every event reads back as appended',
  );
  await packed.close();
  const reopened = EmbeddedEventStore.open(join(dir.dir, 'packed'));
  t.same((await reopened.readAll(startOfLog, 100)).slice(-3).map((e) => e.data), [{ theirs: 'x', too: true }, { mine: 1 }, { mine: 2 }], 'and after a reopen');
  await reopened.close();
});

t.test("a batch's stream entries past the table's last key are appended; one whose key bytes order otherwise is put as any other", async (t) => {
  const dir = tempDir('vm-store-');
  t.teardown(dir.remove);
  const path = join(dir.dir, 'log');
  const store = EmbeddedEventStore.open(path);
  // Names in JavaScript's order but not their key bytes' ('\u{1F600}' is UTF-16 D83D DE00, before E000; as UTF-8,
  // F0… after EE…), one with an escaped character, and 600 more (past the comparison sort), in two batches: the
  // second's keys partly before the table's last, partly past it.
  const odd = ['x-\u{1F600}', 'x-\uE000', 'x-\u0001', 'x-'];
  const names = (from: number) => Array.from({ length: 600 }, (_, i) => `shift-${randomUUID()}-${from + i}`);
  const batches = [[...names(0), ...odd], names(600)];
  for (const batch of batches) {
    const appends = batch.map((stream, i) => ({ stream, events: [event(i)], knownRevision: -1 }));
    await store.appendMany(appends, { asOf: await store.head() });
  }
  const all = batches.flat();
  for (const stream of all) if ((await store.readStream(stream)).length !== 1) t.fail(`${JSON.stringify(stream)}: not found by its stream`);
  await store.close();
  const log = open({ path, readOnly: true, compression: false });
  t.teardown(() => log.close());
  const keys = [...log.openDB<number, [string, number]>({ name: 'streams' }).getKeys({})];
  t.equal(keys.length, all.length, 'an entry for every stream');
  t.same(new Set(keys.map(([stream]) => stream)), new Set(all), 'each once');
});
