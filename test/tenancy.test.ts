/**
 * Tenant isolation, including through the log: a key never changes hands
 * (an import that issues a key id or hash already issued is refused, and
 * the fold refuses such an event from any other writer, live, after a
 * restart and in a rebuild), an institution is registered once
 * (InstitutionUpdated changes it), and, over random requests of every read
 * endpoint with one key, no answer ever holds an id of another institution
 * — also when two institutions share every title, email and date.
 */
import { createHash, randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { pino } from 'pino';
import t from 'tap';
import { type DomainEvent, streamOf } from '../src/events/catalog.js';
import { importEvents, ImportError } from '../src/importer/import.js';
import type { ParamDef } from '../src/query/resource.js';
import { resources } from '../src/resources/index.js';
import { DEMO_KEY, HARBOR_KEY, readFixture, ROOT, startApp, type TestApp } from './helpers.js';

const run = promisify(execFile);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

const demoLines = readFixture('demo.ndjson').trim().split('\n');
const demoEvents = demoLines.map((line) => JSON.parse(line) as { type: string; id: string; data: Record<string, unknown> });
const RIVERSIDE = demoEvents[0]!.data.institution_id as string;
const HARBOR = demoEvents.find((e) => e.type === 'InstitutionRegistered' && e.data.institution_id !== RIVERSIDE)!.data.institution_id as string;
const RIVERSIDE_KEY_ID = demoEvents.find((e) => e.type === 'ApiKeyIssued' && e.data.institution_id === RIVERSIDE)!.data.key_id as string;

/** The line of an event of the catalog, as the importer takes it. */
const line = (type: DomainEvent['type'], data: Record<string, unknown>) =>
  JSON.stringify({ type, id: randomUUID(), data: { occurred_at: '2026-11-01T12:00:00Z', ...data } });

async function importText(app: TestApp, text: string): Promise<void> {
  await importEvents(app.runtime.store, 'extra.ndjson', text);
  await app.runtime.projector.waitFor(await app.runtime.store.head());
}

/** What an import of `text` is refused with (every problem, one per line). */
async function refusal(app: TestApp, text: string): Promise<string> {
  const head = await app.runtime.store.head();
  const error = await importEvents(app.runtime.store, 'extra.ndjson', text).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ImportError)) throw new Error(`the import was not refused: ${String(error)}`);
  if ((await app.runtime.store.head()).commit !== head.commit) throw new Error('a refused import appended events');
  return error.message;
}

