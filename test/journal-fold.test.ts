/**
 * A long journal is folded into a new snapshot in the background once the
 * read model has caught up (issue 15 point 3): the model serves meanwhile,
 * events appended during the fold are applied after it, the snapshot holds
 * every record with an empty journal, and the answers are the same before,
 * during and after, and after a restart from the new snapshot. A journal
 * grown long while serving is folded too, once the log has gone quiet.
 * Journal entries are msgpack maps; those an earlier version wrote as
 * records of shared structures are still read.
 */
import { randomUUID } from 'node:crypto';
import { open } from 'lmdb';
import { pino } from 'pino';
import t from 'tap';
import { type DomainEvent, streamOf } from '../src/events/catalog.js';
import { createServer } from '../src/http/server.js';
import { importEvents } from '../src/importer/import.js';
import { ReadModelStore } from '../src/readmodel/persistence.js';
import { Projector } from '../src/readmodel/projector.js';
import { openRuntime } from '../src/runtime.js';
import { DEMO_KEY, readFixture, TEST_NOW, tempDir, until } from './helpers.js';

const PATHS = ['/api/shifts/?limit=100', '/api/reservations/?limit=100&page=2', '/api/profiles/?limit=5', '/api/sites/', '/api/changes/?limit=1000'];

async function serve(dir: string, journalFoldFrom: number, lines?: string[]) {
  const logger = lines
    ? pino({ level: 'info' }, { write: (line: string) => void lines.push(line) })
    : pino({ level: 'silent' });
  const runtime = openRuntime({ DATA_DIR: dir, EVENTSTORE_URL: undefined, JOURNAL_FOLD_FROM: journalFoldFrom }, logger, { clock: () => TEST_NOW });
  const server = await createServer(runtime, pino({ level: 'silent' }), { publicBaseUrl: 'http://vm.test' });
  await server.ready();
  const answers = async () => Promise.all(PATHS.map(async (url) => (await server.inject({ url, headers: { 'api-key': DEMO_KEY } })).body));
  return { runtime, server, answers, close: async () => (await server.close(), await runtime.close()) };
}

t.test('a long journal is folded once caught up, in the background, and the answers stay the same', async (t) => {
  const tmp = tempDir();
  t.teardown(() => tmp.remove());
  // Everything in the journal: a first start folds the whole demo log one batch at a time, with no snapshot.
  const first = await serve(tmp.dir, 1_000_000);
  await importEvents(first.runtime.store, 'demo.ndjson', readFixture('demo.ndjson'));
  await first.runtime.projector.start();
  const before = await first.answers();
  await first.runtime.projector.stop(); // its last journal write landed
  const journal = first.runtime.disk.sizes();
  t.equal(journal.snapshot, 0, 'no snapshot yet');
  t.ok(journal.journal > 300, `${journal.journal} records in the journal`);
  await first.close();

  const lines: string[] = [];
  const second = await serve(tmp.dir, 10, lines);
  const { projector, store, disk } = second.runtime;
  await projector.load();
  t.same(disk.sizes(), journal, 'not folded while loading');
  // The fold starts once caught up, by itself.
  await projector.follow();
  await until(() => (lines.some((l) => l.includes('journal folded into a new snapshot')) ? true : undefined));
  t.ok(disk.sizes().snapshot > 300, 'folded into a snapshot');
  // Another fold, with an event appended as it starts: the event waits for it, then is applied.
  const folding = projector.foldJournal();
  const event: DomainEvent = {
    type: 'SiteCreated',
    data: { institution_id: 'bf802b36-047d-4718-ad5b-ae9ed495b23f', occurred_at: '2026-11-20T10:00:00Z', site_id: randomUUID(), title: 'Appended during the fold' },
  };
  const appended = store.append(streamOf(event), [{ id: randomUUID(), type: event.type, data: event.data }]);
  t.same(await second.answers(), before, 'answers while folding');
  await folding;
  const { position } = await appended;
  await projector.waitFor(position);
  await projector.stop(); // the last journal write landed
  const sizes = disk.sizes();
  t.ok(sizes.snapshot > 300, `snapshot of ${sizes.snapshot} records (the journal's, but those deleted)`);
  t.ok(sizes.journal <= 3, `the journal holds what came after the fold: ${sizes.journal}`);
  const after = await second.answers();
  t.same(after.slice(0, 3), before.slice(0, 3), 'answers after the fold');
  t.match(after[3], /Appended during the fold/, 'the event appended during the fold is there');
  await second.close();

  const third = await serve(tmp.dir, 10);
  t.teardown(() => third.close());
  await third.runtime.projector.start();
  t.equal(third.runtime.projector.status().eventsApplied, 0, 'a restart loads the snapshot and journal, no replay');
  t.same(await third.answers(), after, 'and answers the same');
});

