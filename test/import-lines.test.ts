/**
 * Import files are read line by line in chunks (a file of any size): lines
 * and multi-byte characters split across chunks come out whole. Checked
 * events wait in a spool (a file for the CLI) until every line passed, then
 * go to the log in transactions short enough for a server sharing it.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { closeSync, fstatSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import t from 'tap';
import { EmbeddedEventStore } from '../src/eventstore/embedded.js';
import { type EventStore, startOfLog } from '../src/eventstore/port.js';
import { listLog } from '../src/cli/listing.js';
import { ImportError, importEvents, importFile } from '../src/importer/import.js';
import { blockLines, fileLines } from '../src/importer/lines.js';
import { fileSpool } from '../src/importer/spool.js';
import { PreparedAppends, type PreparerMessage } from '../src/importer/prepared-appends.js';
import { LearningPacker } from '../src/eventstore/packed-data.js';
import { envelopeIdOf, writeStoredEvent } from '../src/eventstore/stored-event.js';
import { indexBytes, logBytes, putOffAndDie, ROOT, startApp, tempDir } from './helpers.js';

/** The demo's Riverside institution. */
const riverside = 'bf802b36-047d-4718-ad5b-ae9ed495b23f';

/** `n` lines, each creating a new category of Riverside. */
function newCategories(n: number): string {
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify({ type: 'CategoryCreated', id: randomUUID(), data: { institution_id: riverside, occurred_at: '2026-10-01T10:00:00Z', category_id: randomUUID(), title: `C${i}`, description: '' } }),
  ).join('\n');
}

t.test('lines split across chunks, multi-byte characters, a last line without newline', async (t) => {
  const temp = tempDir();
  t.teardown(temp.remove);
  const lines = ['{"a":"Zoë Ångström 🙂"}', '', 'plain', '€€€€€€€€', '🙂🙂🙂', 'last'];
  const file = join(temp.dir, 'x.ndjson');
  writeFileSync(file, lines.join('\n'));
  // Every chunk size from 1 byte up cuts lines and characters at every possible place.
  for (let chunk = 1; chunk <= 40; chunk++) t.same([...fileLines(file, chunk)], lines, `chunks of ${chunk} bytes`);
  writeFileSync(file, lines.join('\n') + '\n');
  t.same([...fileLines(file, 7)], lines, 'a trailing newline adds no line');
  writeFileSync(file, '');
  t.same([...fileLines(file)], [], 'an empty file has no lines');
});

t.test("blocks of a file give each line once, in order, whole: a worker's share of a big file", async (t) => {
  const temp = tempDir();
  t.teardown(temp.remove);
  const file = join(temp.dir, 'x.ndjson');
  const lines = ['{"a":"Zoë Ångström 🙂"}', '', 'plain', '€€€€€€€€', '', '🙂🙂🙂', 'x'.repeat(300), 'last'];
  const linesOf = (block: number) => {
    const fd = openSync(file, 'r');
    try {
      const { size } = fstatSync(fd);
      const out: string[] = [];
      for (let from = 0; from < size; from += block) out.push(...blockLines(fd, from, from + block, size));
      return out;
    } finally {
      closeSync(fd);
    }
  };
  for (const [text, what] of [
    [lines.join('\n'), 'a last line without a line break'],
    [`${lines.join('\n')}\n`, 'a last line break'],
    [`\n${lines.join('\n')}\n\n`, 'blank lines first and last'],
  ] as const) {
    writeFileSync(file, text);
    const expected = [...fileLines(file)];
    // Blocks of every size from 1 byte up begin and end at every place: inside characters, at line breaks, inside a line longer than the block.
    const wrong = [];
    for (let block = 1; block <= 420; block++) if (JSON.stringify(linesOf(block)) !== JSON.stringify(expected)) wrong.push(block);
    t.same(wrong, [], `${what}: every block size gives fileLines's lines`);
  }
  // A line longer than the reads past a block's end (64 KB): the buffer grows until the line ends.
  writeFileSync(file, ['first', 'y'.repeat(300_000), 'Zoë', 'z'.repeat(140_000)].join('\n'));
  const long = [...fileLines(file)];
  for (const block of [1_000, 4_096, 70_000, 1 << 20]) t.same(linesOf(block), long, `a 300 KB line, blocks of ${block} bytes`);
  writeFileSync(file, '');
  t.same(linesOf(4), [], 'an empty file has no lines');
});