t.test('an import that issues a key already issued is refused, naming the line, and the key keeps its institution', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const riverside = (await app.get('/api/shifts/?limit=1')).body.count as number;
  const harbor = (await app.get('/api/shifts/?limit=1', HARBOR_KEY)).body.count as number;
  t.not(riverside, harbor);

  t.match(
    await refusal(app, line('ApiKeyIssued', { institution_id: HARBOR, key_id: randomUUID(), key_sha256: sha256(DEMO_KEY) })),
    /extra\.ndjson:1: data\.key_sha256: this key was already issued \(key [0-9a-f-]{36}\)/,
    "another institution's key hash",
  );
  t.match(
    await refusal(app, line('ApiKeyIssued', { institution_id: RIVERSIDE, key_id: randomUUID(), key_sha256: sha256(DEMO_KEY) })),
    /data\.key_sha256: this key was already issued/,
    'its own institution again',
  );
  t.match(
    await refusal(app, line('ApiKeyIssued', { institution_id: HARBOR, key_id: RIVERSIDE_KEY_ID, key_sha256: sha256('vm_fresh_key') })),
    /extra\.ndjson:1: data\.key_id: key .* was already issued/,
    'a key id already issued',
  );
  const fresh = sha256('vm_twice_in_one_file');
  t.match(
    await refusal(
      app,
      [
        line('ApiKeyIssued', { institution_id: RIVERSIDE, key_id: randomUUID(), key_sha256: fresh }),
        line('ApiKeyIssued', { institution_id: HARBOR, key_id: randomUUID(), key_sha256: fresh }),
      ].join('\n'),
    ),
    /extra\.ndjson:2: data\.key_sha256: this key was already issued/,
    'the same new hash twice in one file: the second line',
  );

  // A revoked key's hash is not issued again either.
  const revokedId = randomUUID();
  await importText(
    app,
    [
      line('ApiKeyIssued', { institution_id: RIVERSIDE, key_id: revokedId, key_sha256: sha256('vm_old_key') }),
      line('ApiKeyRevoked', { institution_id: RIVERSIDE, key_id: revokedId }),
    ].join('\n'),
  );
  t.equal((await app.get('/api/shifts/', 'vm_old_key')).status, 401);
  t.match(
    await refusal(app, line('ApiKeyIssued', { institution_id: HARBOR, key_id: randomUUID(), key_sha256: sha256('vm_old_key') })),
    new RegExp(`data\\.key_sha256: this key was already issued \\(key ${revokedId}\\)`),
    'a revoked key',
  );
  t.equal((await app.get('/api/shifts/', 'vm_old_key')).status, 401, 'and it stays revoked');

  t.equal((await app.get('/api/shifts/?limit=1')).body.count, riverside, "the demo key still reads its own institution's shifts");
  t.equal((await app.get('/api/shifts/?limit=1', HARBOR_KEY)).body.count, harbor);
});

t.test('vm-api import of such a file exits 1 with the line named, and appends nothing', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'], keep: true });
  t.teardown(() => rmSync(app.dir, { recursive: true, force: true }));
  const before = (await app.get('/api/shifts/?limit=1')).body.count as number;
  await app.close();
  const file = join(app.dir, 'rebind.ndjson');
  writeFileSync(file, `${line('ApiKeyIssued', { institution_id: HARBOR, key_id: randomUUID(), key_sha256: sha256(DEMO_KEY) })}\n`);
  const result = await run(process.execPath, [join(ROOT, 'dist', 'src', 'cli', 'main.js'), 'import', file], {
    env: { ...process.env, DATA_DIR: app.dir },
  }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
  t.equal(result.code, 1);
  t.match(result.stderr, /rebind\.ndjson:1: data\.key_sha256: this key was already issued/);
  t.notMatch(result.stderr, /\n\s+at /, 'no stack trace');
  const again = await startApp({ dir: app.dir });
  t.teardown(() => again.close());
  t.equal((await again.get('/api/shifts/?limit=1')).body.count, before);
});

t.test('an institution is registered once; InstitutionUpdated renames it and moves its share URLs', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const shift = (await app.get('/api/shifts/?limit=1')).body.results[0];
  t.match(
    await refusal(app, line('InstitutionRegistered', { institution_id: RIVERSIDE, name: 'Taken over', share_base_url: 'https://elsewhere.example' })),
    new RegExp(`extra\\.ndjson:1: data\\.institution_id: institution ${RIVERSIDE} already exists`),
  );
  t.equal((await app.get(`/api/shifts/${shift.id}/`)).body.share_shift_url, shift.share_shift_url, 'share URLs unchanged');

  await importText(app, line('InstitutionUpdated', { institution_id: RIVERSIDE, name: 'Riverside Food Bank', share_base_url: 'https://riverside.example/' }));
  t.equal(app.runtime.model.get('institution', RIVERSIDE)!.name, 'Riverside Food Bank');
  t.equal((await app.get(`/api/shifts/${shift.id}/`)).body.share_shift_url, `https://riverside.example/shifts/${shift.id}`);
  const listed = (await app.get('/api/shifts/?limit=1')).body.results[0];
  t.equal(listed.share_shift_url, `https://riverside.example/shifts/${listed.id}`, 'lists too (their cached JSON is remade)');
  t.match(
    await refusal(app, line('InstitutionUpdated', { institution_id: randomUUID(), name: 'Nobody' })),
    /data\.institution_id: unknown institution/,
  );
});

