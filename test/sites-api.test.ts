/**
 * The sites write API over HTTP: answers and errors, read-your-writes,
 * Idempotency-Key, races between concurrent requests, and a restart.
 */
import t from 'tap';
import { type EventStore, type RecordedEvent, WrongExpectedRevisionError } from '../src/eventstore/port.js';
import { EsdbStandIn } from './esdb-standin/server.js';
import { startApp, tempDir, type TestApp, DEMO_KEY, HARBOR_KEY } from './helpers.js';

async function post(app: TestApp, path: string, body: unknown, headers: Record<string, string> = {}, key = DEMO_KEY) {
  const raw = typeof body === 'string';
  const res = await app.server.inject({
    method: 'POST',
    url: `/api/sites/${path}/`,
    headers: { 'api-key': key, ...(raw ? { 'content-type': 'application/json' } : {}), ...headers },
    payload: raw ? body : (body as object),
  });
  return { status: res.statusCode, body: res.json() };
}

async function registry(app: TestApp): Promise<RecordedEvent[]> {
  const institution = app.runtime.model.get('profile', await firstProfile(app))!.institution_id;
  return app.runtime.store.readStream(`site-registry-${institution}`);
}

async function firstProfile(app: TestApp, key = DEMO_KEY): Promise<string> {
  return (await app.get('/api/profiles/?limit=1', key)).body.results[0].id;
}

async function siteTitles(app: TestApp): Promise<string[]> {
  const out: string[] = [];
  for (let page = 1; ; page++) {
    const res = await app.get(`/api/sites/?limit=100&page=${page}`);
    out.push(...res.body.results.map((s: { title: string }) => s.title));
    if (!res.body.next) return out;
  }
}