t.test('a file spool gives back every event in order, and its file goes with dispose', async (t) => {
  const temp = tempDir();
  t.teardown(temp.remove);
  const spool = fileSpool(temp.dir);
  // Over the spool's 4 MB buffer (records cut at every place by its reads), with multi-byte characters, empty data,
  // and data bigger than the buffer.
  const events = Array.from({ length: 60_000 }, (_, i) => ({
    stream: `shift-Zoë-${i}`,
    id: randomUUID(),
    type: i % 2 === 0 ? 'ShiftCreated' : 'Ångström',
    revision: i % 3 === 0 ? 2 ** 32 - 1 - i : i,
    data: Buffer.alloc(i === 30_000 ? 5 * 2 ** 20 : i % 200, i % 251),
  }));
  for (const event of events) spool.write(event);
  t.equal(readdirSync(temp.dir).filter((name) => name.endsWith('.spool')).length, 1, 'one file while in use');
  // (Each event's data is good until the next is taken: copied as they come.)
  const back = Array.from(spool.items(), (event) => ({ ...event, data: Buffer.from(event.data) }));
  t.equal(back.length, events.length);
  const same = (event: (typeof back)[number], i: number) =>
    event.stream === events[i]!.stream && event.id === events[i]!.id && event.type === events[i]!.type && event.revision === events[i]!.revision && event.data.equals(events[i]!.data);
  t.ok(back.every(same), 'the same events, in order');
  // Read again from the 29,999th: the rest (an import that takes up the appends where another way of making them stopped).
  const rest = Array.from(spool.items(29_999), (event) => ({ ...event, data: Buffer.from(event.data) }));
  t.equal(rest.length, events.length - 29_999);
  t.ok(rest.every((event, i) => same(event, i + 29_999)), 'from any event on, again');
  t.throws(() => spool.write(events[0]!), /no longer written/, 'written once, then read');
  spool.dispose();
  t.same(readdirSync(temp.dir), [], 'no file once disposed');
});

t.test('a spool left by a killed import is removed by the next one; a running import’s is not', async (t) => {
  const temp = tempDir();
  t.teardown(temp.remove);
  const dead = spawnSync(process.execPath, ['-e', 'process.pid']).pid!; // a process that has ended
  const left = `import-${dead}-4b1d2c3e-0000-4000-8000-000000000000.spool`;
  const running = `import-${process.pid}-4b1d2c3e-0000-4000-8000-000000000001.spool`;
  writeFileSync(join(temp.dir, left), 'x\n');
  writeFileSync(join(temp.dir, running), 'x\n');
  const spool = fileSpool(temp.dir);
  const names = readdirSync(temp.dir);
  t.notOk(names.includes(left), 'the dead process’s spool is gone');
  t.ok(names.includes(running), 'the running process’s spool stays');
  spool.dispose();
});

t.test('an import with many bad lines names the first ones and counts them all', async (t) => {
  const app = await startApp();
  t.teardown(() => app.close());
  const text = Array.from({ length: 1500 }, () => '{"type":"NoSuchEvent","data":{}}').join('\n');
  const error = await importEvents(app.runtime.store, 'bad.ndjson', text).catch((e: unknown) => e);
  t.ok(error instanceof ImportError);
  const { problems, count, message } = error as ImportError;
  t.equal(count, 1500, 'every problem counted');
  t.equal(problems.length, 1000, 'the first thousand kept');
  t.match(message, /^bad\.ndjson: 1500 invalid line\(s\); nothing was imported\n {2}bad\.ndjson:1: type: unknown event type "NoSuchEvent"/);
  t.match(message, /… and 1480 more$/);
});

