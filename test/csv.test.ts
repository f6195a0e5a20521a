/**
 * CSV (format=csv, or Accept: text/csv) on every list and search endpoint:
 * the page's records as rows — nested fields as dotted columns, arrays as
 * JSON, null as empty — RFC 4180 quoting that a CSV parser reads back to
 * the JSON answer's values, the same filters and pages as JSON, the count in
 * X-Total-Count and the pages in Link; the same bytes with EventStoreDB as
 * the log.
 */
import { parse } from 'csv-parse/sync';
import t from 'tap';
import { EsdbStandIn } from './esdb-standin/server.js';
import { DEMO_KEY, startApp } from './helpers.js';

const app = await startApp({ fixtures: ['demo.ndjson'] });
t.teardown(() => app.close());

const get = (url: string, headers: Record<string, string> = {}) => app.server.inject({ method: 'GET', url, headers: { 'api-key': DEMO_KEY, ...headers } });

/** The JSON record flattened as the CSV is. */
function flat(value: unknown, prefix = '', into: Record<string, string> = {}): Record<string, string> {
  if (value === null || value === undefined) into[prefix] = '';
  else if (Array.isArray(value)) into[prefix] = JSON.stringify(value);
  else if (typeof value === 'object') for (const [k, v] of Object.entries(value)) flat(v, prefix ? `${prefix}.${k}` : k, into);
  else into[prefix] = String(value);
  return into;
}

const endpoints = [
  '/api/shifts/?limit=25&page=2',
  '/api/shifts/search/?category.title=warehouse&ordering=-spots&limit=7',
  '/api/opportunities/search/?status=1',
  '/api/profiles/?limit=5',
  '/api/profiles/search/?is_offline=false&limit=5',
  '/api/reservations/?limit=30',
  '/api/form-submissions/search/?limit=4',
  '/api/sequences/',
  '/api/user-sequences/search/?limit=3',
  '/api/sites/',
];

t.test('every list and search: the JSON page, row for row and field for field', async (t) => {
  for (const url of endpoints) {
    const json = (await get(url)).json() as { count: number; next: string | null; previous: string | null; results: unknown[] };
    const res = await get(`${url}${url.includes('?') ? '&' : '?'}format=csv`);
    t.equal(res.statusCode, 200, url);
    t.match(res.headers['content-type'], /^text\/csv; charset=utf-8/);
    t.equal(res.headers['x-total-count'], String(json.count), `${url}: X-Total-Count`);
    const rows = parse(res.body, { columns: true }) as Array<Record<string, string>>;
    t.equal(rows.length, json.results.length, `${url}: a row per record`);
    rows.forEach((row, i) => {
      const expected = flat(json.results[i]);
      for (const [column, value] of Object.entries(row)) t.equal(value, expected[column] ?? '', `${url} row ${i} ${column}`);
      t.same(Object.keys(expected).filter((k) => !(k in row)), [], `${url} row ${i}: every field a column`);
    });
    const links = res.headers.link as string | undefined;
    if (json.next) t.ok(links?.includes(`<${json.next.replace('format=csv&', '')}`) || links?.includes('rel="next"'), `${url}: Link next`);
    if (json.previous) t.ok(links?.includes('rel="prev"'), `${url}: Link prev`);
  }
});

t.test('Accept: text/csv; JSON stays the default and wins when preferred', async (t) => {
  const csv = await get('/api/shifts/?limit=3', { accept: 'text/csv' });
  t.match(csv.headers['content-type'], /^text\/csv/);
  t.match(csv.body, /^id,created_at,shift_start_at,/);
  t.match((await get('/api/shifts/?limit=3', { accept: 'application/json, text/csv;q=0.5' })).headers['content-type'], /^application\/json/);
  t.match((await get('/api/shifts/?limit=3', { accept: 'text/csv;q=0.9, application/json;q=0.1' })).headers['content-type'], /^text\/csv/);
  t.match((await get('/api/shifts/?limit=3', { accept: '*/*' })).headers['content-type'], /^application\/json/);
  t.match((await get('/api/shifts/?limit=3&format=json', { accept: 'text/csv' })).headers['content-type'], /^application\/json/, 'format= wins over Accept');
  const link = (await get('/api/shifts/?limit=3&page=2&format=csv')).headers.link as string;
  t.match(link, /^<http:\/\/vm\.test\/api\/shifts\/\?format=csv&page=3&limit=3>; rel="next", <http:\/\/vm\.test\/api\/shifts\/\?format=csv&page=1&limit=3>; rel="prev"$/);
});

t.test('quoting: commas, quotes and line breaks read back as they were', async (t) => {
  const created = await app.server.inject({
    method: 'POST',
    url: '/api/sites/bulk-create/',
    headers: { 'api-key': DEMO_KEY, 'content-type': 'application/json' },
    body: { sites: [{ title: 'Dock "B", north', address: 'Line one\nLine two, rear' }] },
  });
  t.equal(created.statusCode, 201);
  const rows = parse((await get('/api/sites/?title=dock+%22b%22,+north&format=csv')).body, { columns: true }) as Array<Record<string, string>>;
  t.equal(rows.length, 1);
  t.equal(rows[0]!.title, 'Dock "B", north');
  t.equal(rows[0]!.address, 'Line one\nLine two, rear');
});

t.test('a bad format is a 400; an empty page is an empty body', async (t) => {
  const bad = await get('/api/shifts/?format=xml');
  t.equal(bad.statusCode, 400);
  t.same(bad.json(), { detail: 'Invalid format "xml": use json or csv.' });
  const none = await get('/api/shifts/search/?title=no+such+shift&format=csv');
  t.equal(none.statusCode, 200);
  t.equal(none.body, '');
  t.equal(none.headers['x-total-count'], '0');
});

t.test('the ETag differs by format', async (t) => {
  const json = await get('/api/shifts/?limit=3');
  const csv = await get('/api/shifts/?limit=3', { accept: 'text/csv' });
  t.not(json.headers.etag, csv.headers.etag);
  t.equal((await get('/api/shifts/?limit=3', { accept: 'text/csv', 'if-none-match': json.headers.etag as string })).statusCode, 200);
});

t.test('with EventStoreDB as the log (the stand-in): every CSV page is the embedded log\'s, byte for byte', async (t) => {
  const esdb = await EsdbStandIn.start();
  t.teardown(() => esdb.stop());
  const other = await startApp({ fixtures: ['demo.ndjson'], eventstoreUrl: esdb.connectionString });
  t.teardown(() => other.close());
  // A fresh app on the embedded log too: the tests above added a site to theirs.
  const embedded = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => embedded.close());
  const csvOf = (on: typeof app, url: string) => on.server.inject({ method: 'GET', url, headers: { 'api-key': DEMO_KEY } });
  for (const url of endpoints) {
    const csv = `${url}${url.includes('?') ? '&' : '?'}format=csv`;
    const [here, there] = await Promise.all([csvOf(embedded, csv), csvOf(other, csv)]);
    t.equal(there.statusCode, 200, csv);
    t.ok(there.body.split('\n').length > 1, `${csv}: rows`);
    t.equal(there.body, here.body, `${csv}: the same bytes`);
  }
});
