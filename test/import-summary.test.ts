/**
 * An import keeps a summary of what it read of the log (ids, records, keys, streams' revisions) in the DATA_DIR, so
 * that the next import reads only the log after it — and checks its file exactly as if it had read the whole log.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { EmbeddedEventStore } from '../src/eventstore/embedded.js';
import type { EventStore } from '../src/eventstore/port.js';
import { listLog } from '../src/cli/listing.js';
import { ImportError, importEvents } from '../src/importer/import.js';
import { readFixture, tempDir } from './helpers.js';

/** The demo's Riverside institution. */
const riverside = 'bf802b36-047d-4718-ad5b-ae9ed495b23f';
const occurred_at = '2026-10-01T10:00:00Z';

/** A line of Riverside's; `id` null: a line without an id. */
const line = (type: string, data: Record<string, unknown>, id: string | null = randomUUID()) =>
  JSON.stringify({ type, ...(id === null ? {} : { id }), data: { institution_id: riverside, occurred_at, ...data } });
const categoryCreated = (category: string, id?: string | null) => line('CategoryCreated', { category_id: category, title: 'C', description: '' }, id);
const opportunityCreated = (opportunity: string, category: string) =>
  line('OpportunityCreated', { opportunity_id: opportunity, category_id: category, title: 'O', description: '', status: 1 });

/** A store over a new log in a new DATA_DIR, the demo imported into it, and a count of the events its imports read. */
async function demoLog(t: Test) {
  const temp = tempDir();
  const real = EmbeddedEventStore.open(join(temp.dir, 'log'));
  t.teardown(async () => {
    await real.close();
    temp.remove();
  });
  const counted = { read: 0 };
  const store = Object.assign(Object.create(real) as EventStore, {
    readAll: async (...args: Parameters<EventStore['readAll']>) => {
      const batch = await real.readAll(...args);
      counted.read += batch.length;
      return batch;
    },
  });
  const summaryFile = join(temp.dir, 'import-summary');
  const demo = readFixture('demo.ndjson');
  const imported = await importEvents(store, 'demo.ndjson', demo, { summaryFile });
  return { dir: temp.dir, real, store, counted, summaryFile, demo, imported };
}

t.test('an import writes a summary of the log; the next reads only the log after it, and checks its file as if it had read it all', async (t) => {
  const { store, counted, summaryFile, demo, imported } = await demoLog(t);
  t.ok(imported.appended > 400, `the demo appended (${imported.appended} events)`);
  t.ok(statSync(summaryFile).size > 0, 'the summary is written');
  counted.read = 0;
  t.same(await importEvents(store, 'demo.ndjson', demo, { summaryFile }), { appended: 0, skipped: imported.appended }, 'the demo again: every event already in the log');
  t.equal(counted.read, 0, 'and not one event of the log read');

  // References to what the summary holds, and refusals of what it does not.
  const category = randomUUID();
  const opportunity = randomUUID();
  t.same(await importEvents(store, 'new.ndjson', [categoryCreated(category), opportunityCreated(opportunity, category)].join('\n'), { summaryFile }), { appended: 2, skipped: 0 });
  t.equal(counted.read, 0, 'a new file: nothing of the log read either');
  const refused = await importEvents(store, 'bad.ndjson', [opportunityCreated(randomUUID(), randomUUID()), categoryCreated(category)].join('\n'), { summaryFile }).catch((e: unknown) => e);
  t.ok(refused instanceof ImportError, 'refused');
  t.match((refused as ImportError).problems, [
    { line: 1, field: 'data.category_id', message: /unknown category/ },
    { line: 2, field: 'data.category_id', message: `category ${category} already exists` },
  ]);
  t.same(await importEvents(store, 'uses.ndjson', opportunityCreated(randomUUID(), category), { summaryFile }), { appended: 1, skipped: 0 }, 'the category the last import created is known');
  t.equal(counted.read, 0);
});

t.test('lines without ids: their derived ids are in the summary as the log has them', async (t) => {
  const { store, summaryFile } = await demoLog(t);
  const category = randomUUID();
  const renamed = line('CategoryUpdated', { category_id: category, title: 'B' }, null);
  const text = [categoryCreated(category, null), renamed, renamed].join('\n');
  t.same(await importEvents(store, 'one.ndjson', text, { summaryFile }), { appended: 3, skipped: 0 });
  t.same(await importEvents(store, 'one.ndjson', text, { summaryFile }), { appended: 0, skipped: 3 }, 'the file again appends nothing');
  t.same(await importEvents(store, 'two.ndjson', `${text}\n${renamed}`, { summaryFile }), { appended: 1, skipped: 3 }, 'a third copy of the line is a third event');
});