t.test("an import's transactions stay short: a chunk that took long is followed by smaller ones, down to what fits; with another process on the log, it pauses as long as each took", async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const text = newCategories(9000);
  // A log whose transactions cost 0.125 ms an event (a 4,000-event chunk: 500 ms, twice the 250 ms a chunk may take).
  const chunks: Array<{ events: number; ms: number; started: number; ended: number }> = [];
  const store = Object.assign(Object.create(app.runtime.store) as EventStore, {
    appendMany: async (...[appends, options]: Parameters<EventStore['appendMany']>) => {
      const started = performance.now();
      const list = [...appends];
      while (performance.now() - started < list.length * 0.125);
      const result = await app.runtime.store.appendMany(list, options);
      const ended = performance.now();
      chunks.push({ events: list.length, ms: ended - started, started, ended });
      return result;
    },
  });
  /** Between the end of each chunk and the start of the next, as a share of the time the chunk took. */
  const pauses = () => chunks.slice(1).map((c, i) => (c.started - chunks[i]!.ended) / chunks[i]!.ms);
  t.same(await importEvents(store, 'slow.ndjson', text, { chunk: 4000 }), { appended: 9000, skipped: 0 });
  t.equal(chunks[0]!.events, 4000, 'the first chunk as large as allowed');
  const later = chunks.slice(1);
  t.ok(later.length >= 2, `the rest in smaller chunks (${later.map((c) => c.events).join(', ')})`);
  // The last is what is left, whatever its size.
  t.ok(
    later.every((c, i) => c.events <= 2400 && (c.events >= 500 || i === later.length - 1)),
    'each about what fits in 250 ms (2,000 events), never under 500 but the last',
  );
  t.equal(chunks.reduce((sum, c) => sum + c.events, 0), 9000, 'every event in one chunk or another');
  // Not its store alone: another process may be serving from the log, and is left the CPU half the time.
  t.ok(pauses().every((share) => share >= 0.95), `a pause as long as the chunk took after each (${pauses().map((p) => p.toFixed(2)).join(', ')})`);

  // The same import owning its store, no other process having the log open: no one waits for the lock.
  chunks.length = 0;
  const alone = Object.assign(Object.create(store) as EventStore, { releaseReadPages: async () => {}, openElsewhere: () => false });
  t.same(await importEvents(alone, 'alone.ndjson', newCategories(9000), { chunk: 4000, ownsStore: true }), { appended: 9000, skipped: 0 });
  t.same(chunks.map((c) => c.events), [4000, 4000, 1000], 'alone with the log: whole chunks, however long they take');
  t.ok(pauses().every((share) => share < 0.5), `and no pause between them (${pauses().map((p) => p.toFixed(2)).join(', ')})`);
  chunks.length = 0;
  const shared = Object.assign(Object.create(alone) as EventStore, { openElsewhere: () => true });
  t.same(await importEvents(shared, 'shared.ndjson', newCategories(9000), { chunk: 4000, ownsStore: true }), { appended: 9000, skipped: 0 });
  const last = chunks.at(-1)!;
  const after = (performance.now() - last.ended) / last.ms;
  t.ok(chunks.length > 3 && chunks.slice(1).every((c) => c.events <= 2400), `another process has it open: short ones again (${chunks.map((c) => c.events).join(', ')})`);
  t.ok(pauses().every((share) => share >= 0.95), `with pauses again (${pauses().map((p) => p.toFixed(2)).join(', ')})`);
  t.ok(after < 0.5, `but none after the last (${after.toFixed(2)} of its time)`);
  // A server letting go of its pages leaves LMDB's reader table for a moment: seen there every other look only.
  chunks.length = 0;
  let looks = 0;
  const blinking = Object.assign(Object.create(alone) as EventStore, { openElsewhere: () => looks++ % 2 === 0 });
  t.same(await importEvents(blinking, 'blinking.ndjson', newCategories(9000), { chunk: 4000, ownsStore: true }), { appended: 9000, skipped: 0 });
  t.ok(chunks.length > 3 && chunks.slice(1).every((c) => c.events <= 2400), `a server gone for a moment: short ones still (${chunks.map((c) => c.events).join(', ')})`);
});

t.test('an import passes the revisions it knows while the log is as it read it, and has them looked up once another writer appended', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const real = app.runtime.store;
  // 120 categories created, then each renamed: the renames go to streams of the same file, three chunks on.
  const ids = Array.from({ length: 120 }, () => randomUUID());
  const line = (type: string, category: string, title: string) =>
    JSON.stringify({ type, id: randomUUID(), data: { institution_id: riverside, occurred_at: '2026-10-01T10:00:00Z', category_id: category, title, ...(type === 'CategoryCreated' ? { description: '' } : {}) } });
  const text = [...ids.map((id, i) => line('CategoryCreated', id, `C${i}`)), ...ids.map((id, i) => line('CategoryUpdated', id, `R${i}`))].join('\n');
  const calls: Array<{ passed: boolean; took: boolean }> = [];
  const store = Object.assign(Object.create(real) as EventStore, {
    appendMany: async (...[appends, options]: Parameters<EventStore['appendMany']>) => {
      // Before the fifth chunk (once the fourth has renamed the first 40) another writer renames the first category.
      if (calls.length === 4) await real.append(`category-${ids[0]}`, [{ id: randomUUID(), type: 'CategoryUpdated', data: JSON.parse(line('CategoryUpdated', ids[0]!, 'Elsewhere')).data }]);
      const result = await real.appendMany(appends, options);
      calls.push({ passed: options?.asOf !== undefined, took: result.tookKnown });
      return result;
    },
  });
  t.same(await importEvents(store, 'renames.ndjson', text, { chunk: 40 }), { appended: 240, skipped: 0 });
  const taken = { passed: true, took: true };
  t.same(calls.slice(0, 5), [taken, taken, taken, taken, { passed: true, took: false }], 'known while the log stayed as read (renames of the file’s own streams included); not taken once it moved');
  t.ok(calls.slice(5).every((c) => !c.passed), 'and not passed after that');
  for (const id of ids) {
    const events = await real.readStream(`category-${id}`);
    const expected = id === ids[0] ? 3 : 2;
    if (events.length !== expected || events.some((e, revision) => e.revision !== revision)) {
      t.fail(`category-${id}: revisions ${events.map((e) => e.revision).join(', ')}`);
      return;
    }
  }
  t.pass('every stream at revisions 0, 1, … in order, the other writer’s rename among them');
  t.same((await real.readStream(`category-${ids[0]}`)).map((e) => (e.data as { title: string }).title), ['C0', 'R0', 'Elsewhere']);
  t.same((await real.readStream(`category-${ids[119]}`)).map((e) => (e.data as { title: string }).title), ['C119', 'R119']);
});

