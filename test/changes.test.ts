/**
 * The change feed (issue 18 point 3): GET /api/changes/?after=&limit= gives
 * the key's institution's changes in log order — checked against the log
 * itself read end to end (the brute-force answer) on the embedded log and
 * on the EventStoreDB stand-in; no gap and no repeat across pages while
 * sites are created; cursors that outlive a restart and a rebuild on
 * threads; every malformed parameter a 400 {detail}.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startOfLog } from '../src/eventstore/port.js';
import { formatTimestamp, parseEventTimestamp } from '../src/time.js';
import { EsdbStandIn } from './esdb-standin/server.js';
import { DEMO_KEY, HARBOR_KEY, serveWarmingUp, startApp, type TestApp } from './helpers.js';

interface Change {
  cursor: string;
  type: string;
  resource: string;
  id: string;
  occurred_at: string;
}

/** The whole feed of a key, a page of `limit` at a time, and the last next_cursor. */
async function feed(get: TestApp['get'], key: string, limit: number, after?: string): Promise<{ changes: Change[]; cursor: string | null }> {
  const changes: Change[] = [];
  let cursor = after ?? null;
  for (;;) {
    const { status, body } = await get(`/api/changes/?limit=${limit}${cursor ? `&after=${cursor}` : ''}`, key);
    if (status !== 200) throw new Error(`${status} ${JSON.stringify(body)}`);
    changes.push(...(body.results as Change[]));
    if (body.results.length > 0) t.equal(body.next_cursor, body.results.at(-1).cursor, 'next_cursor is the last result\'s');
    else {
      t.equal(body.next_cursor, cursor, 'nothing new: next_cursor is the after given');
      return { changes, cursor };
    }
    cursor = body.next_cursor;
  }
}

/**
 * The resource of each stream (the aggregate an event changes, as the log names it): what the feed must name, written
 * out here rather than taken from the feed's own table. The site registry is per institution: there the record is
 * the event's site. Keys are no resource.
 */
const RESOURCE_OF_STREAM: Array<[prefix: string, resource: string]> = [
  ['institution-', 'institutions'],
  ['category-', 'categories'],
  ['opportunity-', 'opportunities'],
  ['shift-', 'shifts'],
  ['profile-', 'profiles'],
  ['customfield-', 'custom-fields'],
  ['reservation-', 'reservations'],
  ['formsubmission-', 'form-submissions'],
  ['sequence-', 'sequences'],
  ['usersequence-', 'user-sequences'],
  ['site-registry-', 'sites'],
];

/** What the feed must say: the log read end to end, the institution's events that are about a record, in log order. */
async function fromTheLog(app: TestApp, institution: string) {
  const expected: Omit<Change, 'cursor'>[] = [];
  let from = startOfLog;
  for (;;) {
    const events = await app.runtime.store.readAll(from, 500);
    if (events.length === 0) return expected;
    for (const event of events) {
      const data = event.data as { institution_id: string; occurred_at: string; site_id?: string };
      const [prefix, resource] = RESOURCE_OF_STREAM.find(([p]) => event.stream.startsWith(p)) ?? [];
      if (!prefix || !resource || data.institution_id !== institution) continue;
      const id = resource === 'sites' ? data.site_id : event.stream.slice(prefix.length);
      if (id === undefined) continue; // a sites request's record
      expected.push({ type: event.type, resource, id, occurred_at: formatTimestamp(parseEventTimestamp(data.occurred_at)!) });
    }
    from = events.at(-1)!.position;
  }
}

const institutionOf = async (app: TestApp, key: string) => {
  const { body } = await app.get('/api/shifts/?limit=1', key);
  return (app.runtime.model.get('shift', body.results[0].id) as { institution_id: string }).institution_id;
};

const withoutCursors = (changes: Change[]) => changes.map(({ cursor: _, ...rest }) => rest);

for (const store of ['embedded log', 'EventStoreDB stand-in'] as const) {
  t.test(`every change of the institution, in log order, and no other's (${store})`, async (t) => {
    const esdb = store === 'EventStoreDB stand-in' ? await EsdbStandIn.start() : undefined;
    t.teardown(() => esdb?.stop());
    const app = await startApp({ fixtures: ['demo.ndjson'], eventstoreUrl: esdb?.connectionString });
    t.teardown(() => app.close());
    for (const key of [DEMO_KEY, HARBOR_KEY]) {
      const expected = await fromTheLog(app, await institutionOf(app, key));
      t.ok(expected.length > 20, `${expected.length} changes in the log`);
      for (const limit of [1, 7, 100, 1000]) {
        const { changes } = await feed(app.get, key, limit);
        t.same(withoutCursors(changes), expected, `limit ${limit}: the log's changes, in its order`);
        t.equal(new Set(changes.map((c) => c.cursor)).size, changes.length, 'cursors are unique');
      }
    }
    // Every kind of record appears (the demo has them all), and the first page is the default's 100.
    const first = await app.get('/api/changes/');
    t.equal(first.body.results.length, 100);
    const resources = new Set((await feed(app.get, DEMO_KEY, 1000)).changes.map((c) => c.resource));
    t.same([...resources].sort(), ['categories', 'custom-fields', 'form-submissions', 'institutions', 'opportunities', 'profiles', 'reservations', 'sequences', 'shifts', 'sites', 'user-sequences']);
  });
}