t.test('what other writers appended after the summary is read and taken in', async (t) => {
  const { real, store, counted, summaryFile } = await demoLog(t);
  const category = randomUUID();
  await real.append(`category-${category}`, [{ id: randomUUID(), type: 'CategoryCreated', data: JSON.parse(categoryCreated(category)).data }]);
  counted.read = 0;
  t.same(await importEvents(store, 'uses.ndjson', opportunityCreated(randomUUID(), category), { summaryFile }), { appended: 1, skipped: 0 }, "another writer's category is known");
  t.equal(counted.read, 1, 'the one event after the summary read');
  counted.read = 0;
  t.same(await importEvents(store, 'empty.ndjson', '', { summaryFile }), { appended: 0, skipped: 0 });
  t.equal(counted.read, 0, 'and the summary moved past it');
});

t.test("an import another writer appended during is summarized up to what it read: the next reads its events again and takes their revisions", async (t) => {
  const { real, counted, summaryFile } = await demoLog(t);
  const categories = Array.from({ length: 30 }, () => randomUUID());
  const elsewhere = randomUUID();
  let chunks = 0;
  const store = Object.assign(Object.create(real) as EventStore, {
    readAll: async (...args: Parameters<EventStore['readAll']>) => {
      const batch = await real.readAll(...args);
      counted.read += batch.length;
      return batch;
    },
    appendMany: async (...[appends, options]: Parameters<EventStore['appendMany']>) => {
      // Between the import's first and second chunks, another writer creates a category.
      if (chunks++ === 1) await real.append(`category-${elsewhere}`, [{ id: randomUUID(), type: 'CategoryCreated', data: JSON.parse(categoryCreated(elsewhere)).data }]);
      return real.appendMany(appends, options);
    },
  });
  const text = categories.map((c) => categoryCreated(c)).join('\n');
  t.same(await importEvents(store, 'cats.ndjson', text, { summaryFile, chunk: 10 }), { appended: 30, skipped: 0 });
  counted.read = 0;
  // Renames of the import's own categories need their streams' revisions (1 each), the other writer's category is known.
  const renames = categories.map((c) => line('CategoryUpdated', { category_id: c, title: 'R' }));
  t.same(await importEvents(store, 'more.ndjson', [...renames, opportunityCreated(randomUUID(), elsewhere)].join('\n'), { summaryFile }), { appended: 31, skipped: 0 });
  t.equal(counted.read, 31, "the import's 30 events and the other writer's read again");
  for (const c of categories) {
    const revisions = (await real.readStream(`category-${c}`)).map((e) => e.revision);
    if (revisions.join() !== '0,1') t.fail(`category-${c}: revisions ${revisions.join()}`);
  }
  t.same(await importEvents(store, 'cats.ndjson', text, { summaryFile }), { appended: 0, skipped: 30 }, 'the first file again: nothing');
  const refused = await importEvents(store, 'again.ndjson', categoryCreated(categories[0]!), { summaryFile }).catch((e: unknown) => e);
  t.match(refused, ImportError, 'a category the first import created cannot be created again');
});

t.test('a summary is used only for the log it was made of, whole, and a failed import leaves it as it was', async (t) => {
  const first = await demoLog(t);
  const second = await demoLog(t);
  const summary = readFileSync(first.summaryFile);
  const check = async (what: string, file: string) => {
    second.counted.read = 0;
    const category = randomUUID();
    t.same(await importEvents(second.store, 'x.ndjson', [categoryCreated(category), opportunityCreated(randomUUID(), category)].join('\n'), { summaryFile: file }), { appended: 2, skipped: 0 }, what);
    t.ok(second.counted.read > 400, `${what}: the whole log read (${second.counted.read} events)`);
  };
  // Another log with the same events at the same places would do; one with a summary's event elsewhere does not.
  await second.real.append(`category-${randomUUID()}`, [{ id: randomUUID(), type: 'CategoryCreated', data: JSON.parse(categoryCreated(randomUUID())).data }]);
  writeFileSync(first.summaryFile, summary);
  const other = join(first.dir, 'other-summary');
  await importEvents(first.store, 'y.ndjson', categoryCreated(randomUUID()), { summaryFile: other });
  await check("another log's summary", other);
  writeFileSync(second.summaryFile, readFileSync(second.summaryFile).subarray(0, 5000));
  await check('a summary cut short', second.summaryFile);
  writeFileSync(second.summaryFile, 'not a summary');
  await check('a file that is no summary', second.summaryFile);
  writeFileSync(second.summaryFile, Buffer.concat([Buffer.from('VMLOGSUM'), Buffer.alloc(8, 0xff)]));
  await check('a summary of another format', second.summaryFile);

  const before = readFileSync(first.summaryFile);
  const bad = await importEvents(first.store, 'bad.ndjson', opportunityCreated(randomUUID(), randomUUID()), { summaryFile: first.summaryFile }).catch((e: unknown) => e);
  t.match(bad, ImportError);
  t.same(readFileSync(first.summaryFile), before, 'a refused import leaves the summary as it was');
  t.same(
    readdirSync(first.dir).filter((name) => name.startsWith('import-') && name !== 'import-summary'),
    [],
    'and nothing else in the DATA_DIR',
  );
});