t.test('lines without ids: identical lines are events of their own, with the ids earlier versions derived', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const category = randomUUID();
  const occurred = '2026-10-01T10:00:00Z';
  const created = JSON.stringify({ type: 'CategoryCreated', data: { institution_id: riverside, occurred_at: occurred, category_id: category, title: 'A', description: '' } });
  const renamed = JSON.stringify({ type: 'CategoryUpdated', data: { institution_id: riverside, occurred_at: occurred, category_id: category, title: 'B' } });
  // A line's id: SHA-256 of "<how many identical lines came before it>\n<text>", shaped as a UUID.
  const derived = (text: string, occurrence: number) => {
    const h = createHash('sha256').update(`${occurrence}\n${text}`).digest('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
  };
  const store = app.runtime.store;
  const head = await store.head();
  const ids = () => store.readAll(head, 100).then((events) => events.map((e) => e.id));
  t.same(await importEvents(store, 'one.ndjson', [created, renamed, renamed].join('\n')), { appended: 3, skipped: 0 }, 'the same update twice: two events');
  t.same(await ids(), [derived(created, 0), derived(renamed, 0), derived(renamed, 1)]);
  t.same(await importEvents(store, 'one.ndjson', [created, renamed, renamed].join('\n')), { appended: 0, skipped: 3 }, 'the file again appends nothing');
  t.same(await importEvents(store, 'two.ndjson', [created, renamed, renamed, renamed].join('\n')), { appended: 1, skipped: 3 }, 'a third copy of the line is a third event');
  t.same((await ids()).at(-1), derived(renamed, 2));
  const error = await importEvents(store, 'again.ndjson', [created, created].join('\n')).catch((e: unknown) => e);
  t.ok(error instanceof ImportError && /again\.ndjson:2:/.test(error.message), 'a second identical creation is an event of its own: refused as a creation of an existing category');
});

t.test("an import that owns its store lets go of the log's pages once it has read the log, then as it appends", async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const released: string[] = [];
  let appended = 0;
  const store = Object.assign(Object.create(app.runtime.store) as EventStore, {
    appendMany: async (...[appends, options]: Parameters<EventStore['appendMany']>) => {
      const list = [...appends];
      appended += list.length;
      return app.runtime.store.appendMany(list, options);
    },
    releaseReadPages: async () => void released.push(`release after ${appended}`),
  });
  t.same(await importEvents(store, 'many.ndjson', newCategories(3000), { chunk: 100, ownsStore: true, releaseEvery: 200 }), { appended: 3000, skipped: 0 });
  // The demo's 475 events are read in one batch that passes 200: one release there, one once the log is read.
  t.same(released.slice(0, 2), ['release after 0', 'release after 0'], 'while the log is read and once it is');
  t.same(released.slice(2), Array.from({ length: 15 }, (_, i) => `release after ${(i + 1) * 200}`), 'then every 200 events appended');
  released.length = 0;
  t.same(await importEvents(store, 'more.ndjson', newCategories(3000)), { appended: 3000, skipped: 0 });
  t.same(released, [], 'an import into a shared store (a server’s) never does');
});

