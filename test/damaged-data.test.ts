/**
 * Damaged or missing data: a read model that is truncated, overwritten, from
 * another version of the projections, or missing is dropped and rebuilt from
 * the log, with one clear log line, and answers as before; a log that cannot
 * be opened stops `serve` and `import` with a message naming the path and
 * the problem (exit 1, no stack trace) before anything is served; an append
 * failing midway through an import (a full disk) fails the import with a
 * clear message and leaves the log holding the chunks appended before,
 * whole, and nothing of the one that failed; `vm-api repair-log` copies a
 * log's events into a new one that takes its place.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import t from 'tap';
import { EmbeddedEventStore } from '../src/eventstore/embedded.js';
import { type EventStore, startOfLog } from '../src/eventstore/port.js';
import { ImportAppendError, importEvents } from '../src/importer/import.js';
import { ReadModelStore } from '../src/readmodel/persistence.js';
import { ROOT, serveWarmingUp, startApp, tempDir } from './helpers.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const RIVERSIDE = 'bf802b36-047d-4718-ad5b-ae9ed495b23f';

async function vmApi(dir: string, ...args: string[]) {
  return run(process.execPath, [CLI, ...args], { env: { ...process.env, DATA_DIR: dir, PORT: '0' }, timeout: 20_000 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
}

const lists = ['/api/shifts/?limit=100', '/api/profiles/?limit=100', '/api/sites/'];

t.test('a damaged, outdated or missing read model is dropped and rebuilt from the log, with one log line', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  const first = await startApp({ dir: tmp.dir, keep: true, fixtures: ['demo.ndjson'] });
  const expected = await Promise.all(lists.map(async (url) => (await first.get(url)).text));
  await first.close();
  const model = join(tmp.dir, 'readmodel');
  const damages: Array<[string, () => void | Promise<void>, RegExp]> = [
    ['truncated', () => truncateSync(join(model, 'data.mdb'), 20_000), /read model unreadable: dropped.*truncated/],
    ['overwritten', () => writeFileSync(join(model, 'data.mdb'), 'not a database'), /read model unreadable: dropped.*shorter than its first page/],
    [
      'from another version',
      async () => {
        const disk = ReadModelStore.open(model);
        await disk.write([], [], { commit: 1n, prepare: 1n });
        // A version no projections ever had.
        await (disk as unknown as { meta: { put(k: string, v: number): Promise<void> } }).meta.put('version', -7);
        await disk.close();
      },
      /made by another version of the projections: dropped/,
    ],
    ['missing', () => rmSync(model, { recursive: true, force: true }), /$^/],
  ];
  for (const [name, damage, logged] of damages) {
    // A good read model to damage: what the last start wrote.
    await (await serveWarmingUp(tmp.dir, { parallelFrom: 100 }).then(async (app) => (await app.ready, app))).close();
    await damage();
    const lines: Array<{ msg: string; problem?: string }> = [];
    const logger = pino({ level: 'warn' }, { write: (text: string) => void lines.push(JSON.parse(text)) });
    const app = await serveWarmingUp(tmp.dir, { parallelFrom: 100, logger });
    await app.ready;
    t.same(await Promise.all(lists.map(async (url) => (await app.get(url)).text)), expected, `${name}: answers as before`);
    const said = lines.map((l) => `${l.msg} ${l.problem ?? ''}`);
    if (name === 'missing') t.same(said, [], 'missing: nothing to say');
    else t.equal(said.filter((l) => logged.test(l)).length, 1, `${name}: one log line says so (${said.join(' | ')})`);
    await app.close();
  }
});

t.test('a log that cannot be opened stops serve and import with the path and the problem, no stack trace', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  t.equal((await vmApi(tmp.dir, 'import', join(ROOT, 'fixtures', 'demo.ndjson'))).code, 0);
  truncateSync(join(tmp.dir, 'log', 'data.mdb'), 30_000);
  for (const args of [['serve'], ['import', join(ROOT, 'fixtures', 'demo.ndjson')], ['rebuild']]) {
    const result = await vmApi(tmp.dir, ...args);
    t.equal(result.code, 1, `${args[0]}: exit 1`);
    t.match(result.stderr, new RegExp(`cannot open the event log at ${join(tmp.dir, 'log')}: .*truncated`), `${args[0]}: names the path and the problem`);
    t.notMatch(result.stderr, /\n\s+at /, `${args[0]}: no stack trace`);
    t.notMatch(result.stdout, /listening|API at/, `${args[0]}: nothing served`);
  }
});

t.test('an append failing midway through an import: a clear message, the chunks before it whole, nothing of it', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const before = (await app.runtime.store.head()).commit;
  // More than one chunk of events (4,000 a chunk here, below the import's own bound), and a disk that fills up at the second.
  const text = Array.from({ length: 5_000 }, (_, i) =>
    JSON.stringify({ type: 'CategoryCreated', id: randomUUID(), data: { institution_id: RIVERSIDE, occurred_at: '2026-10-01T10:00:00Z', category_id: randomUUID(), title: `C${i}`, description: '' } }),
  ).join('\n');
  let chunks = 0;
  const store = Object.assign(Object.create(app.runtime.store) as EventStore, {
    appendMany: (...[appends, options]: Parameters<EventStore['appendMany']>) => {
      if (++chunks === 2) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      return app.runtime.store.appendMany(appends, options);
    },
  });
  const error = await importEvents(store, 'big.ndjson', text, { chunk: 4_000 }).catch((e: unknown) => e);
  t.ok(error instanceof ImportAppendError);
  t.match((error as Error).message, /^big\.ndjson: appending to the log failed after 4000 of 5000 events \(ENOSPC: no space left on device, write\); the log holds those 4000/);
  t.equal((await app.runtime.store.head()).commit - before, 4_000n, 'the first chunk whole, nothing of the second');
  const again = await importEvents(app.runtime.store, 'big.ndjson', text);
  t.same(again, { appended: 1_000, skipped: 4_000 }, 'importing the file again appends the rest');
});

t.test('repair-log copies every event into a new log, which takes the old one’s place (kept beside it)', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  t.equal((await vmApi(tmp.dir, 'import', join(ROOT, 'fixtures', 'demo.ndjson'))).code, 0);
  const before = await eventsOf(join(tmp.dir, 'log'));
  const result = await vmApi(tmp.dir, 'repair-log');
  t.equal(result.code, 0, result.stderr);
  const kept = readdirSync(tmp.dir).filter((name) => name.startsWith('log-damaged-'));
  t.equal(kept.length, 1, 'the old log kept beside');
  t.match(result.stdout, new RegExp(`copied ${before.length} events into a new log in .*; the old one is kept in .*${kept[0]}`));
  t.same(await eventsOf(join(tmp.dir, 'log')), before, 'every event, with its id, type, stream, revision, position and data');
  t.same(await eventsOf(join(tmp.dir, kept[0]!)), before, 'the old log untouched');
  t.notOk(readdirSync(tmp.dir).some((name) => name.startsWith('log-repairing')), 'nothing of the copy left over');
  // The new log takes appends, and serves.
  const line = JSON.stringify({ type: 'CategoryCreated', data: { institution_id: RIVERSIDE, occurred_at: '2026-10-01T10:00:00Z', category_id: randomUUID(), title: 'After the repair', description: '' } });
  writeFileSync(join(tmp.dir, 'more.ndjson'), line + '\n');
  t.equal((await vmApi(tmp.dir, 'import', join(tmp.dir, 'more.ndjson'))).code, 0, 'an import appends to the new log');
  t.equal((await eventsOf(join(tmp.dir, 'log'))).length, before.length + 1);

  const none = tempDir();
  t.teardown(none.remove);
  const missing = await vmApi(none.dir, 'repair-log');
  t.equal(missing.code, 1);
  t.match(missing.stderr, /^no event log in .*: nothing to repair\n$/, 'no log: one line, exit 1');
});

async function eventsOf(path: string) {
  const store = EmbeddedEventStore.open(path, { readOnly: true });
  try {
    return await store.readAll(startOfLog, 1_000_000);
  } finally {
    await store.close();
  }
}