t.test('the fold refuses a key issued again or an institution registered again by another writer: live, after a restart, in a rebuild', async (t) => {
  const lines: Array<{ msg: string; problem?: string; type?: string }> = [];
  const logger = pino({ level: 'warn' }, { write: (text: string) => void lines.push(JSON.parse(text)) });
  const app = await startApp({ fixtures: ['demo.ndjson'], keep: true, logger });
  t.teardown(() => rmSync(app.dir, { recursive: true, force: true }));
  const texts = async (target: TestApp) =>
    Promise.all(
      ['/api/shifts/?limit=100', '/api/opportunities/?limit=100', '/api/profiles/?limit=3'].flatMap((url) =>
        [DEMO_KEY, HARBOR_KEY].map(async (key) => (await target.get(url, key)).text),
      ),
    );
  const expected = await texts(app);

  // Appended as is, not through the importer, as another writer of the log could.
  const append = async (type: DomainEvent['type'], data: Record<string, unknown>) => {
    const event = { type, data: { occurred_at: '2026-11-01T12:00:00Z', ...data } } as DomainEvent;
    const { position } = await app.runtime.store.append(streamOf(event), [{ id: randomUUID(), type, data: event.data }]);
    await app.runtime.projector.waitFor(position);
  };
  await append('ApiKeyIssued', { institution_id: HARBOR, key_id: randomUUID(), key_sha256: sha256(DEMO_KEY) });
  await append('ApiKeyIssued', { institution_id: HARBOR, key_id: RIVERSIDE_KEY_ID, key_sha256: sha256('vm_hijack') });
  await append('InstitutionRegistered', { institution_id: RIVERSIDE, name: 'Taken over', share_base_url: 'https://elsewhere.example' });
  t.same(await texts(app), expected, 'live: every answer as before');
  t.equal((await app.get('/api/shifts/', 'vm_hijack')).status, 401, 'the key id taken again gives no key');
  t.same(
    lines.filter((l) => l.msg === 'event skipped: it breaks a rule of the log').map((l) => [l.type, l.problem?.split(':')[0]]),
    [
      ['ApiKeyIssued', 'key_sha256'],
      ['ApiKeyIssued', 'key_id'],
      ['InstitutionRegistered', 'institution_id'],
    ],
    'each logged once, with its problem',
  );
  t.notOk(JSON.stringify(lines).includes(sha256(DEMO_KEY)), 'no key hash in the log lines');
  await app.close();

  // After a restart the keys on disk are still known: a repeat is still refused, a new key still issued.
  const restarted = await startApp({ dir: app.dir, keep: true });
  const appendTo = async (target: TestApp, data: Record<string, unknown>) => {
    const event = { type: 'ApiKeyIssued', data: { occurred_at: '2026-11-01T12:00:00Z', key_id: randomUUID(), ...data } } as DomainEvent;
    const { position } = await target.runtime.store.append(streamOf(event), [{ id: randomUUID(), type: event.type, data: event.data }]);
    await target.runtime.projector.waitFor(position);
  };
  await appendTo(restarted, { institution_id: RIVERSIDE, key_sha256: sha256(HARBOR_KEY) });
  await appendTo(restarted, { institution_id: HARBOR, key_sha256: sha256('vm_new_harbor_key') });
  t.same(await texts(restarted), expected, 'after a restart');
  t.equal((await restarted.get('/api/shifts/?limit=1', 'vm_new_harbor_key')).text, (await restarted.get('/api/shifts/?limit=1', HARBOR_KEY)).text, 'a new key is issued as before');
  await restarted.close();

  for (const threads of ['1', '2']) {
    await run(process.execPath, [join(ROOT, 'dist', 'src', 'cli', 'main.js'), 'rebuild', '--threads', threads], { env: { ...process.env, DATA_DIR: app.dir } });
    const rebuilt = await startApp({ dir: app.dir, keep: true });
    t.same(await texts(rebuilt), expected, `rebuilt on ${threads} thread(s)`);
    await rebuilt.close();
  }
});