t.test("a big file's lines checked on worker threads: the same events appended, and the same problems found, as on this thread", async (t) => {
  const temp = tempDir();
  t.teardown(temp.remove);
  const demo = readFileSync(join(ROOT, 'fixtures', 'demo.ndjson'), 'utf8').trimEnd().split('\n');
  const category = (i: number, withId = true) =>
    JSON.stringify({ type: 'CategoryCreated', ...(withId ? { id: randomUUID() } : {}), data: { institution_id: riverside, occurred_at: '2026-10-01T10:00:00Z', category_id: randomUUID(), title: `C${i}`, description: '' } });
  // Past two batches of 2,000 lines: blank lines, and lines without an id, one of them twice (derived ids 0 and 1).
  const renamed = randomUUID();
  const twice = JSON.stringify({ type: 'CategoryUpdated', data: { institution_id: riverside, occurred_at: '2026-10-02T10:00:00Z', category_id: renamed, title: 'Renamed' } });
  const lines = [
    ...demo,
    JSON.stringify({ type: 'CategoryCreated', data: { institution_id: riverside, occurred_at: '2026-10-01T10:00:00Z', category_id: renamed, title: 'R', description: '' } }),
    ...Array.from({ length: 4_600 }, (_, i) => (i % 997 === 0 ? '' : category(i, i % 5 !== 0))),
    twice,
    twice,
  ];
  const good = join(temp.dir, 'good.ndjson');
  writeFileSync(good, lines.join('\n'));
  const logged = async (name: string, options: Parameters<typeof importFile>[2]) => {
    const path = join(temp.dir, name);
    const store = EmbeddedEventStore.open(path);
    try {
      const summaryFile = join(temp.dir, `${name}-summary`);
      const result = await importFile(store, good, { ...options, summaryFile });
      const events = (await store.readAll(startOfLog, 100_000)).map(({ id, type, stream, data }) => ({ id, type, stream, data }));
      const renamedStream = (await store.readStream(`category-${renamed}`)).map((e) => [e.revision, e.type]);
      // The CLI's listing from the summary the import wrote (the file's keys and institutions folded as checked), and from the log.
      const listing = (await listLog(store, summaryFile)).saved();
      const listingOfLog = (await listLog(store, join(temp.dir, 'no-summary'))).saved();
      return { result, events, renamedStream, listing, listingOfLog };
    } finally {
      await store.close();
    }
  };
  const here = await logged('here', { lineWorkersFrom: Number.POSITIVE_INFINITY });
  // Alone with its log, in chunks of 1,000 events: stream entries put off, and written every 1,500 and at the end.
  const onWorkers = await logged('workers', { lineWorkersFrom: 0, lineWorkers: 3, lineBlockBytes: 40_000, ownsStore: true, chunk: 1_000, indexEvery: 1_500 });
  t.equal(here.result.appended, lines.filter((line) => line !== '').length, 'every line appended');
  t.same(here.renamedStream, [[0, 'CategoryCreated'], [1, 'CategoryUpdated'], [2, 'CategoryUpdated']]);
  t.same(onWorkers, here, 'the same events, in the same order, with the same ids (derived ones included), and the same streams');
  t.same(here.listing, here.listingOfLog, "the listing in the import's summary is the log's");
  t.ok(here.listing.keys.length > 0 && here.listing.institutions.length > 0, 'with its keys and institutions');
  // The workers pack what they know the shapes of, this thread the rest (the first of each shape, and those in
  // batches packed before they heard of it): the log holds the bytes packing on this thread alone writes.
  t.same(logBytes(join(temp.dir, 'workers')), logBytes(join(temp.dir, 'here')), 'the same bytes in the log');
  t.same(indexBytes(join(temp.dir, 'workers')), indexBytes(join(temp.dir, 'here')), 'the same stream entries');

  // With a file spool (the CLI's), the appends prepared on a thread of their own (stored events and stream entries made
  // there): chunks of 1,000, entries handed on every 1,500 events in slices of 188, and at the end.
  const prepared = await logged('prepared', { lineWorkersFrom: 0, lineWorkers: 2, lineBlockBytes: 40_000, ownsStore: true, chunk: 1_000, indexEvery: 1_500, prepareFrom: 0, spool: fileSpool(temp.dir) });
  t.same(prepared, here, 'prepared: the same events, streams and listing');
  t.same(logBytes(join(temp.dir, 'prepared')), logBytes(join(temp.dir, 'here')), 'prepared: the same bytes in the log');
  t.same(indexBytes(join(temp.dir, 'prepared')), indexBytes(join(temp.dir, 'here')), 'prepared: the same stream entries, none lagging');
  t.same(readFileSync(join(temp.dir, 'prepared-summary')), readFileSync(join(temp.dir, 'workers-summary')), 'prepared: the same summary of the log');
  const log = open({ path: join(temp.dir, 'workers'), readOnly: true });
  t.teardown(() => log.close());
  t.equal(log.openDB({ name: 'streams' }).getKeysCount(), here.result.appended, 'every stream entry written');
  t.equal(log.openDB<number, string>({ name: 'meta' }).get('indexed'), undefined, 'none lags');

  // Problems in different batches: not JSON, a schema's, a reference's.
  const bad = join(temp.dir, 'bad.ndjson');
  const broken = [...lines];
  broken[10] = '{not json';
  broken[2_500] = JSON.stringify({ type: 'CategoryCreated', data: { institution_id: riverside } });
  broken[4_200] = category(0).replace(riverside, randomUUID());
  writeFileSync(bad, broken.join('\n'));
  // With no schema problem, those of references: an unknown institution, and a reference to no record (its problem
  // names the field and the kind, which a worker sends as numbers into its batch's strings).
  const unresolved = join(temp.dir, 'unresolved.ndjson');
  const dangling = [...lines];
  dangling[4_200] = broken[4_200]!;
  const opportunity = JSON.parse(demo.find((line) => line.includes('"OpportunityCreated"'))!) as { data: Record<string, unknown> };
  const nowhere = randomUUID();
  dangling[4_300] = JSON.stringify({ type: 'OpportunityCreated', data: { ...opportunity.data, opportunity_id: randomUUID(), category_id: nowhere } });
  writeFileSync(unresolved, dangling.join('\n'));
  const problems = async (options: Parameters<typeof importFile>[2], file = bad) => {
    const dir = tempDir();
    const store = EmbeddedEventStore.open(join(dir.dir, 'log'));
    try {
      await importFile(store, file, options);
      return undefined;
    } catch (error) {
      return error instanceof ImportError ? error.problems : error;
    } finally {
      await store.close();
      dir.remove();
    }
  };
  const found = await problems({ lineWorkersFrom: Number.POSITIVE_INFINITY });
  t.ok(Array.isArray(found) && found.length > 1, 'the file is refused');
  t.same(await problems({ lineWorkersFrom: 0, lineWorkers: 2, lineBlockBytes: 30_000 }), found, 'the same problems, by line');
  const unresolvedHere = await problems({ lineWorkersFrom: Number.POSITIVE_INFINITY }, unresolved);
  t.equal(Array.isArray(unresolvedHere) && unresolvedHere.length, 2, 'two problems');
  t.match(unresolvedHere, [
    { line: 4_201, field: 'data.institution_id', message: /^unknown institution / },
    { line: 4_301, field: 'data.category_id', message: `unknown category ${nowhere} in institution ${riverside}` },
  ], 'the references that resolve to nothing are refused');
  t.same(await problems({ lineWorkersFrom: 0, lineWorkers: 2, lineBlockBytes: 30_000 }, unresolved), unresolvedHere, 'the same, checked on worker threads');
});

