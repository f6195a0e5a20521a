/**
 * Protection: a rate limit per API key (keyed by the key's id: another key
 * has its own), 429 `{detail}` with Retry-After once exceeded, RateLimit
 * headers on every /api/ answer, counted in /metrics; CORS only for the
 * origins configured; `X-Content-Type-Options: nosniff` and no
 * `X-Powered-By` on every answer.
 */
import t from 'tap';
import { DEMO_KEY, HARBOR_KEY, startApp } from './helpers.js';

t.test('a rate limit per key: headers on every answer, 429 {detail} with Retry-After past it', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'], server: { rateLimit: { max: 3, window: '1 minute' } } });
  t.teardown(() => app.close());
  const get = (key: string) => app.server.inject({ method: 'GET', url: '/api/shifts/?limit=1', headers: { 'api-key': key } });
  for (let i = 0; i < 3; i++) {
    const res = await get(DEMO_KEY);
    t.equal(res.statusCode, 200);
    t.equal(res.headers['ratelimit-limit'], '3');
    t.equal(res.headers['ratelimit-remaining'], String(2 - i));
    t.match(res.headers['ratelimit-reset'], /^\d+$/);
  }
  const limited = await get(DEMO_KEY);
  t.equal(limited.statusCode, 429);
  t.match(limited.json(), { detail: /^Too many requests: at most 3 per 1 minute for this key; retry in / });
  t.equal(Object.keys(limited.json()).length, 1);
  t.match(limited.headers['retry-after'], /^\d+$/);
  t.equal((await get(HARBOR_KEY)).statusCode, 200, 'another key has its own limit');
  t.equal((await app.server.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'health is not limited');
  t.match((await app.server.inject({ method: 'GET', url: '/metrics' })).body, /http_rate_limited_total 1\n/);
});

t.test('every /api/ answer counts and carries the headers: a 400 of its parameters, a 401 (counted by address), a 404', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'], server: { rateLimit: { max: 3, window: '1 minute' } } });
  t.teardown(() => app.close());
  const get = (url: string, headers: Record<string, string>) => app.server.inject({ method: 'GET', url, headers });
  const answers = [
    await get('/api/shifts/search/?spots=many', { 'api-key': DEMO_KEY }),
    await get('/api/shifts/00000000-0000-4000-8000-000000000000/', { 'api-key': DEMO_KEY }),
    await get('/api/shifts/search/?spots=-', { 'api-key': DEMO_KEY }),
  ];
  t.same(answers.map((res) => res.statusCode), [400, 404, 400]);
  t.same(answers.map((res) => res.headers['ratelimit-remaining']), ['2', '1', '0'], 'each counted, with the headers');
  t.equal((await get('/api/shifts/', { 'api-key': DEMO_KEY })).statusCode, 429, 'then the key is limited');

  const unknown = [];
  for (let i = 0; i < 3; i++) unknown.push(await get('/api/shifts/', { 'api-key': `not a key ${i}` }));
  t.same(unknown.map((res) => res.statusCode), [401, 401, 401]);
  t.same(unknown.map((res) => res.headers['ratelimit-remaining']), ['2', '1', '0'], 'requests without a valid key: counted by address');
  const trying = await get('/api/shifts/', {});
  t.equal(trying.statusCode, 429, 'trying keys one after another is limited too');
  t.match(trying.json(), { detail: /from this address without a valid key/ });
  t.equal((await get('/api/shifts/', { 'api-key': HARBOR_KEY })).statusCode, 200, 'a valid key has its own count');
});

t.test('CORS only for the configured origins; nosniff, no X-Powered-By', async (t) => {
  const open = await startApp({ fixtures: ['demo.ndjson'], server: { corsOrigins: ['https://app.example'] } });
  t.teardown(() => open.close());
  const preflight = await open.server.inject({
    method: 'OPTIONS',
    url: '/api/shifts/',
    headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'api-key' },
  });
  t.equal(preflight.headers['access-control-allow-origin'], 'https://app.example');
  t.match(preflight.headers['access-control-allow-headers'], /API-KEY/);
  const deleting = await open.server.inject({
    method: 'OPTIONS',
    url: '/api/webhooks/00000000-0000-4000-8000-000000000000/',
    headers: { origin: 'https://app.example', 'access-control-request-method': 'DELETE' },
  });
  t.match(deleting.headers['access-control-allow-methods'], /DELETE/, 'every method the API answers (a webhook is deleted)');
  const read = await open.server.inject({ method: 'GET', url: '/api/shifts/', headers: { origin: 'https://app.example', 'api-key': DEMO_KEY } });
  t.match(read.headers['access-control-expose-headers'], /ETag.*RateLimit-Remaining/, 'a page\'s script may read the ETag and the rate limit');
  const other = await open.server.inject({ method: 'GET', url: '/api/shifts/', headers: { origin: 'https://evil.example', 'api-key': DEMO_KEY } });
  t.equal(other.headers['access-control-allow-origin'], undefined, 'another origin: no CORS header');

  const closed = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => closed.close());
  const res = await closed.server.inject({ method: 'GET', url: '/api/shifts/', headers: { origin: 'https://app.example', 'api-key': DEMO_KEY } });
  t.equal(res.headers['access-control-allow-origin'], undefined, 'no CORS unless configured');
  t.equal(res.headers['x-content-type-options'], 'nosniff');
  t.equal(res.headers['x-powered-by'], undefined);
  const missing = await closed.server.inject({ method: 'GET', url: '/nope' });
  t.equal(missing.headers['x-content-type-options'], 'nosniff', 'errors too');
});