// ── No answer holds another institution's ids ──────────────────────────────

/**
 * A twin of the demo's first institution: every event of it again, with
 * every id replaced by a new one (the same titles, emails, dates and
 * times) and a key of its own.
 */
const TWIN_KEY = 'vm_test_twin_9Xq2';
function twinOfRiverside(): { text: string; institution: string } {
  const fresh = new Map<string, string>();
  const mapped = (id: string) => {
    let to = fresh.get(id.toLowerCase());
    if (!to) fresh.set(id.toLowerCase(), (to = randomUUID()));
    return to;
  };
  const text = demoEvents
    .filter((e) => e.data.institution_id === RIVERSIDE)
    .map((e) => {
      const data = e.type === 'ApiKeyIssued' ? { ...e.data, key_sha256: sha256(TWIN_KEY) } : e.data;
      return JSON.stringify({ ...e, data }).replace(UUIDS, mapped);
    })
    .join('\n');
  return { text, institution: mapped(RIVERSIDE) };
}

/** Every UUID in an institution's events, by institution. */
function idsByInstitution(text: string): Map<string, Set<string>> {
  const byInstitution = new Map<string, Set<string>>();
  for (const row of text.split('\n')) {
    const event = JSON.parse(row) as { data: { institution_id: string } };
    const ids = byInstitution.get(event.data.institution_id) ?? new Set<string>();
    for (const id of JSON.stringify(event.data).match(UUIDS) ?? []) ids.add(id.toLowerCase());
    byInstitution.set(event.data.institution_id, ids);
  }
  return byInstitution;
}