/**
 * The demo and 3,000 new categories in a file, and a log an import has alone until its fourth look (another process
 * has it open from then on); the store's appends and writes of stream entries, as they are called.
 */
function openedOnTheFourthLook(dir: string) {
  const file = join(dir, 'x.ndjson');
  writeFileSync(file, `${readFileSync(join(ROOT, 'fixtures', 'demo.ndjson'), 'utf8').trimEnd()}\n${newCategories(3_000)}`);
  const path = join(dir, 'log');
  const store = EmbeddedEventStore.open(path);
  let looks = 0;
  store.openElsewhere = () => ++looks > 3;
  const calls: string[] = [];
  const counted =
    <A extends unknown[], R>(name: string, call: (...args: A) => R) =>
    (...args: A): R => {
      calls.push(name);
      return call(...args);
    };
  const appendMany = store.appendMany.bind(store);
  store.appendMany = (appends, options) => counted(`append${options?.deferStreamEntries ? ', put off' : ''}`, appendMany)(appends, options);
  store.indexStreams = counted('index', store.indexStreams.bind(store));
  store.appendPrepared = counted('prepared', store.appendPrepared.bind(store));
  store.indexPrepared = counted('entries', store.indexPrepared.bind(store));
  return { file, path, store, calls };
}

t.test('an import that stops being alone with its log (a server opened it) writes the stream entries it put off before its next append', async (t) => {
  const temp = tempDir();
  t.teardown(temp.remove);
  // (The first two chunks are appended alone.)
  const { file, path, store, calls } = openedOnTheFourthLook(temp.dir);
  const { appended } = await importFile(store, file, { ownsStore: true, chunk: 1_000 });
  await store.close();
  t.same(calls.slice(0, 3), ['append, put off', 'index', 'append'], 'alone: entries put off; then they are written before the first append that is not alone');
  t.notOk(calls.slice(3).includes('append, put off'), 'and none is put off after');
  const log = open({ path, readOnly: true });
  t.teardown(() => log.close());
  t.equal(log.openDB({ name: 'streams' }).getKeysCount(), appended, 'every stream entry written');
  t.equal(log.openDB<number, string>({ name: 'meta' }).get('indexed'), undefined, 'none lags');
});

t.test('an import preparing its appends on a thread of its own that stops being alone writes the entries of those appended, and appends the rest its other way', async (t) => {
  const temp = tempDir();
  t.teardown(temp.remove);
  // (The first chunk is appended alone.)
  const { file, path, store, calls } = openedOnTheFourthLook(temp.dir);
  const { appended } = await importFile(store, file, { ownsStore: true, chunk: 1_000, prepareFrom: 0, spool: fileSpool(temp.dir) });
  const events = await store.readAll(startOfLog, 10_000);
  await store.close();
  t.same(calls.slice(0, 3), ['prepared', 'index', 'append'], 'one chunk prepared; its entries written from the log; then the rest appended the other way');
  t.notOk(calls.some((call) => call === 'entries' || call === 'append, put off'), 'no prepared entries, and none put off after');
  t.equal(events.length, appended, 'every event appended once');
  t.same(
    events.map((e) => e.position.commit),
    events.map((_, i) => BigInt(i + 1)),
    'one after another',
  );
  // The same file imported the plain way (entries written with each chunk): the same log and stream entries.
  const plain = EmbeddedEventStore.open(join(temp.dir, 'plain'));
  await importFile(plain, file);
  await plain.close();
  t.same(logBytes(path), logBytes(join(temp.dir, 'plain')), 'the same events as an import the plain way');
  const index = indexBytes(path);
  t.equal(index.streams.length, appended, 'every stream entry written');
  t.same(index, indexBytes(join(temp.dir, 'plain')), 'the same stream entries, none lagging');
});

