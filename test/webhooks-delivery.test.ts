/**
 * Webhook delivery across restarts and replicas, and its refusals: a
 * restart goes on from the cursor in the log without delivering again
 * what got a 2xx; of two replicas over one EventStoreDB (the stand-in)
 * only the one with WEBHOOK_DELIVERY delivers, each event once; no
 * request to a non-public address, at creation or at delivery (where the
 * address connected to is checked); secrets in the log, encrypted or not.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import t from 'tap';
import { formatTimestamp } from '../src/time.js';
import { backoffMs } from '../src/webhooks/deliverer.js';
import { AddressGuard, refusalOf } from '../src/webhooks/address-guard.js';
import { newSecret, SecretBox, UnreadableSecretError } from '../src/webhooks/secrets.js';
import { EsdbStandIn } from './esdb-standin/server.js';
import { startApp, tempDir, type TestApp } from './helpers.js';
import { attempts, call, createSites, deliveries, receiver, settle, subscribe, testSettings, verified } from './webhooks-receiver.js';

t.test('a restart goes on from the cursor: what got a 2xx is not delivered again', async (t) => {
  const temp = tempDir();
  const hook = await receiver();
  t.teardown(async () => {
    await hook.close();
    temp.remove();
  });
  const settings = testSettings({ maxAttempts: 5, retryBaseMs: 60_000 });
  const first = await startApp({ dir: temp.dir, keep: true, fixtures: ['demo.ndjson'], server: { webhooks: settings } });
  const { id, secret } = await subscribe(first, hook.url);
  hook.behave(200, 200, 500);
  await createSites(first, 'One', 'Two', 'Three');
  await hook.count(3);
  await attempts(first, id, 3);
  // The third failed; its retry waits a minute: stop before it.
  await first.close();

  hook.behave(200);
  const second = await startApp({ dir: temp.dir, keep: true, server: { webhooks: { ...settings, retryBaseMs: 20 } } });
  t.teardown(() => second.close());
  await hook.count(4);
  await createSites(second, 'Four');
  await hook.count(5);
  await settle();
  const ids = hook.received.map((d) => d.headers['webhook-id']);
  t.same(
    hook.received.map((d) => verified(secret, d).data.title),
    ['One', 'Two', 'Three', 'Three', 'Four'],
    'after the restart: the event that failed, then the next; nothing that got a 2xx again',
  );
  t.equal(ids[2], ids[3], 'the retry after the restart has the same webhook-id');
  t.same((await deliveries(second, id)).map((d) => [d.attempt, d.status_code]), [[1, 200], [1, 200], [1, 500], [2, 200], [1, 200]], 'the attempts before the restart are kept, and counted on');
});

t.test('two replicas over one EventStoreDB: only the one with WEBHOOK_DELIVERY delivers, each event once', async (t) => {
  const server = await EsdbStandIn.start();
  const hook = await receiver();
  const secretKey = randomBytes(32);
  const replica = (delivery: boolean) =>
    startApp({ eventstoreUrl: server.connectionString, server: { webhooks: testSettings({ delivery, secretKey }) } });
  const delivering = await startApp({ fixtures: ['demo.ndjson'], eventstoreUrl: server.connectionString, server: { webhooks: testSettings({ secretKey }) } });
  const quiet = await replica(false);
  const also = await replica(false);
  t.teardown(async () => {
    for (const app of [delivering, quiet, also]) await app.close();
    await hook.close();
    await server.stop();
  });
  const { id, secret } = await subscribe(quiet, hook.url);
  await createSites(quiet, 'Q1', 'Q2');
  await createSites(delivering, 'D1');
  await createSites(also, 'A1', 'A2');
  await hook.count(5);
  await settle(400);
  t.same(hook.received.map((d) => verified(secret, d).data.title), ['Q1', 'Q2', 'D1', 'A1', 'A2'], 'each event once, in log order');
  t.equal(new Set(hook.received.map((d) => d.headers['webhook-id'])).size, 5);
  const seen = await attempts(quiet, id, 5);
  t.same(seen.map((d) => d.status_code), [200, 200, 200, 200, 200], 'the deliveries are in the log: every replica lists them');
});

t.test('no request to a non-public address', async (t) => {
  const strict = await startApp({ fixtures: ['demo.ndjson'], server: { webhooks: testSettings({ allowHttp: false, allowPrivateNetworks: false }) } });
  const hook = await receiver();
  t.teardown(async () => {
    await strict.close();
    await hook.close();
  });
  const head = await strict.runtime.store.head();
  const refused: Array<[string, RegExp]> = [
    ['http://example.com/hook', /^url: must be https:\/\/ \(http:\/\/ only with WEBHOOK_ALLOW_HTTP=true\)\.$/],
    ['https://127.0.0.1/hook', /^url: refused: 127\.0\.0\.1 is not a public address/],
    ['https://[::1]/hook', /^url: refused: ::1 is not a public address/],
    ['https://[::ffff:127.0.0.1]/hook', /^url: refused: ::ffff:7f00:1 is not a public address/],
    ['https://169.254.169.254/latest/meta-data', /refused/],
    ['https://10.1.2.3/', /refused/],
    ['https://100.64.0.1/', /refused/],
    ['https://0x7f.1/', /refused: 127\.0\.0\.1/],
    ['https://[fd00::1]/', /refused/],
    ['https://localhost/hook', /^url: refused: localhost resolves to .*not a public address/],
  ];
  for (const [url, detail] of refused) {
    const res = await call(strict, 'POST', '/api/webhooks/', { url });
    t.equal(res.status, 400, url);
    t.match(res.body.detail, detail, url);
  }
  t.same(await strict.runtime.store.head(), head, 'nothing appended');

  // A subscription whose name resolves to a private address by the time it delivers (DNS rebinding),
  // or a literal one: as if subscribed elsewhere, appended to the log.
  const profile = (await strict.get('/api/profiles/?limit=1')).body.results[0].id as string;
  const institution = strict.runtime.model.get('profile', profile)!.institution_id;
  const made: string[] = [];
  for (const url of [`https://localhost:${hook.port}/hook`, `https://127.0.0.1:${hook.port}/hook`]) {
    const webhook_id = randomUUID();
    const { position } = await strict.runtime.store.append(`webhook-${webhook_id}`, [
      {
        id: randomUUID(),
        type: 'WebhookSubscribed',
        data: { institution_id: institution, occurred_at: formatTimestamp(Date.now() * 1000), webhook_id, url, event_types: [], secret: newSecret() },
      },
    ]);
    await strict.runtime.projector.waitFor(position);
    made.push(webhook_id);
  }
  await createSites(strict, 'Never sent');
  for (const id of made) {
    const list = await attempts(strict, id, 3);
    t.same(list.map((d) => d.status_code), [null, null, null], 'recorded as failed attempts');
    t.match(list[0]!.error, /refused: .*(localhost resolves to|127\.0\.0\.1 is not a public address)/);
    t.equal(strict.runtime.model.get('webhook', id)!.status, 'paused', 'paused after the last');
  }
  t.equal(hook.received.length, 0, 'no connection was made');
});

t.test('answers and payloads are valid against the OpenAPI document', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'], server: { webhooks: testSettings() } });
  const hook = await receiver();
  t.teardown(async () => {
    await app.close();
    await hook.close();
  });
  const doc = (await app.server.inject({ method: 'GET', url: '/api/openapi.json' })).json() as {
    paths: Record<string, Record<string, { operationId: string; tags: string[]; responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>;
    webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: unknown }> } } }>;
    components: unknown;
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'openapi.json', components: doc.components } as never);
  const check = (schema: unknown, value: unknown, what: string) => {
    const validate = ajv.compile({ $ref: `openapi.json${(schema as { $ref: string }).$ref}` });
    t.ok(validate(value), what, { errors: validate.errors?.slice(0, 5) });
  };
  const answer = (path: string, method: string, status: number) => doc.paths[path]![method]!.responses[String(status)]!.content!['application/json']!.schema;

  const created = await call(app, 'POST', '/api/webhooks/', { url: hook.url, event_types: ['SiteCreated'] });
  check(answer('/api/webhooks/', 'post', 201), created.body, 'createWebhook 201');
  const { id, secret } = created.body as { id: string; secret: string };
  await createSites(app, 'Documented');
  await hook.count(1);
  check(answer('/api/webhooks/', 'get', 200), (await call(app, 'GET', '/api/webhooks/')).body, 'listWebhooks 200');
  check(answer('/api/webhooks/{id}/', 'get', 200), (await call(app, 'GET', `/api/webhooks/${id}/`)).body, 'retrieveWebhook 200');
  await attempts(app, id, 1);
  check(answer('/api/webhooks/{id}/deliveries/', 'get', 200), (await call(app, 'GET', `/api/webhooks/${id}/deliveries/`)).body, 'listWebhookDeliveries 200');
  check(answer('/api/webhooks/{id}/resume/', 'post', 200), (await call(app, 'POST', `/api/webhooks/${id}/resume/`)).body, 'resumeWebhook 200');
  check(answer('/api/webhooks/{id}/', 'get', 404), (await call(app, 'GET', `/api/webhooks/${randomUUID()}/`)).body, 'a 404 is {detail}');
  check(doc.webhooks.event!.post.requestBody.content['application/json']!.schema, verified(secret, hook.received[0]!), 'the payload, as the webhooks entry says');
  for (const [path, methods] of Object.entries(doc.paths).filter(([path]) => path.startsWith('/api/webhooks/'))) {
    for (const [method, op] of Object.entries(methods)) t.same(op.tags, ['webhooks'], `${method} ${path} (${op.operationId}) is tagged webhooks`);
  }
  t.equal(Object.keys(doc.paths).filter((p) => p.startsWith('/api/webhooks/')).length, 4, 'four paths');
});

t.test('the address guard', async (t) => {
  for (const address of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '100.127.255.255', '0.0.0.0', '224.0.0.1', '255.255.255.255', '192.0.2.1', '198.18.0.1',
    '::', '::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '2001:db8::1', '64:ff9b::7f00:1', '2002:7f00:1::1']) {
    t.ok(refusalOf(address), `${address} refused`);
  }
  for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
    t.equal(refusalOf(address), undefined, `${address} allowed`);
  }
  t.equal(new AddressGuard(true).refusal('127.0.0.1'), undefined, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS allows them');
  t.match(await new AddressGuard(false).hostRefusal('localhost'), /localhost resolves to/);
  t.equal(await new AddressGuard(true).hostRefusal('localhost'), undefined);
  const looked = await new Promise<NodeJS.ErrnoException | null>((resolve) => new AddressGuard(false).lookup('localhost', {}, (error) => resolve(error)));
  t.match(looked, { code: 'EWEBHOOKREFUSED' }, 'the socket\'s lookup refuses a name resolving to loopback');
  const all = await new Promise<unknown>((resolve) => new AddressGuard(true).lookup('localhost', { all: true }, (error, addresses) => resolve(error ?? addresses)));
  t.ok(Array.isArray(all) && all.some((a: { address: string }) => a.address === '127.0.0.1'), 'allowed: every address, as dns.lookup gives them');
  const one = await new Promise<unknown[]>((resolve) => new AddressGuard(true).lookup('localhost', { family: 4 }, (error, address, family) => resolve([error, address, family])));
  t.same(one, [null, '127.0.0.1', 4], 'or the first, when one is asked for');
});

t.test('backoff: exponential, capped, with jitter', async (t) => {
  t.same([1, 2, 3, 4].map((n) => backoffMs(n, 5000, () => 1)), [5000, 10_000, 20_000, 40_000]);
  t.same([1, 2, 3].map((n) => backoffMs(n, 5000, () => 0)), [2500, 5000, 10_000], 'jitter takes up to half off');
  t.equal(backoffMs(30, 5000, () => 1), 15 * 60_000, 'capped at 15 minutes');
});

t.test('secrets: encrypted with WEBHOOK_SECRET_KEY, else as they are; a changed key is a recorded failure', async (t) => {
  const secret = newSecret();
  t.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
  t.equal(Buffer.from(secret.slice(6), 'base64').length, 24);
  const box = new SecretBox(randomBytes(32));
  const sealed = box.seal(secret, 'w-1');
  t.match(sealed, /^aes256gcm:/);
  t.notOk(sealed.includes(secret.slice(6)));
  t.equal(box.open(sealed, 'w-1'), secret);
  t.throws(() => box.open(sealed, 'w-2'), UnreadableSecretError, 'bound to its webhook');
  t.throws(() => new SecretBox(randomBytes(32)).open(sealed, 'w-1'), UnreadableSecretError, 'another key');
  t.throws(() => new SecretBox(undefined).open(sealed, 'w-1'), UnreadableSecretError, 'no key');
  t.equal(new SecretBox(undefined).seal(secret, 'w-1'), secret, 'without a key: as it is');

  const plain = await startApp({ fixtures: ['demo.ndjson'], server: { webhooks: testSettings({ secretKey: undefined }) } });
  t.teardown(() => plain.close());
  const made = await subscribe(plain, 'http://127.0.0.1:9/plain');
  const [subscribed] = await plain.runtime.store.readStream(`webhook-${made.id}`);
  t.equal((subscribed!.data as { secret: string }).secret, made.secret, 'without WEBHOOK_SECRET_KEY the log holds it in plaintext');

  // The same log served with a key that cannot open a sealed secret.
  const temp = tempDir();
  t.teardown(() => temp.remove());
  const hook = await receiver();
  t.teardown(() => hook.close());
  const sealing = await startApp({ dir: temp.dir, keep: true, fixtures: ['demo.ndjson'], server: { webhooks: testSettings({ delivery: false }) } });
  const { id } = await subscribe(sealing, hook.url);
  await sealing.close();
  const rekeyed: TestApp = await startApp({ dir: temp.dir, keep: true, server: { webhooks: testSettings({ maxAttempts: 1 }) } });
  t.teardown(() => rekeyed.close());
  await createSites(rekeyed, 'Unsigned');
  const [failed] = await attempts(rekeyed, id, 1);
  t.match(failed, { status_code: null, error: /cannot be decrypted with this WEBHOOK_SECRET_KEY/ });
  t.equal(hook.received.length, 0, 'nothing is sent unsigned');
  t.equal((await call(rekeyed, 'GET', `/api/webhooks/${id}/`)).body.status, 'paused');
});
