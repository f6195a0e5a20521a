/**
 * Start-up as `vm-api serve` runs it: the server listens at once and the
 * read model is made ready meanwhile (src/readmodel/warm-up.ts). Until it
 * is, /api/ answers 503 with Retry-After and /healthz says `catching_up`
 * with its progress. Each state it can start from — an empty read model,
 * a snapshot, a snapshot and a journal, a log further ahead than the
 * threshold (replayed on threads into a new snapshot) — ends answering
 * every snapshot request byte for byte as a replay of the same log does.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { type DomainEvent, streamOf } from '../src/events/catalog.js';
import type { EventStore, Position } from '../src/eventstore/port.js';
import { EmbeddedEventStore } from '../src/eventstore/embedded.js';
import { areas } from './snapshots/cases.js';
import { resolver } from './snapshots/resolve.js';
import { DEMO_KEY, HARBOR_KEY, serveWarmingUp, startApp, tempDir, type TestApp, until } from './helpers.js';

const cases = Object.values(areas).flat();
const keys = { riverside: DEMO_KEY, harbor: HARBOR_KEY, none: null } as const;
const RIVERSIDE = 'bf802b36-047d-4718-ad5b-ae9ed495b23f';

async function texts(app: Pick<TestApp, 'get'>): Promise<string[]> {
  const resolve = await resolver(app as TestApp);
  const out: string[] = [];
  for (const c of cases) {
    const res = await app.get(resolve(c.url), keys[c.as ?? 'riverside']);
    out.push(`${res.status} ${res.text}`);
  }
  return out;
}

/** The answers of a read model replayed from a copy of `dir`'s log. */
async function replayed(dir: string): Promise<string[]> {
  const copy = tempDir();
  try {
    cpSync(join(dir, 'log'), join(copy.dir, 'log'), { recursive: true });
    const app = await startApp({ dir: copy.dir, keep: true });
    const out = await texts(app);
    await app.close();
    return out;
  } finally {
    copy.remove();
  }
}

async function append(dir: string, n: number): Promise<Position> {
  const store = EmbeddedEventStore.open(join(dir, 'log'));
  let position: Position | undefined;
  for (let i = 0; i < n; i++) {
    const event: DomainEvent = {
      type: 'CategoryCreated',
      data: { institution_id: RIVERSIDE, occurred_at: '2026-10-01T10:00:00Z', category_id: randomUUID(), title: `Category ${i}`, description: '' },
    };
    position = (await store.append(streamOf(event), [{ id: randomUUID(), type: event.type, data: event.data }])).position;
  }
  await store.close();
  return position!;
}

t.test('until the read model is ready: /api/ answers 503 with Retry-After, /healthz says catching_up', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  await (await startApp({ dir: tmp.dir, keep: true, fixtures: ['demo.ndjson'] })).close();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  // The warm-up waits at its first look at the log.
  const app = await serveWarmingUp(tmp.dir, {
    parallelFrom: 100_000,
    store: (store) => Object.assign(Object.create(store) as EventStore, { head: async () => (await gate, store.head()) }),
  });
  t.teardown(() => app.close());
  const refused = await app.get('/api/shifts/');
  t.equal(refused.status, 503);
  t.match(refused.body, { detail: /^The read model is being prepared \(starting, 0 %\); retry in \d+ s\.$/ });
  t.match(refused.headers['retry-after'], /^\d+$/);
  const health = (await app.get('/healthz', null)).body;
  t.equal(health.status, 'catching_up');
  t.match(health.warm_up, { phase: 'starting', done: 0, percent: 0 });
  release();
  await app.ready;
  t.equal((await app.get('/api/shifts/')).status, 200, 'answered once ready');
  t.equal((await app.get('/healthz', null)).body.warm_up, null);
});

t.test('every state a server starts from ends answering as a replay of its log does', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.remove);
  // An empty read model over a log longer than the threshold: replayed on two threads into a snapshot.
  const demo = await startApp({ fixtures: ['demo.ndjson'] });
  const expected = await texts(demo);
  cpSync(join(demo.dir, 'log'), join(tmp.dir, 'log'), { recursive: true });
  await demo.close();
  // The replay lets go of the log's pages every 50 events it reads (this thread reads the log for its threads).
  let releases = 0;
  const counted = (store: EventStore) =>
    Object.assign(Object.create(store) as EventStore, {
      releaseReadPages: async () => {
        releases++;
        await store.releaseReadPages!();
      },
    });
  let app = await serveWarmingUp(tmp.dir, { parallelFrom: 100, releaseEvery: 50, store: counted });
  await app.ready;
  t.equal(app.runtime.projector.status().eventsApplied, 0, 'empty, far behind: replayed on threads, loaded, nothing left to fold');
  t.same(await texts(app), expected, 'empty read model');
  // The log is read 1,000 events at a time: the demo's 475 are one read, past 50.
  t.equal(releases, 1, "the log's pages let go of once 50 events were read (and none read since by the end)");
  await app.close();

  // From the snapshot just written.
  app = await serveWarmingUp(tmp.dir, { parallelFrom: 100 });
  await app.ready;
  t.equal(app.runtime.projector.status().eventsApplied, 0);
  t.same(await texts(app), expected, 'snapshot');
  // Events applied while serving go to the journal.
  const position = await append(tmp.dir, 5);
  await until(() => (app.runtime.projector.status().position.commit >= position.commit ? true : undefined));
  await app.close();

  // From the snapshot and its journal.
  app = await serveWarmingUp(tmp.dir, { parallelFrom: 100 });
  await app.ready;
  t.equal(app.runtime.projector.status().eventsApplied, 0, 'snapshot and journal: nothing to replay');
  t.same(await texts(app), await replayed(tmp.dir), 'snapshot and journal');
  await app.close();

  // A log ahead of the read model by less than the threshold: caught up one event at a time, while ready.
  await append(tmp.dir, 20);
  app = await serveWarmingUp(tmp.dir, { parallelFrom: 100 });
  await app.ready;
  await until(() => (app.runtime.projector.status().caughtUp ? true : undefined));
  t.equal(app.runtime.projector.status().eventsApplied, 20, 'a little behind: the 20 events folded');
  t.same(await texts(app), await replayed(tmp.dir), 'a little behind');
  await app.close();

  // A log ahead by more than the threshold: replayed on threads again.
  await append(tmp.dir, 120);
  app = await serveWarmingUp(tmp.dir, { parallelFrom: 100 });
  await app.ready;
  t.equal(app.runtime.projector.status().eventsApplied, 0, 'far behind: replayed on threads, not folded one by one');
  t.same(await texts(app), await replayed(tmp.dir), 'far behind');
  await app.close();
});
