/**
 * The sites command handler keeps each institution's folded registry: a
 * command reads only the registry events appended since the last one it
 * folded, so its cost does not grow with the registry's history; another
 * replica's appends are folded in before deciding (and a conflict is
 * decided again); an Idempotency-Key is remembered for 24 hours. A
 * registry's first fold reads its history a page at a time, letting other
 * work run between pages, and can be made ahead of the first command.
 */
import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { IDEMPOTENCY_RETENTION_MS, SitesCommandHandler } from '../src/commands/handler.js';
import type { BulkCreateSites } from '../src/commands/sites.js';
import type { EventStore } from '../src/eventstore/port.js';
import { DEMO_KEY, startApp, type TestApp } from './helpers.js';

const RIVERSIDE = 'bf802b36-047d-4718-ad5b-ae9ed495b23f';

const create = (titles: string[], idempotency?: { key: string; sha256: string }) => (): BulkCreateSites => ({
  kind: 'bulk-create',
  institution_id: RIVERSIDE,
  occurred_at: new Date().toISOString(),
  sites: titles.map((title) => ({ title })),
  new_ids: titles.map(() => randomUUID()),
  ...(idempotency ? { idempotency } : {}),
});

/** The store, recording the revision each read of Riverside's registry starts from (and calling `onRead` before each). */
function recording(store: EventStore, reads: number[], onRead?: () => void): EventStore {
  return Object.assign(Object.create(store) as EventStore, {
    readStream: (stream: string, fromRevision?: number, maxCount?: number) => {
      if (stream === `site-registry-${RIVERSIDE}`) {
        reads.push(fromRevision ?? 0);
        onRead?.();
      }
      return store.readStream(stream, fromRevision, maxCount);
    },
  });
}

/** Riverside's sites of these titles created, one command each: the length of its registry stream then. */
async function withSites(t: Test, app: TestApp, titles: readonly string[]): Promise<number> {
  const writer = new SitesCommandHandler(app.runtime.store, app.runtime.projector);
  for (const title of titles) t.match(await writer.execute(RIVERSIDE, create([title])), { status: 201 });
  return (await app.runtime.store.readStream(`site-registry-${RIVERSIDE}`)).length;
}

/** A count of the turns the event loop gave other work (a callback queued again and again with setImmediate), until stopped. */
function turnsCounter(): { readonly turns: () => number; stop(): void } {
  let turns = 0;
  let stopped = false;
  const turn = () => {
    turns++;
    if (!stopped) setImmediate(turn);
  };
  setImmediate(turn);
  return { turns: () => turns, stop: () => void (stopped = true) };
}

t.test('a command folds only the registry events appended since the last', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const reads: number[] = [];
  const handler = new SitesCommandHandler(recording(app.runtime.store, reads), app.runtime.projector);
  const before = (await app.runtime.store.readStream(`site-registry-${RIVERSIDE}`)).length;
  for (let i = 0; i < 5; i++) t.match(await handler.execute(RIVERSIDE, create([`Depot ${i}`])), { status: 201 });
  t.same(reads, [0, before, before + 1, before + 2, before + 3], 'the first reads the stream, each next only what came after');
});

t.test('another replica’s appends are folded in before deciding', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const one = new SitesCommandHandler(app.runtime.store, app.runtime.projector);
  const other = new SitesCommandHandler(app.runtime.store, app.runtime.projector);
  t.match(await one.execute(RIVERSIDE, create(['North depot'])), { status: 201 });
  t.match(await other.execute(RIVERSIDE, create(['South depot'])), { status: 201 });
  t.match(await one.execute(RIVERSIDE, create(['south DEPOT '])), { status: 400, detail: /already exists/ }, 'the other replica’s site is known');
  // Both at once, on one registry revision: one appends first, the other decides again.
  const [a, b] = await Promise.all([one.execute(RIVERSIDE, create(['East depot'])), other.execute(RIVERSIDE, create(['East depot']))]);
  t.same([a.status, b.status].sort(), [201, 400], 'the same title from two replicas at once: created once');
});

