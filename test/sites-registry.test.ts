/**
 * The sites command handler keeps each institution's folded registry: a
 * command reads only the registry events appended since the last one it
 * folded, so its cost does not grow with the registry's history; another
 * replica's appends are folded in before deciding (and a conflict is
 * decided again); an Idempotency-Key is remembered for 24 hours.
 */
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { IDEMPOTENCY_RETENTION_MS, SitesCommandHandler } from '../src/commands/handler.js';
import type { BulkCreateSites } from '../src/commands/sites.js';
import type { EventStore } from '../src/eventstore/port.js';
import { startApp } from './helpers.js';

const RIVERSIDE = 'bf802b36-047d-4718-ad5b-ae9ed495b23f';

const create = (titles: string[], idempotency?: { key: string; sha256: string }) => (): BulkCreateSites => ({
  kind: 'bulk-create',
  institution_id: RIVERSIDE,
  occurred_at: new Date().toISOString(),
  sites: titles.map((title) => ({ title })),
  new_ids: titles.map(() => randomUUID()),
  ...(idempotency ? { idempotency } : {}),
});

/** The store, recording the revision each registry read starts from. */
function recording(store: EventStore, reads: number[]): EventStore {
  return Object.assign(Object.create(store) as EventStore, {
    readStream: (stream: string, fromRevision?: number) => {
      if (stream.startsWith('site-registry-')) reads.push(fromRevision ?? 0);
      return store.readStream(stream, fromRevision);
    },
  });
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
