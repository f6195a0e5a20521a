/**
 * Other writers of an EventStoreDB database: an event of one of our types
 * whose data does not match the event catalog (which only our own writers
 * check before appending) is read as invalid, keeps its place in its stream,
 * and changes nothing — live, in a rebuild-free restart, and in the sites
 * commands that fold its stream — while the events after it apply. A key
 * issued again by another writer is refused by the fold like any other
 * writer's (test/tenancy.test.ts).
 */
import { createHash, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { pino } from 'pino';
import t from 'tap';
import { EsdbEventStore } from '../src/eventstore/esdb.js';
import { EsdbStandIn } from './esdb-standin/server.js';
import { DEMO_KEY, HARBOR_KEY, startApp } from './helpers.js';

t.test('an invalid event of a catalog type from another writer changes nothing, and the log moves on past it', async (t) => {
  const server = await EsdbStandIn.start();
  t.teardown(() => server.stop());
  const app = await startApp({ fixtures: ['demo.ndjson'], eventstoreUrl: server.connectionString, keep: true });
  t.teardown(() => rmSync(app.dir, { recursive: true, force: true }));
  const profile = (await app.get('/api/profiles/?limit=1')).body.results[0].id as string;
  const institution = app.runtime.model.get('profile', profile)!.institution_id;
  const shiftsBefore = (await app.get('/api/shifts/?limit=1')).body.count as number;
  const sitesBefore = (await app.get('/api/sites/?limit=1')).body.count as number;

  const foreign = EsdbEventStore.open(server.connectionString);
  t.teardown(() => foreign.close());
  const shift = randomUUID();
  const now = new Date().toISOString();
  await foreign.append(`shift-${shift}`, [
    { id: randomUUID(), type: 'ShiftCreated', data: { institution_id: institution, occurred_at: now, shift_id: shift, spots: 'many' } },
  ]);
  await foreign.append(`site-registry-${institution}`, [
    { id: randomUUID(), type: 'SiteCreated', data: { institution_id: institution, occurred_at: now, site_id: 'not-a-uuid', title: 7 } },
  ]);

  const [read] = await app.runtime.store.readStream(`shift-${shift}`);
  t.equal(read?.type, 'ShiftCreated');
  t.match(read?.invalid, /^data\./, 'read as invalid, saying where');

  // A sites command folds the registry stream (the invalid event in it) and
  // appends after it; its answer waits until the read model has applied it,
  // so the projector has moved past both foreign events.
  const created = await app.server.inject({
    method: 'POST',
    url: '/api/sites/bulk-create/',
    headers: { 'api-key': DEMO_KEY },
    payload: { sites: [{ title: 'After the foreign events' }] },
  });
  t.equal(created.statusCode, 201, created.body);
  t.equal((await app.get('/api/sites/?limit=1')).body.count, sitesBefore + 1, 'the site appended after them is there, and only it');
  t.equal((await app.get('/api/shifts/?limit=1')).body.count, shiftsBefore, 'the invalid shift is not');
  t.equal((await app.get(`/api/shifts/${shift}/`)).status, 404);
  const health = (await app.get('/healthz', null)).body;
  t.equal(health.status, 'ok');
  t.equal(health.last_error, null);

  // A restart from the persisted read model agrees.
  await app.close();
  const again = await startApp({ dir: app.dir, eventstoreUrl: server.connectionString });
  t.teardown(() => again.close());
  t.equal((await again.get('/api/shifts/?limit=1')).body.count, shiftsBefore);
  t.equal((await again.get('/api/sites/?limit=1')).body.count, sitesBefore + 1);
});

t.test('a key issued again by another writer is refused: the key keeps its institution', async (t) => {
  const server = await EsdbStandIn.start();
  t.teardown(() => server.stop());
  const lines: Array<{ msg: string; type?: string; problem?: string }> = [];
  const logger = pino({ level: 'warn' }, { write: (text: string) => void lines.push(JSON.parse(text)) });
  const app = await startApp({ fixtures: ['demo.ndjson'], eventstoreUrl: server.connectionString, logger });
  t.teardown(() => app.close());
  const before = (await app.get('/api/shifts/?limit=100')).text;
  const harbor = (await app.get('/api/opportunities/?limit=1', HARBOR_KEY)).body.results[0].id as string;
  const harborId = app.runtime.model.get('opportunity', harbor)!.institution_id;

  const foreign = EsdbEventStore.open(server.connectionString);
  t.teardown(() => foreign.close());
  const keyId = randomUUID();
  const data = { institution_id: harborId, occurred_at: new Date().toISOString(), key_id: keyId, key_sha256: createHash('sha256').update(DEMO_KEY).digest('hex') };
  const { position } = await foreign.append(`apikey-${keyId}`, [{ id: randomUUID(), type: 'ApiKeyIssued', data }]);
  await app.runtime.projector.waitFor(position);

  t.equal((await app.get('/api/shifts/?limit=100')).text, before, "the demo key still reads its own institution's shifts");
  t.equal(app.runtime.model.get('apikey', keyId), undefined, 'no key was issued');
  t.match(lines, [{ msg: 'event skipped: it breaks a rule of the log', type: 'ApiKeyIssued', problem: /^key_sha256: this key was already issued/ }]);
});
