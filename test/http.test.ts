/**
 * HTTP behavior of the read API on the demo fixture: authentication,
 * tenancy, the paginated envelope, retrieve, errors and status codes.
 */
import t from 'tap';
import { DEMO_KEY, HARBOR_KEY, startApp, type TestApp } from './helpers.js';

let app: TestApp;
t.before(async () => {
  app = await startApp({ fixtures: ['demo.ndjson'] });
});
t.teardown(() => app.close());

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

t.test('authentication', async (t) => {
  const missing = await app.get('/api/shifts/', null);
  t.equal(missing.status, 401);
  t.same(missing.body, { detail: 'Authentication credentials were not provided.' });
  const wrong = await app.get('/api/shifts/', 'not-a-key');
  t.equal(wrong.status, 401);
  t.same(wrong.body, { detail: 'Invalid API key.' });
  t.equal((await app.get('/healthz', null)).status, 200, '/healthz needs no key');
});

t.test('tenancy: each key sees only its institution', async (t) => {
  const riverside = await app.get('/api/shifts/?limit=100');
  const harbor = await app.get('/api/shifts/?limit=100', HARBOR_KEY);
  t.equal(riverside.body.count, 149, '150 shifts, one removed');
  t.equal(harbor.body.count, 11, '12 shifts, one removed');
  const harborIds = new Set(harbor.body.results.map((s: { id: string }) => s.id));
  for (const s of riverside.body.results) t.notOk(harborIds.has(s.id));

  const foreignShift = harbor.body.results[0].id;
  const other = await app.get(`/api/shifts/${foreignShift}/`);
  t.equal(other.status, 404, 'another institution’s shift is not found');
  t.same(other.body, { detail: 'Not found.' });
  t.equal((await app.get(`/api/shifts/${foreignShift}/`, HARBOR_KEY)).status, 200);

  const foreignOpportunity = harbor.body.results[0].opportunity.id;
  t.equal((await app.get(`/api/opportunities/${foreignOpportunity}/`)).status, 404);
  t.equal((await app.get(`/api/opportunities/${foreignOpportunity}/`, HARBOR_KEY)).status, 200);
  const search = await app.get(`/api/shifts/search/?opportunity.id=${foreignOpportunity}`);
  t.equal(search.body.count, 0, 'a search never reaches into another institution');
});

t.test('retrieve', async (t) => {
  const list = await app.get('/api/shifts/?limit=1');
  const shift = list.body.results[0];
  const one = await app.get(`/api/shifts/${shift.id}/`);
  t.equal(one.status, 200);
  t.same(one.body, shift, 'the record at the top level, as in the list');
  t.same((await app.get(`/api/shifts/${shift.id.toUpperCase()}/`)).body, shift, 'UUIDs are case-insensitive');
  t.same((await app.get(`/api/shifts/${shift.id}`)).body, shift, 'no trailing slash, same answer');
  t.equal((await app.get(`/api/shifts/${UNKNOWN_ID}/`)).status, 404);
  const malformed = await app.get('/api/shifts/not-a-uuid/');
  t.equal(malformed.status, 404);
  t.same(malformed.body, { detail: 'Not found.' });
});

t.test('shift fields exactly as SPEC.md lists them', async (t) => {
  const { body } = await app.get('/api/shifts/?limit=100');
  const shift = body.results[0];
  t.same(Object.keys(shift), [
    'id',
    'created_at',
    'shift_start_at',
    'shift_end_at',
    'spots',
    'spots_reserved',
    'spots_available',
    'opportunity',
    'shift_location',
    'shift_title',
    'shift_description',
    'share_shift_url',
    'title',
    'description',
  ]);
  t.same(Object.keys(shift.opportunity), ['id', 'created_at', 'category', 'title', 'description', 'share_opportunity_url']);
  t.same(Object.keys(shift.opportunity.category), ['id', 'title', 'description']);
  for (const s of body.results) {
    t.equal(s.title, s.shift_title);
    t.equal(s.description, s.shift_description);
    t.equal(s.spots_available, Math.max(s.spots - s.spots_reserved, 0));
    t.match(s.share_shift_url, /^https:\/\/volunteer\.riverside-foodbank\.example\/shifts\/[0-9a-f-]{36}$/);
    t.match(s.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$/);
  }
  const reserved = body.results.filter((s: { spots_reserved: number }) => s.spots_reserved > 0);
  t.ok(reserved.length > 0, 'reservations count against spots');
});

