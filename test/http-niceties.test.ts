/**
 * HTTP niceties: gzip and brotli when the client asks (the same bytes once
 * decoded), and conditional GETs — a weak ETag on every GET under /api/ that
 * changes exactly when the institution's data changes (another institution's
 * change leaves it), differs by URL and by institution, and a matching
 * If-None-Match answered 304 with no body. No tag while the searches of
 * an institution show a big table as it was before its latest changes (the
 * server publishes them in the background).
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import t from 'tap';
import { type DomainEvent, streamOf } from '../src/events/catalog.js';
import { Table } from '../src/readmodel/table.js';
import { DEMO_KEY, HARBOR_KEY, startApp, type TestApp, until } from './helpers.js';

const RIVERSIDE = 'bf802b36-047d-4718-ad5b-ae9ed495b23f';
const HARBOR = 'e6021ee4-7305-477f-9f9e-4b7582009a7f';

async function append(app: TestApp, institution: string): Promise<void> {
  const event: DomainEvent = { type: 'CategoryCreated', data: { institution_id: institution, occurred_at: '2026-10-01T10:00:00Z', category_id: randomUUID(), title: 'New', description: '' } };
  const { position } = await app.runtime.store.append(streamOf(event), [{ id: randomUUID(), type: event.type, data: event.data }]);
  await app.runtime.projector.waitFor(position);
}

t.test('gzip and brotli when asked', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const plain = await app.server.inject({ method: 'GET', url: '/api/shifts/?limit=50', headers: { 'api-key': DEMO_KEY } });
  t.equal(plain.headers['content-encoding'], undefined);
  for (const [encoding, decode] of [['gzip', gunzipSync], ['br', brotliDecompressSync]] as const) {
    const res = await app.server.inject({ method: 'GET', url: '/api/shifts/?limit=50', headers: { 'api-key': DEMO_KEY, 'accept-encoding': encoding } });
    t.equal(res.headers['content-encoding'], encoding);
    t.ok(res.rawPayload.length < plain.rawPayload.length / 3, `${encoding}: ${res.rawPayload.length} of ${plain.rawPayload.length} bytes`);
    t.equal(decode(res.rawPayload).toString(), plain.body, `${encoding}: the same answer`);
  }
});

t.test('ETag: 304 while unchanged; a change of the institution, and only of it, moves it', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const get = (url: string, key = DEMO_KEY, etag?: string) =>
    app.server.inject({ method: 'GET', url, headers: { 'api-key': key, ...(etag ? { 'if-none-match': etag } : {}) } });
  const first = await get('/api/shifts/?limit=5');
  const tag = first.headers.etag as string;
  t.match(tag, /^W\/"[0-9a-z]+\.[0-9a-z]+\.[0-9a-z]+\.[0-9a-f]{8}"$/);
  const cached = await get('/api/shifts/?limit=5', DEMO_KEY, tag);
  t.equal(cached.statusCode, 304);
  t.equal(cached.body, '');
  t.equal((await get('/api/shifts/?limit=5', DEMO_KEY, `"other", ${tag}`)).statusCode, 304, 'one of several tags');
  t.not((await get('/api/shifts/?limit=6')).headers.etag, tag, 'another URL, another tag');
  t.not((await get('/api/shifts/?limit=5', HARBOR_KEY)).headers.etag, tag, 'another institution, another tag');

  await append(app, HARBOR);
  t.equal((await get('/api/shifts/?limit=5', DEMO_KEY, tag)).statusCode, 304, 'another institution changed: still 304');
  await append(app, RIVERSIDE);
  const changed = await get('/api/shifts/?limit=5', DEMO_KEY, tag);
  t.equal(changed.statusCode, 200, 'this institution changed: the answer again');
  t.not(changed.headers.etag, tag);
  t.equal((await get('/api/sites/', DEMO_KEY, 'W/"nope"')).statusCode, 200);
});

t.test('ETag: a tag from before a restart never matches after it', async (t) => {
  // Revisions count from the load: after a restart the same count can stand for other data.
  const first = await startApp({ fixtures: ['demo.ndjson'], keep: true });
  const { dir } = first;
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const url = '/api/sites/?limit=100';
  const before = await first.server.inject({ method: 'GET', url, headers: { 'api-key': DEMO_KEY } });
  const revision = first.runtime.model.institutionRevision(RIVERSIDE);
  await first.close();
  const second = await startApp({ dir });
  t.teardown(() => second.close());
  // New sites until the institution's revision is what it was before the restart: the same number, other data.
  while (second.runtime.model.institutionRevision(RIVERSIDE) < revision) {
    const event: DomainEvent = { type: 'SiteCreated', data: { institution_id: RIVERSIDE, occurred_at: '2026-10-01T10:00:00Z', site_id: randomUUID(), title: 'Annex' } };
    const { position } = await second.runtime.store.append(streamOf(event), [{ id: randomUUID(), type: event.type, data: event.data }]);
    await second.runtime.projector.waitFor(position);
  }
  t.equal(second.runtime.model.institutionRevision(RIVERSIDE), revision, 'the same revision as before the restart');
  const after = await second.server.inject({ method: 'GET', url, headers: { 'api-key': DEMO_KEY, 'if-none-match': before.headers.etag as string } });
  t.equal(after.statusCode, 200, 'the new sites are shown');
  t.ok(after.json().count > before.json().count);
});

t.test('ETag: none while a table publishing in the background shows the institution as it was before its latest changes; the new answer and a new tag once published', async (t) => {
  const defaults = { publishFrom: Table.publishFrom };
  Table.publishFrom = 0; // every table publishes in the background
  t.teardown(() => Object.assign(Table, defaults));
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const { model } = app.runtime;
  // The server's background work publishes nothing until the test does (once it has begun to publish in the background).
  await until(() => model.publishesInBackground || undefined);
  const publish = model.publishIndexes.bind(model);
  model.publishIndexes = () => false;
  const get = (etag?: string) => app.server.inject({ method: 'GET', url: '/api/sites/?limit=100', headers: { 'api-key': DEMO_KEY, ...(etag ? { 'if-none-match': etag } : {}) } });
  const before = await get();
  const tag = before.headers.etag as string;
  const sites = before.json().count as number;
  t.ok(tag, 'a tag while nothing waits');

  const event: DomainEvent = { type: 'SiteCreated', data: { institution_id: RIVERSIDE, occurred_at: '2026-10-01T10:00:00Z', site_id: randomUUID(), title: 'Annex' } };
  const { position } = await app.runtime.store.append(streamOf(event), [{ id: randomUUID(), type: event.type, data: event.data }]);
  await app.runtime.projector.waitFor(position);
  t.ok(model.stale(RIVERSIDE), 'the site waits for a publication');
  t.notOk(model.stale(HARBOR), "another institution's searches are up to date");
  const waiting = await get(tag);
  t.equal(waiting.statusCode, 200, 'the old tag no longer matches');
  t.equal(waiting.json().count, sites, 'the list shows the table as it was');
  t.equal(waiting.headers.etag, undefined, 'and no tag names that answer');

  // A search by a value records hold several of (a profile's tags) reads the current rows: it publishes first.
  const tagged: DomainEvent = {
    type: 'ProfileTagged',
    data: { institution_id: RIVERSIDE, occurred_at: '2026-10-01T10:00:00Z', profile_id: '5e79e23e-8ac2-4989-8dd6-a44ea07d7078', profile_tag_id: randomUUID(), tag: { id: randomUUID(), tag_title: 'Night owl' } },
  };
  const tagging = await app.runtime.store.append(streamOf(tagged), [{ id: randomUUID(), type: tagged.type, data: tagged.data }]);
  await app.runtime.projector.waitFor(tagging.position);
  const owls = await app.server.inject({ method: 'GET', url: '/api/profiles/search/?tag=night+owl', headers: { 'api-key': DEMO_KEY } });
  t.same(owls.json().results.map((p: { id: string }) => p.id), ['5e79e23e-8ac2-4989-8dd6-a44ea07d7078'], 'the profile just tagged');
  t.match(JSON.stringify(owls.json().results[0]), /Night owl/, 'as it is now, with the tag');

  while (publish(Infinity));
  t.notOk(model.stale(RIVERSIDE));
  const published = await get(tag);
  t.equal(published.statusCode, 200);
  t.equal(published.json().count, sites + 1, 'the new site, once published');
  t.ok(published.headers.etag && published.headers.etag !== tag, 'under a new tag');
  t.equal((await get(published.headers.etag as string)).statusCode, 304);
});