t.test("appends prepared on a thread of their own: after a killed process's put-off entries, refused once the log moved, and an event they cannot hold handed back", async (t) => {
  const temp = tempDir();
  t.teardown(temp.remove);
  const path = join(temp.dir, 'log');
  // Another process appends 30 events to 10 streams with their entries put off, and dies without writing them.
  await putOffAndDie(path, 10, 3);
  const store = EmbeddedEventStore.open(path);
  t.teardown(() => store.close());
  const packer = new LearningPacker(await store.shapes());
  // This import's events: the next revision of each of those streams, then 25 new streams; one more of a stream
  // whose name is not ASCII (not one a prepared event's bytes hold), then another.
  const spool = fileSpool(temp.dir);
  const mine = [
    ...Array.from({ length: 10 }, (_, s) => ({ stream: `s-${s}`, revision: 3 })),
    ...Array.from({ length: 25 }, (_, s) => ({ stream: `p-${s}`, revision: 0 })),
    { stream: 'site-ö', revision: 0 },
    { stream: 'p-0', revision: 1 },
  ].map(({ stream, revision }, i) => ({ stream, revision, id: randomUUID(), type: 'CategoryCreated', data: packer.pack({ i }) }));
  for (const event of mine) spool.write(event);
  const envelope = envelopeIdOf(packer.shapes)!;
  const preparing = new PreparedAppends({ file: spool.written!(), from: 0, firstPosition: 31, envelope, chunk: 8, ahead: 1, indexEvery: 16, slice: 5 });
  t.teardown(() => preparing.stop());
  const messages: PreparerMessage[] = [];
  let asOf = await store.head();
  for (;;) {
    const message = await preparing.next();
    messages.push(message);
    if (message.kind === 'end' || message.kind === 'unfit') break;
    if (message.kind === 'entries') {
      await store.indexPrepared(message);
      continue;
    }
    const result = await store.appendPrepared(message, { asOf, shapes: packer.shapes, envelope });
    t.equal(result.tookKnown, true);
    asOf = result.position!;
    // (A chunk made over a head the log has left is refused, and nothing appended.)
    t.same(await store.appendPrepared(message, { asOf: { commit: 30n, prepare: 30n }, shapes: packer.shapes, envelope }), { position: undefined, tookKnown: false });
    preparing.taken();
  }
  const kinds = messages.map((m) => (m.kind === 'chunk' ? `chunk ${m.ends.length}` : m.kind === 'entries' ? `entries ${m.from}-${m.through}${m.last ? ' last' : ''}` : m.kind));
  t.same(
    kinds,
    [
      ...['chunk 1', 'chunk 8', 'chunk 8', 'entries 31-47', 'entries 31-47', 'entries 31-47', 'entries 31-47 last'],
      ...['chunk 8', 'chunk 8', 'entries 48-63', 'entries 48-63', 'entries 48-63', 'entries 48-63 last'],
      ...['chunk 2', 'entries 64-65 last', 'unfit'],
    ],
    'a first chunk of a tenth, then chunks of 8; entries once 16 events have been handed on and at the end, in slices of 5; the event it cannot hold handed back',
  );
  t.same(messages.at(-1), { kind: 'unfit', at: 35 }, 'the 36th');
  t.same(await store.head(), { commit: 65n, prepare: 65n }, 'the 35 before it appended');
  const read = open({ path, readOnly: true });
  t.teardown(() => read.close());
  t.equal(read.openDB<number, string>({ name: 'meta' }).get('indexed'), undefined, 'nothing lags');
  t.equal(read.openDB({ name: 'streams' }).getKeysCount(), 65, "every event's entry: the killed process's too");
  t.same((await store.readStream('s-4')).map((e) => [e.revision, e.position.commit]), [[0, 5n], [1, 15n], [2, 25n], [3, 35n]], 'a stream of both');
  t.same((await store.readStream('p-24')).map((e) => [e.revision, e.data]), [[0, { i: 34 }]]);
  // An id of a stream past its first event is found in the stream's index: its append again appends nothing.
  const again = mine[3]!;
  t.same(await store.append('s-3', [{ id: again.id, type: again.type, data: { i: 3 } }]), { nextRevision: 3, position: { commit: 34n, prepare: 34n } });
});

