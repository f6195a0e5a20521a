/**
 * Webhooks over HTTP, on the embedded log and on the EventStoreDB
 * stand-in: subscriptions, signed deliveries in log order (every one
 * verified with the standardwebhooks package), retries, pausing after the
 * last attempt and resuming, the event_types filter, the deliveries list,
 * unsubscribing, bad bodies, Idempotency-Key and tenancy. Receivers on
 * 127.0.0.1 fail on purpose.
 */
import t, { type Test } from 'tap';
import { EsdbStandIn } from './esdb-standin/server.js';
import { DEMO_KEY, HARBOR_KEY, startApp, type TestApp, until } from './helpers.js';
import {
  attempts,
  call,
  createSites,
  deliveries,
  receiver,
  settle,
  subscribe,
  testSettings,
  verified,
} from './webhooks-receiver.js';

async function firstProfile(app: TestApp): Promise<string> {
  return (await app.get('/api/profiles/?limit=1')).body.results[0].id;
}

for (const name of ['embedded log', 'EventStoreDB stand-in'] as const) {
  t.test(name, async (t) => {
    /** An app over a log of its own (a new stand-in for each on EventStoreDB), closed after the test. */
    const start = async () => {
      const server = name === 'EventStoreDB stand-in' ? await EsdbStandIn.start() : undefined;
      const app = await startApp({ fixtures: ['demo.ndjson'], ...(server ? { eventstoreUrl: server.connectionString } : {}), server: { webhooks: testSettings() } });
      return { ...app, close: async () => {
        await app.close();
        await server?.stop();
      } };
    };
    /** An app and a receiver, both closed when the test ends. */
    const setup = async (t: Test) => {
      const app = await start();
      const hook = await receiver();
      t.teardown(async () => {
        await app.close();
        await hook.close();
      });
      return { app, hook };
    };

    t.test('subscribe; every event after it delivered once, in log order, signed', async (t) => {
      const { app, hook } = await setup(t);
      const created = await call(app, 'POST', '/api/webhooks/', { url: hook.url });
      t.equal(created.status, 201);
      t.match(created.body, { url: hook.url, event_types: [], status: 'active', created_at: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/ });
      t.match(created.body.secret, /^whsec_[A-Za-z0-9+/]{32}$/, 'whsec_ and base64 of 24 bytes');
      const { id, secret } = created.body as { id: string; secret: string };
      const shown = { id, url: hook.url, event_types: [], status: 'active', created_at: created.body.created_at };
      t.same((await call(app, 'GET', `/api/webhooks/${id}/`)).body, shown, 'retrieved without its secret');
      t.same((await call(app, 'GET', '/api/webhooks/')).body, { count: 1, next: null, previous: null, results: [shown] }, 'listed without its secret');
      t.notOk(JSON.stringify((await app.runtime.store.readStream(`webhook-${id}`))[0]!.data).includes(secret.slice(6)), 'the log holds the secret encrypted');

      const sites = await createSites(app, 'Alpha', 'Beta', 'Gamma');
      await hook.count(3);
      const registry = (await app.runtime.store.readStream(`site-registry-${(await app.runtime.model.get('site', sites[0]!))!.institution_id}`)).slice(-3);
      const payloads = hook.received.map((delivery) => verified(secret, delivery));
      t.same(payloads.map((p) => [p.type, p.data.title]), [['SiteCreated', 'Alpha'], ['SiteCreated', 'Beta'], ['SiteCreated', 'Gamma']], 'in log order, verified');
      t.same(hook.received.map((d) => d.headers['webhook-id']), registry.map((e) => e.id), 'webhook-id is the event id');
      t.same(payloads.map((p) => p.timestamp), registry.map((e) => (e.data as { occurred_at: string }).occurred_at), 'timestamp: when the event occurred');
      t.same(payloads[0]!.data, registry[0]!.data, 'data: the event data');
      for (const d of hook.received) t.match(d.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/);

      const list = await attempts(app, id, 3);
      t.same(list.map((d) => [d.event_id, d.attempt, d.status_code, d.error]), registry.map((e) => [e.id, 1, 200, null]), 'each attempt is listed');
      t.ok(list.every((d) => typeof d.duration_ms === 'number' && typeof d.delivered_at === 'string'));
      await settle();
      t.equal(hook.received.length, 3, 'nothing before the subscription, and none of the webhooks\' own events, is delivered');
      const changes = await call(app, 'GET', '/api/changes/?limit=1000');
      t.notOk(changes.body.results.some((c: { type: string }) => c.type.startsWith('Webhook')), 'webhook events are not in the change feed');

      const page = await call(app, 'GET', `/api/webhooks/${id}/deliveries/?limit=2&page=2`);
      t.equal(page.body.count, 3);
      t.equal(page.body.results.length, 1, 'paged like the other lists');
      t.match(page.body.previous, /\/api\/webhooks\/.*\/deliveries\/\?page=1&limit=2$/);
      t.equal((await call(app, 'GET', `/api/webhooks/${id}/deliveries/?page=3&limit=2`)).status, 404, 'a page past the last');
    });

    t.test('retries, pausing after the last attempt, resuming from the event it stopped at', async (t) => {
      const { app, hook } = await setup(t);
      const { id, secret } = await subscribe(app, hook.url);
      hook.behave(500, 'close', 200);
      await createSites(app, 'Retried');
      await hook.count(3);
      const [eventId] = new Set(hook.received.map((d) => d.headers['webhook-id']));
      t.same(hook.received.map((d) => d.headers['webhook-id']), [eventId, eventId, eventId], 'the same webhook-id on every retry');
      for (const d of hook.received) t.equal(verified(secret, d).data.title, 'Retried');
      const retried = await attempts(app, id, 3);
      t.same(retried.map((d) => [d.attempt, d.status_code]), [[1, 500], [2, null], [3, 200]]);
      t.match(retried[0]!.error, 'HTTP 500');
      t.ok(retried[1]!.error, 'a network error says why');

      hook.behave('hang');
      await createSites(app, 'Stuck', 'Waiting');
      const failed = await attempts(app, id, 6);
      t.same(failed.slice(3).map((d) => [d.attempt, d.status_code]), [[1, null], [2, null], [3, null]]);
      t.match(failed[3]!.error, /timed out after 300 ms/);
      await until(async () => ((await call(app, 'GET', `/api/webhooks/${id}/`)).body.status === 'paused' ? true : undefined));
      await settle();
      t.equal(hook.received.length, 6, 'paused: nothing more is attempted');
      const stuck = hook.received[3]!.headers['webhook-id'];

      hook.behave(200);
      const resumed = await call(app, 'POST', `/api/webhooks/${id}/resume/`);
      t.same([resumed.status, resumed.body.status], [200, 'active']);
      await hook.count(8);
      t.same(
        hook.received.slice(6).map((d) => [d.headers['webhook-id'], verified(secret, d).data.title]),
        [[stuck, 'Stuck'], [hook.received[7]!.headers['webhook-id'], 'Waiting']],
        'resume continues from the event it stopped at, in order',
      );
      t.same((await attempts(app, id, 8)).slice(6).map((d) => d.attempt), [1, 1], 'attempts count again from 1 after a resume');
      t.same((await call(app, 'POST', `/api/webhooks/${id}/resume/`)).body.status, 'active', 'resuming an active webhook changes nothing');
      t.doesNotThrow(() => hook.received.forEach((d) => verified(secret, d)), 'every request received verifies, failed attempts included');
    });

    t.test('event_types: only those types are delivered', async (t) => {
      const { app, hook } = await setup(t);
      // By name: the guard is the socket's lookup (and lets loopback through here: WEBHOOK_ALLOW_PRIVATE_NETWORKS).
      const { id, secret } = await subscribe(app, hook.url.replace('127.0.0.1', 'localhost'), ['UserAssignedToSite', 'UserAssignedToSite']);
      t.same((await call(app, 'GET', `/api/webhooks/${id}/`)).body.event_types, ['UserAssignedToSite'], 'each type once');
      const [site] = await createSites(app, 'Filtered');
      const user = await firstProfile(app);
      t.equal((await call(app, 'POST', '/api/sites/assign/', { site_ids: [site], user_ids: [user] })).status, 200);
      await hook.count(1);
      await settle();
      t.same(hook.received.map((d) => verified(secret, d)).map((p) => [p.type, p.data.site_id, p.data.user_id]), [['UserAssignedToSite', site, user]]);
    });

    t.test('unsubscribing stops deliveries; tenancy; bad bodies change nothing', async (t) => {
      const { app, hook } = await setup(t);
      const { id } = await subscribe(app, hook.url);
      const head = await app.runtime.store.head();
      const bad: Array<[string, unknown, RegExp]> = [
        ['not JSON', '{"url": ', /JSON/],
        ['no url', { event_types: [] }, /^url: /],
        ['a URL that is not one', { url: 'not a url' }, /^url: /],
        ['another scheme', { url: 'ftp://example.com/x' }, /^url: /],
        ['an unknown event type', { url: hook.url, event_types: ['SiteExploded'] }, /^event_types\.0: "SiteExploded" is not an event type webhooks deliver/],
        ['a webhook event type', { url: hook.url, event_types: ['SiteCreated', 'WebhookAttempted'] }, /^event_types\.1: "WebhookAttempted" is not/],
        ['a key event type', { url: hook.url, event_types: ['ApiKeyIssued'] }, /^event_types\.0: /],
        ['event_types not a list', { url: hook.url, event_types: 'SiteCreated' }, /^event_types: /],
        ['an unknown field', { url: hook.url, secret: 'mine' }, /secret/],
        ['credentials in the URL', { url: 'http://user:pw@127.0.0.1:1/' }, /^url: must not hold a user name or password/],
      ];
      for (const [why, body, detail] of bad) {
        const res = await call(app, 'POST', '/api/webhooks/', body);
        t.equal(res.status, 400, why);
        t.match(res.body.detail, detail, why);
      }
      t.same(await app.runtime.store.head(), head, 'no bad body appended anything');
      t.equal((await call(app, 'GET', '/api/webhooks/')).body.count, 1);

      t.equal((await call(app, 'GET', '/api/webhooks/', undefined, null)).status, 401, 'no key');
      for (const [method, url] of [['GET', `/api/webhooks/${id}/`], ['GET', `/api/webhooks/${id}/deliveries/`], ['POST', `/api/webhooks/${id}/resume/`], ['DELETE', `/api/webhooks/${id}/`]] as const) {
        t.same(await call(app, method, url, undefined, HARBOR_KEY), { status: 404, body: { detail: 'Not found.' } }, `${method} ${url} with another institution's key`);
      }
      t.equal((await call(app, 'GET', '/api/webhooks/', undefined, HARBOR_KEY)).body.count, 0, 'another institution lists none');
      t.equal((await call(app, 'GET', '/api/webhooks/not-a-uuid/')).status, 404);
      t.equal((await call(app, 'PUT', `/api/webhooks/${id}/`)).status, 405);

      for (const method of ['DELETE', 'POST'] as const) {
        const url = method === 'POST' ? `/api/webhooks/${id}/resume/` : `/api/webhooks/${id}/`;
        t.match(await call(app, method, url, '{"oops'), { status: 400, body: { detail: /JSON/ } }, `${method} ${url} with a body that is not JSON`);
      }
      t.equal((await call(app, 'GET', `/api/webhooks/${id}/`)).body.status, 'active', 'and nothing changed');
      const deleted = await call(app, 'DELETE', `/api/webhooks/${id}/`);
      t.same(deleted, { status: 204, body: null });
      t.equal((await call(app, 'GET', `/api/webhooks/${id}/`)).status, 404, 'gone at once');
      t.equal((await call(app, 'DELETE', `/api/webhooks/${id}/`)).status, 404, 'deleting again');
      await createSites(app, 'Unwatched');
      await settle();
      t.equal(hook.received.length, 0, 'nothing is delivered after unsubscribing');
    });

    t.test('Idempotency-Key: a retry answers the first response; another body is a 422', async (t) => {
      const app = await start();
      t.teardown(() => app.close());
      const body = { url: 'http://127.0.0.1:9/keyed', event_types: ['SiteCreated'] };
      const first = await call(app, 'POST', '/api/webhooks/', body, DEMO_KEY, { 'idempotency-key': 'w-1' });
      t.equal(first.status, 201);
      const retry = await call(app, 'POST', '/api/webhooks/', body, DEMO_KEY, { 'idempotency-key': 'w-1' });
      t.same(retry, first, 'the same id and secret');
      t.equal((await call(app, 'GET', '/api/webhooks/')).body.count, 1, 'one subscription');
      const other = await call(app, 'POST', '/api/webhooks/', { ...body, event_types: [] }, DEMO_KEY, { 'idempotency-key': 'w-1' });
      t.same(other, { status: 422, body: { detail: 'Idempotency-Key "w-1" was used with a different request.' } });
      const harbor = await call(app, 'POST', '/api/webhooks/', body, HARBOR_KEY, { 'idempotency-key': 'w-1' });
      t.equal(harbor.status, 201, 'keys are per institution');
      t.not(harbor.body.id, first.body.id);
    });
  });
}