/** The suite, on the embedded log and on the EventStoreDB stand-in. */
for (const name of ['embedded log', 'EventStoreDB stand-in'] as const) {
  t.test(name, async (t) => {
    let server: EsdbStandIn | undefined;
    if (name === 'EventStoreDB stand-in') {
      server = await EsdbStandIn.start();
      t.teardown(() => server!.stop());
    }
    const backend = () => (server ? { eventstoreUrl: server.connectionString } : {});
    t.test('answers, read-your-writes and every error', async (t) => {
      const app = await startApp({ fixtures: ['demo.ndjson'], ...backend() });
      t.teardown(() => app.close());

      const created = await post(app, 'bulk-create', { sites: [{ title: ' East Hub ', address: '1 East St' }, { title: 'West Hub' }] });
      t.equal(created.status, 201);
      t.equal(created.body.count, 2);
      t.match(created.body.results[0], { title: 'East Hub', address: '1 East St', users_count: 0 });
      t.match(created.body.results[1], { title: 'West Hub', address: '' });
      const east = created.body.results[0];
      t.same((await app.get(`/api/sites/${east.id}/`)).body, east, 'a GET right after the POST sees the site, as the POST answered it');

      const user = await firstProfile(app);
      const assign = await post(app, 'assign', { site_ids: [east.id], user_ids: [user] });
      t.same(assign, { status: 200, body: { assigned: 1, already_assigned: 0 } });
      t.equal((await app.get(`/api/sites/${east.id}/`)).body.users_count, 1, 'read-your-writes on assign');
      t.equal((await app.get(`/api/sites/?user.id=${user}&title=east+hub`)).body.count, 1, 'the membership is searchable at once');
      t.same((await post(app, 'assign', { site_ids: [east.id], user_ids: [user] })).body, { assigned: 0, already_assigned: 1 }, 'repeating changes nothing');
      t.same((await post(app, 'unassign', { site_ids: [east.id], user_ids: [user] })).body, { unassigned: 1, not_assigned: 0 });
      t.same((await post(app, 'unassign', { site_ids: [east.id], user_ids: [user] })).body, { unassigned: 0, not_assigned: 1 });

      const before = (await registry(app)).length;
      const errors: Array<[string, string, unknown, number, string | RegExp]> = [
        ['duplicate of an existing site', 'bulk-create', { sites: [{ title: 'new one' }, { title: 'EAST HUB' }] }, 400, 'sites.1.title: a site titled "EAST HUB" already exists.'],
        ['duplicate within the body', 'bulk-create', { sites: [{ title: 'X' }, { title: ' x ' }] }, 400, 'sites.1.title: "x" appears twice in the request (also sites.0.title).'],
        ['blank title', 'bulk-create', { sites: [{ title: '   ' }] }, 400, 'sites.0.title: must not be blank.'],
        ['no sites', 'bulk-create', { sites: [] }, 400, /^sites: /],
        ['over 100 sites', 'bulk-create', { sites: Array.from({ length: 101 }, (_, i) => ({ title: `S${i}` })) }, 400, /^sites: /],
        ['a title not a string', 'bulk-create', { sites: [{ title: 5 }] }, 400, /^sites\.0\.title: /],
        ['an unknown field', 'bulk-create', { sites: [{ title: 'Y', colour: 'red' }] }, 400, /^sites\.0: .*colour/],
        ['a missing field', 'assign', { site_ids: [east.id] }, 400, /^user_ids: /],
        ['a malformed id', 'assign', { site_ids: ['nope'], user_ids: [user] }, 400, 'site_ids.0: must be a UUID'],
        ['an unknown site', 'assign', { site_ids: [east.id, '00000000-0000-4000-8000-000000000000'], user_ids: [user] }, 400, 'site_ids.1: no site 00000000-0000-4000-8000-000000000000 in this institution.'],
        ['an unknown profile', 'unassign', { site_ids: [east.id], user_ids: ['00000000-0000-4000-8000-000000000009'] }, 400, 'user_ids.0: no profile 00000000-0000-4000-8000-000000000009 in this institution.'],
        ['not JSON', 'assign', '{"site_ids": [', 400, /JSON/],
      ];
      for (const [name, path, body, status, detail] of errors) {
        const res = await post(app, path, body);
        t.equal(res.status, status, name);
        if (typeof detail === 'string') t.equal(res.body.detail, detail, name);
        else t.match(res.body.detail, detail, name);
      }
      const harborUser = await firstProfile(app, HARBOR_KEY);
      const foreign = await post(app, 'assign', { site_ids: [east.id], user_ids: [user] }, {}, HARBOR_KEY);
      t.same(foreign, { status: 400, body: { detail: `site_ids.0: no site ${east.id} in this institution.` } }, 'another institution’s site is unknown');
      t.match((await post(app, 'assign', { site_ids: [east.id], user_ids: [harborUser] })).body, { detail: /user_ids\.0: no profile/ }, 'and its profiles');
      const big = await app.server.inject({
        method: 'POST',
        url: '/api/sites/bulk-create/',
        headers: { 'api-key': DEMO_KEY, 'content-type': 'application/json' },
        payload: JSON.stringify({ sites: [{ title: 'x'.repeat(1024 * 1024) }] }),
      });
      t.equal(big.statusCode, 413, 'a body over 1 MiB');
      t.same(big.json(), { detail: 'Request body is too large.' });
      t.equal((await app.server.inject({ method: 'POST', url: '/api/sites/assign/', payload: {} })).statusCode, 401, 'no key');
      t.equal((await app.server.inject({ method: 'GET', url: '/api/sites/assign/', headers: { 'api-key': DEMO_KEY } })).statusCode, 405);
      t.equal((await registry(app)).length, before, 'no rejected request appended anything');
    });

    t.test('Idempotency-Key', async (t) => {
      const app = await startApp({ fixtures: ['demo.ndjson'], ...backend() });
      t.teardown(() => app.close());
      const body = { sites: [{ title: 'Keyed' }] };
      const first = await post(app, 'bulk-create', body, { 'idempotency-key': 'k-1' });
      t.equal(first.status, 201);
      const length = (await registry(app)).length;
      const retry = await post(app, 'bulk-create', body, { 'idempotency-key': 'k-1' });
      t.same(retry, first, 'a retry answers the first response again (same ids)');
      t.equal((await registry(app)).length, length, 'and appends nothing');
      const other = await post(app, 'bulk-create', { sites: [{ title: 'Other' }] }, { 'idempotency-key': 'k-1' });
      t.same(other, { status: 422, body: { detail: 'Idempotency-Key "k-1" was used with a different request.' } });
      const elsewhere = await post(app, 'assign', { site_ids: [first.body.results[0].id], user_ids: [await firstProfile(app)] }, { 'idempotency-key': 'k-1' });
      t.equal(elsewhere.status, 422, 'the same key on another operation is another request');
      const noKey = await post(app, 'bulk-create', body);
      t.equal(noKey.status, 400, 'without a key, repeating the request is a duplicate title');
      t.equal((await post(app, 'bulk-create', body, { 'idempotency-key': '' })).status, 400, 'an empty key is refused');
    });

    /**
     * The embedded log answers within one turn of the event loop, so commands
     * in one process never interleave between reading the registry and
     * appending. This store (the real log underneath) yields to the event loop
     * after each read, as a network store would, so concurrent commands do
     * decide on the same revision and all but one must retry.
     */
    function interleaving(store: EventStore, conflicts: { count: number }): EventStore {
      return Object.assign(Object.create(store) as EventStore, {
        async readStream(...args: Parameters<EventStore['readStream']>) {
          const events = await store.readStream(...args);
          await new Promise((resolve) => setImmediate(resolve));
          return events;
        },
        async append(...args: Parameters<EventStore['append']>) {
          try {
            return await store.append(...args);
          } catch (error) {
            if (error instanceof WrongExpectedRevisionError) conflicts.count++;
            throw error;
          }
        },
      });
    }

    t.test('races: 50 concurrent bulk-creates and 50 concurrent assigns', async (t) => {
      const conflicts = { count: 0 };
      const app = await startApp({ fixtures: ['demo.ndjson'], ...backend(), commandStore: (store) => interleaving(store, conflicts) });
      t.teardown(() => app.close());
      const existing = (await siteTitles(app)).length;

      // Overlapping titles: request i wants "Shared i%10", "Shared (i+1)%10" and its own.
      const creates = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          post(app, 'bulk-create', { sites: [{ title: `Shared ${i % 10}` }, { title: `Shared ${(i + 1) % 10}` }, { title: `Own ${i}` }] }),
        ),
      );
      const accepted = creates.filter((c) => c.status === 201);
      t.ok(creates.every((c) => c.status === 201 || (c.status === 400 && /already exists/.test(c.body.detail))), 'each either created all its sites or was refused for an existing title');
      t.ok(accepted.length >= 1, `${accepted.length} accepted`);
      const titles = await siteTitles(app);
      const normalized = titles.map((x) => x.trim().toLowerCase());
      t.equal(new Set(normalized).size, normalized.length, 'every title exists once');
      t.equal(titles.length - existing, accepted.reduce((sum, c) => sum + c.body.count, 0), 'the sites listed are exactly those the 201s announced');

      // Keyed duplicates sent at the same time: one set of events, one answer.
      const keyed = await Promise.all(Array.from({ length: 10 }, () => post(app, 'bulk-create', { sites: [{ title: 'Keyed race' }] }, { 'idempotency-key': 'race' })));
      t.ok(keyed.every((k) => k.status === 201), 'every keyed retry succeeds');
      t.equal(new Set(keyed.map((k) => k.body.results[0].id)).size, 1, 'with the same site');

      // Assign the same 2 × 3 pairs from 50 requests at once.
      const sites = accepted.slice(0, 2).map((c) => c.body.results[2].id as string);
      const users = ((await app.get('/api/profiles/?limit=3')).body.results as Array<{ id: string }>).map((p) => p.id);
      const assigns = await Promise.all(Array.from({ length: 50 }, () => post(app, 'assign', { site_ids: sites, user_ids: users })));
      t.ok(assigns.every((a) => a.status === 200), 'all 50 assigns answered 200');
      t.equal(assigns.reduce((sum, a) => sum + a.body.assigned, 0), sites.length * users.length, 'each pair assigned exactly once');
      t.ok(assigns.every((a) => a.body.assigned + a.body.already_assigned === sites.length * users.length), 'and counted in every answer');
      for (const site of sites) t.equal((await app.get(`/api/sites/${site}/`)).body.users_count, users.length);

      const log = await registry(app);
      t.equal(new Set(log.map((e) => e.id)).size, log.length, 'the log holds no event twice');
      const createdTitles = log.filter((e) => e.type === 'SiteCreated').map((e) => (e.data as { title: string }).title.toLowerCase());
      t.equal(new Set(createdTitles).size, createdTitles.length, 'no title was created twice');
      const pairs = log.filter((e) => e.type === 'UserAssignedToSite' && sites.includes((e.data as { site_id: string }).site_id));
      t.equal(pairs.length, sites.length * users.length, 'one assignment event per pair');
      t.same(log.map((e) => e.revision), log.map((_, i) => i), 'revisions have no gaps');
      t.ok(conflicts.count >= 50, `${conflicts.count} conflicting appends were refused and retried`);
    });

    t.test('sites, memberships and idempotency keys survive a restart', async (t) => {
      const tmp = tempDir();
      t.teardown(tmp.remove);
      const first = await startApp({ dir: tmp.dir, keep: true, fixtures: ['demo.ndjson'], ...backend() });
      const created = await post(first, 'bulk-create', { sites: [{ title: 'Durable' }] }, { 'idempotency-key': 'durable-1' });
      const site = created.body.results[0];
      const user = await firstProfile(first);
      await post(first, 'assign', { site_ids: [site.id], user_ids: [user] });
      const before = (await first.get(`/api/sites/${site.id}/`)).body;
      await first.close();

      const second = await startApp({ dir: tmp.dir, keep: true, ...backend() });
      t.teardown(() => second.close());
      t.same((await second.get(`/api/sites/${site.id}/`)).body, before, 'the site and its member count');
      t.equal((await second.get(`/api/sites/?user.id=${user}&title=durable`)).body.count, 1, 'the membership');
      t.same(await post(second, 'bulk-create', { sites: [{ title: 'Durable' }] }, { 'idempotency-key': 'durable-1' }), created, 'a retry after the restart answers the first response');
      t.same(await post(second, 'assign', { site_ids: [site.id], user_ids: [user] }), { status: 200, body: { assigned: 0, already_assigned: 1 } });
    });
  });
}