t.test('a prepared import into a log that holds its streams already: their revisions go on from the log', async (t) => {
  const temp = tempDir();
  t.teardown(temp.remove);
  const demo = join(ROOT, 'fixtures', 'demo.ndjson');
  // Updates of the demo's categories (each twice), between new categories.
  const categories = readFileSync(demo, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"CategoryCreated"'))
    .map((line) => (JSON.parse(line) as { data: { institution_id: string; category_id: string } }).data);
  const update = ({ institution_id, category_id }: (typeof categories)[number], i: number) =>
    JSON.stringify({ type: 'CategoryUpdated', id: randomUUID(), data: { institution_id, occurred_at: '2026-10-02T10:00:00Z', category_id, title: `Renamed ${i}` } });
  const more = join(temp.dir, 'more.ndjson');
  writeFileSync(more, [newCategories(500), ...categories.flatMap((c, i) => [update(c, i), update(c, i + 100)]), newCategories(500)].join('\n'));
  const logged = async (name: string, options: Parameters<typeof importFile>[2]) => {
    const store = EmbeddedEventStore.open(join(temp.dir, name));
    await importFile(store, demo);
    let prepared = 0;
    const appendPrepared = store.appendPrepared.bind(store);
    store.appendPrepared = (events, over) => (prepared++, appendPrepared(events, over));
    const result = await importFile(store, more, options);
    const renamed = (await store.readStream(`category-${categories[0]!.category_id}`)).map((e) => [e.revision, e.type]);
    await store.close();
    return { result, renamed, prepared };
  };
  const plain = await logged('plain', {});
  const prepared = await logged('prepared', { ownsStore: true, chunk: 300, prepareFrom: 0, spool: fileSpool(temp.dir) });
  t.equal(plain.prepared, 0, 'the plain import prepares nothing');
  t.ok(prepared.prepared >= 4, `the other appends prepared chunks (${prepared.prepared})`);
  t.same({ ...prepared, prepared: 0 }, plain, 'the same appended, and the streams go on');
  t.same(plain.renamed, [[0, 'CategoryCreated'], [1, 'CategoryUpdated'], [2, 'CategoryUpdated']]);
  t.same(logBytes(join(temp.dir, 'prepared')), logBytes(join(temp.dir, 'plain')), 'the same bytes in the log');
  t.same(indexBytes(join(temp.dir, 'prepared')), indexBytes(join(temp.dir, 'plain')), 'the same stream entries, none lagging');
});

t.test('a preparing thread that fails says so, at the next message and every one after (the import then appends its other way)', async (t) => {
  const temp = tempDir();
  t.teardown(temp.remove);
  const preparing = new PreparedAppends({ file: join(temp.dir, 'gone.spool'), from: 0, firstPosition: 1, envelope: 0x40, chunk: 8, ahead: 1, indexEvery: 16, slice: 5 });
  t.teardown(() => preparing.stop());
  await t.rejects(preparing.next(), /ENOENT|gone\.spool/, 'its error, at the next message');
  await t.rejects(preparing.next(), /ENOENT|gone\.spool/, 'and at every one after');
});

t.test("prepared appends after this process's own put-off entries: written first, so an index from the log misses none", async (t) => {
  const temp = tempDir();
  t.teardown(temp.remove);
  const path = join(temp.dir, 'log');
  const store = EmbeddedEventStore.open(path);
  const packer = new LearningPacker(await store.shapes());
  const seen = await store.head();
  // Two events with their entries put off (held by this process), then three prepared ones.
  const putOff = await store.appendMany([{ stream: 'a', events: [{ id: randomUUID(), type: 'CategoryCreated', data: { i: 0 } }, { id: randomUUID(), type: 'CategoryCreated', data: { i: 1 } }], knownRevision: -1 }], { asOf: seen, deferStreamEntries: true });
  const envelope = envelopeIdOf(packer.shapes)!;
  const values = new Uint8Array(4096);
  const ends = new Uint32Array(3);
  let end = 0;
  ['b', 'b', 'c'].forEach((stream, i) => {
    end = writeStoredEvent(values, end, envelope, randomUUID(), 'CategoryCreated', stream, stream === 'b' ? i : 0, packer.pack({ i: 2 + i }));
    ends[i] = end;
  });
  const prepared = await store.appendPrepared({ values: values.subarray(0, end), ends }, { asOf: putOff.position!, shapes: packer.shapes, envelope });
  t.equal(prepared.tookKnown, true);
  // No prepared entries handed on (an import that stopped): the entries come from the log.
  await store.indexStreams();
  t.same((await store.readStream('b')).map((e) => [e.revision, e.data]), [[0, { i: 2 }], [1, { i: 3 }]]);
  await store.close();
  const index = indexBytes(path);
  t.equal(index.streams.length, 5, "every event's entry: those put off and the prepared ones");
  t.equal(index.streamIds.length, 2, "and each stream's events past its first, by id");
  t.equal(index.indexed, undefined, 'nothing lags');
});