t.test('no gap and no repeat across pages while sites are being created', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const { cursor: start } = await feed(app.get, DEMO_KEY, 1000);
  const created: string[] = [];
  let writing = true;
  const writer = (async () => {
    for (let i = 0; i < 40; i++) {
      const res = await app.server.inject({
        method: 'POST',
        url: '/api/sites/bulk-create/',
        headers: { 'api-key': DEMO_KEY, 'content-type': 'application/json' },
        payload: { sites: [{ title: `Feed site ${i}a` }, { title: `Feed site ${i}b` }] },
      });
      t.equal(res.statusCode, 201);
      created.push(...(res.json() as { results: { id: string }[] }).results.map((s) => s.id));
    }
    writing = false;
  })();
  // A reader paging along with the writer, two at a time.
  const seen: Change[] = [];
  let cursor = start;
  while (writing || seen.length < created.length) {
    const { body } = await app.get(`/api/changes/?limit=2&after=${cursor}`);
    seen.push(...(body.results as Change[]));
    cursor = body.next_cursor;
    await new Promise((resolve) => setImmediate(resolve));
  }
  await writer;
  t.same(
    seen.map((c) => [c.type, c.id]),
    created.map((id) => ['SiteCreated', id]),
    'each site created once, in order',
  );
  // What a write answered is in the feed at once (the write waits for the read model).
  const res = await app.server.inject({
    method: 'POST',
    url: '/api/sites/bulk-create/',
    headers: { 'api-key': DEMO_KEY, 'content-type': 'application/json' },
    payload: { sites: [{ title: 'Seen at once' }] },
  });
  const after = await app.get(`/api/changes/?after=${cursor}`);
  t.same(after.body.results.map((c: Change) => c.id), [res.json().results[0].id], 'a site created shows in the feed when its POST answers');
  t.same((await app.get(`/api/changes/?after=${cursor}`, HARBOR_KEY)).body.results, [], 'and not in another institution\'s');
});

t.test('a cursor outlives a restart and a rebuild on threads', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'], keep: true });
  const whole = (await feed(app.get, DEMO_KEY, 1000)).changes;
  const middle = whole[Math.floor(whole.length / 2)]!.cursor;
  const rest = (await feed(app.get, DEMO_KEY, 50, middle)).changes;
  t.same(rest, whole.slice(Math.floor(whole.length / 2) + 1), 'after a cursor: the rest');
  await app.close();

  const restarted = await startApp({ dir: app.dir, keep: true });
  t.same((await feed(restarted.get, DEMO_KEY, 50, middle)).changes, rest, 'after a restart');
  await restarted.close();

  // The read model gone: replayed on threads (as serve does when it is far behind) into a new one.
  rmSync(join(app.dir, 'readmodel'), { recursive: true, force: true });
  const rebuilt = await serveWarmingUp(app.dir, { parallelFrom: 0 });
  t.teardown(() => rmSync(app.dir, { recursive: true, force: true }));
  await rebuilt.ready;
  const get: TestApp['get'] = async (url, key = DEMO_KEY) => rebuilt.get(url, key);
  t.same((await feed(get, DEMO_KEY, 50, middle)).changes, rest, 'after a rebuild on threads');
  t.same((await feed(get, DEMO_KEY, 1000)).changes, whole, 'the whole feed, cursors and all');
  await rebuilt.close();
});

t.test('malformed parameters are a 400 {detail}; other methods a 405', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const cases: [string, RegExp][] = [
    ['after=nonsense!', /Invalid cursor for after/],
    ['after=' + Buffer.from('12').toString('base64url'), /Invalid cursor for after/],
    ['after=' + Buffer.from('1.x').toString('base64url'), /Invalid cursor for after/],
    ['after=' + Buffer.from('99999999999999999.1').toString('base64url'), /Invalid cursor for after/],
    ['after=a&after=b', /sent more than once/],
    ['limit=0', /limit: must be an integer from 1 to 1000/],
    ['limit=1001', /limit: must be an integer from 1 to 1000/],
    ['limit=ten', /limit: must be an integer from 1 to 1000/],
  ];
  for (const [query, detail] of cases) {
    const { status, body } = await app.get(`/api/changes/?${query}`);
    t.equal(status, 400, query);
    t.match(body, { detail }, query);
  }
  t.equal((await app.get('/api/changes/?limit=')).body.results.length, 100, 'an empty limit is the default');
  t.equal((await app.get('/api/changes/', null)).status, 401, 'a key is needed');
  const post = await app.server.inject({ method: 'POST', url: '/api/changes/', headers: { 'api-key': DEMO_KEY } });
  t.equal(post.statusCode, 405);
  // A cursor past the end of the log: nothing yet, and the cursor stays.
  const far = Buffer.from('9000000.9000000').toString('base64url');
  t.same((await app.get(`/api/changes/?after=${far}`)).body, { results: [], next_cursor: far });
});