t.test('a journal grown long while serving is folded once the log has gone quiet, not while events keep coming', async (t) => {
  const quiet = Projector.foldQuietMs;
  Projector.foldQuietMs = 300;
  t.teardown(() => void (Projector.foldQuietMs = quiet));
  const tmp = tempDir();
  t.teardown(() => tmp.remove());
  // A snapshot of the demo to start from (a rebuild's).
  const first = await serve(tmp.dir, 1_000_000);
  await importEvents(first.runtime.store, 'demo.ndjson', readFixture('demo.ndjson'));
  await first.runtime.projector.catchUp();
  await first.close();

  const lines: string[] = [];
  const served = await serve(tmp.dir, 50, lines);
  t.teardown(() => served.close());
  const { projector, store, disk } = served.runtime;
  await projector.start();
  const snapshot = disk.sizes().snapshot;
  t.ok(snapshot > 300 && disk.sizes().journal === 0, `a snapshot of ${snapshot} records, no journal`);
  const folded = () => lines.filter((l) => l.includes('journal folded into a new snapshot')).length;
  // A live import's worth: an event every 100 ms for 1.5 s, each a new site (a journal past 50 changes and a fiftieth of the snapshot).
  const site = (i: number): DomainEvent => ({
    type: 'SiteCreated',
    data: { institution_id: 'bf802b36-047d-4718-ad5b-ae9ed495b23f', occurred_at: '2026-11-20T10:00:00Z', site_id: randomUUID(), title: `Live ${i}` },
  });
  const count = Math.max(75, Math.ceil(snapshot / 50) + 15);
  for (let i = 0; i < 15; i++) {
    const events = Array.from({ length: Math.ceil(count / 15) }, (_, k) => site(i * 100 + k));
    const { position } = await store.appendMany(events.map((e) => ({ stream: streamOf(e), events: [{ id: randomUUID(), type: e.type, data: e.data }] })));
    await projector.waitFor(position!);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.equal(folded(), 0, 'not folded while events kept coming (every 100 ms, the quiet asked for is 300 ms)');
  t.ok(disk.sizes().journal >= count, `the journal holds them: ${disk.sizes().journal}`);
  const before = await served.answers();
  await until(() => (folded() === 1 ? true : undefined));
  t.equal(disk.sizes().journal, 0, 'folded once quiet: the journal is empty');
  t.ok(disk.sizes().snapshot >= snapshot + count, `the snapshot holds the new records too (${disk.sizes().snapshot})`);
  t.same(await served.answers(), before, 'the same answers');
});

t.test('journal entries an earlier version wrote as records of shared structures are read with those written since', async (t) => {
  const tmp = tempDir();
  t.teardown(() => tmp.remove());
  const older = { id: 'a1', title: 'Older', spots: 3, tags: [{ tag: 'x' }] };
  const root = open({ path: tmp.dir, compression: false });
  const journal = root.openDB({ name: 'journal', sharedStructuresKey: Symbol.for('structures') });
  await journal.put(['site', older.id], older);
  await root.close();
  const store = ReadModelStore.open(tmp.dir);
  const newer = { id: 'b2', title: 'Newer', spots: 4 };
  await store.write([{ kind: 'site', id: newer.id, record: newer as never }], [], { commit: 1n, prepare: 1n });
  t.same([...store.journalChanges()], [
    { kind: 'site', id: 'a1', record: older },
    { kind: 'site', id: 'b2', record: newer },
  ]);
  t.same(store.sizes().journal, 2, 'the structures kept apart from the entries');
  await store.close();
});