t.test("the CLI's listing (keys, institutions, records per resource) from the summary and the log after it is the listing of the whole log", async (t) => {
  const { dir, real, store, counted, summaryFile } = await demoLog(t);
  const key = randomUUID();
  const text = [
    line('ApiKeyIssued', { key_id: key, key_sha256: 'ab'.repeat(32), label: 'from a file' }),
    line('InstitutionUpdated', { name: 'Riverside, renamed' }),
    categoryCreated(randomUUID()),
  ].join('\n');
  t.same(await importEvents(store, 'keys.ndjson', text, { summaryFile }), { appended: 3, skipped: 0 });
  // Another writer revokes the key the file issued.
  await real.append(`apikey-${key}`, [{ id: randomUUID(), type: 'ApiKeyRevoked', data: { institution_id: riverside, occurred_at: '2026-10-02T10:00:00Z', key_id: key } }]);
  counted.read = 0;
  const listed = await listLog(store, summaryFile);
  t.equal(counted.read, 1, 'only the event after the summary read');
  const whole = await listLog(store, join(dir, 'no-summary'));
  t.ok(counted.read > 400, 'without a summary, the whole log read');
  t.same(listed.saved(), whole.saved(), 'the same listing either way');
  t.match(listed.keys.get(key), { institution: riverside, label: 'from a file', created: occurred_at, revoked: '2026-10-02T10:00:00Z' });
  // The reference checks' key ledger, made again from the summary's: the same key is not issued twice.
  counted.read = 0;
  const again = await importEvents(store, 'again.ndjson', line('ApiKeyIssued', { key_id: randomUUID(), key_sha256: 'ab'.repeat(32) }), { summaryFile }).catch((e: unknown) => e);
  t.match(again, ImportError, 'a key issued before the summary is not issued again');
  t.equal(counted.read, 1, 'checked against the summary and the one event after it');
  const institution = listed.institutions.get(riverside)!;
  t.equal(institution.name, 'Riverside, renamed');
  t.ok((institution.records.get('categories') ?? 0) > 1, `categories counted (${institution.records.get('categories')})`);
});

t.test('a listing that read many events past the summary (or had none) writes one', async (t) => {
  const { dir, real, store, counted } = await demoLog(t);
  const summaryFile = join(dir, 'listed-summary');
  await listLog(store, summaryFile, 1_000);
  t.notOk(existsSync(summaryFile), 'fewer events than the threshold: none written');
  counted.read = 0;
  const whole = (await listLog(store, summaryFile, 100)).saved();
  t.ok(existsSync(summaryFile) && counted.read > 400, `the whole log read (${counted.read} events), and a summary written`);
  counted.read = 0;
  t.same((await listLog(store, summaryFile, 100)).saved(), whole, 'the next listing the same');
  t.equal(counted.read, 0, 'from the summary alone');
  await real.append(`category-${randomUUID()}`, [{ id: randomUUID(), type: 'CategoryCreated', data: JSON.parse(categoryCreated(randomUUID())).data }]);
  const category = randomUUID();
  counted.read = 0;
  t.same(await importEvents(store, 'x.ndjson', [categoryCreated(category), opportunityCreated(randomUUID(), category)].join('\n'), { summaryFile }), { appended: 2, skipped: 0 });
  t.equal(counted.read, 1, "an import reads only what came after the listing's summary");
});