t.test('an Idempotency-Key is remembered for 24 hours after its request', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  let now = Date.now();
  const handler = new SitesCommandHandler(app.runtime.store, app.runtime.projector, () => now);
  const key = { key: 'retry-me', sha256: 'a'.repeat(64) };
  const first = await handler.execute(RIVERSIDE, create(['West depot'], key));
  t.equal(first.status, 201);
  now += IDEMPOTENCY_RETENTION_MS - 60_000;
  t.same(await handler.execute(RIVERSIDE, create(['West depot'], key)), { ...first, replayed: true }, 'within 24 hours: the first answer again');
  now += 120_000;
  t.match(await handler.execute(RIVERSIDE, create(['West depot'], key)), { status: 400, detail: /already exists/ }, 'after: decided as a new request');
});

t.test('the first fold reads the registry a page at a time, and other work runs between pages', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const length = await withSites(t, app, Array.from({ length: 10 }, (_, i) => `Depot ${i}`));

  const reads: number[] = [];
  const turnsAtRead: number[] = [];
  const counter = turnsCounter();
  t.teardown(() => counter.stop());
  const reader = new SitesCommandHandler(
    recording(app.runtime.store, reads, () => turnsAtRead.push(counter.turns())),
    app.runtime.projector,
    Date.now,
    4,
  );
  t.match(await reader.execute(RIVERSIDE, create(['depot 0'])), { status: 400, detail: /already exists/ }, 'a site of the first page is known');
  t.match(await reader.execute(RIVERSIDE, create(['DEPOT 9'])), { status: 400, detail: /already exists/ }, 'and one of the last');
  const pages = Math.floor(length / 4) + 1;
  t.same(reads.slice(0, pages), Array.from({ length: pages }, (_, k) => 4 * k), 'pages of 4 events, each from where the last ended');
  t.same(reads.slice(pages), [length], 'the next command reads only what came after');
  for (let k = 1; k < pages; k++) t.ok(turnsAtRead[k]! > turnsAtRead[k - 1]!, `other work ran between pages ${k} and ${k + 1}`);
});

t.test('foldAll folds registries ahead of their first command, and stops when told', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const length = await withSites(t, app, Array.from({ length: 6 }, (_, i) => `Yard ${i}`));

  const reads: number[] = [];
  const ahead = new SitesCommandHandler(recording(app.runtime.store, reads), app.runtime.projector, Date.now, 4);
  await ahead.foldAll([RIVERSIDE], new AbortController().signal);
  t.equal(reads.at(-1), 4 * Math.floor(length / 4), 'folded to the end of the stream');
  reads.length = 0;
  t.match(await ahead.execute(RIVERSIDE, create(['yard 5'])), { status: 400, detail: /already exists/ });
  t.same(reads, [length], 'its first command reads only what came after');

  const stopped = new AbortController();
  const stopping: number[] = [];
  const told = new SitesCommandHandler(recording(app.runtime.store, stopping, () => stopped.abort()), app.runtime.projector, Date.now, 4);
  await told.foldAll([RIVERSIDE, RIVERSIDE], stopped.signal);
  t.same(stopping, [0], 'stopped after the page under way');
  await told.foldAll([RIVERSIDE], stopped.signal);
  t.same(stopping, [0], 'and nothing once stopped');
  stopping.length = 0;
  t.match(await told.execute(RIVERSIDE, create(['YARD 0'])), { status: 400, detail: /already exists/ }, 'a command goes on from where the fold stopped');
  t.same(stopping.slice(0, 2), [4, 8], 'from the page after the one folded');
});

t.test('the server folds every institution’s registry once it is ready, before any command', async (t) => {
  const reads: number[] = [];
  const app = await startApp({ fixtures: ['demo.ndjson'], commandStore: (store) => recording(store, reads) });
  t.teardown(() => app.close());
  for (let waited = 0; waited < 5_000 && !reads.includes(0); waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
  t.ok(reads.includes(0), 'the registry was read from its start with no command sent');
  const length = (await app.runtime.store.readStream(`site-registry-${RIVERSIDE}`)).length;
  reads.length = 0;
  const res = await app.server.inject({
    method: 'POST',
    url: '/api/sites/bulk-create/',
    headers: { 'api-key': DEMO_KEY, 'content-type': 'application/json' },
    payload: { sites: [{ title: 'Folded ahead' }] },
  });
  t.equal(res.statusCode, 201);
  t.same(reads, [length], 'the first command reads only what came after');
});