t.test('random requests of every endpoint with one key never show another institution’s ids (two institutions share every title, email and date)', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const twin = twinOfRiverside();
  await importText(app, twin.text);
  const owners = idsByInstitution(`${demoLines.join('\n')}\n${twin.text}`);
  const keys = new Map([
    [RIVERSIDE, DEMO_KEY],
    [HARBOR, HARBOR_KEY],
    [twin.institution, TWIN_KEY],
  ]);
  t.equal(owners.size, 3);
  const owner = new Map<string, string>();
  for (const [institution, ids] of owners) for (const id of ids) {
    t.notOk(owner.has(id) && owner.get(id) !== institution, 'no id is in two institutions');
    owner.set(id, institution);
  }

  // What values to filter with: every id of any institution, every string and timestamp of the data.
  const ids = [...owner.keys()];
  const strings = new Set<string>();
  const stamps = new Set<string>();
  for (const e of demoEvents) {
    for (const value of Object.values(e.data)) {
      if (typeof value !== 'string' || UUIDS.test(value)) continue;
      (/^\d{4}-\d\d-\d\dT/.test(value) ? stamps : strings).add(value);
    }
    UUIDS.lastIndex = 0;
  }
  const valueOf = (param: ParamDef<unknown>): fc.Arbitrary<string> => {
    switch (param.type) {
      case 'uuid':
        return fc.constantFrom(...ids);
      case 'text':
        return fc.constantFrom(...strings);
      case 'timestamp':
        return fc.constantFrom(...stamps);
      case 'date':
        return fc.constantFrom(...stamps).map((s) => s.slice(0, 10));
      case 'time':
        return fc.constantFrom(...stamps).map((s) => s.slice(11, 16));
      case 'integer':
        return fc.integer({ min: 0, max: 12 }).map(String);
      case 'number':
        return fc.integer({ min: 0, max: 24 }).map((n) => String(n / 2));
      case 'choice':
        return fc.constantFrom(...param.choices.map(String));
      case 'boolean':
        return fc.constantFrom('true', 'false');
    }
  };
  const requestOf = Object.values(resources).map((def) => {
    const params = def.params as readonly ParamDef<unknown>[];
    const filterOf = (param: ParamDef<unknown>) =>
      fc.record({
        name: fc.constantFrom(param.name, ...(param.aliases ?? [])),
        suffix: 'range' in param && param.range ? fc.constantFrom('', '.gt', '.gte', '.lt', '.lte') : fc.constant(''),
        value: valueOf(param),
      });
    const orderings = Object.keys(def.orderings);
    const paths = [`/api/${def.path}/`, ...(def.endpoints.search ? [`/api/${def.path}/search/`] : [])];
    const query = fc
      .record({
        path: fc.constantFrom(...paths),
        filters: params.length > 0 ? fc.array(fc.oneof(...params.map(filterOf)), { maxLength: 3 }) : fc.constant([]),
        ordering: orderings.length > 0 ? fc.option(fc.constantFrom(...orderings)) : fc.constant(null),
        limit: fc.constantFrom(1, 10, 100),
        page: fc.integer({ min: 1, max: 3 }),
      })
      .map(({ path, filters, ordering, limit, page }) => {
        const q = new URLSearchParams();
        for (const f of filters) if (!q.has(f.name + f.suffix)) q.set(f.name + f.suffix, f.value);
        if (ordering) q.set('ordering', ordering);
        q.set('limit', String(limit));
        q.set('page', String(page));
        return `${path}?${q}`;
      });
    const retrieve = fc.constantFrom(...ids).map((id) => `/api/${def.path}/${id}/`);
    return def.endpoints.retrieve ? fc.oneof(query, retrieve) : query;
  });

  let answered = 0;
  let withRecords = 0;
  // The change feed, from the start or after a cursor of any institution's feed.
  const cursors = await Promise.all([...keys.values()].map(async (key) => ((await app.get('/api/changes/?limit=40', key)).body.results as { cursor: string }[]).map((c) => c.cursor)));
  const changes = fc
    .record({ after: fc.option(fc.constantFrom(...cursors.flat())), limit: fc.constantFrom(1, 100, 1000) })
    .map(({ after, limit }) => `/api/changes/?limit=${limit}${after ? `&after=${after}` : ''}`);
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...keys.keys()), fc.oneof(...requestOf, changes), async (institution, url) => {
      const res = await app.get(url, keys.get(institution)!);
      if (res.status >= 500) return false;
      answered++;
      if (res.status === 200 && (res.body.results?.length ?? 1) > 0) withRecords++;
      // The records shown (next/previous repeat the filters sent, and an error may name the value sent).
      const shown = res.status === 200 ? JSON.stringify(res.body.results ?? res.body) : '';
      for (const id of shown.match(UUIDS) ?? []) {
        const of = owner.get(id.toLowerCase());
        if (of !== undefined && of !== institution) throw new Error(`${url} with ${institution}'s key shows ${id} of ${of}`);
      }
      return true;
    }),
    { seed: 17, numRuns: 3000 },
  );
  t.equal(answered, 3000);
  t.ok(withRecords > 500, `${withRecords} of the answers hold records (the property is not vacuous)`);

  // The twins answer the same shared-title search each with their own records.
  const title = encodeURIComponent(demoEvents.find((e) => e.type === 'ShiftCreated')!.data.title as string);
  const mine = (await app.get(`/api/shifts/search/?title=${title}&limit=100`)).body;
  const theirs = (await app.get(`/api/shifts/search/?title=${title}&limit=100`, TWIN_KEY)).body;
  t.ok(mine.count > 0);
  t.equal(theirs.count, mine.count, 'the twin has as many');
  const mineIds = new Set(mine.results.map((r: { id: string }) => r.id));
  t.notOk(theirs.results.some((r: { id: string }) => mineIds.has(r.id)), 'and none of them is the same');
});