t.test('opportunities: fields and share URL by status', async (t) => {
  const { body } = await app.get('/api/opportunities/?limit=100');
  t.equal(body.count, 10);
  t.same(Object.keys(body.results[0]), ['id', 'created_at', 'category', 'title', 'description', 'share_opportunity_url']);
  const published = await app.get('/api/opportunities/search/?status=1&limit=100');
  const others = await app.get('/api/opportunities/search/?status.gte=0&limit=100');
  t.ok(published.body.count > 0);
  for (const o of published.body.results) t.match(o.share_opportunity_url, /\/opportunities\//);
  const unpublished = await app.get('/api/opportunities/search/?status=2');
  for (const o of unpublished.body.results) t.equal(o.share_opportunity_url, null);
  t.equal(others.status, 200, 'status takes no suffix: status.gte is ignored like any unknown parameter');
  t.equal(others.body.count, 10);
});

t.test('paginated envelope', async (t) => {
  const first = await app.get('/api/shifts/search/?title=Front+desk&limit=5');
  t.equal(first.status, 200);
  t.same(Object.keys(first.body), ['count', 'next', 'previous', 'results']);
  t.equal(first.body.previous, null);
  t.equal(first.body.next, 'http://vm.test/api/shifts/search/?title=Front+desk&page=2&limit=5', 'absolute, repeating the filters');
  const second = await app.get(new URL(first.body.next).pathname + new URL(first.body.next).search);
  t.equal(second.body.previous, 'http://vm.test/api/shifts/search/?title=Front+desk&page=1&limit=5');
  const lastPage = Math.ceil(first.body.count / 5);
  const last = await app.get(`/api/shifts/search/?title=Front+desk&limit=5&page=${lastPage}`);
  t.equal(last.body.next, null);
  t.equal(last.body.results.length, first.body.count - (lastPage - 1) * 5);

  const all = await app.get('/api/shifts/?limit=100');
  const rest = await app.get('/api/shifts/?limit=100&page=2');
  const ids = [...all.body.results, ...rest.body.results].map((s: { id: string }) => s.id);
  t.equal(new Set(ids).size, 149, 'pages never overlap');
  t.equal((await app.get('/api/shifts/')).body.results.length, 10, 'default limit 10');
  t.equal((await app.get('/api/shifts/?limit=&page=')).body.results.length, 10, 'empty page and limit mean the defaults');
});

t.test('paging errors', async (t) => {
  for (const limit of ['0', '101', 'ten', '1.5', '-1']) {
    const res = await app.get(`/api/shifts/?limit=${limit}`);
    t.equal(res.status, 400, `limit=${limit}`);
    t.same(res.body, { detail: 'Invalid limit: must be an integer from 1 to 100.' });
  }
  for (const page of ['0', 'x', '-2']) {
    const res = await app.get(`/api/shifts/?page=${page}`);
    t.equal(res.status, 400, `page=${page}`);
    t.same(res.body, { detail: 'Invalid page: must be an integer of at least 1.' });
  }
  const beyond = await app.get('/api/shifts/?page=99');
  t.equal(beyond.status, 404);
  t.same(beyond.body, { detail: 'Invalid page.' });
  const empty = await app.get(`/api/shifts/search/?id=${UNKNOWN_ID}`);
  t.equal(empty.status, 200, 'page 1 of an empty result');
  t.same(empty.body, { count: 0, next: null, previous: null, results: [] });
  t.equal((await app.get(`/api/shifts/search/?id=${UNKNOWN_ID}&page=2`)).status, 404);
});

t.test('filter errors', async (t) => {
  const cases: Array<[string, string]> = [
    ['date.gte=2026-13-01', 'Invalid date format for date.gte.'],
    ['shift_date=tomorrow', 'Invalid date format for shift_date.'],
    ['created_on.lt=2026-02-30', 'Invalid date format for created_on.lt.'],
    ['shift_start_at.gt=09:00', 'Invalid datetime format for shift_start_at.gt.'],
    ['created_at=2026-09-01T25:00:00Z', 'Invalid datetime format for created_at.'],
    ['start_time=9am', 'Invalid time format for start_time.'],
    ['shift_end_time.lte=24:00', 'Invalid time format for shift_end_time.lte.'],
    ['spots=many', 'Invalid integer value for spots.'],
    ['spots.gte=1.5', 'Invalid integer value for spots.gte.'],
    ['id=123', 'Invalid UUID value for id.'],
    ['opportunity_id=xyz', 'Invalid UUID value for opportunity_id.'],
    ['category.id=xyz', 'Invalid UUID value for category.id.'],
    ['ordering=title', 'Invalid ordering "title": use one of created_at, -created_at, updated_at, -updated_at, shift_start_at, -shift_start_at, shift_end_at, -shift_end_at, spots, -spots.'],
    ['title=a&title=b', 'Parameter title was sent more than once.'],
  ];
  for (const [query, detail] of cases) {
    const res = await app.get(`/api/shifts/search/?${query}`);
    t.equal(res.status, 400, query);
    t.same(res.body, { detail }, query);
  }
  const status = await app.get('/api/opportunities/search/?status=3');
  t.equal(status.status, 400);
  t.same(status.body, { detail: 'Invalid value for status.' });
  const ordering = await app.get('/api/opportunities/search/?ordering=spots');
  t.equal(ordering.status, 400);
  t.same(ordering.body, { detail: 'Invalid ordering "spots": use one of created_at, -created_at, updated_at, -updated_at.' });
});

t.test('filters: empty values, unknown parameters, + as space', async (t) => {
  const all = await app.get('/api/shifts/search/');
  t.equal((await app.get('/api/shifts/search/?title=&spots=')).body.count, all.body.count, 'empty value: not applied');
  t.equal((await app.get('/api/shifts/search/?colour=blue')).body.count, all.body.count, 'unknown: ignored');
  const plus = await app.get('/api/shifts/search/?title=front+DESK');
  const encoded = await app.get('/api/shifts/search/?title=Front%20desk');
  t.ok(plus.body.count > 0);
  t.equal(plus.body.count, encoded.body.count, 'case-insensitive, + is a space');
});

t.test('methods and paths', async (t) => {
  const post = await app.server.inject({ method: 'POST', url: '/api/shifts/', headers: { 'api-key': DEMO_KEY } });
  t.equal(post.statusCode, 405);
  t.same(post.json(), { detail: 'Method "POST" not allowed.' });
  const del = await app.server.inject({ method: 'DELETE', url: '/api/opportunities/search', headers: { 'api-key': DEMO_KEY } });
  t.equal(del.statusCode, 405);
  const options = await app.server.inject({ method: 'OPTIONS', url: '/api/shifts/', headers: { 'api-key': DEMO_KEY } });
  t.equal(options.statusCode, 405, 'OPTIONS too (no CORS here to answer a preflight)');
  t.equal(options.headers.allow, 'GET, HEAD');
  t.same(options.json(), { detail: 'Method "OPTIONS" not allowed.' });
  const unknown = await app.get('/api/volunteers/');
  t.equal(unknown.status, 404);
  t.same(unknown.body, { detail: 'Not found.' });
  t.equal((await app.get('/nowhere')).status, 404);
  const head = await app.server.inject({ method: 'HEAD', url: '/api/shifts/', headers: { 'api-key': DEMO_KEY } });
  t.equal(head.statusCode, 200, 'HEAD answers like GET');
});
