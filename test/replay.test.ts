/**
 * A replay folds the log up to the head it is given and no further, even
 * when the log holds more (it may grow while a rebuild runs, which stops
 * at the head it read first).
 */
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { tableDefs } from '../src/resources/index.js';
import { EmbeddedEventStore } from '../src/eventstore/embedded.js';
import { type EventStore, startOfLog } from '../src/eventstore/port.js';
import { importEvents } from '../src/importer/import.js';
import { EventFolder } from '../src/readmodel/folder.js';
import { ReadModel } from '../src/readmodel/model.js';
import { replayInParallel } from '../src/readmodel/parallel-replay.js';
import { ReadModelStore } from '../src/readmodel/persistence.js';
import { eventsUpTo, replay } from '../src/readmodel/replay.js';
import { readFixture, tempDir } from './helpers.js';

/** An embedded log in a temporary directory holding the demo fixture, and the directory. */
async function demoLog(t: Test): Promise<{ dir: string; store: EmbeddedEventStore }> {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const store = EmbeddedEventStore.open(join(tmp.dir, 'log'));
  t.teardown(() => store.close());
  await importEvents(store, 'demo.ndjson', readFixture('demo.ndjson'));
  return { dir: tmp.dir, store };
}

t.test('a replay stops at its head', async (t) => {
  const { store } = await demoLog(t);
  const events = await store.readAll(startOfLog, 100_000);
  t.ok(events.length > 20, 'the demo log has events to stop among');
  for (const stop of [0, 7, events.length - 2, events.length - 1]) {
    const model = new ReadModel(tableDefs);
    const head = events[stop]!.position;
    const replayed = await replay(eventsUpTo(store, startOfLog, head), model, new EventFolder(model), startOfLog);
    t.same(replayed.position, head, `stopped at event ${stop + 1}`);
    t.equal(replayed.applied, stop + 1, `and applied ${stop + 1} events`);
  }
});

t.test("a replay on threads lets go of the log's pages every so many events read, and of the last ones once the log is read", async (t) => {
  const { dir, store } = await demoLog(t);
  const events = (await store.readAll(startOfLog, 100_000)).length;
  // Read 1,000 events at a time: the demo's are one read.
  t.ok(events > 50 && events < 1000, `${events} events`);
  for (const [releaseEvery, expected, why] of [
    [50, 1, 'once 50 were read; none read since by the end'],
    [1000, 1, 'fewer than 1,000 read: once, when the log is read'],
    [0, 1, 'never on the way: once, when the log is read'],
  ] as const) {
    let releases = 0;
    const counted = Object.assign(Object.create(store) as EventStore, {
      releaseReadPages: async () => {
        releases++;
        await store.releaseReadPages();
      },
    });
    const disk = ReadModelStore.open(join(dir, `readmodel-${releaseEvery}`));
    const { applied } = await replayInParallel(counted, disk, 2, undefined, releaseEvery);
    await disk.close();
    t.equal(applied, events);
    t.equal(releases, expected, `every ${releaseEvery}: ${why}`);
  }
});
