/**
 * A replay folds the log up to the head it is given and no further, even
 * when the log holds more (it may grow while a rebuild runs, which stops
 * at the head it read first).
 */
import { join } from 'node:path';
import t from 'tap';
import { tableDefs } from '../src/resources/index.js';
import { EmbeddedEventStore } from '../src/eventstore/embedded.js';
import { startOfLog } from '../src/eventstore/port.js';
import { importEvents } from '../src/importer/import.js';
import { EventFolder } from '../src/readmodel/folder.js';
import { ReadModel } from '../src/readmodel/model.js';
import { eventsUpTo, replay } from '../src/readmodel/replay.js';
import { readFixture, tempDir } from './helpers.js';

t.test('a replay stops at its head', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const store = EmbeddedEventStore.open(join(tmp.dir, 'log'));
  t.teardown(() => store.close());
  await importEvents(store, 'demo.ndjson', readFixture('demo.ndjson'));
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
